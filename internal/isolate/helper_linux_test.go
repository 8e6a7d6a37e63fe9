//go:build linux

package isolate

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestHelperProtocol checks that a helper init is used only when it speaks
// this build's protocol: one left from another build would misread the
// specs it is sent.
func TestHelperProtocol(t *testing.T) {
	// The real helper, built from this tree.
	dir := t.TempDir()
	real := filepath.Join(dir, HelperName)
	if out, err := exec.Command("go", "build", "-o", real, "../../cmd/omnidev-sandbox").CombinedOutput(); err != nil {
		t.Fatalf("build %s: %v\n%s", HelperName, err, out)
	}
	script := func(body string) string {
		d := t.TempDir()
		p := filepath.Join(d, HelperName)
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		name        string
		helper      string
		wantHelper  bool
		wantProblem string
	}{
		{"this build's helper", real, true, ""},
		{"same protocol", script("echo " + strconv.Itoa(Protocol)), true, ""},
		{"another protocol", script("echo 1"), false, "protocol 1, want " + strconv.Itoa(Protocol)},
		{"a helper that knows no protocol", script(`echo "not meant to be run by hand" >&2; exit 2`), false, "protocol none"},
		{"not a program", filepath.Join(t.TempDir(), HelperName), false, "protocol none"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path, problem := NewWithInit(tt.helper).InitPath()
			if got := path == tt.helper; got != tt.wantHelper {
				t.Errorf("InitPath() = %q, want the helper: %v", path, tt.wantHelper)
			}
			if !tt.wantHelper && path != selfInit {
				t.Errorf("InitPath() = %q, want %s", path, selfInit)
			}
			if tt.wantProblem == "" && problem != "" || !strings.Contains(problem, tt.wantProblem) {
				t.Errorf("problem = %q, want it to say %q", problem, tt.wantProblem)
			}
			if problem != "" && !strings.Contains(problem, "install both from one build") {
				t.Errorf("problem = %q, want it to say what to do", problem)
			}
		})
	}
}
