package tsgen

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/omnidev/omnidev/internal/capability"
)

// apiTools returns n tools shaped like those of a big API's server:
// get_zone_<i>, a sentence of description, four parameters.
func apiTools(n int) []capability.Tool {
	tools := make([]capability.Tool, n)
	for i := range tools {
		tools[i] = capability.Tool{
			Name:        fmt.Sprintf("get_zone_%d", i),
			Description: fmt.Sprintf("Returns the settings and status of a zone of shard %d of the account, optionally with its DNS records.", i),
			InputSchema: json.RawMessage(`{"type":"object","properties":{"zone_id":{"type":"string","description":"The zone's identifier."},"include_records":{"type":"boolean"},"page":{"type":"integer"},"fields":{"type":"array","items":{"type":"string"}}},"required":["zone_id"]}`),
		}
	}
	return tools
}

// BenchmarkGenerate: generating the module and the declaration of a server
// with 10,000 API-shaped tools, as a snapshot does when its tools change.
func BenchmarkGenerate(b *testing.B) {
	tools := apiTools(10_000)
	for b.Loop() {
		Module("zones", tools)
		Generate("zones", tools).Full()
	}
}

// BenchmarkModuleImport: what importing the generated module of a server
// with 10,000 tools adds to a run of each runtime: the median wall time of
// a program that imports it, less that of a program that imports nothing
// (both print one line). "full" imports the whole module (`import * as m`,
// what a program gets that imports it otherwise than by plain named
// imports); "named" imports the module ModuleFor writes for the last
// function and tools. import-ms is with the runtime's caches warm (its
// first runs are left out); isolated-import-ms gives every run an empty
// TMPDIR and HOME and no other variable but PATH, as an isolated run
// has, where no runtime finds a cache of an earlier run. Runtimes not
// installed are reported as such.
func BenchmarkModuleImport(b *testing.B) {
	dir := b.TempDir()
	tools := apiTools(10_000)
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	full := Module("zones", tools)
	named := ModuleFor("zones", tools, []string{"getZone9999", "tools"})
	write("package.json", `{"type": "module"}`+"\n")
	write(ToolsFile, ToolList(tools))
	write("full.js", full)
	write("named.js", named)
	write("bare.ts", "console.log(\"function\", 10000);\n")
	write("imports_full.ts", "import * as m from \"./full.js\";\nconsole.log(typeof m.getZone9999, m.tools.length);\n")
	write("imports_named.ts", "import { getZone9999, tools } from \"./named.js\";\nconsole.log(typeof getZone9999, tools.length);\n")
	b.Logf("module: %d bytes whole, %d for two names", len(full), len(named))
	runtimes := []struct {
		name string
		argv []string
	}{
		{"bun", []string{"bun"}},
		{"tsx", []string{"tsx"}},
		{"deno", []string{"deno", "run", "--quiet", "--allow-env", "--allow-read"}},
	}
	for _, rt := range runtimes {
		for _, m := range []string{"full", "named"} {
			b.Run(rt.name+"/"+m, func(b *testing.B) {
				if _, err := exec.LookPath(rt.argv[0]); err != nil {
					b.Fatalf("%s is not installed: `just deps` installs it", rt.argv[0])
				}
				run := func(file string, isolated bool) time.Duration {
					cmd := exec.Command(rt.argv[0], append(rt.argv[1:], file)...)
					cmd.Dir = dir
					if isolated {
						private := b.TempDir()
						for _, d := range []string{"tmp", "home"} {
							if err := os.Mkdir(filepath.Join(private, d), 0o755); err != nil {
								b.Fatal(err)
							}
						}
						cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "TMPDIR=" + filepath.Join(private, "tmp"), "HOME=" + filepath.Join(private, "home")}
					}
					start := time.Now()
					if out, err := cmd.CombinedOutput(); err != nil {
						b.Fatalf("%s %s: %v\n%s", rt.name, file, err, out)
					}
					return time.Since(start)
				}
				imports := "imports_" + m + ".ts"
				run("bare.ts", false)
				run(imports, false)
				var bare, imp, isoBare, isoImp []time.Duration
				for b.Loop() {
					bare = append(bare, run("bare.ts", false))
					imp = append(imp, run(imports, false))
					isoBare = append(isoBare, run("bare.ts", true))
					isoImp = append(isoImp, run(imports, true))
				}
				b.ReportMetric(median(imp)-median(bare), "import-ms")
				b.ReportMetric(median(bare), "bare-run-ms")
				b.ReportMetric(median(isoImp)-median(isoBare), "isolated-import-ms")
			})
		}
	}
}

// median returns the median of ds in milliseconds.
func median(ds []time.Duration) float64 {
	ds = slices.Sorted(slices.Values(ds))
	return float64(ds[len(ds)/2].Microseconds()) / 1000
}
