package server_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// wrappedRepo is a repository whose capability "everything" wraps the MCP
// reference server (installed globally by CI: npm i -g
// @modelcontextprotocol/server-everything) and declares a secret.
func wrappedRepo(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("mcp-server-everything")
	if err != nil {
		t.Fatalf("mcp-server-everything is required (npm install -g @modelcontextprotocol/server-everything): %v", err)
	}
	root := t.TempDir()
	writeFile(t, root, "omni/config.toml", "[capabilities]\nenable = [\"everything\"]\n")
	writeFile(t, root, "omni/capabilities/everything/capability.toml", `[capability]
id = "everything"
description = "The MCP reference server"

[env]
EVERYTHING_TOKEN = { required = true, secret = true }

[mcp]
command = "`+bin+`"
args = ["stdio"]
env = { TOKEN_FOR_SERVER = "${EVERYTHING_TOKEN}" }
`)
	writeFile(t, root, ".omni/.env", "EVERYTHING_TOKEN=tok-e2e-123\n")
	writeFile(t, root, ".gitignore", ".omni/\n")
	git(t, root, "init", "-q", "-b", "main")
	return root
}

// serverPIDsIn lists the processes whose working folder is dir: the
// wrapped servers omnidev started there.
func serverPIDsIn(dir string) []string {
	entries, _ := os.ReadDir("/proc")
	var pids []string
	for _, e := range entries {
		if cwd, err := os.Readlink(filepath.Join("/proc", e.Name(), "cwd")); err == nil && cwd == dir {
			if cmd, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline")); strings.Contains(string(cmd), "mcp-server-everything") || strings.Contains(string(cmd), "server-everything") {
				pids = append(pids, e.Name())
			}
		}
	}
	return pids
}

func TestEndToEndWrappedServer(t *testing.T) {
	root := wrappedRepo(t)
	s := startServer(t, root)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()

	// Its tools are typed once the server has listed them.
	deadline := time.Now().Add(30 * time.Second)
	for {
		var q struct {
			TypeDefinitions string `json:"type_definitions"`
		}
		s.call(t, ctx, "omni_query", map[string]any{"include_types": true}, &q)
		if strings.Contains(q.TypeDefinitions, "declare module 'everything'") && strings.Contains(q.TypeDefinitions, "export function getSum(args: {") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no generated declarations for everything; type_definitions:\n%s", q.TypeDefinitions)
		}
		time.Sleep(100 * time.Millisecond)
	}

	code := `import { echo, getSum, call, tools } from "everything";
const r = await echo({ message: "hi" });
console.log(JSON.stringify(r));
console.log(JSON.stringify(await getSum({ a: 2, b: 3 })));
const w = await call("get-structured-content", { location: "New York" });
console.log("structured", typeof w.temperature);
const many = await Promise.all(Array.from({ length: 20 }, (_, i) => echo({ message: "m" + i })));
console.log("many", many.every((x, i) => x.text === "Echo: m" + i));
try { await call("get-structured-content", { location: "Paris" }); } catch (e) { console.log("isError rejected:", e.message); }
try { await call("no-such-tool", {}); } catch (e) { console.log("unknown rejected:", e.code, e.message); }
console.log("tools", tools.some((t) => t.name === "get-sum" && t.function === "getSum"));
console.log("secret", process.env.EVERYTHING_TOKEN === undefined && !JSON.stringify(process.env).includes("tok-e2e-123"));
`
	var res struct {
		ExitCode int    `json:"exit_code"`
		Stdout   string `json:"stdout"`
		Stderr   string `json:"stderr"`
	}
	s.call(t, ctx, "omni_execute", map[string]any{"code": code}, &res)
	for _, want := range []string{
		`{"text":"Echo: hi","content":[{"type":"text","text":"Echo: hi"}]}`,
		`"text":"The sum of 2 and 3 is 5."`,
		"structured number",
		"many true",
		"isError rejected: MCP error -32602: Input validation error",
		"unknown rejected:",
		"tools true",
		"secret true",
	} {
		if !strings.Contains(res.Stdout, want) {
			t.Errorf("stdout lacks %q\nstdout:\n%s\nstderr:\n%s", want, res.Stdout, res.Stderr)
		}
	}
	if strings.Contains(s.stderr.String(), "tok-e2e-123") {
		t.Error("the secret appears in omnidev's log")
	}
	if len(serverPIDsIn(root)) == 0 {
		t.Fatal("found no wrapped server process to check the shutdown against")
	}

	// kill -9 of omnidev leaves no wrapped server behind.
	s.cmd.Process.Signal(syscall.SIGKILL) // the session's cleanup reaps it
	deadline = time.Now().Add(10 * time.Second)
	for len(serverPIDsIn(root)) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("wrapped servers %v outlived omnidev", serverPIDsIn(root))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestEndToEndExecStartsImportedServers(t *testing.T) {
	root := wrappedRepo(t)
	writeFile(t, root, "prog.ts", `import { getSum } from "everything";
console.log((await getSum({ a: 40, b: 2 })).text);
`)
	cmd := exec.Command(binary, "exec", "prog.ts")
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "The sum of 40 and 2 is 42.") {
		t.Fatalf("omnidev exec: %v\n%s", err, out)
	}
	if pids := serverPIDsIn(root); len(pids) > 0 {
		t.Errorf("wrapped servers %v outlived omnidev exec", pids)
	}
}
