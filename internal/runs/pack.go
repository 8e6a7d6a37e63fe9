package runs

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"time"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/idxfile"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// A run's pack is written and read here through go-git's pack and index
// codecs rather than its filesystem storage: that storage, asked for a
// PackfileWriter or an object in a pack, first reads the index of every
// pack in the store, four bytes a read(2), and again after each prune
// (it must forget the deleted packs). BenchmarkRecord put that at 3-5 ms
// of a run's 5-7 ms with 100 runs kept. A run's pack holds every object
// the run refers to, so one pack and its index are all a read opens.

// packPath is the pack's path in the store's folder, without extension.
func packPath(h plumbing.Hash) string {
	return "objects/pack/pack-" + h.String()
}

// openDir opens the store's folder for one operation: every file of the
// store is reached through it, and no symlink in it leads out of it. The
// user's own store, signed, can have files replaced by a checkout of a
// commit that tracks them (git overwrites ignored files, and .omni is
// ignored): a symlinked packs list or objects/pack would have a run's
// line, or its pack, written wherever it leads.
func (s *Store) openDir() (*os.Root, error) {
	r, err := os.OpenRoot(s.root)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return r.OpenRoot(filepath.Join(".omni", "runs"))
}

// writePack writes the batch's objects as one packfile and its index in
// the store's folder d, without deltas: the objects of one run are mostly
// unlike, and searching costs time. The index goes in first: git and go-git find a pack by its
// .pack file, which then has its index.
func writePack(d *os.Root, b *batch) (plumbing.Hash, error) {
	var pack bytes.Buffer
	h, err := packfile.NewEncoder(&pack, b.mem, false).Encode(b.hashes, 0)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	w := new(idxfile.Writer)
	p, err := packfile.NewParser(packfile.NewScanner(bytes.NewReader(pack.Bytes())), w)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	if _, err := p.Parse(); err != nil {
		return plumbing.ZeroHash, err
	}
	idx, err := w.Index()
	if err != nil {
		return plumbing.ZeroHash, err
	}
	var idxData bytes.Buffer
	if _, err := idxfile.NewEncoder(&idxData).Encode(idx); err != nil {
		return plumbing.ZeroHash, err
	}
	base := packPath(h)
	if err := d.MkdirAll(path.Dir(base), 0o755); err != nil {
		return plumbing.ZeroHash, err
	}
	if err := writeFile(d, base+".idx", idxData.Bytes()); err != nil {
		return plumbing.ZeroHash, err
	}
	if err := writeFile(d, base+".pack", pack.Bytes()); err != nil {
		d.Remove(base + ".idx")
		return plumbing.ZeroHash, err
	}
	return h, nil
}

// writeFile writes data to name in d through a temporary file renamed over
// it, so that a crash leaves the old file or the new one, never half of
// one.
func writeFile(d *os.Root, name string, data []byte) error {
	tmp := fmt.Sprintf("%s.tmp%d", name, time.Now().UnixNano())
	f, err := d.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err == nil {
		_, err = f.Write(data)
		err = errors.Join(err, f.Close())
	}
	if err != nil {
		d.Remove(tmp)
		return err
	}
	if err := d.Rename(tmp, name); err != nil {
		d.Remove(tmp)
		return err
	}
	return nil
}

// runPack is one run's pack, open for reading.
type runPack struct {
	pf *packfile.Packfile
}

func (s *Store) openPack(h plumbing.Hash) (*runPack, error) {
	d, err := s.openDir()
	if err != nil {
		return nil, err
	}
	defer d.Close()
	base := packPath(h)
	f, err := d.Open(base + ".idx")
	if err != nil {
		return nil, err
	}
	idx := idxfile.NewMemoryIndex()
	err = idxfile.NewDecoder(bufio.NewReader(f)).Decode(idx)
	f.Close()
	if err != nil {
		return nil, fmt.Errorf("read %s.idx: %w", base, err)
	}
	fs := osfs.New(s.dir, osfs.WithBoundOS())
	pf, err := fs.Open(base + ".pack")
	if err != nil {
		return nil, err
	}
	return &runPack{pf: packfile.NewPackfile(idx, fs, pf, 0)}, nil
}

func (p *runPack) Close() error { return p.pf.Close() }

// blob reads a blob of the run.
func (p *runPack) blob(hash string) ([]byte, error) {
	obj, err := p.pf.Get(plumbing.NewHash(hash))
	if err != nil {
		return nil, fmt.Errorf("read blob %s from the runs store: %w", hash, err)
	}
	return readObject(obj)
}

// record reads the run whose commit is c.
func (p *runPack) record(c plumbing.Hash) (*Record, error) {
	obj, err := p.pf.Get(c)
	if err != nil {
		return nil, err
	}
	var commit object.Commit
	if err := commit.Decode(obj); err != nil {
		return nil, err
	}
	if obj, err = p.pf.Get(commit.TreeHash); err != nil {
		return nil, err
	}
	var tree object.Tree
	if err := tree.Decode(obj); err != nil {
		return nil, err
	}
	files := map[string][]byte{}
	for _, e := range tree.Entries {
		if e.Name != "run.json" && e.Name != "program.ts" {
			continue
		}
		if files[e.Name], err = p.blob(e.Hash.String()); err != nil {
			return nil, err
		}
	}
	rec := &Record{}
	if err := json.Unmarshal(files["run.json"], rec); err != nil {
		return nil, fmt.Errorf("run.json: %w", err)
	}
	rec.Program = string(files["program.ts"])
	return rec, nil
}
