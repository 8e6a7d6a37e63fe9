package execute

import (
	"fmt"
	"strings"
	"sync/atomic"
	"unicode/utf8"
)

// capture keeps the head and the tail of one output stream, whatever the
// program prints: memory stays at the cap, the middle is only counted. Its
// buffers grow as output arrives, so a generous cap costs nothing to a run
// that prints little. It is written by one reader goroutine; Len may be read
// from any goroutine.
type capture struct {
	head    []byte // the first headMax bytes
	headMax int
	// tail holds the bytes after head: appended to until it is tailMax
	// long, then a ring buffer of the last tailMax bytes.
	tail     []byte
	tailMax  int
	tailNext int  // in a ring, where the next tail byte goes
	ring     bool // tail is full and wraps around at tailNext
	total    atomic.Int64
}

// newCapture returns a capture keeping at most limit bytes: half from the
// start, half from the end (the end gets the odd byte, since the error that
// ended a run is usually printed last).
func newCapture(limit int) *capture {
	limit = max(limit, 0)
	headMax := limit / 2
	return &capture{headMax: headMax, tailMax: limit - headMax}
}

// Write never fails, so a chatty program is never blocked or broken by the cap.
func (c *capture) Write(p []byte) (int, error) {
	c.total.Add(int64(len(p)))
	n := len(p)
	if room := c.headMax - len(c.head); room > 0 {
		k := min(room, len(p))
		c.head = appendCapped(c.head, p[:k], c.headMax)
		p = p[k:]
	}
	if len(p) == 0 || c.tailMax == 0 {
		return n, nil
	}
	if !c.ring {
		if len(c.tail)+len(p) < c.tailMax {
			c.tail = appendCapped(c.tail, p, c.tailMax)
			return n, nil
		}
		// Full from here on: the ring starts with the last tailMax bytes
		// of what was kept and p, oldest first.
		ring := make([]byte, c.tailMax)
		keep := max(c.tailMax-len(p), 0)
		copy(ring, c.tail[len(c.tail)-keep:])
		copy(ring[keep:], p[len(p)-(c.tailMax-keep):])
		c.tail, c.tailNext, c.ring = ring, 0, true
		return n, nil
	}
	if len(p) >= len(c.tail) {
		copy(c.tail, p[len(p)-len(c.tail):])
		c.tailNext = 0
		return n, nil
	}
	k := copy(c.tail[c.tailNext:], p)
	if k < len(p) {
		copy(c.tail, p[k:])
	}
	c.tailNext = (c.tailNext + len(p)) % len(c.tail)
	return n, nil
}

// appendCapped appends p to b, growing b's capacity geometrically but never
// past limit; len(b)+len(p) must not exceed limit.
func appendCapped(b, p []byte, limit int) []byte {
	if need := len(b) + len(p); need > cap(b) {
		grown := make([]byte, len(b), min(max(2*cap(b), need, 512), limit))
		copy(grown, b)
		b = grown
	}
	return append(b, p...)
}

// Len returns how many bytes were written so far.
func (c *capture) Len() int64 { return c.total.Load() }

// String returns what was kept as valid UTF-8 and whether anything was
// left out. When output was cut, the head ends and the tail starts on rune
// boundaries and one marker line says how many bytes are missing between
// them; invalid UTF-8 the program printed is replaced with U+FFFD.
func (c *capture) String() (string, bool) {
	tail := c.tail
	if c.ring && c.tailNext > 0 {
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
