//go:build linux

package server_test

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestEgress runs programs whose [sandbox] network lists hosts, with the
// real binary and Bun, against servers on 127.0.0.1 that the proxy reaches
// by names it resolves through OMNIDEV_RESOLVE: nothing leaves the machine.
func TestEgress(t *testing.T) {
	var evilHits atomic.Int32
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host, _, _ := net.SplitHostPort(r.Host)
		switch {
		case host == "evil.test":
			evilHits.Add(1)
			fmt.Fprint(w, "EVIL REACHED")
		case r.URL.Path == "/redirect":
			http.Redirect(w, r, "http://evil.test:"+strings.Split(r.Host, ":")[1]+"/", http.StatusFound)
		default:
			fmt.Fprint(w, "hello from ", host)
		}
	})
	plain := httptest.NewServer(handler)
	defer plain.Close()
	tlsSrv := httptest.NewTLSServer(handler)
	defer tlsSrv.Close()
	_, plainPort, _ := net.SplitHostPort(plain.Listener.Addr().String())
	_, tlsPort, _ := net.SplitHostPort(tlsSrv.Listener.Addr().String())
	udp, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer udp.Close()
	got := make(chan struct{}, 1)
	go func() {
		buf := make([]byte, 64)
		if _, _, err := udp.ReadFrom(buf); err == nil {
			got <- struct{}{}
		}
	}()
	resolve := "OMNIDEV_RESOLVE=api.example.test=127.0.0.1,cdn.example.test=127.0.0.1,evil.test=127.0.0.1,example.test=127.0.0.1"

	for _, id := range identities() {
		if !strings.HasSuffix(id.name, "/namespaces") {
			continue
		}
		t.Run(strings.TrimSuffix(id.name, "/namespaces"), func(t *testing.T) {
			files := escapeFiles(id, false, nil)
			files["omni/config.toml"] = strings.Replace(files["omni/config.toml"], "network = false",
				fmt.Sprintf(`network = ["api.example.test:%[1]s", "api.example.test:%[2]s", "*.example.test:%[1]s", "evil.example.test:9"]`, plainPort, tlsPort), 1) +
				"[env]\nNODE_TLS_REJECT_UNAUTHORIZED = \"0\"\n"
			r := newEscapeRepo(t, id, files)
			out := r.exec(fmt.Sprintf(`const tries: [string, string][] = [
  ["allowed", "http://api.example.test:%[1]s/"],
  ["allowed https", "https://api.example.test:%[2]s/"],
  ["wildcard subdomain resolving inward", "http://cdn.example.test:%[1]s/"],
  ["bare domain of the wildcard", "http://example.test:%[1]s/"],
  ["not listed", "http://evil.test:%[1]s/"],
  ["redirect to a refused host", "http://api.example.test:%[1]s/redirect"],
];
for (const [name, url] of tries) {
  try { const res = await fetch(url); console.log(name, "->", res.status, (await res.text()).trim().slice(0, 80)); }
  catch (e: any) { console.log(name, "-> error", e.code ?? e.message); }
}
import { connect } from "node:net";
import { createSocket } from "node:dgram";
import { lookup } from "node:dns/promises";
await new Promise<void>(done => { const c = connect({ host: "127.0.0.1", port: %[1]s }); c.on("connect", () => { console.log("RAW TCP CONNECTED"); c.destroy(); done(); }); c.on("error", (e: any) => { console.log("raw tcp", e.code); done(); }); });
await new Promise<void>(done => { const s = createSocket("udp4"); s.send("x", %[3]d, "127.0.0.1", (e) => { console.log("udp sent", e?.code ?? "no error"); s.close(); done(); }); });
try { console.log("DNS", await lookup("example.com")); } catch (e: any) { console.log("dns", e.code); }`, plainPort, tlsPort, udp.LocalAddr().(*net.UDPAddr).Port), time.Minute, resolve)
			for _, want := range []string{
				"allowed -> 200 hello from api.example.test",
				"allowed https -> 200 hello from api.example.test",
				"wildcard subdomain resolving inward -> 403 omnidev: blocked cdn.example.test:" + plainPort + ", it resolves to 127.0.0.1",
				"bare domain of the wildcard -> 403 omnidev: blocked example.test:" + plainPort + ", not in [sandbox] network (omni/config.toml)",
				"not listed -> 403 omnidev: blocked evil.test:" + plainPort,
				"redirect to a refused host -> 403",
				"raw tcp ECONNREFUSED",
				"dns ",
			} {
				if !strings.Contains(out.Stdout, want) {
					t.Errorf("stdout lacks %q:\n%s", want, out.Stdout)
				}
			}
			if strings.Contains(out.Stdout, "RAW TCP CONNECTED") || strings.Contains(out.Stdout, "EVIL REACHED") || strings.Contains(out.Stdout, "DNS {") {
				t.Errorf("the program got out:\n%s", out.Stdout)
			}
			if n := evilHits.Load(); n != 0 {
				t.Errorf("the refused host was reached %d times", n)
			}
			select {
			case <-got:
				t.Error("a UDP datagram reached the host")
			case <-time.After(200 * time.Millisecond):
			}
			if !strings.Contains(out.Stderr, "omnidev: blocked evil.test:"+plainPort+", not in [sandbox] network (omni/config.toml)") {
				t.Errorf("stderr lacks the blocked line:\n%s", out.Stderr)
			}
			if !strings.Contains(out.Isolation, "egress") {
				t.Errorf("isolation = %q, want the egress bridge named", out.Isolation)
			}
			var rec struct {
				Network []struct {
					Host        string `json:"host"`
					Port        int    `json:"port"`
					Allowed     bool   `json:"allowed"`
					Connections int    `json:"connections"`
					BytesIn     int64  `json:"bytes_in"`
				} `json:"network"`
			}
			// The record, from the same run's JSON.
			if err := json.Unmarshal([]byte(out.raw), &rec); err != nil {
				t.Fatal(err)
			}
			seen := map[string]string{}
			for _, h := range rec.Network {
				seen[fmt.Sprintf("%s:%d", h.Host, h.Port)] = fmt.Sprintf("%v %d %v", h.Allowed, h.Connections, h.BytesIn > 0)
			}
			if seen["api.example.test:"+plainPort] != "true 2 true" || seen["evil.test:"+plainPort] != "false 0 false" ||
				seen["cdn.example.test:"+plainPort] != "false 0 false" {
				t.Errorf("network record = %v", seen)
			}
			if left, _ := filepath.Glob(filepath.Join(r.root, ".omni", "relay", "egress-*.sock")); len(left) > 0 {
				t.Errorf("the proxy's socket outlived the run: %v", left)
			}
		})
	}
}

// TestEgressNeedsNamespaces checks that a list of hosts is refused where
// it cannot be enforced, never widened to the whole network.
func TestEgressNeedsNamespaces(t *testing.T) {
	id := identities()[0]
	id.mode = "landlock"
	files := escapeFiles(id, false, nil)
	files["omni/config.toml"] = strings.Replace(files["omni/config.toml"], "network = false", `network = ["registry.npmjs.org"]`, 1)
	r := newEscapeRepo(t, id, files)
	writeFile(t, r.dir, "p.ts", `console.log("ran")`)
	data, err := r.command([]string{"exec", filepath.Join(r.dir, "p.ts")}).CombinedOutput()
	if err == nil || strings.Contains(string(data), "ran") || !strings.Contains(string(data), "only the namespace mode can enforce") {
		t.Errorf("a list of hosts in the Landlock mode: %v\n%s", err, data)
	}
	if _, err := os.Stat(filepath.Join(r.root, ".omni", "relay")); err == nil {
		if left, _ := filepath.Glob(filepath.Join(r.root, ".omni", "relay", "egress-*.sock")); len(left) > 0 {
			t.Errorf("the proxy's socket outlived the refused run: %v", left)
		}
	}
}
