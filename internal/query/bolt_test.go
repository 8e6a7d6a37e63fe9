package query

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/blevesearch/bleve/v2"
)

func TestCheckBolt(t *testing.T) {
	dir := t.TempDir()
	x := reopen(t, dir, fixture(), nil)
	x.Close()
	path := filepath.Join(dir, bleveDir, boltFile)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		content []byte // nil: no file
		want    error
	}{
		{name: "intact", content: data},
		{name: "missing"},
		{name: "truncated to its meta pages", content: data[:8192], want: errBoltTruncated},
		{name: "not bbolt", content: []byte("garbage!garbage!")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "root.bolt")
			if tt.content != nil {
				writeFile(t, p, tt.content)
			}
			if err := checkBolt(p); !errors.Is(err, tt.want) {
				t.Errorf("checkBolt() = %v, want %v", err, tt.want)
			}
		})
	}
}

// truncatedChildEnv names the index folder the re-executed test binary of
// TestBleveOpensTruncatedBolt opens with bleve alone.
const truncatedChildEnv = "OMNIDEV_TEST_TRUNCATED_BOLT"

// TestBleveOpensTruncatedBolt notices when the library moves: bleve opens a
// scorch index whose bbolt file was cut short, bbolt reads past the file's
// end, and the process dies of a memory fault (a build with -race reads
// garbage there and panics instead), which is why checkBolt reads bbolt's
// file format (doc.go). It opens such an index with bleve alone, in a copy
// of this process. If bleve.Open comes back (it refuses the file, or opens
// it), checkBolt may no longer earn its place.
func TestBleveOpensTruncatedBolt(t *testing.T) {
	if dir := os.Getenv(truncatedChildEnv); dir != "" {
		idx, err := bleve.Open(dir)
		if err == nil {
			idx.Close()
		}
		fmt.Printf("bleve.Open returned: %v\n", err)
		return
	}
	dir := t.TempDir()
	x := reopen(t, dir, fixture(), nil)
	x.Close()
	path := filepath.Join(dir, bleveDir, boltFile)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, path, data[:8192]) // its two meta pages
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestBleveOpensTruncatedBolt$", "-test.count=1")
	cmd.Env = append(os.Environ(), truncatedChildEnv+"="+filepath.Join(dir, bleveDir))
	out, err := cmd.CombinedOutput()
	if err == nil || bytes.Contains(out, []byte("bleve.Open returned")) {
		t.Fatalf("bleve.Open came back from a truncated bbolt file (%v): see whether checkBolt still earns its place\n%s", err, out)
	}
	for line := range strings.Lines(string(out)) {
		if strings.Contains(line, "fault") || strings.Contains(line, "panic:") {
			t.Logf("the copy died: %s", strings.TrimSpace(line))
			break
		}
	}
}

// BenchmarkCheckBolt measures what checkBolt adds to every Open: the
// figure doc.go gives beside what it saves (a process killed by a
// truncated store).
func BenchmarkCheckBolt(b *testing.B) {
	dir := b.TempDir()
	x, err := Open(b.Context(), dir, fixture(), Options{})
	if err != nil {
		b.Fatal(err)
	}
	x.Close()
	path := filepath.Join(dir, bleveDir, boltFile)
	for b.Loop() {
		if err := checkBolt(path); err != nil {
			b.Fatal(err)
		}
	}
}
