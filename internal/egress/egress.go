package egress

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/omnidev/omnidev/internal/unixsock"
)

// Rule is one entry of the list: a host name ("api.example.com"), or
// "*.example.com" for its subdomains (not the name itself), and the ports
// it allows (443 and 80 when the entry names none).
type Rule struct {
	Host     string
	Wildcard bool
	Ports    []int
}

// ParseRule reads one entry of [sandbox] network.
func ParseRule(s string) (Rule, error) {
	entry := strings.ToLower(strings.TrimSpace(s))
	if entry == "" {
		return Rule{}, errors.New("an empty host; give a name such as \"registry.npmjs.org\" or \"*.github.com\"")
	}
	if strings.Contains(entry, "/") {
		return Rule{}, fmt.Errorf("%q is not a host name; write the host alone, without a scheme or path: \"example.com\"", s)
	}
	host, port := entry, ""
	if h, p, err := net.SplitHostPort(entry); err == nil {
		host, port = h, p
	} else if strings.Count(entry, ":") == 1 {
		return Rule{}, fmt.Errorf("%q: %v", s, err)
	}
	r := Rule{Host: host, Ports: []int{443, 80}}
	if port != "" {
		n, err := strconv.Atoi(port)
		if err != nil || n < 1 || n > 65535 {
			return Rule{}, fmt.Errorf("%q: the port must be a number from 1 to 65535", s)
		}
		r.Ports = []int{n}
	}
	if rest, ok := strings.CutPrefix(host, "*."); ok {
		r.Host, r.Wildcard = rest, true
	}
	if r.Host == "" || strings.ContainsAny(r.Host, "*/ @") || strings.HasPrefix(r.Host, ".") || strings.HasSuffix(r.Host, ".") {
		return Rule{}, fmt.Errorf("%q is not a host name; write \"example.com\", \"*.example.com\" or \"example.com:8443\"", s)
	}
	return r, nil
}

// matches reports whether the rule lets host:port through, and whether it
// names host exactly (which lets it resolve to a private address).
func (r Rule) matches(host string, port int) (ok, exact bool) {
	if !slices.Contains(r.Ports, port) {
		return false, false
	}
	if r.Wildcard {
		return strings.HasSuffix(host, "."+r.Host), false
	}
	return host == r.Host, true
}

// Host is what the record says of one host a run tried to reach.
type Host struct {
	Host        string `json:"host"`
	Port        int    `json:"port"`
	Allowed     bool   `json:"allowed"`
	Connections int    `json:"connections"`
	BytesOut    int64  `json:"bytes_out"`
	BytesIn     int64  `json:"bytes_in"`
}

// MaxRecorded bounds the hosts a record lists; the rest are counted.
const MaxRecorded = 50

// Options configure a Proxy.
type Options struct {
	// Rules is the list; Source names where it comes from, for messages
	// ("omni/config.toml").
	Rules  []Rule
	Source string
	// Resolve overrides name resolution for names it maps (tests and
	// debugging, as curl's --resolve): name -> address.
	Resolve map[string]string
	// Blocked is called with a line for the run's stderr when a
	// connection is refused.
	Blocked func(line string)
}

// Proxy serves one run on a Unix socket.
type Proxy struct {
	opts Options
	ln   net.Listener
	path string

	mu      sync.Mutex
	hosts   map[string]*record
	order   []string
	omitted int
	conns   map[net.Conn]bool
	closed  bool
	wg      sync.WaitGroup
}

type record struct {
	Host
	out, in atomic.Int64
}

// Listen starts a proxy on a Unix socket at path, replacing a stale one.
func Listen(path string, opts Options) (*Proxy, error) {
	os.Remove(path)
	ln, err := unixsock.Listen(path)
	if err != nil {
		return nil, fmt.Errorf("listen for the egress proxy: %w", err)
	}
	p := &Proxy{opts: opts, ln: ln, path: path, hosts: map[string]*record{}, conns: map[net.Conn]bool{}}
	p.wg.Go(p.accept)
	return p, nil
}

// Path is the proxy's socket.
func (p *Proxy) Path() string { return p.path }

func (p *Proxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		if !p.track(c, true) {
			c.Close()
			return
		}
		p.wg.Go(func() {
			defer p.track(c, false)
			defer c.Close()
			p.serve(c)
		})
	}
}

// track adds or removes an open connection; false once the proxy closed.
func (p *Proxy) track(c net.Conn, add bool) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if add {
		if p.closed {
			return false
		}
		p.conns[c] = true
	} else {
		delete(p.conns, c)
	}
	return true
}

// Close stops the proxy, ends every connection, removes its socket and
// returns the record of the run, in the order hosts were first tried, with
// the number of hosts left out past MaxRecorded.
func (p *Proxy) Close() ([]Host, int) {
	p.mu.Lock()
	p.closed = true
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.ln.Close()
	os.Remove(p.path)
	p.wg.Wait()
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]Host, 0, len(p.order))
	for _, k := range p.order {
		r := p.hosts[k]
		h := r.Host
		h.BytesOut, h.BytesIn = r.out.Load(), r.in.Load()
		out = append(out, h)
	}
	return out, p.omitted
}

// serve answers the requests of one connection from the sandbox.
func (p *Proxy) serve(c net.Conn) {
	br := bufio.NewReader(c)
	for {
		c.SetReadDeadline(time.Now().Add(2 * time.Minute))
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		c.SetReadDeadline(time.Time{})
		if req.Method == http.MethodConnect {
			p.connect(c, br, req)
			return
		}
		if !p.forward(c, req) {
			return
		}
	}
}

// connect opens a tunnel for CONNECT host:port.
func (p *Proxy) connect(c net.Conn, br *bufio.Reader, req *http.Request) {
	host, port, err := splitTarget(req.Host, 443)
	if err != nil {
		refuse(c, http.StatusBadRequest, err.Error())
		return
	}
	up, rec, err := p.dial(req.Context(), host, port)
	if err != nil {
		refuse(c, http.StatusForbidden, err.Error())
		return
	}
	defer p.track(up, false)
	defer up.Close()
	if _, err := io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		return
	}
	// What the client sent after its request, already buffered, goes first.
	if n := br.Buffered(); n > 0 {
		data, _ := br.Peek(n)
		w, _ := up.Write(data)
		rec.out.Add(int64(w))
		br.Discard(n)
	}
	pipe(c, up, rec)
}

// forward sends one plain-HTTP request upstream and its answer back; false
// when the connection must end.
func (p *Proxy) forward(c net.Conn, req *http.Request) bool {
	if req.URL.Scheme != "http" || req.URL.Host == "" {
		refuse(c, http.StatusBadRequest, "omnidev's egress proxy takes CONNECT, or plain-HTTP requests in absolute form")
		return false
	}
	host, port, err := splitTarget(req.URL.Host, 80)
	if err != nil {
		refuse(c, http.StatusBadRequest, err.Error())
		return false
	}
	up, rec, err := p.dial(req.Context(), host, port)
	if err != nil {
		refuse(c, http.StatusForbidden, err.Error())
		return true
	}
	defer p.track(up, false)
	defer up.Close()
	req.RequestURI = ""
	req.Header.Del("Proxy-Connection")
	req.Header.Del("Proxy-Authorization")
	cw := &counter{w: up, n: &rec.out}
	if err := req.Write(cw); err != nil {
		return false
	}
	resp, err := http.ReadResponse(bufio.NewReader(&reader{r: up, n: &rec.in}), req)
	if err != nil {
		refuse(c, http.StatusBadGateway, "the upstream answer could not be read: "+err.Error())
		return false
	}
	defer resp.Body.Close()
	resp.Close = true
	resp.Write(c)
	return false
}

// dial checks host:port against the list, resolves it, refuses inward
// addresses unless listed exactly, and connects.
func (p *Proxy) dial(ctx context.Context, host string, port int) (net.Conn, *record, error) {
	allowed, exact := false, false
	for _, r := range p.opts.Rules {
		if ok, ex := r.matches(host, port); ok {
			allowed = true
			exact = exact || ex
		}
	}
	rec := p.record(host, port, allowed)
	if !allowed {
		return nil, rec, p.blocked(host, port, fmt.Sprintf("not in [sandbox] network (%s)", p.opts.Source))
	}
	addrs, err := p.resolve(ctx, host)
	if err != nil {
		return nil, rec, p.blocked(host, port, fmt.Sprintf("cannot resolve it: %v", err))
	}
	var last error
	for _, a := range addrs {
		if inward(a) && !exact {
			p.mu.Lock()
			rec.Allowed = false
			p.mu.Unlock()
			last = p.blocked(host, port, fmt.Sprintf("it resolves to %s, a private address; only a host the list names exactly may", a))
			continue
		}
		d := net.Dialer{Timeout: 10 * time.Second}
		conn, err := d.DialContext(ctx, "tcp", net.JoinHostPort(a.String(), strconv.Itoa(port)))
		if err != nil {
			last = fmt.Errorf("connect to %s:%d: %v", host, port, err)
			continue
		}
		if !p.track(conn, true) {
			conn.Close()
			return nil, rec, errors.New("the run is over")
		}
		p.mu.Lock()
		rec.Connections++
		p.mu.Unlock()
		return conn, rec, nil
	}
	if last == nil {
		last = fmt.Errorf("no address for %s", host)
	}
	return nil, rec, last
}

// blocked records a refusal for the run's stderr and returns its reason.
func (p *Proxy) blocked(host string, port int, why string) error {
	line := fmt.Sprintf("omnidev: blocked %s:%d, %s", host, port, why)
	if p.opts.Blocked != nil {
		p.opts.Blocked(line)
	}
	return errors.New(line)
}

func (p *Proxy) record(host string, port int, allowed bool) *record {
	key := net.JoinHostPort(host, strconv.Itoa(port))
	p.mu.Lock()
	defer p.mu.Unlock()
	if r, ok := p.hosts[key]; ok {
		return r
	}
	r := &record{Host: Host{Host: host, Port: port, Allowed: allowed}}
	if len(p.order) >= MaxRecorded {
		p.omitted++
		return r
	}
	p.hosts[key] = r
	p.order = append(p.order, key)
	return r
}

func (p *Proxy) resolve(ctx context.Context, host string) ([]netip.Addr, error) {
	if a, ok := p.opts.Resolve[host]; ok {
		addr, err := netip.ParseAddr(a)
		if err != nil {
			return nil, err
		}
		return []netip.Addr{addr}, nil
	}
	if addr, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{addr}, nil
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
}

// inward reports whether a is an address that leads into the machine or
// its network: loopback, private, link-local (cloud metadata at
// 169.254.169.254 included), unspecified, or carrier-grade NAT.
func inward(a netip.Addr) bool {
	a = a.Unmap()
	return a.IsLoopback() || a.IsPrivate() || a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() ||
		a.IsUnspecified() || a.IsMulticast() || netip.MustParsePrefix("100.64.0.0/10").Contains(a) ||
		netip.MustParsePrefix("0.0.0.0/8").Contains(a)
}

func splitTarget(hostport string, defPort int) (string, int, error) {
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		host, port = hostport, strconv.Itoa(defPort)
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 1 || n > 65535 || host == "" {
		return "", 0, fmt.Errorf("%q is not a host and port", hostport)
	}
	return strings.ToLower(strings.TrimSuffix(host, ".")), n, nil
}

// refuse answers with status and a one-line body.
func refuse(c net.Conn, status int, msg string) {
	body := msg + "\n"
	fmt.Fprintf(c, "HTTP/1.1 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s",
		status, http.StatusText(status), len(body), body)
}

// pipe copies both ways until either side ends, counting bytes.
func pipe(c, up net.Conn, rec *record) {
	done := make(chan struct{}, 2)
	go func() {
		n, _ := io.Copy(up, c)
		rec.out.Add(n)
		if cw, ok := up.(interface{ CloseWrite() error }); ok {
			cw.CloseWrite()
		}
		done <- struct{}{}
	}()
	go func() {
		n, _ := io.Copy(c, up)
		rec.in.Add(n)
		if cw, ok := c.(interface{ CloseWrite() error }); ok {
			cw.CloseWrite()
		}
		done <- struct{}{}
	}()
	<-done
	<-done
}

type counter struct {
	w io.Writer
	n *atomic.Int64
}

func (c *counter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	c.n.Add(int64(n))
	return n, err
}

type reader struct {
	r io.Reader
	n *atomic.Int64
}

func (r *reader) Read(b []byte) (int, error) {
	n, err := r.r.Read(b)
	r.n.Add(int64(n))
	return n, err
}
