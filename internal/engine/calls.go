package engine

import (
	"strings"
	"sync"
	"time"

	"github.com/omnidev/omnidev/internal/execute"
)

// maxCallError bounds the error text of one listed call: the program got
// the whole message; the log says which call failed and why, in one line.
const maxCallError = 100

// callLog records a run's calls of wrapped tools, in the order the program
// sent them, as the relay reports them (see Relay.BeginRun).
type callLog struct {
	mu      sync.Mutex
	calls   []execute.ToolCall
	omitted int
	ended   bool
	redact  func([]byte) []byte
}

// begin records the start of a call; the function it returns records its end.
func (l *callLog) begin(capability, tool string) func(failure string) {
	start := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ended {
		return func(string) {}
	}
	if len(l.calls) == execute.MaxListedCalls {
		l.omitted++
		return func(string) {}
	}
	i := len(l.calls)
	l.calls = append(l.calls, execute.ToolCall{Capability: capability, Tool: tool, MS: -1})
	return func(failure string) {
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.ended {
			return
		}
		c := &l.calls[i]
		c.MS = time.Since(start).Milliseconds()
		c.OK = failure == ""
		c.Error = l.oneLine(failure)
	}
}

// end closes the log and returns its calls; one still in flight is listed
// as failed, the run having ended under it.
func (l *callLog) end() (calls []execute.ToolCall, omitted int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.ended = true
	for i := range l.calls {
		if l.calls[i].MS < 0 {
			l.calls[i].MS = 0
			l.calls[i].Error = "no answer yet when the program ended; the call was cancelled"
		}
	}
	if l.calls == nil {
		return []execute.ToolCall{}, l.omitted
	}
	return l.calls, l.omitted
}

// oneLine cuts a failure to its first line and maxCallError bytes, with
// the run's secrets removed (a server may quote its own token).
func (l *callLog) oneLine(s string) string {
	if l.redact != nil {
		s = string(l.redact([]byte(s)))
	}
	s = strings.TrimSpace(s)
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		s = strings.TrimSpace(s[:i]) + " …"
	}
	if len(s) > maxCallError {
		cut := maxCallError
		for cut > 0 && !utf8RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }
