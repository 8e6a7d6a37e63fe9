package main

import (
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/omnidev/omnidev/internal/testrepo"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// TestDoctorGolden runs `omnidev doctor` on small repositories and compares
// its output and exit status with testdata/doctor/<case>.golden. The
// repository's path and the runtime's version and path are replaced by
// placeholders. `go test ./cmd/omnidev -run TestDoctorGolden -update`
// rewrites them.
func TestDoctorGolden(t *testing.T) {
	manifest := func(id string, extra ...string) string {
		return "[capability]\nid = \"" + id + "\"\ndescription = \"The " + id + " capability\"\n" + strings.Join(extra, "\n") + "\n"
	}
	tests := []struct {
		name  string
		files map[string]string
	}{
		{
			name: "healthy-with-a-folder-not-enabled",
			files: map[string]string{
				"omni/config.toml":                        "[capabilities]\nenable = [\"tasks\"]\n",
				"omni/capabilities/tasks/capability.toml": manifest("tasks"),
				"omni/capabilities/tasks/index.ts":        "export const n = 1;\n",
				"omni/capabilities/tasks/types.d.ts":      "export const n: number;\n",
				"omni/capabilities/fresh/capability.toml": manifest("fresh"),
			},
		},
		{
			name: "omnidev-layout-with-problems",
			files: map[string]string{
				"omni.toml": "[capabilities.sources]\ntools = \"github:user/tools\"\n\n" +
					"[profiles.default]\ncapabilities = [\"coded\", \"gh\", \"untyped\"]\n",
				".omni/config.local.toml":                    "[sandbox]\ntimout = \"5s\"\n",
				".omni/capabilities/coded/capability.toml":   manifest("coded", "author = \"someone\""),
				".omni/capabilities/coded/index.ts":          "import docs from \"./docs.ts\";\nexport default { docs, rules: [] };\n",
				".omni/capabilities/coded/types.d.ts":        "export {};\n",
				".omni/capabilities/gh/capability.toml":      manifest("gh", "[env]", "GH_TOKEN = { required = true, secret = true }"),
				".omni/capabilities/untyped/capability.toml": manifest("untyped"),
				".omni/capabilities/untyped/index.ts":        "export const x = 1;\n",
				".omni/capabilities/spare/capability.toml":   manifest("spare"),
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			testrepo.WriteFiles(t, root, tt.files)
			code, out, errOut := omnidev(t, "", "--dir", root, "doctor")
			got := "$ omnidev doctor\n" + normalizeDoctor(out, root) + errOut + "[exit " + strconv.Itoa(code) + "]\n"
			golden := filepath.Join("testdata", "doctor", tt.name+".golden")
			if *update {
				if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("doctor output differs from %s:\n--- got\n%s--- want\n%s", golden, got, want)
			}
		})
	}
}

var runtimeLine = regexp.MustCompile(`(?m)^runtime:      (\S+) .*$`)

func normalizeDoctor(out, root string) string {
	out = strings.ReplaceAll(out, root, "$ROOT")
	out = runtimePathsLine.ReplaceAllString(out, "$1$$RUNTIME_PATHS")
	out = cgroupLine.ReplaceAllString(out, "$1$$CGROUP")
	return runtimeLine.ReplaceAllString(out, "runtime:      $1 $$VERSION ($$PATH)")
}

// The machine's parts of doctor's sandbox block: the runtime's folders (the
// PATH), and whether this user may create cgroups.
var (
	runtimePathsLine = regexp.MustCompile(`(?m)^(  runtime paths +read-only +).*$`)
	cgroupLine       = regexp.MustCompile(`(?m)^(  (?:memory|processes) limit +).*$`)
)
