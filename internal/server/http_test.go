package server

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/omnidev/omnidev/internal/engine"
	"github.com/omnidev/omnidev/internal/testrepo"
)

// newTestEngine opens an engine on a copy of this repository's omni/.
func newTestEngine(t testing.TB) *engine.Engine {
	t.Helper()
	e, err := engine.Open(context.Background(), testrepo.CopyOmni(t), engine.Options{Environ: os.Environ()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

// newTestHTTP serves the MCP handler of a test engine on a loopback httptest server.
func newTestHTTP(t testing.TB, token string) *httptest.Server {
	t.Helper()
	requests := newHTTPRequests()
	srv, err := newServer(newTestEngine(t), "test", nil, requests)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(httpHandler(srv, requests, token, nil))
	t.Cleanup(ts.Close)
	return ts
}

const initializeBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

// post sends one JSON-RPC POST to /mcp with the headers a well-behaved
// client sends, then applies the edits of the test case.
func post(t testing.TB, url, body string, edit func(*http.Request)) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url+httpPath, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if edit != nil {
		edit(req)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func TestHTTPHostileRequests(t *testing.T) {
	ts := newTestHTTP(t, "")
	big := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"omni_execute","arguments":{"code":"` + strings.Repeat("x", 12<<20) + `"}}}`
	for _, tc := range []struct {
		name string
		body string
		edit func(*http.Request)
		want int
	}{
		{"well-formed initialize", initializeBody, nil, http.StatusOK},
		{"foreign origin", initializeBody, func(r *http.Request) { r.Header.Set("Origin", "http://evil.example") }, http.StatusForbidden},
		{"cross-site fetch", initializeBody, func(r *http.Request) { r.Header.Set("Sec-Fetch-Site", "cross-site") }, http.StatusForbidden},
		{"DNS rebinding host", initializeBody, func(r *http.Request) { r.Host = "evil.example:80" }, http.StatusForbidden},
		{"12 MiB body", big, nil, http.StatusRequestEntityTooLarge},
		{"malformed JSON", `{"jsonrpc":`, nil, http.StatusBadRequest},
		{"wrong content type", initializeBody, func(r *http.Request) { r.Header.Set("Content-Type", "text/plain") }, http.StatusUnsupportedMediaType},
		{"missing Accept", initializeBody, func(r *http.Request) { r.Header.Del("Accept") }, http.StatusBadRequest},
		{"unknown session", `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`, func(r *http.Request) { r.Header.Set("Mcp-Session-Id", "no-such-session") }, http.StatusNotFound},
		{"other path", initializeBody, func(r *http.Request) { r.URL.Path = "/admin" }, http.StatusNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := post(t, ts.URL, tc.body, tc.edit)
			if resp.StatusCode != tc.want {
				body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
				t.Errorf("status %d, want %d: %s", resp.StatusCode, tc.want, body)
			}
		})
	}
}

func TestHTTPToken(t *testing.T) {
	const token = "s3cret-token"
	ts := newTestHTTP(t, token)
	for _, tc := range []struct {
		name, auth string
		want       int
	}{
		{"no token", "", http.StatusUnauthorized},
		{"wrong token", "Bearer nope", http.StatusUnauthorized},
		{"token without scheme", token, http.StatusUnauthorized},
		{"right token", "Bearer " + token, http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := post(t, ts.URL, initializeBody, func(r *http.Request) {
				if tc.auth != "" {
					r.Header.Set("Authorization", tc.auth)
				}
			})
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tc.want {
				t.Errorf("status %d, want %d: %s", resp.StatusCode, tc.want, body)
			}
			if bytes.Contains(body, []byte(token)) {
				t.Error("the response echoes the token")
			}
		})
	}
}

func TestListenHTTP(t *testing.T) {
	for _, tc := range []struct {
		name, addr, token string
		wantErr           error
	}{
		{"loopback", "127.0.0.1:0", "", nil},
		{"localhost", "localhost:0", "", nil},
		{"every interface without token", ":0", "", ErrPublicWithoutToken},
		{"unspecified without token", "0.0.0.0:0", "", ErrPublicWithoutToken},
		{"public with token", "0.0.0.0:0", "t", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ln, err := listenHTTP(tc.addr, tc.token)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("listenHTTP(%q) = %v, want %v", tc.addr, err, tc.wantErr)
			}
			if ln != nil {
				ln.Close()
			}
		})
	}
	if _, err := listenHTTP("7777", ""); err == nil || !strings.Contains(err.Error(), "HOST:PORT") {
		t.Errorf("a bare port: %v, want advice on the address form", err)
	}
}

// FuzzHTTPHandler sends arbitrary requests through the whole HTTP stack:
// whatever arrives, the answer is an HTTP status below 500 and no panic.
func FuzzHTTPHandler(f *testing.F) {
	f.Add("POST", "/mcp", "application/json", "application/json, text/event-stream", "", initializeBody)
	f.Add("GET", "/mcp", "", "text/event-stream", "abc", "")
	f.Add("DELETE", "/mcp", "", "", "x", "")
	f.Add("POST", "/mcp", "application/json", "*/*", "", `[{"jsonrpc":"2.0","method":"ping"}]`)
	f.Add("POST", "/mcp?x=1", "application/json; charset=utf-8", "application/json", "", `{"jsonrpc":"2.0","id":null,"method":"tools/call","params":{"name":"omni_query"}}`)
	requests := newHTTPRequests()
	srv, err := newServer(newTestEngine(f), "test", nil, requests)
	if err != nil {
		f.Fatal(err)
	}
	h := httpHandler(srv, requests, "", nil)
	f.Fuzz(func(t *testing.T, method, target, contentType, accept, session, body string) {
		if !strings.HasPrefix(target, "/") {
			target = "/" + target
		}
		req, err := http.NewRequest(method, "http://127.0.0.1"+target, strings.NewReader(body))
		if err != nil {
			return // not a request a server could receive
		}
		req.Header.Set("Content-Type", contentType)
		req.Header.Set("Accept", accept)
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel() // streams (GET) must not hold the fuzzer: the request is over at once
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req.WithContext(ctx))
		if rec.Code >= 500 {
			t.Errorf("%s %s: status %d: %s", method, target, rec.Code, rec.Body)
		}
	})
}
