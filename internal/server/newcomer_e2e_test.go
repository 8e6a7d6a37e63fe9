package server_test

import (
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/omnidev/omnidev/internal/testrepo"
)

// TestEndToEndRuntimeMissing serves a repository where Bun is not on PATH:
// the server says so in its log and in the instructions a client gets on
// connecting, and omni_execute's error gives the same sentence.
func TestEndToEndRuntimeMissing(t *testing.T) {
	s := startServer(t, fixtureRepo(t), "PATH="+t.TempDir())
	const sentence = "install it in the repository with `npm install -D bun`"
	if instr := s.session.InitializeResult().Instructions; !strings.Contains(instr, "omni_execute cannot run programs on this machine: ") || !strings.Contains(instr, sentence) {
		t.Errorf("instructions do not name the missing runtime:\n%s", instr)
	}
	testrepo.WaitFor(t, "the warning in the server's log", 5*time.Second, func() bool { return strings.Contains(s.stderr.String(), sentence) })
	s.wantToolError(t, t.Context(), "omni_execute", map[string]any{"code": "console.log(1)"}, sentence)
}

// TestEndToEndNewcomer walks through what an agent trips on, against the
// real binary and real Bun: the summary's rules, skills, missing types and
// unavailable capability; root-relative imports; a mistyped module; a
// timeout; a printed secret.
func TestEndToEndNewcomer(t *testing.T) {
	root := fixtureRepo(t)
	writeFile(t, root, "omni/config.toml", "[capabilities]\nenable = [\"repo\", \"tasks\", \"vault\", \"gh\", \"untyped\"]\ndisabel = [\"tasks\"]\n")
	writeFile(t, root, "omni/capabilities/vault/capability.toml", "[capability]\nid = \"vault\"\n[env]\nVAULT_TOKEN = { required = true, secret = true }\n")
	writeFile(t, root, "omni/capabilities/vault/index.ts", "export const token = () => process.env.VAULT_TOKEN;\n")
	writeFile(t, root, "omni/capabilities/vault/types.d.ts", "export function token(): string;\n")
	writeFile(t, root, "omni/capabilities/gh/capability.toml", "[capability]\nid = \"gh\"\n[exports]\nmodule = \"github\"\n[env]\nGH_TOKEN = { required = true }\n")
	writeFile(t, root, "omni/capabilities/gh/index.ts", "export const x = 1;\n")
	writeFile(t, root, "omni/capabilities/untyped/capability.toml", "[capability]\nid = \"untyped\"\n")
	writeFile(t, root, "omni/capabilities/untyped/index.ts", "export const y = 2;\n")
	writeFile(t, root, "src/format.ts", "export const format = (s: string): string => `<${s}>`;\n")
	s := startServer(t, root, "VAULT_TOKEN=hunter2-very-secret", "GH_TOKEN=")
	ctx := t.Context()
	if out, err := exec.Command(binary, "version").Output(); err != nil || string(out) != "omnidev "+s.session.InitializeResult().ServerInfo.Version+"\n" {
		t.Errorf("serverInfo.version %q, `omnidev version` %q (%v): want the same", s.session.InitializeResult().ServerInfo.Version, out, err)
	}
	if strings.Contains(s.session.InitializeResult().Instructions, "cannot run programs") {
		t.Errorf("instructions warn of a missing runtime with Bun installed")
	}
	if want := "omni/config.toml:3: unknown key capabilities.disabel is ignored"; !strings.Contains(s.stderr.String(), want) {
		t.Errorf("the server's log lacks %q", want)
	}
	const ghError = "required environment variable GH_TOKEN is not set; set it in the environment or in .omni/.env"

	t.Run("summary", func(t *testing.T) {
		var out struct {
			Summary []struct {
				ID, Module, Error string
				Skills, Rules     []string
				NoTypes           bool `json:"no_types"`
			}
		}
		s.call(t, ctx, "omni_query", map[string]any{}, &out)
		byID := map[string]int{}
		for i, c := range out.Summary {
			byID[c.ID] = i
		}
		// Five capabilities, then the built-in omnidev module.
		if len(out.Summary) != 6 || out.Summary[5].ID != "omnidev" {
			t.Fatalf("summary lists %d modules, want 5 capabilities and omnidev: %+v", len(out.Summary), out.Summary)
		}
		if gh := out.Summary[byID["gh"]]; gh.Error != ghError {
			t.Errorf("gh error = %q, want %q", gh.Error, ghError)
		}
		if !out.Summary[byID["untyped"]].NoTypes || out.Summary[byID["vault"]].NoTypes {
			t.Errorf("no_types: %+v", out.Summary)
		}
		repo := out.Summary[byID["repo"]]
		if len(repo.Rules) != 2 || !strings.HasPrefix(repo.Rules[0], "edits: ") || len(repo.Skills) != 1 || !strings.HasPrefix(repo.Skills[0], "find-and-edit: ") {
			t.Errorf("repo rules %q, skills %q", repo.Rules, repo.Skills)
		}
	})

	type execOut struct {
		ExitCode int `json:"exit_code"`
		Stdout   string
		Stderr   string
		TimedOut bool `json:"timed_out"`
	}
	for _, tc := range []struct {
		name       string
		args       map[string]any
		wantExit   int
		wantStdout string
		wantStderr string
	}{
		{"unavailable capability", map[string]any{"code": "import { x } from \"github\";\nconsole.log(x);\n"}, 1, "", ghError},
		{"relative import from the root", map[string]any{"code": "import { format } from \"./src/format.ts\";\nconsole.log(format(\"ok\"));\n"}, 0, "<ok>\n", ""},
		{"mistyped module", map[string]any{"code": "import { listTasks } from \"taks\";\nconsole.log(listTasks);\n"}, 1, "", "omnidev: there is no module `taks`; did you mean `tasks`?"},
		{"timeout", map[string]any{"code": "while (true) {}\n", "timeout_ms": 700}, -1, "", "omnidev: the run was stopped after 0.7 s, the limit set by the timeout_ms argument"},
		{"secret", map[string]any{"code": "import { token } from \"vault\";\nconsole.log(token());\nconsole.error(`t=${token()}`);\n"}, 0, "[secret VAULT_TOKEN]\n", "t=[secret VAULT_TOKEN]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out execOut
			s.call(t, ctx, "omni_execute", tc.args, &out)
			if out.ExitCode != tc.wantExit || (tc.wantStdout != "" && out.Stdout != tc.wantStdout) || !strings.Contains(out.Stderr, tc.wantStderr) {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit %d, stdout %q, stderr with %q",
					out.ExitCode, out.Stdout, out.Stderr, tc.wantExit, tc.wantStdout, tc.wantStderr)
			}
			if strings.Contains(out.Stdout+out.Stderr, "hunter2") {
				t.Errorf("the secret's value came back")
			}
		})
	}
}
