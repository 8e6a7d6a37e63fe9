package query

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
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
