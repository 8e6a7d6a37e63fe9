package runs

import (
	"fmt"
	"io"
	"strings"

	"github.com/go-git/go-git/v5/utils/diff"
	"github.com/sergi/go-diff/diffmatchpatch"
)

// WriteDiff writes a unified diff of the files rec changed, each file as
// one hunk with the whole file as context.
func (s *Store) WriteDiff(w io.Writer, rec *Record) error {
	return s.WriteDiffHiding(w, rec, nil)
}

// WriteDiffHiding is WriteDiff for a reader who may not see every file (a
// program, which the sandbox keeps from some): a file hide reports is named
// with its header, its content left out and said to be.
func (s *Store) WriteDiffHiding(w io.Writer, rec *Record, hide func(path string) bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, f := range rec.Files {
		a, b := "a/"+f.Path, "b/"+f.Path
		fmt.Fprintf(w, "diff --git %s %s\n", a, b)
		switch {
		case !f.Before.exists() && f.After.exists():
			fmt.Fprintf(w, "new file mode %s\n", f.After.Mode)
			a = "/dev/null"
		case f.Before.exists() && !f.After.exists():
			fmt.Fprintf(w, "deleted file mode %s\n", f.Before.Mode)
			b = "/dev/null"
		case f.Before.Mode != f.After.Mode:
			fmt.Fprintf(w, "old mode %s\nnew mode %s\n", f.Before.Mode, f.After.Mode)
		}
		if hide != nil && hide(f.Path) {
			fmt.Fprintf(w, "# content withheld: %s is hidden from programs (omnidev runs show %s prints it)\n", f.Path, rec.ID)
			continue
		}
		old, oerr := s.side(f.Before)
		cur, cerr := s.side(f.After)
		switch {
		case oerr != nil || cerr != nil:
			fmt.Fprintf(w, "# content not kept: %v\n", firstErr(oerr, cerr))
			continue
		case old == cur:
			continue
		case strings.ContainsRune(old, 0) || strings.ContainsRune(cur, 0):
			fmt.Fprintf(w, "Binary files %s and %s differ\n", a, b)
			continue
		}
		fmt.Fprintf(w, "--- %s\n+++ %s\n", a, b)
		var body strings.Builder
		oldN, newN := 0, 0
		for _, d := range diff.Do(old, cur) {
			mark := " "
			switch d.Type {
			case diffmatchpatch.DiffInsert:
				mark = "+"
			case diffmatchpatch.DiffDelete:
				mark = "-"
			}
			for _, line := range strings.SplitAfter(d.Text, "\n") {
				if line == "" {
					continue
				}
				if d.Type != diffmatchpatch.DiffInsert {
					oldN++
				}
				if d.Type != diffmatchpatch.DiffDelete {
					newN++
				}
				body.WriteString(mark + line)
				if !strings.HasSuffix(line, "\n") {
					body.WriteString("\n\\ No newline at end of file\n")
				}
			}
		}
		fmt.Fprintf(w, "@@ -%s +%s @@\n%s", span(oldN), span(newN), body.String())
	}
	return nil
}

func span(n int) string {
	if n == 0 {
		return "0,0"
	}
	return fmt.Sprintf("1,%d", n)
}

func firstErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

func (s *Store) side(st State) (string, error) {
	if !st.exists() {
		return "", nil
	}
	if st.NotKept != "" {
		return "", fmt.Errorf("%s", st.NotKept)
	}
	data, err := s.blob(st.Blob)
	return string(data), err
}
