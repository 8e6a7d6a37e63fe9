package runs

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	fdiff "github.com/go-git/go-git/v5/plumbing/format/diff"
	"github.com/go-git/go-git/v5/utils/diff"
	"github.com/sergi/go-diff/diffmatchpatch"
)

// WriteDiff writes a unified diff, git's format with three lines of
// context, of the files rec changed.
func (s *Store) WriteDiff(w io.Writer, rec *Record) error {
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
	for _, f := range rec.Files {
		fp, note := filePatchOf(p, f)
		if err := enc.Encode(patch{fp}); err != nil {
			return err
		}
		if note != "" {
			if _, err := fmt.Fprintf(w, "# %s: content not kept: %s\n", f.Path, note); err != nil {
				return err
			}
		}
	}
	return nil
}

// filePatchOf is f as go-git's diff encoder takes it, and why its content
// is not shown, if it is not.
func filePatchOf(p *runPack, f File) (fdiff.FilePatch, string) {
	fp := &filePatch{from: side(f.Path, f.Before), to: side(f.Path, f.After)}
	old, oerr := content(p, f.Before)
	cur, cerr := content(p, f.After)
	switch {
	case oerr != nil || cerr != nil:
		// The header alone, said to be binary so that it has no hunk.
		fp.binary = true
		if oerr == nil {
			oerr = cerr
		}
		return fp, oerr.Error()
	case strings.ContainsRune(old, 0) || strings.ContainsRune(cur, 0):
		fp.binary = true
		return fp, ""
	}
	for _, d := range diff.Do(old, cur) {
		op := fdiff.Equal
		switch d.Type {
		case diffmatchpatch.DiffInsert:
			op = fdiff.Add
		case diffmatchpatch.DiffDelete:
			op = fdiff.Delete
		}
		fp.chunks = append(fp.chunks, chunk{d.Text, op})
	}
	return fp, ""
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
