// Checks of the module as a whole, in the manner of govulncheck's
// all_test.go: its go.mod and go.sum are tidy, and its packages import only
// what their doc.go files allow.
package omnidev

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/omnidev/omnidev"

// TestGoModTidy fails when `go mod tidy` would change go.mod or go.sum.
func TestGoModTidy(t *testing.T) {
	out, err := exec.CommandContext(t.Context(), "go", "mod", "tidy", "-diff").CombinedOutput()
	if err != nil {
		t.Fatalf("go mod tidy would change go.mod or go.sum (run it and commit the result): %v\n%s", err, out)
	}
}

// pkg is a package of the module and what it depends on.
type pkg struct {
	ImportPath string
	Imports    []string // direct
	Deps       []string // transitive
}

// TestImportRules checks the module's import graph against the rules the
// packages' doc.go files state.
func TestImportRules(t *testing.T) {
	cmd := exec.CommandContext(t.Context(), "go", "list", "-json=ImportPath,Imports,Deps", "./...")
	out, err := cmd.Output()
	if err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			t.Fatalf("go list: %v\n%s", err, exit.Stderr)
		}
		t.Fatalf("go list: %v", err)
	}
	var pkgs []pkg
	for dec := json.NewDecoder(strings.NewReader(string(out))); ; {
		var p pkg
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	if len(pkgs) < 8 {
		t.Fatalf("go list found %d packages; is this the module root?", len(pkgs))
	}
	for _, v := range importViolations(pkgs) {
		t.Error(v)
	}
}

func TestImportViolations(t *testing.T) {
	const sdk = "github.com/modelcontextprotocol/go-sdk/mcp"
	in := func(name string) string { return module + "/internal/" + name }
	for _, tc := range []struct {
		name string
		pkgs []pkg
		want []string
	}{
		{"the layout as intended", []pkg{
			{ImportPath: module + "/cmd/omnidev", Imports: []string{in("server"), in("engine")}, Deps: []string{in("server"), in("engine"), in("query"), sdk}},
			{ImportPath: in("server"), Imports: []string{in("engine"), sdk}, Deps: []string{in("engine"), in("query"), sdk}},
			{ImportPath: in("relay"), Imports: []string{sdk}, Deps: []string{sdk}},
			{ImportPath: in("engine"), Imports: []string{in("query")}, Deps: []string{in("query")}},
			{ImportPath: in("query"), Imports: []string{in("capability")}, Deps: []string{in("capability")}},
		}, nil},
		{"the SDK in the engine", []pkg{
			{ImportPath: in("engine"), Imports: []string{sdk}, Deps: []string{sdk}},
		}, []string{"engine imports the MCP SDK", "engine depends on the MCP SDK"}},
		{"the SDK through a helper package", []pkg{
			{ImportPath: in("helper"), Imports: []string{sdk}, Deps: []string{sdk}},
			{ImportPath: in("query"), Imports: []string{in("helper")}, Deps: []string{in("helper"), sdk}},
		}, []string{"helper imports the MCP SDK", "query depends on the MCP SDK"}},
		{"the engine in a domain package", []pkg{
			{ImportPath: in("execute"), Imports: []string{in("engine")}, Deps: []string{in("engine")}},
		}, []string{"execute depends on internal/engine"}},
		{"the server outside cmd/omnidev", []pkg{
			{ImportPath: in("engine"), Imports: []string{in("server")}, Deps: []string{in("server")}},
		}, []string{"engine depends on internal/server"}},
		{"the relay and the server together", []pkg{
			{ImportPath: in("relay"), Imports: []string{in("server")}, Deps: []string{in("server")}},
		}, []string{"relay depends on internal/server"}},
		{"the changes of a run, and the runs", []pkg{
			{ImportPath: in("execute"), Imports: []string{in("changes"), in("isolate")}, Deps: []string{in("changes"), in("isolate")}},
			{ImportPath: in("changes"), Imports: []string{in("isolate")}, Deps: []string{in("isolate")}},
		}, []string{"changes depends on internal/isolate"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := importViolations(tc.pkgs)
			for _, w := range tc.want {
				if !slices.ContainsFunc(got, func(g string) bool { return strings.Contains(g, w) }) {
					t.Errorf("violations %q lack %q", got, w)
				}
			}
			if len(got) != len(tc.want) {
				t.Errorf("%d violations %q, want %d", len(got), got, len(tc.want))
			}
		})
	}
}

// importViolations lists the imports that break the rules:
//   - only internal/server and internal/relay, the two sides of MCP,
//     import the MCP SDK, and neither imports the other;
//   - the engine and the domain packages do not depend on the SDK at all,
//     not even through another package, so they stay testable without MCP;
//   - a domain package never depends on the engine (the engine composes
//     them, not the other way round);
//   - only cmd/omnidev imports internal/server;
//   - internal/changes depends on no other package of the module: it
//     reads a worktree and its git index, and knows nothing of the
//     programs whose changes it finds, nor of configuration.
func importViolations(pkgs []pkg) []string {
	const sdk = "github.com/modelcontextprotocol/go-sdk"
	rel := func(path string) string { return strings.TrimPrefix(path, module+"/") }
	domain := []string{"capability", "query", "runfolder", "execute", "changes", "watch", "isolate"}
	isDomain := func(p string) bool {
		for _, d := range domain {
			if p == "internal/"+d || strings.HasPrefix(p, "internal/"+d+"/") {
				return true
			}
		}
		return false
	}
	isSDK := func(path string) bool { return path == sdk || strings.HasPrefix(path, sdk+"/") }
	var out []string
	for _, p := range pkgs {
		name := rel(p.ImportPath)
		speaksMCP := name == "internal/server" || name == "internal/relay"
		if !speaksMCP && slices.ContainsFunc(p.Imports, isSDK) {
			out = append(out, fmt.Sprintf("%s imports the MCP SDK; only internal/server and internal/relay may", name))
		}
		if (name == "internal/engine" || isDomain(name)) && slices.ContainsFunc(p.Deps, isSDK) {
			out = append(out, fmt.Sprintf("%s depends on the MCP SDK; the engine and the domain packages must stay free of MCP", name))
		}
		for _, d := range p.Deps {
			dep := rel(d)
			switch {
			case isDomain(name) && (dep == "internal/engine" || dep == "internal/server" || dep == "internal/relay"):
				out = append(out, fmt.Sprintf("%s depends on %s; a domain package must not depend on what composes it", name, dep))
			case dep == "internal/server" && name != "cmd/omnidev":
				out = append(out, fmt.Sprintf("%s depends on internal/server; only cmd/omnidev may", name))
			case dep == "internal/relay" && name == "internal/server":
				out = append(out, "internal/server depends on internal/relay; the two sides of MCP stay apart")
			case name == "internal/changes" && strings.HasPrefix(d, module+"/internal/"):
				out = append(out, fmt.Sprintf("internal/changes depends on %s; what a run changed is found from the worktree alone", dep))
			}
		}
	}
	return out
}
