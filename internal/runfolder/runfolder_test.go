package runfolder

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/omnidev/omnidev/internal/capability"
)

// bun returns the path of the Bun binary. Tests run the real runtime; CI
// installs it, so its absence is a failure, never a skip.
func bun(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("bun")
	if err != nil {
		t.Fatalf("bun is required by these tests (npm install -g bun): %v", err)
	}
	return p
}

// addCapability writes omni/capabilities/<id>/index.ts exporting hello()
// and returns the capability as Load would.
func addCapability(t *testing.T, root, id, module string) *capability.Capability {
	t.Helper()
	dir := filepath.Join(root, "omni", "capabilities", id)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	src := "export function hello(): string { return \"hello from " + id + "\"; }\n"
	if err := os.WriteFile(filepath.Join(dir, "index.ts"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return &capability.Capability{ID: id, Module: module, Dir: dir, Entry: "index.ts"}
}

func registry(root string, caps ...*capability.Capability) *capability.Registry {
	return &capability.Registry{Root: root, Capabilities: caps}
}

// runBun runs the run folder's runner from the repository root, as the
// executor does, and returns its combined output and exit code.
func runBun(ctx context.Context, t *testing.T, root string, s *Folder) (string, int) {
	t.Helper()
	cmd := exec.CommandContext(ctx, bun(t), s.RunnerPath())
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	if err != nil && cmd.ProcessState == nil {
		t.Fatalf("run bun: %v", err)
	}
	return string(out), cmd.ProcessState.ExitCode()
}

func TestPrepareLayout(t *testing.T) {
	root := t.TempDir()
	tasks := addCapability(t, root, "tasks", "tasks")
	repo := addCapability(t, root, "repo-tools", "repo")
	s, err := Prepare(root, registry(root, tasks, repo))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := s.Dir(), filepath.Join(root, ".omni", "sandbox"); got != want {
		t.Errorf("Dir() = %q, want %q", got, want)
	}
	if got, want := s.Modules(), []string{"omnidev", "repo", "tasks"}; !slices.Equal(got, want) {
		t.Errorf("Modules() = %q, want %q", got, want)
	}
	for module, want := range map[string]string{
		"tasks": "../../../omni/capabilities/tasks",
		"repo":  "../../../omni/capabilities/repo-tools",
	} {
		link := filepath.Join(s.Dir(), "node_modules", module)
		target, err := os.Readlink(link)
		if err != nil {
			t.Fatalf("node_modules/%s: %v", module, err)
		}
		if target != want {
			t.Errorf("node_modules/%s -> %q, want the relative %q", module, target, want)
		}
		if _, err := os.Stat(filepath.Join(link, "index.ts")); err != nil {
			t.Errorf("node_modules/%s does not reach the capability: %v", module, err)
		}
	}
	im, err := os.ReadFile(s.ImportMapPath())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(im), `"tasks": "../../omni/capabilities/tasks/index.ts"`) {
		t.Errorf("import map lacks the tasks entry:\n%s", im)
	}
	if _, err := os.Stat(s.RunnerPath()); err != nil {
		t.Errorf("runner: %v", err)
	}
}

func TestPrepareRemovesDisabledModules(t *testing.T) {
	root := t.TempDir()
	tasks := addCapability(t, root, "tasks", "tasks")
	repo := addCapability(t, root, "repo", "repo")
	if _, err := Prepare(root, registry(root, tasks, repo)); err != nil {
		t.Fatal(err)
	}
	s, err := Prepare(root, registry(root, tasks))
	if err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(filepath.Join(s.Dir(), "node_modules"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if want := []string{"omnidev", "tasks"}; !slices.Equal(names, want) {
		t.Errorf("node_modules holds %q after disabling repo, want %q", names, want)
	}
}

func TestPrepareRejects(t *testing.T) {
	root := t.TempDir()
	tests := []struct {
		name string
		caps []*capability.Capability
		want string
	}{
		{"path", []*capability.Capability{{ID: "x", Module: "../escape", Dir: root}}, "is a path"},
		{"builtin", []*capability.Capability{{ID: "x", Module: "fs", Dir: root}}, "reserved"},
		{"omnidev", []*capability.Capability{{ID: "x", Module: "omnidev", Dir: root}}, "reserved for omnidev's built-in module"},
		{"leading dot", []*capability.Capability{{ID: "x", Module: ".hidden", Dir: root}}, "is a path"},
		{"duplicate", []*capability.Capability{{ID: "a", Module: "m", Dir: root}, {ID: "b", Module: "m", Dir: root}}, "both export"},
		{"relative folder", []*capability.Capability{{ID: "a", Module: "m", Dir: "omni/capabilities/a"}}, "not an absolute path"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Prepare(root, registry(root, tt.caps...))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Prepare() error = %v, want one containing %q", err, tt.want)
			}
		})
	}
}

// TestBunResolvesModules checks what the layout is for: Bun, started from
// the repository root, imports a capability by its module name.
func TestBunResolvesModules(t *testing.T) {
	root := t.TempDir()
	s, err := Prepare(root, registry(root, addCapability(t, root, "tasks-cap", "tasks")))
	if err != nil {
		t.Fatal(err)
	}
	code := "import { hello } from \"tasks\";\nexport function main(): number { console.log(hello()); return 7; }\n"
	if err := s.WriteMain(code); err != nil {
		t.Fatal(err)
	}
	out, exit := runBun(t.Context(), t, root, s)
	if exit != 7 || !strings.Contains(out, "hello from tasks-cap") {
		t.Fatalf("bun exited %d with output %q; want 7 and the capability's greeting", exit, out)
	}
}

func TestWriteMain(t *testing.T) {
	root := t.TempDir()
	s, err := Prepare(root, registry(root))
	if err != nil {
		t.Fatal(err)
	}
	code := "// verbatim \u00e9\r\nconsole.log(1)" // no trailing newline, CRLF kept
	if err := s.WriteMain(code); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(s.MainPath())
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != code {
		t.Errorf("main.ts = %q, want %q", got, code)
	}
	entries, _ := os.ReadDir(s.Dir())
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("temporary file %s left behind", e.Name())
		}
	}
}

// TestWriteMainRebuilds covers a program that deleted .omni: the next run
// must not fail for want of a runner or links.
func TestWriteMainRebuilds(t *testing.T) {
	root := t.TempDir()
	s, err := Prepare(root, registry(root, addCapability(t, root, "tasks", "tasks")))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(root, ".omni")); err != nil {
		t.Fatal(err)
	}
	if err := s.WriteMain("import { hello } from \"tasks\";\nconsole.log(hello());\n"); err != nil {
		t.Fatal(err)
	}
	if out, exit := runBun(t.Context(), t, root, s); exit != 0 || !strings.Contains(out, "hello from tasks") {
		t.Fatalf("bun exited %d with output %q after a rebuild", exit, out)
	}
}

// TestPrepareReplacesFolder covers a node_modules folder left by an older
// layout: it cannot be renamed over, so it is moved aside.
func TestPrepareReplacesFolder(t *testing.T) {
	root := t.TempDir()
	legacy := filepath.Join(root, ".omni", "sandbox", "node_modules", "old")
	if err := os.MkdirAll(legacy, 0o755); err != nil {
		t.Fatal(err)
	}
	s, err := Prepare(root, registry(root, addCapability(t, root, "tasks", "tasks")))
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Lstat(filepath.Join(s.Dir(), "node_modules"))
	if err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("node_modules is not the generation link: %v, %v", fi, err)
	}
	if _, err := os.Stat(filepath.Join(s.Dir(), "node_modules", "tasks")); err != nil {
		t.Errorf("tasks link: %v", err)
	}
}

// TestPrepareWhileRunning swaps generations while Bun keeps resolving a
// module through node_modules: no run may see a missing or partial tree.
func TestPrepareWhileRunning(t *testing.T) {
	root := t.TempDir()
	tasks := addCapability(t, root, "tasks", "tasks")
	extra := addCapability(t, root, "extra", "extra")
	s, err := Prepare(root, registry(root, tasks))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.WriteMain("import { hello } from \"tasks\";\nconsole.log(hello());\n"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		regs := []*capability.Registry{registry(root, tasks, extra), registry(root, tasks)}
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := Prepare(root, regs[i%2]); err != nil {
				t.Errorf("Prepare: %v", err)
				return
			}
		}
	})
	for range 15 {
		if out, exit := runBun(ctx, t, root, s); exit != 0 {
			t.Errorf("run during a swap exited %d: %s", exit, out)
		}
	}
	close(stop)
	wg.Wait()
}

// TestBunRelativeImportsFromRoot runs a program that imports a file of the
// repository by a path relative to the root, as the program's working
// directory suggests; that file's own relative import resolves from its
// folder. (Bun calls resolver plugins only for specifiers with an
// extension: the executor explains the others.)
func TestBunRelativeImportsFromRoot(t *testing.T) {
	root := t.TempDir()
	for name, src := range map[string]string{
		"src/format.ts": "import { suffix } from \"./suffix.ts\";\nexport const format = (s: string) => `[${s}]` + suffix;\n",
		"src/suffix.ts": "export const suffix = \"!\";\n",
		"lib/plain.js":  "export const plain = 2;\n",
	} {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s, err := Prepare(root, registry(root, addCapability(t, root, "tasks", "tasks")))
	if err != nil {
		t.Fatal(err)
	}
	code := `import { format } from "./src/format.ts";
import { plain } from "../` + filepath.Base(root) + `/lib/plain.js";
import { hello } from "tasks";
console.log(format(hello()), plain);
`
	if err := s.WriteMain(code); err != nil {
		t.Fatal(err)
	}
	out, exit := runBun(t.Context(), t, root, s)
	if exit != 0 || !strings.Contains(out, "[hello from tasks]! 2") {
		t.Fatalf("bun exited %d with output %q", exit, out)
	}

	if err := s.WriteMain(`import "./src/missing.ts";`); err != nil {
		t.Fatal(err)
	}
	out, exit = runBun(t.Context(), t, root, s)
	if exit == 0 || !strings.Contains(out, filepath.Join(root, "src", "missing.ts")) {
		t.Errorf("a missing file: bun exited %d with %q; want the path from the root named", exit, out)
	}
}

// TestUnavailableModuleThrows imports a capability that cannot run: the
// import fails with the registry's reason, not "module not found".
func TestUnavailableModuleThrows(t *testing.T) {
	root := t.TempDir()
	reg := registry(root, addCapability(t, root, "tasks", "tasks"))
	reg.Unavailable = []*capability.Capability{{ID: "gh", Module: "github",
		Error: "required environment variable GH_TOKEN is not set; set it in the environment or in .omni/.env"}}
	s, err := Prepare(root, reg)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := s.Modules(), []string{"github", "omnidev", "tasks"}; !slices.Equal(got, want) {
		t.Errorf("Modules() = %q, want %q", got, want)
	}
	if err := s.WriteMain("import { x } from \"github\";\nconsole.log(x);\n"); err != nil {
		t.Fatal(err)
	}
	out, exit := runBun(t.Context(), t, root, s)
	want := `capability gh (module "github") is unavailable: required environment variable GH_TOKEN is not set; set it in the environment or in .omni/.env`
	if exit != 1 || !strings.Contains(out, want) {
		t.Errorf("bun exited %d with %q; want 1 and %q", exit, out, want)
	}
}

// A capability that wraps an MCP server gets a generated module: its tools
// as functions, which reject clearly when no relay is there to reach.
func TestBunResolvesGeneratedModule(t *testing.T) {
	root := t.TempDir()
	c := &capability.Capability{ID: "wrapped", Module: "wrapped", Dir: filepath.Join(root, "omni", "capabilities", "wrapped"),
		MCP: &capability.MCPServer{Transport: capability.TransportStdio, Command: "srv"}}
	c = c.WithTools([]capability.Tool{{Name: "get-sum", InputSchema: []byte(`{"type":"object"}`)}}, "")
	s, err := Prepare(root, registry(root, c))
	if err != nil {
		t.Fatal(err)
	}
	code := `import { getSum, tools } from "wrapped";
export async function main() {
  console.log(JSON.stringify(tools.map((t) => [t.name, t.function])));
  try { await getSum({ a: 1 }); } catch (e) { console.log("rejected: " + e.message); }
}
`
	if err := s.WriteMain(code); err != nil {
		t.Fatal(err)
	}
	out, exit := runBun(t.Context(), t, root, s)
	if exit != 0 || !strings.Contains(out, `[["get-sum","getSum"]]`) || !strings.Contains(out, "rejected: omnidev relay unavailable") {
		t.Fatalf("bun exited %d with output %q; want the tool list and a clear rejection", exit, out)
	}
}

// TestBuiltinModule: every run folder, even with no capability, has the
// omnidev module, in node_modules and in Deno's import map; without a
// relay its calls reject saying why.
func TestBuiltinModule(t *testing.T) {
	root := t.TempDir()
	s, err := Prepare(root, registry(root))
	if err != nil {
		t.Fatal(err)
	}
	im, err := os.ReadFile(s.ImportMapPath())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(im), `"omnidev": "./node_modules/omnidev/index.js"`) {
		t.Errorf("import map lacks omnidev:\n%s", im)
	}
	code := `import { runs } from "omnidev";
export async function main() {
  try { await runs.list(); } catch (e) { console.log("rejected: " + e.message); }
}
`
	if err := s.WriteMain(code); err != nil {
		t.Fatal(err)
	}
	out, exit := runBun(t.Context(), t, root, s)
	if exit != 0 || !strings.Contains(out, "rejected: omnidev relay unavailable") {
		t.Fatalf("bun exited %d with output %q; want a clear rejection", exit, out)
	}
}

func TestNamedImports(t *testing.T) {
	tests := []struct {
		name  string
		code  string
		want  []string
		whole bool
	}{
		{"named", "import { getA, getB as b, type GetAArgs } from \"zones\";\nimport {\n  tools,\n} from 'zones';\nimport { x } from \"other\";\n", []string{"getA", "getB", "tools"}, false},
		{"type-only import", "import type { GetAArgs } from \"zones\";\nimport { call } from \"zones\";\n", []string{"GetAArgs", "call"}, false},
		{"not named", "console.log(1);\n", nil, true},
		{"namespace", "import * as z from \"zones\";\nimport { getA } from \"zones\";\n", nil, true},
		{"default", "import z from \"zones\";\n", nil, true},
		{"re-export", "export { getA } from \"zones\";\n", nil, true},
		{"dynamic", "import { getA } from \"zones\";\nconst z = await import(\"zon\" + \"es\");\n", nil, true},
		{"own file", "import { getA } from \"zones\";\nimport { helper } from \"./lib/helper.ts\";\n", nil, true},
		{"string elsewhere", "import { getA } from \"zones\";\nconsole.log(\"zones\");\n", nil, true},
		{"string name", "import { \"get-a\" as getA } from \"zones\";\n", nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := namedImports(tt.code, "zones")
			if ok == tt.whole || !slices.Equal(got, tt.want) {
				t.Errorf("namedImports = %q, %v; want %q, %v", got, ok, tt.want, !tt.whole)
			}
		})
	}
}

// A program that imports a wrapped server's functions by name gets a module
// with just those; one that imports it otherwise gets every function.
func TestWriteMainFitsGeneratedModule(t *testing.T) {
	root := t.TempDir()
	c := &capability.Capability{ID: "wrapped", Module: "wrapped", Dir: filepath.Join(root, "omni", "capabilities", "wrapped"),
		MCP: &capability.MCPServer{Transport: capability.TransportStdio, Command: "srv"}}
	c = c.WithTools([]capability.Tool{{Name: "get-sum", InputSchema: []byte(`{"type":"object"}`)}, {Name: "get-product", InputSchema: []byte(`{"type":"object"}`)}}, "")
	s, err := Prepare(root, registry(root, c))
	if err != nil {
		t.Fatal(err)
	}
	entry := filepath.Join(s.Dir(), nodeModules, "wrapped", generatedEntry)
	tests := []struct {
		name, code      string
		exports, absent []string
	}{
		{"named", "import { getProduct } from \"wrapped\";\nexport async function main() {\n  try { await getProduct(); } catch (e) { console.log(typeof getProduct, \"rejected\"); }\n}\n",
			[]string{"export function getProduct(", "export function call("}, []string{"export function getSum(", "export const tools"}},
		{"namespace", "import * as w from \"wrapped\";\nexport async function main() {\n  try { await w.getSum(); } catch (e) { console.log(typeof w.getProduct, \"rejected\"); }\n}\n",
			[]string{"export function getProduct(", "export function getSum(", "export const tools"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := s.WriteMain(tt.code); err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(entry)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.exports {
				if !strings.Contains(string(data), w) {
					t.Errorf("%s lacks %q", generatedEntry, w)
				}
			}
			for _, w := range tt.absent {
				if strings.Contains(string(data), w) {
					t.Errorf("%s holds %q", generatedEntry, w)
				}
			}
			if out, exit := runBun(t.Context(), t, root, s); exit != 0 || !strings.Contains(out, "function rejected") {
				t.Errorf("bun exited %d with output %q", exit, out)
			}
		})
	}
}
