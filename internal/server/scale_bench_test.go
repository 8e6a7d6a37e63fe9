package server_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkAPIScale: a wrapped server with 10,000 tools shaped like a big
// API's (the relay's test server, -tools 10000). Each iteration starts
// omnidev on a repository with no index and reports, as medians: the time
// from start to the last tool found with its declaration
// (searchable-s), the size of the empty query's answer and of a 3-hit
// include_types answer, the p50 of 50 such 3-hit queries (whose words all
// stand in every tool: each scores all 10,000) and of 50 queries of one
// rare word (a tool's number), and the server's RSS after them.
func BenchmarkAPIScale(b *testing.B) {
	root := apiScaleRepo(b)
	var searchable, p50, rare []time.Duration
	var rss []int
	var empty, three int
	for b.Loop() {
		os.RemoveAll(filepath.Join(root, ".omni", "index"))
		ctx := context.Background()
		start := time.Now()
		s := startServer(b, root)
		waitSearchable(b, ctx, s)
		searchable = append(searchable, time.Since(start))
		empty = len(queryText(b, ctx, s, map[string]any{}))
		three = len(queryText(b, ctx, s, threeHits))
		var lat, rareLat []time.Duration
		for i := range 50 {
			q := map[string]any{"query": fmt.Sprintf("zone shard %d records", i*197), "kinds": []string{"tool"}, "limit": 3, "include_types": true}
			t := time.Now()
			queryText(b, ctx, s, q)
			lat = append(lat, time.Since(t))
			q["query"] = fmt.Sprint(i * 197)
			t = time.Now()
			queryText(b, ctx, s, q)
			rareLat = append(rareLat, time.Since(t))
		}
		p50 = append(p50, time.Duration(percentile(lat, 50)*float64(time.Millisecond)))
		rare = append(rare, time.Duration(percentile(rareLat, 50)*float64(time.Millisecond)))
		rss = append(rss, rssKB(b, s.cmd.Process.Pid, "VmRSS"))
		s.session.Close()
	}
	b.ReportMetric(percentile(searchable, 50)/1000, "searchable-s")
	b.ReportMetric(float64(empty), "empty-query-bytes")
	b.ReportMetric(float64(three), "3-hit-types-bytes")
	b.ReportMetric(percentile(p50, 50), "3-hit-p50-ms")
	b.ReportMetric(percentile(rare, 50), "rare-word-p50-ms")
	var kb []time.Duration
	for _, r := range rss {
		kb = append(kb, time.Duration(r))
	}
	b.ReportMetric(percentile(kb, 50)*float64(time.Millisecond)/1024, "rss-MB")
}
