package execute

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/omnidev/omnidev/internal/capability"
	"github.com/omnidev/omnidev/internal/testrepo"
)

// TestRunExplains runs programs with real Bun and checks the lines omnidev
// adds to stderr, and that declared secrets never come back.
func TestRunExplains(t *testing.T) {
	requireBun(t)
	root := t.TempDir()
	caps := []*capability.Capability{}
	for _, id := range []string{"http-client", "tasks"} {
		dir := filepath.Join(root, "omni", "capabilities", id)
		testrepo.WriteFiles(t, dir, map[string]string{"index.ts": "export const name = \"" + id + "\";\n"})
		caps = append(caps, &capability.Capability{ID: id, Module: id, Dir: dir, Entry: "index.ts"})
	}
	testrepo.WriteFiles(t, root, map[string]string{"src/format.ts": "export const f = 1;\n"})
	sb := prepare(t, root, caps...)
	e := New(root, nil)

	tests := []struct {
		name    string
		code    string
		setup   func(*Request)
		cancel  bool
		want    []string // in stderr
		wantOut string   // stdout, exactly ("" skips the check)
	}{
		{
			name:  "timeout names its bound",
			code:  "while (true) {}\n",
			setup: func(r *Request) { r.Timeout, r.TimeoutSource = 500*time.Millisecond, "the timeout_ms argument" },
			want:  []string{"omnidev: the run was stopped after 0.5 s, the limit set by the timeout_ms argument\n"},
		},
		{
			name:   "cancellation says so",
			code:   "console.log('up');\nawait new Promise((r) => setTimeout(r, 30_000));\n",
			cancel: true,
			want:   []string{"omnidev: the run was stopped after ", " because the call was cancelled"},
		},
		{
			name: "mistyped module",
			code: "import { name } from \"http-clent\";\nconsole.log(name);\n",
			want: []string{"omnidev: there is no module `http-clent`; did you mean `http-client`?\n"},
		},
		{
			name: "relative import without its extension",
			code: "import { f } from \"./src/format\";\nconsole.log(f);\n",
			want: []string{`omnidev: relative imports resolve from the repository root when they name the file: import "./src/format.ts"`},
		},
		{
			name: "secrets redacted in stdout and stderr",
			code: "console.log(process.env.API_TOKEN, process.env.SHORT);\nconsole.error('token=' + process.env.API_TOKEN);\n",
			setup: func(r *Request) {
				r.Env = append(r.Env, "API_TOKEN=s3cr3t-value", "SHORT=s3cr3t")
				r.Secrets = []Secret{{"SHORT", "s3cr3t"}, {"API_TOKEN", "s3cr3t-value"}, {"EMPTY", ""}}
			},
			want:    []string{"token=[secret API_TOKEN]"},
			wantOut: "[secret API_TOKEN] [secret SHORT]\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := request(sb, tt.code)
			if tt.setup != nil {
				tt.setup(&req)
			}
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			if tt.cancel {
				req.Progress = func(p Progress) {
					if p.StdoutBytes > 0 {
						cancel()
					}
				}
			}
			res, err := e.Run(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if !strings.Contains(res.Stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, res.Stderr)
				}
			}
			if tt.wantOut != "" && res.Stdout != tt.wantOut {
				t.Errorf("stdout = %q, want %q", res.Stdout, tt.wantOut)
			}
			if strings.Contains(res.Stdout+res.Stderr, "s3cr3t") {
				t.Errorf("a secret value came back:\n%s%s", res.Stdout, res.Stderr)
			}
		})
	}
}

func TestDidYouMean(t *testing.T) {
	modules := []string{"http-client", "tasks", "db", "task", "tasky"}
	for _, tt := range []struct{ name, want string }{
		{"http-clent", "there is no module `http-clent`; did you mean `http-client`?"},
		{"taks", "there is no module `taks`; did you mean `tasks`?"},
		{"tas", "there is no module `tas`; did you mean `task`?"},
		{"taskz", "there is no module `taskz`; did you mean `tasks` or `task` or `tasky`?"},
		{"@scope/tasks/sub", ""},
		{"fs", ""},
		{"tasks", ""},
		{"completely-different", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := didYouMean(tt.name, modules); got != tt.want {
				t.Errorf("didYouMean(%q) = %q, want %q", tt.name, got, tt.want)
			}
		})
	}
}
