package engine

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// TestRunsSerializedAcrossEngines runs programs from two engines on one
// repository (as two servers, or a server and `omnidev exec`, would) and
// checks that their runs never overlap.
func TestRunsSerializedAcrossEngines(t *testing.T) {
	a := newTestEngine(t)
	b, err := Open(t.Context(), a.Root(), Options{Environ: os.Environ()})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	// Each program appends its start and end times to one log.
	code := `import { appendFileSync } from "node:fs";
appendFileSync("runs.log", "start " + Date.now() + "\n");
await new Promise(r => setTimeout(r, 300));
appendFileSync("runs.log", "end " + Date.now() + "\n");`
	var wg sync.WaitGroup
	for _, e := range []*Engine{a, b, a, b} {
		wg.Go(func() {
			res, err := e.Execute(t.Context(), ExecRequest{Code: code})
			if err != nil || res.ExitCode != 0 {
				t.Errorf("run: %v %+v", err, res)
			}
		})
	}
	wg.Wait()
	data, err := os.ReadFile(filepath.Join(a.Root(), "runs.log"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Fields(string(data))
	if len(lines) != 16 { // 4 runs × 2 lines × 2 fields
		t.Fatalf("runs.log: %q", data)
	}
	// Serialized runs alternate start, end, start, end... with times in order.
	last := int64(0)
	for i := 0; i < len(lines); i += 2 {
		want := "start"
		if i/2%2 == 1 {
			want = "end"
		}
		ts, _ := strconv.ParseInt(lines[i+1], 10, 64)
		if lines[i] != want || ts < last {
			t.Fatalf("runs overlapped:\n%s", data)
		}
		last = ts
	}
}
