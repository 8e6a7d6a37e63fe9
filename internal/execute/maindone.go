package execute

import (
	"bytes"
	"io"
	"strconv"

	"github.com/omnidev/omnidev/internal/runfolder"
)

// doneScanner passes one output stream on to its capture, less the line the
// runner writes once main has returned (runfolder.MainDone), and reports
// that line's exit code. A stream may split the line across writes: a tail
// that could begin it is held back until the next write says.
type doneScanner struct {
	w       io.Writer
	pending []byte
	found   bool
	seen    func(code int)
}

// doneLineMax bounds the exit code after the marker: a longer run without a
// newline was never the runner's line.
const doneLineMax = len(runfolder.MainDone) + 16

func (s *doneScanner) Write(p []byte) (int, error) {
	n := len(p)
	if s.found {
		s.w.Write(p)
		return n, nil
	}
	data := append(s.pending, p...)
	s.pending = nil
	head := []byte(runfolder.MainDone)
	for {
		i := bytes.Index(data, head)
		if i < 0 {
			break
		}
		rest := data[i+len(head):]
		j := bytes.IndexByte(rest, '\n')
		if j < 0 && len(data)-i < doneLineMax {
			s.w.Write(data[:i])
			s.pending = bytes.Clone(data[i:])
			return n, nil
		}
		code, err := strconv.Atoi(string(rest[:max(j, 0)]))
		if j < 0 || err != nil {
			// Not the runner's line: pass it on and look further.
			s.w.Write(data[:i+1])
			data = data[i+1:]
			continue
		}
		s.w.Write(data[:i])
		s.w.Write(rest[j+1:])
		s.found = true
		s.seen(code)
		return n, nil
	}
	k := min(len(head)-1, len(data))
	for ; k > 0 && !bytes.HasPrefix(head, data[len(data)-k:]); k-- {
	}
	s.w.Write(data[:len(data)-k])
	s.pending = bytes.Clone(data[len(data)-k:])
	return n, nil
}

// flush passes on what was held back, at the end of the stream.
func (s *doneScanner) flush() {
	if len(s.pending) > 0 {
		s.w.Write(s.pending)
		s.pending = nil
	}
}
