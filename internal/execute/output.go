package execute

import (
	"fmt"
	"strings"
	"sync/atomic"
	"unicode/utf8"
)

// capture keeps the head and the tail of one output stream, whatever the
// program prints: memory stays at the cap, the middle is only counted. It
// is written by one reader goroutine; Len may be read from any goroutine.
type capture struct {
	head     []byte // the first headMax bytes
	headMax  int
	tail     []byte // ring buffer holding the last len(tail) bytes after head
	tailNext int    // where the next tail byte goes
	tailFull bool
	total    atomic.Int64
}

// newCapture returns a capture keeping at most limit bytes: half from the
// start, half from the end (the end gets the odd byte, since the error that
// ended a run is usually printed last).
func newCapture(limit int) *capture {
	limit = max(limit, 0)
	headMax := limit / 2
	return &capture{
		head:    make([]byte, 0, headMax),
		headMax: headMax,
		tail:    make([]byte, limit-headMax),
	}
}

// Write never fails, so a chatty program is never blocked or broken by the cap.
func (c *capture) Write(p []byte) (int, error) {
	c.total.Add(int64(len(p)))
	n := len(p)
	if room := c.headMax - len(c.head); room > 0 {
		k := min(room, len(p))
		c.head = append(c.head, p[:k]...)
		p = p[k:]
	}
	if len(p) == 0 || len(c.tail) == 0 {
		return n, nil
	}
	if len(p) >= len(c.tail) {
		copy(c.tail, p[len(p)-len(c.tail):])
		c.tailNext, c.tailFull = 0, true
		return n, nil
	}
	k := copy(c.tail[c.tailNext:], p)
	if k < len(p) {
		copy(c.tail, p[k:])
		c.tailFull = true
	}
	c.tailNext = (c.tailNext + len(p)) % len(c.tail)
	if c.tailNext == 0 {
		c.tailFull = true
	}
	return n, nil
}

// Len returns how many bytes were written so far.
func (c *capture) Len() int64 { return c.total.Load() }

// String returns what was kept as valid UTF-8 and whether anything was
// left out. When output was cut, the head ends and the tail starts on rune
// boundaries and one marker line says how many bytes are missing between
// them; invalid UTF-8 the program printed is replaced with U+FFFD.
func (c *capture) String() (string, bool) {
	tail := c.tail[:c.tailNext]
	if c.tailFull {
		tail = append(append([]byte(nil), c.tail[c.tailNext:]...), c.tail[:c.tailNext]...)
	}
	omitted := c.total.Load() - int64(len(c.head)+len(tail))
	if omitted == 0 {
		return strings.ToValidUTF8(string(c.head)+string(tail), "\uFFFD"), false
	}
	head, cutTail := trimRuneEnd(c.head), trimRuneStart(tail)
	omitted += int64(len(c.head) - len(head) + len(tail) - len(cutTail))
	var b strings.Builder
	b.Grow(len(head) + len(cutTail) + 64)
	b.WriteString(strings.ToValidUTF8(string(head), "\uFFFD"))
	fmt.Fprintf(&b, "\n[... omnidev: %d bytes omitted ...]\n", omitted)
	b.WriteString(strings.ToValidUTF8(string(cutTail), "\uFFFD"))
	return b.String(), true
}

// trimRuneEnd drops an incomplete UTF-8 sequence cut at the end of b.
func trimRuneEnd(b []byte) []byte {
	// A rune is at most utf8.UTFMax bytes: look no further back than that.
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return b[:i]
			}
			break
		}
	}
	return b
}

// trimRuneStart drops the continuation bytes of a rune cut at the start of b.
func trimRuneStart(b []byte) []byte {
	for i := 0; i < len(b) && i < utf8.UTFMax; i++ {
		if utf8.RuneStart(b[i]) {
			return b[i:]
		}
	}
	return b
}
