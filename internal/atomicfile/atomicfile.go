// Package atomicfile writes a file whole or not at all, and never through
// a link planted where the file goes.
//
// bench writes its reports into directories a pull request may have filled
// (in CI the report directory is inside the PR's checkout). Opening the
// target with os.Create would follow a symlink planted there and overwrite
// whatever it points to. Write instead creates a new file beside the target
// under a temporary name, exclusively (O_CREATE|O_EXCL: it fails on any
// existing name, a symlink included, and never follows one), fills it, and
// renames it over the target. rename(2) replaces a symlink at the target
// rather than following it, so the file the link pointed to is untouched,
// and a reader never sees a half-written report.
//
// The directory itself is taken as given: a symlinked directory the caller
// names is followed, as any path the user names is.
package atomicfile

import (
	"bufio"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// Write writes the file at path with what fill writes, created with perm
// (less the umask). On any error nothing is left at path that was not
// there before, and no temporary file remains.
func Write(path string, perm fs.FileMode, fill func(io.Writer) error) error {
	f, err := createTemp(path, perm)
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	tmp := f.Name()
	bw := bufio.NewWriter(f)
	err = fill(bw)
	if err == nil {
		err = bw.Flush()
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// WriteFile is Write of data.
func WriteFile(path string, data []byte, perm fs.FileMode) error {
	return Write(path, perm, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// createTemp creates a new file in path's directory, named after path
// with a random suffix, exclusively.
func createTemp(path string, perm fs.FileMode) (*os.File, error) {
	dir, base := filepath.Split(path)
	for range 100 {
		name := filepath.Join(dir, "."+base+".tmp-"+rand.Text()[:12])
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
		if !errors.Is(err, fs.ErrExist) {
			return f, err
		}
	}
	return nil, errors.New("no free temporary name beside it")
}
