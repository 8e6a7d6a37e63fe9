package engine

import (
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/omnidev/omnidev/internal/capability"
	"github.com/omnidev/omnidev/internal/egress"
	"github.com/omnidev/omnidev/internal/execute"
	"github.com/omnidev/omnidev/internal/isolate"
)

// ResolveEnv, in the server's environment, maps names for the egress proxy
// as curl's --resolve does ("api.example.test=127.0.0.1,..."): for tests
// and for debugging a list of hosts without DNS. A program cannot set it.
const ResolveEnv = "OMNIDEV_RESOLVE"

// egressRun is the egress proxy of one run whose [sandbox] network lists
// hosts: the program's proxy variables, and what to add to its result.
type egressRun struct {
	proxy   *egress.Proxy
	env     []string
	mu      sync.Mutex
	blocked []string
}

// startEgress starts the proxy of a run under reg's [sandbox] network, nil
// when the network is not a list. Its socket is the run's own, under
// .omni/relay, so that concurrent calls waiting for their turn do not share
// one.
func (e *Engine) startEgress(reg *capability.Registry) (*egressRun, error) {
	hosts := reg.Sandbox.NetworkHosts
	if hosts == nil {
		return nil, nil
	}
	var rules []egress.Rule
	for _, h := range hosts {
		r, err := egress.ParseRule(h)
		if err != nil {
			return nil, fmt.Errorf("[sandbox] network: %w", err)
		}
		rules = append(rules, r)
	}
	er := &egressRun{}
	resolve := map[string]string{}
	for _, kv := range e.environ {
		if v, ok := strings.CutPrefix(kv, ResolveEnv+"="); ok {
			for _, pair := range strings.Split(v, ",") {
				if name, addr, ok := strings.Cut(strings.TrimSpace(pair), "="); ok {
					resolve[strings.ToLower(name)] = addr
				}
			}
		}
	}
	path := filepath.Join(e.root, ".omni", "relay", "egress-"+rand.Text()[:12]+".sock")
	p, err := egress.Listen(path, egress.Options{
		Rules:   rules,
		Source:  reg.Layout.Config,
		Resolve: resolve,
		Blocked: func(line string) {
			er.mu.Lock()
			defer er.mu.Unlock()
			if len(er.blocked) < egress.MaxRecorded {
				er.blocked = append(er.blocked, line)
			}
		},
	})
	if err != nil {
		return nil, err
	}
	er.proxy = p
	url := fmt.Sprintf("http://127.0.0.1:%d", isolate.EgressPort)
	er.env = []string{"HTTP_PROXY=" + url, "HTTPS_PROXY=" + url, "http_proxy=" + url, "https_proxy=" + url,
		"ALL_PROXY=" + url, "all_proxy=" + url, "NO_PROXY=", "no_proxy=", "NODE_USE_ENV_PROXY=1"}
	return er, nil
}

// finish closes the proxy and adds its record, and the lines of what it
// refused, to res.
func (er *egressRun) finish(res *execute.Result) {
	hosts, omitted := er.proxy.Close()
	if res == nil {
		return
	}
	res.Network, res.NetworkOmitted = hosts, omitted
	er.mu.Lock()
	defer er.mu.Unlock()
	if len(er.blocked) > 0 {
		res.Stderr += "\n" + strings.Join(er.blocked, "\n") + "\n"
	}
}

// removeStaleEgress removes the egress proxies' sockets a killed server
// left behind: those nobody listens on any more (another server or `omnidev
// exec` on the same repository may have one in use).
func removeStaleEgress(root string) {
	stale, _ := filepath.Glob(filepath.Join(root, ".omni", "relay", "egress-*.sock"))
	for _, path := range stale {
		c, err := net.DialTimeout("unix", path, time.Second)
		if err == nil {
			c.Close()
			continue
		}
		if errors.Is(err, syscall.ECONNREFUSED) {
			os.Remove(path)
		}
	}
}
