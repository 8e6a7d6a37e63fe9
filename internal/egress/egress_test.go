package egress

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func TestParseRule(t *testing.T) {
	tests := []struct {
		in      string
		want    Rule
		wantErr string
	}{
		{in: "registry.npmjs.org", want: Rule{Host: "registry.npmjs.org", Ports: []int{443, 80}}},
		{in: "*.GitHub.com", want: Rule{Host: "github.com", Wildcard: true, Ports: []int{443, 80}}},
		{in: "api.example.com:8443", want: Rule{Host: "api.example.com", Ports: []int{8443}}},
		{in: "", wantErr: "an empty host"},
		{in: "a.com:0", wantErr: "from 1 to 65535"},
		{in: "*.", wantErr: "is not a host name"},
		{in: "http://a.com", wantErr: "is not a host"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseRule(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Fatalf("got %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}

func mustRules(t *testing.T, entries ...string) []Rule {
	var out []Rule
	for _, e := range entries {
		r, err := ParseRule(e)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

// get sends one plain-HTTP request through the proxy and returns the status
// and body.
func get(t *testing.T, sock, url string) (int, string) {
	t.Helper()
	c, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: x\r\n\r\n", url)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// tunnel sends CONNECT, then a plain request through the tunnel.
func tunnel(t *testing.T, sock, target string) (int, string) {
	t.Helper()
	c, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target)
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", target)
	inner, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(inner.Body)
	return inner.StatusCode, string(body)
}

func TestProxy(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "hello from ", r.Host)
	}))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	var mu sync.Mutex
	var lines []string
	p, err := Listen(filepath.Join(t.TempDir(), "egress.sock"), Options{
		Rules:   mustRules(t, "api.example.test:"+port, "*.example.test:"+port),
		Source:  "omni/config.toml",
		Resolve: map[string]string{"api.example.test": "127.0.0.1", "cdn.example.test": "127.0.0.1", "evil.test": "127.0.0.1"},
		Blocked: func(l string) { mu.Lock(); lines = append(lines, l); mu.Unlock() },
	})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		do         func() (int, string)
		wantStatus int
		wantBody   string
	}{
		{"an exact host, private address allowed, plain HTTP", func() (int, string) { return get(t, p.Path(), "http://api.example.test:"+port+"/") }, 200, "hello from api.example.test"},
		{"an exact host through CONNECT", func() (int, string) { return tunnel(t, p.Path(), "api.example.test:"+port) }, 200, "hello from api.example.test"},
		{"a wildcard's subdomain that resolves inward is refused", func() (int, string) { return tunnel(t, p.Path(), "cdn.example.test:"+port) }, 403, "a private address"},
		{"the wildcard's bare domain is not on the list", func() (int, string) { return tunnel(t, p.Path(), "example.test:"+port) }, 403, "not in [sandbox] network (omni/config.toml)"},
		{"a host not on the list", func() (int, string) { return get(t, p.Path(), "http://evil.test:"+port+"/") }, 403, "blocked evil.test:" + port},
		{"a listed host on another port", func() (int, string) { return tunnel(t, p.Path(), "api.example.test:1") }, 403, "not in [sandbox] network"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, body := tt.do()
			if status != tt.wantStatus || !strings.Contains(body, tt.wantBody) {
				t.Errorf("got %d %q, want %d and %q", status, body, tt.wantStatus, tt.wantBody)
			}
		})
	}
	hosts, omitted := p.Close()
	got := map[string]Host{}
	for _, h := range hosts {
		got[fmt.Sprintf("%s:%d", h.Host, h.Port)] = h
	}
	api := got["api.example.test:"+port]
	if !api.Allowed || api.Connections != 2 || api.BytesOut == 0 || api.BytesIn == 0 {
		t.Errorf("record of the allowed host = %+v", api)
	}
	if evil := got["evil.test:"+port]; evil.Allowed || evil.Connections != 0 {
		t.Errorf("record of the refused host = %+v", evil)
	}
	if len(hosts) != 5 || omitted != 0 {
		t.Errorf("record = %+v (%d omitted), want 5 hosts", hosts, omitted)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "omnidev: blocked ") {
		t.Errorf("stderr lines = %q, want 4", lines)
	}
}

func TestInward(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1": true, "10.1.2.3": true, "172.16.0.1": true, "192.168.1.1": true, "169.254.169.254": true,
		"::1": true, "fc00::1": true, "fe80::1": true, "100.64.0.1": true, "0.0.0.0": true, "::ffff:10.0.0.1": true,
		"93.184.216.34": false, "2606:2800:220:1::1": false,
	} {
		if got := inward(mustAddr(t, addr)); got != want {
			t.Errorf("inward(%s) = %v, want %v", addr, got, want)
		}
	}
}

func mustAddr(t *testing.T, s string) netip.Addr {
	a, err := netip.ParseAddr(s)
	if err != nil {
		t.Fatal(err)
	}
	return a
}
