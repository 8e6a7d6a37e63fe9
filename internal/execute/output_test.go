package execute

import (
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
	if cap(c.head) > limit/2 || len(c.tail) > limit-limit/2 {
		t.Errorf("capture grew: head cap %d, tail %d", cap(c.head), len(c.tail))
	}
	got, truncated := c.String()
	want := all.String()
	if !truncated || !strings.HasPrefix(got, want[:limit/2]) || !strings.HasSuffix(got, want[len(want)-limit/2:]) {
		t.Errorf("head or tail lost")
	}
}
