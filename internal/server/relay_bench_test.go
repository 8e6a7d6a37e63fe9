package server_test

import (
	"context"
	"encoding/json"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// relayProgram makes 1,000 sequential echo calls through omnidev's relay,
// then 100 sequential and 100 concurrent ones, timing each in the program.
const relayProgram = `import { echo } from "wrapped";
const seq: number[] = [];
for (let i = 0; i < 1000; i++) {
  const t = performance.now();
  await echo({ message: "m" + i });
  seq.push(performance.now() - t);
}
let t = performance.now();
for (let i = 0; i < 100; i++) await echo({ message: "s" + i });
const seq100 = performance.now() - t;
t = performance.now();
await Promise.all(Array.from({ length: 100 }, (_, i) => echo({ message: "c" + i })));
const conc100 = performance.now() - t;
console.log(JSON.stringify({ seq, seq100, conc100 }));
`

// BenchmarkRelay compares a tool call made by a program through omnidev's
// relay with the same call made directly by a go-sdk client to the same
// server, in the same run: medians of 1,000 sequential calls each, and 100
// concurrent calls against 100 sequential ones. The servers: the relay's
// test server, whose echo costs next to nothing, and the reference
// server-everything from npm (Node).
func BenchmarkRelay(b *testing.B) {
	b.Run("testserver", func(b *testing.B) { benchmarkRelay(b, buildTestServer(b)) })
	b.Run("everything", func(b *testing.B) {
		bin, err := exec.LookPath("mcp-server-everything")
		if err != nil {
			b.Fatalf("mcp-server-everything is required (just deps installs it): %v", err)
		}
		benchmarkRelay(b, bin)
	})
}

func benchmarkRelay(b *testing.B, bin string) {
	root := b.TempDir()
	writeFile(b, root, "omni/config.toml", "[capabilities]\nenable = [\"wrapped\"]\n")
	writeFile(b, root, "omni/capabilities/wrapped/capability.toml", "[capability]\nid = \"wrapped\"\n[mcp]\ncommand = \""+bin+"\"\n")
	git(b, root, "init", "-q", "-b", "main")
	s := startServer(b, root)
	ctx := context.Background()

	direct := mcp.NewClient(&mcp.Implementation{Name: "bench"}, nil)
	// The protocol version the relay asks for: the comparison is of the
	// two paths, not of two protocols.
	ds, err := direct.Connect(ctx, &mcp.CommandTransport{Command: exec.Command(bin)}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		b.Fatal(err)
	}
	defer ds.Close()

	var directLat, relayLat []time.Duration
	var seq100, conc100 []float64
	for b.Loop() {
		for i := range 1000 {
			start := time.Now()
			if _, err := ds.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "m" + string(rune('0'+i%10))}}); err != nil {
				b.Fatal(err)
			}
			directLat = append(directLat, time.Since(start))
		}
		var res struct {
			ExitCode int    `json:"exit_code"`
			Stdout   string `json:"stdout"`
			Stderr   string `json:"stderr"`
		}
		s.call(b, ctx, "omni_execute", map[string]any{"code": relayProgram}, &res)
		var out struct {
			Seq     []float64 `json:"seq"`
			Seq100  float64   `json:"seq100"`
			Conc100 float64   `json:"conc100"`
		}
		if err := json.Unmarshal([]byte(strings.TrimSpace(res.Stdout)), &out); err != nil {
			b.Fatalf("program output %q (stderr %q): %v", res.Stdout, res.Stderr, err)
		}
		for _, ms := range out.Seq {
			relayLat = append(relayLat, time.Duration(ms*float64(time.Millisecond)))
		}
		seq100 = append(seq100, out.Seq100)
		conc100 = append(conc100, out.Conc100)
	}
	dm, rm := percentile(directLat, 50), percentile(relayLat, 50)
	b.ReportMetric(dm, "direct-p50-ms")
	b.ReportMetric(rm, "relay-p50-ms")
	b.ReportMetric(rm-dm, "added-p50-ms")
	b.ReportMetric(percentile(relayLat, 99), "relay-p99-ms")
	b.ReportMetric(median(seq100), "seq100-ms")
	b.ReportMetric(median(conc100), "conc100-ms")
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}
