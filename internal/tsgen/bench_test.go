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
// a program that imports its last function and its tool list, less that of
// a program that imports nothing (both print one line). "full" imports the
// whole module (what a program gets that imports it otherwise than by
// plain named imports); "named" imports the module ModuleFor writes for
// those two names. Each runtime's first runs (compile caches) are left out.
// Runtimes not installed are reported as such.
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
	write(ToolsFile, ToolList(tools))
	write("full.ts", full)
	write("named.ts", named)
	write("bare.ts", "console.log(\"function\", 10000);\n")
	for _, m := range []string{"full", "named"} {
		write("imports_"+m+".ts", "import { getZone9999, tools } from \"./"+m+".ts\";\nconsole.log(typeof getZone9999, tools.length);\n")
	}
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
					b.Skipf("%s is not installed", rt.argv[0])
				}
				run := func(file string) time.Duration {
					cmd := exec.Command(rt.argv[0], append(rt.argv[1:], file)...)
					cmd.Dir = dir
					start := time.Now()
					if out, err := cmd.CombinedOutput(); err != nil {
						b.Fatalf("%s %s: %v\n%s", rt.name, file, err, out)
					}
					return time.Since(start)
				}
				imports := "imports_" + m + ".ts"
				run("bare.ts")
				run(imports)
				var bare, imp []time.Duration
				for b.Loop() {
					bare = append(bare, run("bare.ts"))
					imp = append(imp, run(imports))
				}
				slices.Sort(bare)
				slices.Sort(imp)
				mid := func(ds []time.Duration) float64 { return float64(ds[len(ds)/2].Microseconds()) / 1000 }
				b.ReportMetric(mid(imp)-mid(bare), "import-ms")
				b.ReportMetric(mid(bare), "bare-run-ms")
			})
		}
	}
}
