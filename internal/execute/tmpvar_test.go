package execute

import (
	"os"
	"testing"
	"time"

	"github.com/omnidev/omnidev/internal/isolate"
)

func TestTmpVariants(t *testing.T) {
	root := t.TempDir()
	sb := prepare(t, root)
	e := New(root, nil)
	host := request(sb, "console.log(\"hello\");\n")
	host.Env = append(host.Env, "HOME="+os.Getenv("HOME"))
	for _, v := range []struct {
		name string
		p    *isolate.Policy
	}{
		{"fs", &isolate.Policy{Filesystem: true}},
	} {
		req := host
		req.Isolation = v.p
		for range 5 {
			t0 := time.Now()
			res, err := e.Run(t.Context(), req)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%-8s %v %s", v.name, time.Since(t0), res.Stderr)
		}
	}
}
