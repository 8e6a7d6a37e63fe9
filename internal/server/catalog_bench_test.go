package server

import (
	"log/slog"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/omnidev/omnidev/internal/capability"
	"github.com/omnidev/omnidev/internal/capability/captest"
)

// BenchmarkCatalogSync measures what a reload adds to keep the prompts and
// resources in step, at 40 capabilities × 50 docs: building the catalog of
// a registry and updating the SDK's lists, when every document changed
// (two repositories of different content, alternately) and when none did
// (a fresh load of the same one), on average and against capability.Load of
// the registry synced, measured back to back.
func BenchmarkCatalogSync(b *testing.B) {
	roots := make([]string, 2)
	regs := make([]*capability.Registry, 2)
	load := func(i int) time.Duration {
		start := time.Now()
		reg, err := capability.Load(roots[i], nil)
		if err != nil {
			b.Fatal(err)
		}
		regs[i] = reg
		return time.Since(start)
	}
	for i := range roots {
		roots[i] = b.TempDir()
		if _, err := captest.Generate(roots[i], captest.Options{Seed: uint64(i + 1)}); err != nil {
			b.Fatal(err)
		}
		load(i)
	}
	for _, all := range []bool{true, false} {
		b.Run(map[bool]string{true: "all-changed", false: "none-changed"}[all], func(b *testing.B) {
			c := newCatalog(slog.New(slog.DiscardHandler))
			c.srv = mcp.NewServer(&mcp.Implementation{Name: "bench"}, nil)
			c.sync(regs[0])
			i := 0
			var syncs, loads time.Duration
			for b.Loop() {
				next := 0
				if all {
					next = (i + 1) % 2
				}
				i++
				loads += load(next)
				start := time.Now()
				c.sync(regs[next])
				syncs += time.Since(start)
			}
			b.ReportMetric(float64(syncs)/float64(b.N)/float64(time.Millisecond), "ms-per-sync")
			b.ReportMetric(float64(syncs)/float64(loads), "x-load")
			b.ReportMetric(float64(len(c.cur.Load().resources)), "resources")
		})
	}
}
