package engine

import (
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
)

// TestPIDFileLeavesNoFolder checks that a server that writes its PID file
// in a folder without .omni (and then fails to start, there being no
// omni/) leaves nothing behind, while an existing .omni keeps its files.
func TestPIDFileLeavesNoFolder(t *testing.T) {
	for _, tt := range []struct {
		name     string
		existing map[string]string // files in .omni before the server
		wantDir  bool
	}{
		{"no .omni before", nil, false},
		{"an empty .omni before", map[string]string{}, true},
		{".omni with files", map[string]string{"active-profile": "x\n"}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			dir := filepath.Join(root, ".omni")
			if tt.existing != nil {
				if err := os.Mkdir(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				for name, content := range tt.existing {
					if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
						t.Fatal(err)
					}
				}
			}
			p, err := WritePIDFile(root, slog.New(slog.DiscardHandler))
			if err != nil {
				t.Fatal(err)
			}
			st, err := ReadServerStatus(root)
			if err != nil || st.PID != os.Getpid() {
				t.Fatalf("ReadServerStatus = %+v, %v; want this process", st, err)
			}
			if err := p.Remove(); err != nil {
				t.Fatal(err)
			}
			if _, err := ReadServerStatus(root); !errors.Is(err, ErrNoServer) {
				t.Errorf("after Remove: %v, want ErrNoServer", err)
			}
			_, err = os.Stat(dir)
			if gotDir := err == nil; gotDir != tt.wantDir {
				t.Errorf(".omni exists: %v, want %v (%v)", gotDir, tt.wantDir, err)
			}
			for name := range tt.existing {
				if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
					t.Errorf("%s is gone: %v", name, err)
				}
			}
		})
	}
}
