package relay

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"testing"

	"github.com/omnidev/omnidev/internal/tsgen"
)

// TestChannelBuiltin: calls of the capability "omnidev" go to the run's
// builtin, never to a wrapped server, through the run's redaction; a run
// without one is told so.
func TestChannelBuiltin(t *testing.T) {
	dir := t.TempDir()
	r := New(Options{})
	t.Cleanup(func() { r.Close() })
	if err := r.Listen(filepath.Join(dir, "r.sock"), "r.sock"); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	builtin := func(_ context.Context, tool string, args json.RawMessage) ([]byte, error) {
		switch tool {
		case "echo":
			return fmt.Appendf(nil, `{"content":[],"structuredContent":{"args":%s,"secret":"hunter2"}}`, args), nil
		case "big":
			return bytes.Repeat([]byte("x"), MaxResultBytes+1), nil
		}
		return nil, errors.New("no such run: \"zz\"")
	}
	redact := func(b []byte) []byte { return bytes.ReplaceAll(b, []byte("hunter2"), []byte("[redacted]")) }
	tests := []struct {
		name    string
		builtin func(context.Context, string, json.RawMessage) ([]byte, error)
		request string
		want    string
	}{
		{"answered", builtin, `{"id":1,"capability":"omnidev","tool":"echo","args":{"n":3}}`, `{"id":1,"result":{"content":[],"structuredContent":{"args":{"n":3},"secret":"[redacted]"}}}`},
		{"rejected", builtin, `{"id":2,"capability":"omnidev","tool":"undo","args":{"id":"zz"}}`, `{"id":2,"error":{"message":"no such run: \"zz\""}}`},
		{"too large", builtin, `{"id":3,"capability":"omnidev","tool":"big"}`, `over the 16 MiB limit`},
		{"not served", nil, `{"id":4,"capability":"omnidev","tool":"list"}`, `the omnidev module is not served to this run`},
		{"not a wrapped server", builtin, `{"id":5,"capability":"other","tool":"list"}`, `wraps no MCP server here`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env, end := r.BeginRun(t.Context(), nil, redact, nil, tt.builtin)
			defer end()
			var token string
			for _, kv := range env {
				if v, ok := strings.CutPrefix(kv, tsgen.EnvToken+"="); ok {
					token = v
				}
			}
			c, err := net.Dial("unix", "r.sock")
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			fmt.Fprintf(c, "{\"token\":%q}\n%s\n", token, tt.request)
			line, err := bufio.NewReader(c).ReadString('\n')
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(line, tt.want) {
				t.Errorf("answer %s, want %s", line, tt.want)
			}
		})
	}
}
