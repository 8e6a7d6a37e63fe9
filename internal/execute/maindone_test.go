package execute

import (
	"bytes"
	"testing"

	"github.com/omnidev/omnidev/internal/runfolder"
)

func TestDoneScanner(t *testing.T) {
	line := runfolder.MainDone + "3\n"
	tests := []struct {
		name     string
		input    string
		wantOut  string
		wantCode int // -1: no line found
	}{
		{"none", "hello\nworld\n", "hello\nworld\n", -1},
		{"after output", "hello\n" + line, "hello\n", 3},
		{"output after it", "a\n" + line + "b\n", "a\nb\n", 3},
		{"prefix only", "a\n" + runfolder.MainDone[:5], "a\n" + runfolder.MainDone[:5], -1},
		{"not a number", "a" + runfolder.MainDone + "x\n" + line, "a" + runfolder.MainDone + "x\n", 3},
		{"negative", runfolder.MainDone + "-2\n", "", -2},
	}
	for _, tt := range tests {
		// Every split into writes of n bytes must give the same result.
		for _, n := range []int{1, 2, 7, len(tt.input) + 1} {
			t.Run(tt.name, func(t *testing.T) {
				var out bytes.Buffer
				code := -1
				s := &doneScanner{w: &out, seen: func(c int) { code = c }}
				for in := []byte(tt.input); len(in) > 0; {
					k := min(n, len(in))
					s.Write(in[:k])
					in = in[k:]
				}
				s.flush()
				if out.String() != tt.wantOut || code != tt.wantCode {
					t.Errorf("writes of %d: out %q code %d; want %q %d", n, out.String(), code, tt.wantOut, tt.wantCode)
				}
			})
		}
	}
}
