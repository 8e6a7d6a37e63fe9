package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/omnidev/omnidev/internal/execute"
	"github.com/omnidev/omnidev/internal/testrepo"
)

// omnidev runs the CLI in-process and returns its exit status and output.
func omnidev(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = run(t.Context(), args, strings.NewReader(stdin), &out, &errOut)
	return code, out.String(), errOut.String()
}

func gitInit(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	return dir
}

// TestInitDoctorExec is the first five minutes of a new user: init in a new
// git repository, doctor, run the example, and a second init that refuses.
func TestInitDoctorExec(t *testing.T) {
	dir := gitInit(t)
	if code, out, errOut := omnidev(t, "", "--dir", dir, "init"); code != 0 || !strings.Contains(out, "omni/config.toml") {
		t.Fatalf("init: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut := omnidev(t, "", "--dir", dir, "doctor")
	if code != 0 {
		t.Fatalf("doctor after init: exit %d\n%s%s", code, out, errOut)
	}
	for _, want := range []string{"example", `module "example"`, "problems:     none", "runtime:      bun", "ok:"} {
		if !strings.Contains(out, want) {
			t.Errorf("doctor output lacks %q:\n%s", want, out)
		}
	}

	program := `import { greet } from "example";
import { writeFileSync } from "node:fs";
writeFileSync("hello.txt", greet("omnidev") + "\n");
export function main() { console.log(greet("you")); return 4; }`
	code, out, errOut = omnidev(t, program, "--dir", dir, "exec", "-")
	if code != 4 || strings.TrimSpace(out) != "Hello, you!" {
		t.Errorf("exec: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if !strings.Contains(errOut, "added") || !strings.Contains(errOut, "hello.txt (+1 -0)") {
		t.Errorf("exec summary does not report hello.txt:\n%s", errOut)
	}

	code, out, errOut = omnidev(t, "", "--dir", dir, "query", "--json", "greet")
	if code != 0 || !strings.Contains(out, `"source": "skill:example/greet"`) {
		t.Errorf("query --json greet: exit %d\n%s%s", code, out, errOut)
	}

	code, out, errOut = omnidev(t, "", "--dir", dir, "query", "--json")
	if code != 0 || !strings.Contains(out, "Promise<number>") {
		t.Errorf("query --json: exit %d, want the type definitions as written (no HTML escapes)\n%s%s", code, out, errOut)
	}

	before, _ := os.ReadFile(filepath.Join(dir, "omni", "config.toml"))
	code, _, errOut = omnidev(t, "", "--dir", dir, "init")
	after, _ := os.ReadFile(filepath.Join(dir, "omni", "config.toml"))
	if code == 0 || !strings.Contains(errOut, "already exists") || !bytes.Equal(before, after) {
		t.Errorf("second init: exit %d, %q; want a refusal that changes nothing", code, errOut)
	}
}

func TestDoctorFailsOnBrokenConfig(t *testing.T) {
	dir := gitInit(t)
	if err := os.MkdirAll(filepath.Join(dir, "omni"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "omni", "config.toml"), []byte("[capabilities]\nenable = [\"a\"\n"), 0o644)
	code, out, _ := omnidev(t, "", "--dir", dir, "doctor")
	if code == 0 || !strings.Contains(out, "omni/config.toml:") || !strings.Contains(out, "not ready") {
		t.Errorf("doctor on a broken config: exit %d\n%s", code, out)
	}
}

func TestUsage(t *testing.T) {
	for _, tc := range []struct {
		name     string
		args     []string
		wantCode int
		want     string
	}{
		{"no command", nil, 2, "Commands:"},
		{"help", []string{"help"}, 0, "doctor"},
		{"unknown command", []string{"frobnicate"}, 2, `unknown command "frobnicate"`},
		{"version", []string{"version"}, 0, "omnidev dev"},
		{"subcommand help", []string{"query", "--help"}, 0, "--limit"},
		{"bad flag", []string{"exec", "--bogus"}, 2, "flag provided but not defined"},
		{"exec without a program", []string{"exec"}, 2, "give one program"},
		{"no repository", []string{"--dir", "/", "doctor"}, 1, "omnidev init"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := omnidev(t, "", tc.args...)
			if code != tc.wantCode || !strings.Contains(out+errOut, tc.want) {
				t.Errorf("exit %d (want %d), output:\n%s%s\nwant it to mention %q", code, tc.wantCode, out, errOut, tc.want)
			}
		})
	}
}

// TestExecOutOfRangeConfig checks that a limit past its bound, in either
// config file, stops exec with the file, line and column and the allowed
// range, before anything runs.
func TestExecOutOfRangeConfig(t *testing.T) {
	for _, tc := range []struct {
		name, file, content, want string
	}{
		{"max_output_bytes in config.toml", "omni/config.toml", "[sandbox]\nmax_output_bytes = 99999999999\n",
			"omni/config.toml:2:20: [sandbox] max_output_bytes is 99999999999, out of range; allowed: 1 to 16777216"},
		{"timeout in config.local.toml", ".omni/config.local.toml", "[sandbox]\ntimeout = \"24h\"\n",
			`.omni/config.local.toml:2:12: [sandbox] timeout "24h" is out of range; allowed: more than 0 and at most 1h`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := gitInit(t)
			if code, out, errOut := omnidev(t, "", "--dir", dir, "init"); code != 0 {
				t.Fatalf("init: exit %d\n%s%s", code, out, errOut)
			}
			path := filepath.Join(dir, filepath.FromSlash(tc.file))
			os.MkdirAll(filepath.Dir(path), 0o755)
			if err := os.WriteFile(path, []byte(tc.content), 0o644); err != nil {
				t.Fatal(err)
			}
			program := `import { writeFileSync } from "node:fs"; writeFileSync("ran.txt", "x");`
			code, _, errOut := omnidev(t, program, "--dir", dir, "exec", "-")
			if code == 0 || !strings.Contains(errOut, tc.want) {
				t.Errorf("exec: exit %d, stderr %q\nwant an error containing %q", code, errOut, tc.want)
			}
			if _, err := os.Stat(filepath.Join(dir, "ran.txt")); err == nil {
				t.Error("the program ran despite the config error")
			}
		})
	}
}

// TestExecSummaryOmits checks that the human summary says how many changed
// files it does not list.
func TestExecSummaryOmits(t *testing.T) {
	dir := gitInit(t)
	if code, out, errOut := omnidev(t, "", "--dir", dir, "init"); code != 0 {
		t.Fatalf("init: exit %d\n%s%s", code, out, errOut)
	}
	program := `import { mkdirSync, writeFileSync } from "node:fs";
mkdirSync("gen");
for (let i = 0; i < 205; i++) writeFileSync("gen/f" + i + ".txt", "x\n");`
	code, _, errOut := omnidev(t, program, "--dir", dir, "exec", "-")
	more := fmt.Sprintf("... and %d more files", 205-execute.MaxListedChanges)
	if code != 0 || !strings.Contains(errOut, "205 files changed") || !strings.Contains(errOut, more) {
		t.Errorf("exec: exit %d, summary:\n%s", code, errOut)
	}
	if n := strings.Count(errOut, "    added    gen/"); n != execute.MaxListedChanges {
		t.Errorf("summary lists %d files, want %d", n, execute.MaxListedChanges)
	}
}

// TestExecRedactsAndExplains runs programs through the CLI: a declared
// secret never reaches the terminal, and a timeout says which flag set it.
func TestExecRedactsAndExplains(t *testing.T) {
	dir := gitInit(t)
	if code, out, errOut := omnidev(t, "", "--dir", dir, "init"); code != 0 {
		t.Fatalf("init: exit %d\n%s%s", code, out, errOut)
	}
	capToml := filepath.Join(dir, "omni", "capabilities", "example", "capability.toml")
	data, err := os.ReadFile(capToml)
	if err != nil {
		t.Fatal(err)
	}
	data = append(data, "EXAMPLE_KEY = { secret = true }\n"...) // under the template's [env]
	if err := os.WriteFile(capToml, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, ".omni"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".omni", ".env"), []byte("EXAMPLE_KEY=k3y-v4lue\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := omnidev(t, "console.log(process.env.EXAMPLE_KEY);\nconsole.error(process.env.EXAMPLE_KEY);\n", "--dir", dir, "exec", "-")
	if code != 0 || out != "[secret EXAMPLE_KEY]\n" || !strings.Contains(errOut, "[secret EXAMPLE_KEY]") || strings.Contains(out+errOut, "k3y") {
		t.Errorf("exec printing a secret: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	code, _, errOut = omnidev(t, "while (true) {}\n", "--dir", dir, "exec", "--timeout", "500ms", "-")
	if code != 124 || !strings.Contains(errOut, "omnidev: the run was stopped after 0.5 s, the limit set by the --timeout argument") {
		t.Errorf("exec --timeout: exit %d, stderr %q", code, errOut)
	}
}

// TestDoctorListsWrappedServers: doctor starts each wrapped MCP server and
// shows its tool count, or the error that kept it from starting.
func TestDoctorListsWrappedServers(t *testing.T) {
	bin, err := exec.LookPath("mcp-server-everything")
	if err != nil {
		t.Fatalf("mcp-server-everything is required (npm install -g @modelcontextprotocol/server-everything): %v", err)
	}
	dir := gitInit(t)
	files := map[string]string{
		"omni/config.toml": "[capabilities]\nenable = [\"everything\", \"broken\"]\n",
		"omni/capabilities/everything/capability.toml": "[capability]\nid = \"everything\"\n[mcp]\ncommand = \"" + bin + "\"\nargs = [\"stdio\"]\n",
		"omni/capabilities/broken/capability.toml":     "[capability]\nid = \"broken\"\n[mcp]\ncommand = \"/no/such/server\"\n",
	}
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	code, out, errOut := omnidev(t, "", "--dir", dir, "doctor")
	if code != 0 {
		t.Fatalf("doctor: exit %d\n%s%s", code, out, errOut)
	}
	for _, want := range []string{
		`MCP servers:  2 wrapped`,
		`everything +` + regexp.QuoteMeta(bin) + `: started, [1-9][0-9]* tools`,
		`broken +/no/such/server: ERROR start MCP server /no/such/server:`,
	} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("doctor output does not match %q:\n%s", want, out)
		}
	}

	// query starts the servers too, so it finds their tools as a server would.
	code, out, errOut = omnidev(t, "", "--dir", dir, "query", "--kinds", "tool", "sum of two numbers")
	if code != 0 || !strings.HasPrefix(out, "tool:everything/get-sum") {
		t.Errorf("query --kinds tool: exit %d\n%s%s", code, out, errOut)
	}
}

// TestQueryShowsMatched: a hit found through a typo or a prefix names the
// words of the doc it matched, under its snippet; a literal hit does not.
func TestQueryShowsMatched(t *testing.T) {
	dir := gitInit(t)
	if code, out, errOut := omnidev(t, "", "--dir", dir, "init"); code != 0 {
		t.Fatalf("init: exit %d\n%s%s", code, out, errOut)
	}
	doc := filepath.Join(dir, "omni", "capabilities", "example", "docs", "entries.md")
	os.MkdirAll(filepath.Dir(doc), 0o755)
	if err := os.WriteFile(doc, []byte("# Log entries\n\nEach entry carries a timestamp. Sort the timestamps before you print them.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	const matched = "\n    matched: timestamp, timestamps\n"
	for _, tc := range []struct {
		name, query string
		wantMatched bool
	}{
		{"typo", "timestmap", true},
		{"prefix", "timest", true},
		{"literal", "timestamp", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := omnidev(t, "", "--dir", dir, "query", tc.query)
			if code != 0 || !strings.HasPrefix(out, "doc:example/entries  Log entries") {
				t.Fatalf("query %s: exit %d\n%s%s", tc.query, code, out, errOut)
			}
			if got := strings.Contains(out, matched); got != tc.wantMatched {
				t.Errorf("query %s shows %q: %v, want %v\n%s", tc.query, matched, got, tc.wantMatched, out)
			}
			if !tc.wantMatched && strings.Contains(out, "matched:") {
				t.Errorf("query %s: a literal hit shows a matched line\n%s", tc.query, out)
			}
		})
	}
}

// TestQueryTypesOfACapability: `query --types` declares the tools found of
// a wrapped server too big to declare whole, and with the capability's id
// as the only word, all of them.
func TestQueryTypesOfACapability(t *testing.T) {
	dir := gitInit(t)
	bin := testrepo.TestServer(t)
	testrepo.WriteFiles(t, dir, map[string]string{
		"omni/config.toml":                        "[capabilities]\nenable = [\"zones\"]\n",
		"omni/capabilities/zones/capability.toml": "[capability]\nid = \"zones\"\n[mcp]\ncommand = \"" + bin + "\"\nargs = [\"-tools\", \"300\"]\n",
	})
	code, out, errOut := omnidev(t, "", "--dir", dir, "query", "--types", "--kinds", "tool", "--limit", "2", "zone shard 7")
	if code != 0 || strings.Count(out, "export function getZone") != 2 || !strings.Contains(out, "types declared here: the 2 tools found") {
		t.Errorf("query --types with words: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = omnidev(t, "", "--dir", dir, "query", "--types", "zones")
	if code != 0 || strings.Count(out, "export function getZone") != 300 || strings.Contains(out, "types not in this answer") {
		t.Errorf("query --types zones: exit %d, %d functions\n%.2000s%s", code, strings.Count(out, "export function getZone"), out, errOut)
	}
}
