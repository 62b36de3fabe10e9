package traces

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// A store keeps what servers wrote on stderr, which may hold anything a
// server saw; so what bench creates in a store is its user's alone:
// directories 0700, files 0600, whatever the umask.
const (
	privateDirMode  = 0o700
	privateFileMode = 0o600
)

// privateFS is the file system of a store's databases: pebble's own, with
// every file and directory it creates made private.
type privateFS struct{ vfs.FS }

func (p privateFS) Create(name string, category vfs.DiskWriteCategory) (vfs.File, error) {
	if err := unplant(name); err != nil {
		return nil, err
	}
	return private(p.FS.Create(name, category))
}

func (p privateFS) OpenReadWrite(name string, category vfs.DiskWriteCategory, opts ...vfs.OpenOption) (vfs.File, error) {
	if err := refuseLink(name); err != nil {
		return nil, err
	}
	return private(p.FS.OpenReadWrite(name, category, opts...))
}

func (p privateFS) ReuseForWrite(oldname, newname string, category vfs.DiskWriteCategory) (vfs.File, error) {
	if err := refuseLink(oldname); err != nil {
		return nil, err
	}
	if err := unplant(newname); err != nil {
		return nil, err
	}
	return private(p.FS.ReuseForWrite(oldname, newname, category))
}

// unplant removes a symbolic link at name, where the store is about to
// create a file: a store never writes through a link planted in it (the
// file it names stays as it was).
func unplant(name string) error {
	if fi, err := os.Lstat(name); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return os.Remove(name)
	}
	return nil
}

// refuseLink refuses to write to an existing store file that is a
// symbolic link.
func refuseLink(name string) error {
	if fi, err := os.Lstat(name); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return fmt.Errorf("%s is a symbolic link: a store writes only its own files", name)
	}
	return nil
}

func (p privateFS) MkdirAll(dir string, _ os.FileMode) error {
	return p.FS.MkdirAll(dir, privateDirMode)
}

func (p privateFS) Lock(name string) (io.Closer, error) {
	if err := unplant(name); err != nil {
		return nil, err
	}
	c, err := p.FS.Lock(name)
	if err == nil {
		if err = os.Chmod(name, privateFileMode); err != nil {
			c.Close()
			return nil, err
		}
	}
	return c, err
}

func (p privateFS) Unwrap() vfs.FS { return p.FS }

// private makes a file pebble opened for writing private. The window
// between its creation and this is harmless: the file is in a private
// directory.
func private(f vfs.File, err error) (vfs.File, error) {
	if err != nil {
		return f, err
	}
	if fd := f.Fd(); fd != vfs.InvalidFd {
		if err := syscall.Fchmod(int(fd), privateFileMode); err != nil {
			f.Close()
			return nil, err
		}
	}
	return f, nil
}

// mkdirPrivate creates dir and any missing parent, private, and returns
// the outermost directory it created ("" when dir existed).
func mkdirPrivate(dir string) (string, error) {
	created := ""
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); err == nil || !errors.Is(err, fs.ErrNotExist) {
			break
		}
		created = d
		if filepath.Dir(d) == d {
			break
		}
	}
	if err := os.MkdirAll(dir, privateDirMode); err != nil {
		return "", err
	}
	return created, nil
}

// Abandon closes a store that Open created, and removes what Open created
// for it (its database, its lock file, the directories it made), as if it
// had never been opened, provided nothing was stored in it: for a command
// whose only write was refused, such as an import of a bad pack. A store
// that existed before Open, or that holds a run or a ref, is only closed.
func (s *Store) Abandon() error {
	if !s.fresh || s.db == nil {
		return s.Close()
	}
	refs, err := s.Refs("")
	if err != nil || len(refs) > 0 {
		return s.Close()
	}
	if runs, err := s.Runs(); err != nil || len(runs) > 0 {
		return s.Close()
	}
	// The database goes while the lock is held, so that no other process
	// opens it meanwhile.
	lock := s.lock
	s.lock = nil
	err = s.Close()
	if rerr := os.RemoveAll(filepath.Join(s.dir, dbDirName)); err == nil {
		err = rerr
	}
	if rerr := os.Remove(filepath.Join(s.dir, lockFileName)); err == nil {
		err = rerr
	}
	lock.Close()
	if s.created != "" {
		// Innermost first, each only while it is empty.
		for d := filepath.Clean(s.dir); os.Remove(d) == nil && d != s.created; d = filepath.Dir(d) {
		}
	}
	return err
}
