package server_test

import (
	"strings"
	"testing"
)

// TestEndToEndSyntaxErrors: every syntax error of a program is reported
// with its line and column in main.ts, not only their count.
func TestEndToEndSyntaxErrors(t *testing.T) {
	root := fixtureRepo(t)
	s := startServer(t, root)
	var res struct {
		ExitCode int `json:"exit_code"`
		Stderr   string
	}
	code := "let x = 1;\nlet x = 2;\nconst y = 3;\nconst y = 4;\nexport function main() { return 0; }\n"
	s.call(t, t.Context(), "omni_execute", map[string]any{"code": code}, &res)
	for _, want := range []string{
		`main.ts:2:5: error: "x" has already been declared`,
		`main.ts:4:7: error: "y" has already been declared`,
	} {
		if res.ExitCode != 1 || !strings.Contains(res.Stderr, want) {
			t.Errorf("exit %d, stderr lacks %q:\n%s", res.ExitCode, want, res.Stderr)
		}
	}
}
