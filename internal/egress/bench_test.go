package egress

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// BenchmarkProxy measures what the proxy adds to a connection: a fresh
// connection and one request, direct to a server on 127.0.0.1 and through
// the proxy (CONNECT, then the same request), back to back in each
// iteration. It reports the medians and their difference.
//
// Run it with: go test -run '^$' -bench Proxy -benchtime 200x ./internal/egress/
func BenchmarkProxy(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "ok") }))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	rules, err := ParseRule("api.example.test:" + port)
	if err != nil {
		b.Fatal(err)
	}
	p, err := Listen(filepath.Join(b.TempDir(), "egress.sock"), Options{Rules: []Rule{rules}, Resolve: map[string]string{"api.example.test": "127.0.0.1"}})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	once := func(conn net.Conn) {
		fmt.Fprintf(conn, "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
		if _, err := io.ReadAll(conn); err != nil {
			b.Fatal(err)
		}
		conn.Close()
	}
	direct := func() {
		c, err := net.Dial("tcp", srv.Listener.Addr().String())
		if err != nil {
			b.Fatal(err)
		}
		once(c)
	}
	proxied := func() {
		c, err := net.Dial("unix", p.Path())
		if err != nil {
			b.Fatal(err)
		}
		fmt.Fprintf(c, "CONNECT api.example.test:%s HTTP/1.1\r\nHost: api.example.test\r\n\r\n", port)
		buf := make([]byte, len("HTTP/1.1 200 Connection established\r\n\r\n"))
		if _, err := io.ReadFull(c, buf); err != nil {
			b.Fatal(err)
		}
		once(c)
	}
	var d, q, diff []time.Duration
	for b.Loop() {
		t0 := time.Now()
		direct()
		t1 := time.Now()
		proxied()
		t2 := time.Now()
		d, q, diff = append(d, t1.Sub(t0)), append(q, t2.Sub(t1)), append(diff, t2.Sub(t1)-t1.Sub(t0))
	}
	b.ReportMetric(median(d), "direct-ms")
	b.ReportMetric(median(q), "proxied-ms")
	b.ReportMetric(median(diff), "added-ms")
}

func median(ds []time.Duration) float64 {
	s := slices.Clone(ds)
	slices.Sort(s)
	return float64(s[len(s)/2].Microseconds()) / 1000
}
