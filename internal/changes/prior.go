package changes

import (
	"errors"
	"fmt"
	"io"

	"github.com/go-git/go-git/v5/plumbing"
)

// Prior is what the baseline knows of a file just before a run: enough to
// restore it (internal/runs keeps it), when the content was at hand.
// Clean files are their index blob; dirty and untracked ones small enough
// were copied; the rest only have their stat data here, and their
// content must be kept before the run by whoever wants it (Mark.Uncopied).
type Prior struct {
	Exists     bool
	Link       bool
	Executable bool
	Size       int64
	// MTime is the modification time in nanoseconds, to tell whether a
	// copy taken before the run is of this state.
	MTime int64
	kind  contentKind
	hash  plumbing.Hash
	data  []byte
}

// ErrNotKept says the content of a file before a run is not known: it was
// too large to copy.
var ErrNotKept = errors.New("content before the run not kept")

func priorOf(b *baseline) *Prior {
	if b == nil {
		return &Prior{}
	}
	return &Prior{Exists: true, Link: b.stat.isLink(), Executable: b.stat.executable(),
		Size: b.stat.size, MTime: b.stat.mtime, kind: b.kind, hash: b.hash, data: b.content}
}

// Uncopied calls f for every file whose content before the run the
// baseline does not hold (dirty or untracked, and too large to copy), with
// its path and stat data. Their number is the number of large dirty files,
// never the size of the repository's clean part.
func (m *Mark) Uncopied(f func(rel string, p *Prior)) {
	for i := range m.snap.files {
		b := &m.snap.files[i]
		if b.rel != "" && (b.kind == hashed || b.kind == unread) {
			f(b.rel, priorOf(b))
		}
	}
}

// Content returns a file's content before the run (a symlink's target),
// at most limit bytes: the copy the baseline holds, or the index blob.
// ErrNotKept when neither is.
func (m *Mark) Content(p *Prior, limit int64) ([]byte, error) {
	switch {
	case !p.Exists:
		return nil, nil
	case p.kind == copied:
		return p.data, nil
	case p.kind == inIndex && m.snap.git.store != nil:
		s := m.snap
		s.blobMu.Lock()
		defer s.blobMu.Unlock()
		obj, err := s.git.store.EncodedObject(plumbing.BlobObject, p.hash)
		if err != nil {
			return nil, fmt.Errorf("read blob %s: %w", p.hash, err)
		}
		if obj.Size() > limit {
			return nil, fmt.Errorf("%w: %d bytes, at most %d kept", ErrNotKept, obj.Size(), limit)
		}
		r, err := obj.Reader()
		if err != nil {
			return nil, err
		}
		defer r.Close()
		return io.ReadAll(io.LimitReader(r, limit))
	}
	return nil, ErrNotKept
}

// ReadFile returns what git would store for the file at path now - a
// symlink's target, else the bytes of a regular file of at most limit bytes -
// without following a final symlink or blocking on a FIFO or a device.
func ReadFile(path string, link bool, limit int64) ([]byte, error) {
	if link {
		return readContent(path, fileStat{mode: modeSymlink})
	}
	return readRegular(path, limit)
}

// BlobHash is the git blob hash of data.
func BlobHash(data []byte) plumbing.Hash { return blobHash(data) }

// ErrTooLarge says a file was larger than the bound it was read within.
var ErrTooLarge = errTooLarge
