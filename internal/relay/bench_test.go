package relay

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/omnidev/omnidev/internal/capability"
	"github.com/omnidev/omnidev/internal/tsgen"
)

// BenchmarkRelayLayers splits a relayed call's cost: the same echo made by
// a go-sdk client of its own ("direct"), through Relay.Call ("call"), and
// through the socket as a program makes it ("socket"), each reported as
// microseconds per call (median). The program's own side (Bun) is measured
// end to end by the server package's BenchmarkRelay.
func BenchmarkRelayLayers(b *testing.B) {
	f := &fixture{dir: b.TempDir()}
	f.r = New(Options{})
	defer f.r.Close()
	f.r.Sync(map[string]*capability.MCPServer{"t": {Transport: capability.TransportStdio, Command: testServer, Dir: f.dir}}, true)
	rel := "r.sock"
	if err := f.r.Listen(filepath.Join(f.dir, rel), rel); err != nil {
		b.Fatal(err)
	}
	b.Chdir(f.dir)
	env, end := f.r.BeginRun(b.Context(), nil, nil, nil, nil)
	defer end()
	var token string
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, tsgen.EnvToken+"="); ok {
			token = v
		}
	}
	c, err := net.Dial("unix", rel)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "{\"token\":%q}\n", token)
	br := bufio.NewReader(c)

	direct := mcp.NewClient(&mcp.Implementation{Name: "bench"}, nil)
	ds, err := direct.Connect(b.Context(), &mcp.CommandTransport{Command: exec.Command(testServer)}, &mcp.ClientSessionOptions{ProtocolVersion: sessionProtocol})
	if err != nil {
		b.Fatal(err)
	}
	defer ds.Close()
	f.r.Ensure(b.Context(), []string{"t"})

	const n = 500
	var dl, cl, sl []time.Duration
	for b.Loop() {
		for i := range n {
			t0 := time.Now()
			if _, err := ds.CallTool(b.Context(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "x"}}); err != nil {
				b.Fatal(err)
			}
			t1 := time.Now()
			if _, err := f.r.Call(b.Context(), "t", "echo", json.RawMessage(`{"message":"x"}`), nil); err != nil {
				b.Fatal(err)
			}
			t2 := time.Now()
			fmt.Fprintf(c, "{\"id\":%d,\"capability\":\"t\",\"tool\":\"echo\",\"args\":{\"message\":\"x\"}}\n", i)
			if _, err := br.ReadString('\n'); err != nil {
				b.Fatal(err)
			}
			t3 := time.Now()
			dl, cl, sl = append(dl, t1.Sub(t0)), append(cl, t2.Sub(t1)), append(sl, t3.Sub(t2))
		}
	}
	b.ReportMetric(medianUS(dl), "direct-us")
	b.ReportMetric(medianUS(cl), "call-us")
	b.ReportMetric(medianUS(sl), "socket-us")
}

func medianUS(ds []time.Duration) float64 {
	s := slices.Clone(ds)
	slices.Sort(s)
	return float64(s[len(s)/2]) / float64(time.Microsecond)
}
