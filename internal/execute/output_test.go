package execute

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCapture(t *testing.T) {
	tests := []struct {
		name      string
		limit     int
		writes    []string
		want      string
		truncated bool
	}{
		{"empty", 10, nil, "", false},
		{"under the limit", 10, []string{"abc", "def"}, "abcdef", false},
		{"exactly the limit", 10, []string{"0123456789"}, "0123456789", false},
		{"head and tail", 10, []string{"0123456789", "abcdefghij"}, "01234\n[... omnidev: 10 bytes omitted ...]\nfghij", true},
		{"many small writes", 4, strings.Split("abcdefghij", ""), "ab\n[... omnidev: 6 bytes omitted ...]\nij", true},
		{"one write larger than the ring", 4, []string{"ab", "cdefghij"}, "ab\n[... omnidev: 6 bytes omitted ...]\nij", true},
		{"odd limit gives the tail the extra byte", 5, []string{"abcdefghij"}, "ab\n[... omnidev: 5 bytes omitted ...]\nhij", true},
		// "é" is two bytes: cutting through one drops the halves, counted as omitted.
		{"cut runes are dropped", 6, []string{"ééééé"}, "é\n[... omnidev: 6 bytes omitted ...]\né", true},
		{"invalid UTF-8 is replaced", 10, []string{"a\xffb"}, "a\uFFFDb", false},
		{"zero limit", 0, []string{"abc"}, "\n[... omnidev: 3 bytes omitted ...]\n", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCapture(tt.limit)
			total := 0
			for _, w := range tt.writes {
				if n, err := c.Write([]byte(w)); n != len(w) || err != nil {
					t.Fatalf("Write(%q) = %d, %v", w, n, err)
				}
				total += len(w)
			}
			got, truncated := c.String()
			if got != tt.want || truncated != tt.truncated {
				t.Errorf("String() = %q, %v; want %q, %v", got, truncated, tt.want, tt.truncated)
			}
			if c.Len() != int64(total) {
				t.Errorf("Len() = %d, want %d", c.Len(), total)
			}
			if !utf8.ValidString(got) {
				t.Errorf("String() is not valid UTF-8: %q", got)
			}
		})
	}
}

// TestCaptureBoundedMemory writes far more than the limit through many
// writes of awkward sizes and checks head, tail and memory.
func TestCaptureBoundedMemory(t *testing.T) {
	const limit = 1000
	c := newCapture(limit)
	var all strings.Builder
	for i := range 5000 {
		chunk := strings.Repeat(string(rune('a'+i%26)), 1+i%37)
		all.WriteString(chunk)
		c.Write([]byte(chunk))
	}
	if cap(c.head) > limit/2 || cap(c.tail) > limit-limit/2 {
		t.Errorf("capture grew past its limit: head cap %d, tail cap %d", cap(c.head), cap(c.tail))
	}
	got, truncated := c.String()
	want := all.String()
	if !truncated || !strings.HasPrefix(got, want[:limit/2]) || !strings.HasSuffix(got, want[len(want)-limit/2:]) {
		t.Errorf("head or tail lost")
	}
}

// TestCaptureMatchesReference feeds the same output in chunks of many sizes,
// so that the tail fills, turns into a ring and wraps at every offset, and
// compares with head and tail cut from the whole output.
func TestCaptureMatchesReference(t *testing.T) {
	var all strings.Builder
	for i := range 300 {
		all.WriteByte(byte('a' + i%26))
	}
	out := all.String()
	for _, limit := range []int{1, 2, 7, 64, 299, 300, 301, 1000} {
		for _, chunk := range []int{1, 3, 50, 151, 300} {
			t.Run(fmt.Sprintf("limit %d chunk %d", limit, chunk), func(t *testing.T) {
				c := newCapture(limit)
				for rest := out; rest != ""; {
					k := min(chunk, len(rest))
					c.Write([]byte(rest[:k]))
					rest = rest[k:]
				}
				want := out
				if len(out) > limit {
					head, tail := limit/2, limit-limit/2
					want = fmt.Sprintf("%s\n[... omnidev: %d bytes omitted ...]\n%s", out[:head], len(out)-limit, out[len(out)-tail:])
				}
				if got, _ := c.String(); got != want {
					t.Errorf("String() = %q\nwant %q", got, want)
				}
				if cap(c.head) > limit/2 || cap(c.tail) > limit-limit/2 {
					t.Errorf("capture grew past its limit: head cap %d, tail cap %d", cap(c.head), cap(c.tail))
				}
			})
		}
	}
}

// TestCaptureGrowsWithOutput checks that the cap is a bound, not a size: a
// stream under the largest cap the config allows that prints a few lines
// holds and allocates a few hundred bytes, not megabytes.
func TestCaptureGrowsWithOutput(t *testing.T) {
	const limit = 16 << 20
	line := []byte("a line of output\n")
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	c := newCapture(limit)
	for range 20 {
		c.Write(line)
	}
	got, truncated := c.String()
	runtime.ReadMemStats(&after)
	if want := strings.Repeat(string(line), 20); got != want || truncated {
		t.Errorf("String() = %q, %v; want %q, false", got, truncated, want)
	}
	if held := cap(c.head) + cap(c.tail); held > 4<<10 {
		t.Errorf("capture holds %d bytes of buffers for %d bytes of output", held, 20*len(line))
	}
	allocated := after.TotalAlloc - before.TotalAlloc
	if allocated > 64<<10 {
		t.Errorf("a capture with a %d-byte cap allocated %d bytes for %d bytes of output", limit, allocated, 20*len(line))
	}
	t.Logf("%d bytes of output under a %d-byte cap: %d bytes allocated, buffers of %d bytes held", 20*len(line), limit, allocated, cap(c.head)+cap(c.tail))
}
