package scenarios

import (
	"bytes"
	"os"
	"reflect"
	"testing"

	"gopkg.in/yaml.v3"
)

// goldenParsed parses the embedded suite's YAML as Parse does.
func goldenParsed(t testing.TB) ([32]byte, []nodeFile) {
	paths, data, err := readManifests(goldenFS, "golden")
	if err != nil {
		t.Fatal(err)
	}
	files := make([]nodeFile, len(paths))
	for i, p := range paths {
		docs, err := parseDocs(data[i])
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		files[i] = nodeFile{path: p, docs: docs}
	}
	return sourceHash(paths, data), files
}

// The embedded snapshot is the suite's YAML parsed, node for node (kinds,
// styles, tags, values, comments, lines and columns); -update writes it
// (go generate ./scenarios).
func TestGoldenNodes(t *testing.T) {
	src, files := goldenParsed(t)
	snap, err := encodeNodes(src, files)
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile("golden.nodes", snap, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if !bytes.Equal(snap, goldenNodes) {
		t.Fatal("scenarios/golden.nodes was not made from scenarios/golden: run go generate ./scenarios (a stale snapshot is not read: bench parses the YAML, slower)")
	}
	back, err := decodeNodes(goldenNodes, src)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, files) {
		t.Fatal("the snapshot reads back other nodes than the parser made")
	}
}

// Golden from the snapshot is Golden from the YAML: every scenario, field
// positions and file names included.
func TestGoldenFromNodesIsFromYAML(t *testing.T) {
	fromNodes, err := Golden()
	if err != nil {
		t.Fatal(err)
	}
	fromYAML, err := LoadFS(goldenFS, "golden", GoldenDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(fromNodes) != len(fromYAML) || len(fromYAML) == 0 {
		t.Fatalf("%d scenarios from the snapshot, %d from the YAML", len(fromNodes), len(fromYAML))
	}
	for i := range fromYAML {
		if !reflect.DeepEqual(fromNodes[i], fromYAML[i]) {
			t.Fatalf("scenario %d (%s) differs", i, fromYAML[i].ID)
		}
	}
}

// A snapshot of other YAML, of another format, truncated or with a byte
// changed is refused (or read as other nodes), never a panic; Golden then
// parses the YAML.
func TestNodesRefused(t *testing.T) {
	src, files := goldenParsed(t)
	snap, err := encodeNodes(src, files)
	if err != nil {
		t.Fatal(err)
	}
	other := src
	other[0] ^= 1
	if _, err := decodeNodes(snap, other); err == nil {
		t.Error("a snapshot of other YAML was read")
	}
	if _, err := decodeNodes(append([]byte("x"), snap...), src); err == nil {
		t.Error("a snapshot of another format was read")
	}
	for _, n := range []int{len(snap) - 1, len(snap) / 2, len(nodesMagic) + 40} {
		if _, err := decodeNodes(snap[:n], src); err == nil {
			t.Errorf("a snapshot cut at %d of %d bytes was read", n, len(snap))
		}
	}
}

// An alias is written as the node it stands for and read back so; a node
// tree that is not a tree is refused.
func TestNodesAliases(t *testing.T) {
	var src [32]byte
	docs, snap := snapshotOf(t, "a: &x {k: [1, 2]}\nb: *x\n# foot\n")
	back, err := decodeNodes(snap, src)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back[0].docs, docs) {
		t.Fatal("read back other nodes")
	}
	m := back[0].docs[0].Content[0]
	if alias := m.Content[3]; alias.Kind != yaml.AliasNode || alias.Alias != m.Content[1] {
		t.Errorf("the alias stands for %p, want the anchored node %p", alias.Alias, m.Content[1])
	}
	shared := &yaml.Node{Kind: yaml.ScalarNode, Value: "s"}
	bad := &yaml.Node{Kind: yaml.SequenceNode, Content: []*yaml.Node{shared, shared}}
	if _, err := encodeNodes(src, []nodeFile{{path: "t.yaml", docs: []*yaml.Node{bad}}}); err == nil {
		t.Error("a node with two parents was written")
	}
}

// snapshotOf parses text as one file t.yaml and writes its snapshot (of
// the zero source hash).
func snapshotOf(t testing.TB, text string) ([]*yaml.Node, []byte) {
	docs, err := parseDocs([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	snap, err := encodeNodes([32]byte{}, []nodeFile{{path: "t.yaml", docs: docs}})
	if err != nil {
		t.Fatal(err)
	}
	return docs, snap
}

func FuzzDecodeNodes(f *testing.F) {
	var src [32]byte
	_, snap := snapshotOf(f, "a: &x {k: [1, 2]}\nb: *x\nc: 'q' # c\n---\n- 1\n")
	f.Add(snap)
	f.Add(snap[:len(snap)/2])
	f.Fuzz(func(t *testing.T, b []byte) {
		files, err := decodeNodes(b, src)
		if err != nil {
			return
		}
		// Whatever reads back writes again to the same bytes.
		again, err := encodeNodes(src, files)
		if err != nil {
			return // an alias to a later node, say: not a parser's output
		}
		if _, err := decodeNodes(again, src); err != nil {
			t.Fatalf("a snapshot written from a snapshot read is refused: %v", err)
		}
	})
}

func BenchmarkGoldenFromYAML(b *testing.B) {
	for b.Loop() {
		if _, err := LoadFS(goldenFS, "golden", GoldenDir); err != nil {
			b.Fatal(err)
		}
	}
}
