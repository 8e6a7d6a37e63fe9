package runs

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	fdiff "github.com/go-git/go-git/v5/plumbing/format/diff"
	"github.com/go-git/go-git/v5/utils/diff"
	"github.com/sergi/go-diff/diffmatchpatch"
)

// A line diff is Myers': its time grows with the lines times the lines
// changed, and a program writes both sides. Two files of 60,000 distinct
// lines took 18 s, two of 8 MiB would take the hour go-git's diff.Do
// allows, all of it holding the store (and a program's runs.show, past its
// run's timeout). Past diffFileTimeout a file's diff is coarser (blocks
// removed and added whole, as internal/changes counts lines), and past
// diffTimeout every later file's diff of the run is.
const (
	diffFileTimeout = time.Second
	diffTimeout     = 10 * time.Second
)

// WriteDiff writes a unified diff, git's format with three lines of
// context, of the files rec changed.
func (s *Store) WriteDiff(w io.Writer, rec *Record) error {
	return s.WriteDiffHiding(w, rec, nil)
}

// WriteDiffHiding is WriteDiff for a reader who may not see every file (a
// program, which the sandbox keeps from some): a file hide reports is named
// with its header, its content left out and said to be.
func (s *Store) WriteDiffHiding(w io.Writer, rec *Record, hide func(path string) bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.refresh(); err != nil {
		return err
	}
	sr, ok := s.runs[rec.ID]
	if !ok {
		return fmt.Errorf("%w: %q (omnidev runs lists them)", ErrNotFound, rec.ID)
	}
	p, err := s.openPack(sr.pack)
	if err != nil {
		return fmt.Errorf("read run %s: %w", rec.ID, err)
	}
	defer p.Close()
	enc := fdiff.NewUnifiedEncoder(w, fdiff.DefaultContextLines)
	deadline := time.Now().Add(diffTimeout)
	for _, f := range rec.Files {
		if hide != nil && hide(f.Path) {
			if err := header(w, f, fmt.Sprintf("content withheld: %s is hidden from programs (omnidev runs show %s prints it)", f.Path, rec.ID)); err != nil {
				return err
			}
			continue
		}
		fp, err := filePatchOf(p, f, deadline)
		if err != nil {
			if err := header(w, f, fmt.Sprintf("content not kept: %v", err)); err != nil {
				return err
			}
			continue
		}
		if err := enc.Encode(patch{fp}); err != nil {
			return err
		}
	}
	return nil
}

// header writes the lines of git's header that say what happened to f,
// without its content or hashes, and a comment saying why.
func header(w io.Writer, f File, why string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "diff --git a/%s b/%s\n", f.Path, f.Path)
	switch {
	case !f.Before.exists() && f.After.exists():
		fmt.Fprintf(&b, "new file mode %s\n", f.After.Mode)
	case f.Before.exists() && !f.After.exists():
		fmt.Fprintf(&b, "deleted file mode %s\n", f.Before.Mode)
	case f.Before.Mode != f.After.Mode:
		fmt.Fprintf(&b, "old mode %s\nnew mode %s\n", f.Before.Mode, f.After.Mode)
	}
	fmt.Fprintf(&b, "# %s\n", why)
	_, err := io.WriteString(w, b.String())
	return err
}

// filePatchOf is f as go-git's diff encoder takes it, its lines compared
// until deadline at the latest (see diffFileTimeout), or why its content
// cannot be shown.
func filePatchOf(p *runPack, f File, deadline time.Time) (fdiff.FilePatch, error) {
	fp := &filePatch{from: side(f.Path, f.Before), to: side(f.Path, f.After)}
	old, err := content(p, f.Before)
	if err != nil {
		return nil, err
	}
	cur, err := content(p, f.After)
	if err != nil {
		return nil, err
	}
	if strings.ContainsRune(old, 0) || strings.ContainsRune(cur, 0) {
		fp.binary = true
		return fp, nil
	}
	// A timeout of 0 would be none.
	timeout := max(min(diffFileTimeout, time.Until(deadline)), time.Millisecond)
	for _, d := range diff.DoWithTimeout(old, cur, timeout) {
		op := fdiff.Equal
		switch d.Type {
		case diffmatchpatch.DiffInsert:
			op = fdiff.Add
		case diffmatchpatch.DiffDelete:
			op = fdiff.Delete
		}
		fp.chunks = append(fp.chunks, chunk{d.Text, op})
	}
	return fp, nil
}

func content(p *runPack, st State) (string, error) {
	if !st.exists() {
		return "", nil
	}
	if st.NotKept != "" {
		return "", fmt.Errorf("%s", st.NotKept)
	}
	data, err := p.blob(st.Blob)
	return string(data), err
}

// side is one side of a file's patch; nil where the file was absent.
func side(path string, st State) fdiff.File {
	if !st.exists() {
		return nil
	}
	m, _ := strconv.ParseUint(st.Mode, 8, 32)
	h := plumbing.NewHash(st.Blob)
	if st.Blob == "" {
		h = plumbing.ZeroHash
	}
	return file{path, filemode.FileMode(m), h}
}

type patch struct{ fp fdiff.FilePatch }

func (p patch) FilePatches() []fdiff.FilePatch { return []fdiff.FilePatch{p.fp} }
func (patch) Message() string                  { return "" }

type filePatch struct {
	from, to fdiff.File
	chunks   []fdiff.Chunk
	binary   bool
}

func (f *filePatch) IsBinary() bool               { return f.binary }
func (f *filePatch) Files() (from, to fdiff.File) { return f.from, f.to }
func (f *filePatch) Chunks() []fdiff.Chunk        { return f.chunks }

type file struct {
	path string
	mode filemode.FileMode
	hash plumbing.Hash
}

func (f file) Hash() plumbing.Hash     { return f.hash }
func (f file) Mode() filemode.FileMode { return f.mode }
func (f file) Path() string            { return f.path }

type chunk struct {
	text string
	op   fdiff.Operation
}

func (c chunk) Content() string       { return c.text }
func (c chunk) Type() fdiff.Operation { return c.op }
