package runs

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/filesystem"
	"github.com/go-git/go-git/v5/storage/memory"

	"github.com/omnidev/omnidev/internal/changes"
)

const (
	// MaxKeptBytes: a file larger than this, before or after a run, is not
	// kept; its undo says so.
	MaxKeptBytes = 8 << 20
	// MaxRunKeptBytes bounds the content kept for one run, the files'
	// states before it first, then after: a run's objects are held in
	// memory until its pack is written, and a program can make any number
	// of files of MaxKeptBytes (sparse ones cost it no disk). Past it,
	// files are listed as not kept; their states' hashes are still known.
	MaxRunKeptBytes = 64 << 20
	// DefaultKeep is how many runs are kept when the caller does not say.
	DefaultKeep = 100
	// pruneSlack: old runs are pruned when this many more than keep are
	// stored, so that the walk over the store's objects that pruning costs
	// is paid once every pruneSlack runs, not on every run.
	pruneSlack = 10
	refPrefix  = "refs/runs/"
	// packsFile lists, a line per run, "<id> <pack>": the packfile that
	// holds the run's objects, deleted when the run is pruned.
	packsFile = "packs"
)

var (
	// ErrNotFound: no run has that id.
	ErrNotFound = errors.New("no such run")
	// ErrNoRuns: no run changed files yet.
	ErrNoRuns = errors.New("no run with changes to undo")
	// ErrRunning: the run is in progress, not recorded yet (a program
	// that asks for its own run).
	ErrRunning = errors.New("run in progress")
)

// Store is the record of the runs of one worktree. Its methods are safe
// for concurrent use, each holding the store for its whole length: a
// program's own calls (runs.undo from inside a run) come while the run that
// started it is between Prepare and Record. Keeping the worktree still is
// the caller's part: it serializes runs with each other and with undos made
// from outside a run, across processes too (internal/execute's run lock),
// and a store notices what another process recorded when the packs list
// changed.
type Store struct {
	mu   sync.Mutex
	root string
	dir  string
	keep int
	// st holds the loose blobs of large dirty files, written by Prepare
	// before a run (packs are read and written without it: see pack.go).
	st *filesystem.Storage
	// kept remembers large dirty files written before earlier runs, by
	// path: a file whose stat data did not change is not read again.
	kept map[string]keptFile
	// ids are the stored runs, newest first, and runs where each is:
	// read at Open, and again only when the packs list changed.
	ids  []string
	runs map[string]stored
	seen packsStat
	// recs caches the records read or written: a record never changes.
	recs map[string]*Record
	// key signs the store and the packs list's lines; ignored counts the
	// lines it did not sign, which load passed over; aside is where a store
	// the key did not sign was moved.
	key     []byte
	ignored int
	aside   string
	// running are the ids given to runs between Prepare and Record: taken,
	// and refused by Get with ErrRunning.
	running map[string]bool
}

// stored is where a run is: its packfile, and its commit there.
type stored struct{ pack, commit plumbing.Hash }

// line is the run's line in the packs list, signed: "<id> <pack> <commit>
// <mac>". load reads only the lines the store's key signed (see Open).
func (s *Store) line(id string, sr stored) string {
	fields := id + " " + sr.pack.String() + " " + sr.commit.String()
	return fields + " " + s.mac(fields) + "\n"
}

func (s *Store) mac(fields string) string {
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte("omnidev run record\x00" + fields))
	return hex.EncodeToString(m.Sum(nil)[:16])
}

// ownerFile holds "<nonce> <mac>": the store's signature.
const ownerFile = "omnidev-owner"

// owned reports whether the store's folder holds an ownerFile the key
// signed.
func (s *Store) owned() bool {
	data, err := changes.ReadFile(filepath.Join(s.dir, ownerFile), false, 256)
	if err != nil {
		return false
	}
	nonce, mac, ok := strings.Cut(strings.TrimSpace(string(data)), " ")
	return ok && hmac.Equal([]byte(mac), []byte(s.mac("store "+nonce)))
}

// own signs a store just made.
func (s *Store) own() error {
	nonce := rand.Text()
	d, err := s.openDir()
	if err == nil {
		err = writeFile(d, ownerFile, []byte(nonce+" "+s.mac("store "+nonce)+"\n"))
		d.Close()
	}
	if err != nil {
		return fmt.Errorf("create the runs store: %w", err)
	}
	return nil
}

// SetAside returns where Open moved a .omni/runs the key did not sign, or
// "".
func (s *Store) SetAside() string { return s.aside }

// maxPacksBytes bounds the packs list: a line of ~160 bytes a run, and
// at most 100,000 runs kept.
const maxPacksBytes = 32 << 20

type keptFile struct {
	size, mtime int64
	hash        plumbing.Hash
}

// packsStat is what says that another process changed the packs list.
type packsStat struct {
	size, mtime int64
}

// Open opens (creating it if needed) the store of the worktree at root,
// keeping the last keep runs (DefaultKeep if keep <= 0), with the user's
// key (trust.Store.RunsKey).
//
// The store lies in the worktree, which a clone fills as its author likes:
// an undo of a record someone else wrote would write what they chose, and
// a folder of theirs in the store could lead the store's writes anywhere.
// So the key signs the store (its ownerFile) and each run's line in the
// packs list. A .omni/runs the key did not sign is moved aside whole
// (SetAside says where) and a new store made; a line it did not sign is
// passed over (Ignored counts them).
func Open(root string, keep int, key []byte) (*Store, error) {
	if len(key) == 0 {
		return nil, errors.New("open the runs store: no key to sign run records with")
	}
	dir := filepath.Join(root, ".omni", "runs")
	for _, d := range []string{filepath.Dir(dir), dir} {
		// A repository may hold either as a symlink (a clone carries any
		// .omni): the store would be written wherever it leads.
		if fi, err := os.Lstat(d); err == nil && !fi.IsDir() {
			return nil, fmt.Errorf("open the runs store: %s is not a folder (a symlink?); omnidev follows no link a repository holds: replace it with a folder", d)
		}
	}
	s := &Store{root: root, dir: dir, kept: map[string]keptFile{}, recs: map[string]*Record{}, running: map[string]bool{}, key: key}
	if _, err := os.Lstat(dir); err == nil && !s.owned() {
		aside := fmt.Sprintf("%s.unverified-%d", dir, time.Now().UnixNano())
		if err := os.Rename(dir, aside); err != nil {
			return nil, fmt.Errorf("open the runs store: %s was not made by omnidev with your key (a clone's, or an older omnidev's), and moving it aside failed: %w; remove it", dir, err)
		}
		s.aside = aside
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create the runs store: %w", err)
	}
	if !s.owned() {
		if err := s.own(); err != nil {
			return nil, err
		}
	}
	st := newStorage(dir)
	if _, err := os.Stat(filepath.Join(dir, "HEAD")); errors.Is(err, os.ErrNotExist) {
		if _, err := git.Init(st, nil); err != nil && !errors.Is(err, git.ErrRepositoryAlreadyExists) {
			return nil, fmt.Errorf("create the runs store %s: %w", dir, err)
		}
	}
	s.st = st
	s.SetKeep(keep)
	if err := s.load(); err != nil {
		return nil, fmt.Errorf("read the runs store %s: %w", dir, err)
	}
	return s, nil
}

// SetKeep sets how many runs are kept (DefaultKeep if keep <= 0), from the
// next run on.
func (s *Store) SetKeep(keep int) {
	if keep <= 0 {
		keep = DefaultKeep
	}
	s.mu.Lock()
	s.keep = keep
	s.mu.Unlock()
}

func newStorage(dir string) *filesystem.Storage {
	// Bound: no symlink in the store leads out of it (see openDir).
	return filesystem.NewStorage(osfs.New(dir, osfs.WithBoundOS()), cache.NewObjectLRU(4<<20))
}

// load reads the list of stored runs: the lines of the packs list the
// store's key signed. A line another key signed, or none (a store written
// before lines were signed), is passed over and counted in ignored.
func (s *Store) load() error {
	s.seen = s.packsStat()
	s.ids, s.runs, s.ignored = nil, map[string]stored{}, 0
	data, err := changes.ReadFile(filepath.Join(s.dir, packsFile), false, maxPacksBytes)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	for line := range strings.Lines(string(data)) {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if len(f) != 4 || !hmac.Equal([]byte(f[3]), []byte(s.mac(strings.Join(f[:3], " ")))) {
			s.ignored++
			continue
		}
		s.runs[f[0]] = stored{pack: plumbing.NewHash(f[1]), commit: plumbing.NewHash(f[2])}
	}
	s.ids = slices.Collect(maps.Keys(s.runs))
	slices.SortFunc(s.ids, newestFirst)
	return nil
}

// Ignored returns how many runs the store holds that its key did not
// sign: recorded by another user, or by another process without a key,
// or not by omnidev (a repository's own .omni/runs). They are not read.
func (s *Store) Ignored() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ignored
}

func (s *Store) packsStat() packsStat {
	fi, err := os.Stat(filepath.Join(s.dir, packsFile))
	if err != nil {
		return packsStat{}
	}
	return packsStat{size: fi.Size(), mtime: fi.ModTime().UnixNano()}
}

// refresh reads the packs list again if another process changed it.
func (s *Store) refresh() error {
	if s.packsStat() == s.seen {
		return nil
	}
	if err := s.load(); err != nil {
		return fmt.Errorf("read the runs store %s: %w", s.dir, err)
	}
	return nil
}

// newestFirst orders ids, base 36 of milliseconds, newest first.
func newestFirst(a, b string) int {
	if len(a) != len(b) {
		return len(b) - len(a)
	}
	return strings.Compare(b, a)
}

// Record is one run as stored.
type Record struct {
	ID         string    `json:"id"`
	Time       time.Time `json:"time"`
	DurationMS int64     `json:"duration_ms"`
	ExitCode   int       `json:"exit_code"`
	// Undoes is the id of the run this one undid; empty for a program.
	Undoes string `json:"undoes,omitempty"`
	Files  []File `json:"files"`
	// Program is the program's text (a note for an undo).
	Program string `json:"-"`
}

// File is one file a run changed.
type File struct {
	Path       string         `json:"path"`
	Status     changes.Status `json:"status"`
	Insertions int            `json:"insertions"`
	Deletions  int            `json:"deletions"`
	Before     State          `json:"before"`
	After      State          `json:"after"`
}

// State is a file's state at one moment.
type State struct {
	// Mode is git's: "100644", "100755", "120000" (symlink); "" absent;
	// "40000" a folder where the file was.
	Mode string `json:"mode,omitempty"`
	Blob string `json:"blob,omitempty"`
	Size int64  `json:"size,omitempty"`
	// NotKept says why the content is not in the store.
	NotKept string `json:"not_kept,omitempty"`
}

const modeDir = "40000"

func (s State) exists() bool { return s.Mode != "" && s.Mode != modeDir }

// Insertions and Deletions sum the record's line counts.
func (r *Record) Insertions() (ins, del int) {
	for _, f := range r.Files {
		ins += f.Insertions
		del += f.Deletions
	}
	return ins, del
}

// Pending is what was kept just before a run, for Record after it.
type Pending struct {
	id    string
	mark  *changes.Mark
	start time.Time
	large map[string]keptFile
	// skipped are the large dirty files not kept, with why.
	skipped map[string]string
}

// overRun is why a file's content is not kept past MaxRunKeptBytes.
var overRun = fmt.Sprintf("the run's files passed the %d MiB kept for one run", MaxRunKeptBytes>>20)

// Prepare keeps, just before a run, the content of the dirty files the
// baseline m holds no copy of (large ones, up to MaxKeptBytes).
func (s *Store) Prepare(m *changes.Mark) *Pending {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := &Pending{mark: m, start: time.Now(), large: map[string]keptFile{}, skipped: map[string]string{}}
	s.refresh() // another process's runs take ids too; Record reports a failure
	p.id = s.newID(p.start)
	s.running[p.id] = true
	w, err := openWorktree(s.root)
	if err != nil {
		return p
	}
	defer w.Close()
	var total int64
	// Only the files dirty now stay kept: prune deletes the others' blobs.
	kept := map[string]keptFile{}
	defer func() { s.kept = kept }()
	m.Uncopied(func(rel string, pr *changes.Prior) {
		if pr.Size > MaxKeptBytes {
			return
		}
		if total += pr.Size; total > MaxRunKeptBytes {
			p.skipped[rel] = overRun
			return
		}
		if k, ok := s.kept[rel]; ok && k.size == pr.Size && k.mtime == pr.MTime {
			kept[rel], p.large[rel] = k, k
			return
		}
		st, data := w.state(rel)
		if st.Blob == "" || st.Size != pr.Size {
			return
		}
		h, err := s.writeBlob(data)
		if err != nil {
			return
		}
		k := keptFile{size: pr.Size, mtime: pr.MTime, hash: h}
		kept[rel], p.large[rel] = k, k
	})
	return p
}

// Run is what the caller knows of a finished run.
type Run struct {
	Program  string
	ExitCode int
	Duration time.Duration
}

// Record stores a run that changed the files in changed (all of them, in
// path order), and prunes old runs. It returns the run's record.
func (s *Store) Record(p *Pending, run Run, changed []changes.Change) (*Record, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.running, p.id)
	if err := s.refresh(); err != nil {
		return nil, err
	}
	rec := &Record{ID: p.id, Time: p.start, DurationMS: run.Duration.Milliseconds(), ExitCode: run.ExitCode, Program: run.Program}
	w, err := openWorktree(s.root)
	if err != nil {
		return nil, fmt.Errorf("record the run: %w", err)
	}
	defer w.Close()
	b := newBatch()
	// The states before the run first: undo needs them, while of the
	// states after it needs only the hashes.
	befores := make([]State, len(changed))
	for i, c := range changed {
		befores[i] = s.prior(b, p, c)
	}
	for i, c := range changed {
		f := File{Path: c.Path, Status: c.Status, Insertions: c.Insertions, Deletions: c.Deletions}
		f.Before = befores[i]
		f.After = capture(w, b, c.Path)
		if !utf8.ValidString(c.Path) {
			// run.json would hold another name, U+FFFD for each bad
			// byte: undo would change that file instead of this one.
			for _, st := range []*State{&f.Before, &f.After} {
				st.Blob, st.NotKept = "", "the name is not UTF-8"
			}
		}
		rec.Files = append(rec.Files, f)
	}
	if err := s.save(b, rec); err != nil {
		return nil, err
	}
	return rec, nil
}

// prior stores the state a changed file had before the run.
func (s *Store) prior(b *batch, p *Pending, c changes.Change) State {
	pr := c.Prior
	if pr == nil || !pr.Exists {
		return State{}
	}
	st := State{Mode: modeString(modeOf(pr.Link, pr.Executable)), Size: pr.Size}
	if why, ok := p.skipped[c.Path]; ok {
		st.NotKept = why
		return st
	}
	if pr.Size <= MaxKeptBytes && !b.fits(pr.Size) {
		st.NotKept = overRun
		return st
	}
	if k, ok := p.large[c.Path]; ok && k.size == pr.Size && k.mtime == pr.MTime {
		data, err := s.loose(k.hash)
		if err != nil {
			st.NotKept = err.Error()
			return st
		}
		st.Blob = b.add(plumbing.BlobObject, data).String()
		return st
	}
	if pr.Size > MaxKeptBytes {
		st.NotKept = fmt.Sprintf("over %d MiB", MaxKeptBytes>>20)
		return st
	}
	data, err := p.mark.Content(pr, MaxKeptBytes)
	if err != nil {
		st.NotKept = err.Error()
		return st
	}
	st.Blob = b.add(plumbing.BlobObject, data).String()
	return st
}

func modeOf(link, exec bool) filemode.FileMode {
	switch {
	case link:
		return filemode.Symlink
	case exec:
		return filemode.Executable
	}
	return filemode.Regular
}

func (s *Store) path(rel string) string { return filepath.Join(s.root, filepath.FromSlash(rel)) }

// newID returns an id that sorts by time: base 36 of the milliseconds.
func (s *Store) newID(t time.Time) string {
	ms := t.UnixMilli()
	for {
		id := strconv.FormatInt(ms, 36)
		if !slices.Contains(s.ids, id) && !s.running[id] {
			return id
		}
		ms++
	}
}

// writeBlob writes a loose object: only Prepare does, before a run, for
// large dirty files, and these are rare. Record copies it into the run's
// pack; prune deletes it once no dirty file has that content.
func (s *Store) writeBlob(data []byte) (plumbing.Hash, error) {
	obj := s.st.NewEncodedObject()
	obj.SetType(plumbing.BlobObject)
	obj.SetSize(int64(len(data)))
	w, err := obj.Writer()
	if err != nil {
		return plumbing.ZeroHash, err
	}
	if _, err := w.Write(data); err != nil {
		return plumbing.ZeroHash, err
	}
	if err := w.Close(); err != nil {
		return plumbing.ZeroHash, err
	}
	h, err := s.st.SetEncodedObject(obj)
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("write to the runs store: %w", err)
	}
	return h, nil
}

// batch gathers the objects of one run, to be written as one packfile: a
// file or two per run, not one per object, and pruning a run deletes its
// pack. A run's pack holds every object the run refers to, so that packs
// share nothing.
type batch struct {
	mem    *memory.Storage
	hashes []plumbing.Hash
	kept   int64 // bytes of file content, within MaxRunKeptBytes
}

// fits takes n bytes of the run's MaxRunKeptBytes, if they are left.
func (b *batch) fits(n int64) bool {
	if b.kept+n > MaxRunKeptBytes {
		return false
	}
	b.kept += n
	return true
}

func newBatch() *batch { return &batch{mem: memory.NewStorage()} }

func (b *batch) add(t plumbing.ObjectType, data []byte) plumbing.Hash {
	obj := b.mem.NewEncodedObject()
	obj.SetType(t)
	obj.SetSize(int64(len(data)))
	w, _ := obj.Writer()
	w.Write(data) // a memory object's writer does not fail
	w.Close()
	return b.put(obj)
}

func (b *batch) put(obj plumbing.EncodedObject) plumbing.Hash {
	h := obj.Hash()
	if b.mem.HasEncodedObject(h) == nil {
		return h
	}
	b.mem.SetEncodedObject(obj)
	b.hashes = append(b.hashes, h)
	return h
}

func (b *batch) encode(e interface {
	Encode(plumbing.EncodedObject) error
}) (plumbing.Hash, error) {
	obj := b.mem.NewEncodedObject()
	if err := e.Encode(obj); err != nil {
		return plumbing.ZeroHash, err
	}
	return b.put(obj), nil
}

// save writes rec as a commit in a packfile of its own (listed in
// packsFile): a tree of run.json, program.ts and blobs/<hash> for every
// state kept, so that the blobs are reachable and in the run's pack. The
// caller has put every blob rec names in b.
func (s *Store) save(b *batch, rec *Record) error {
	meta, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return err
	}
	metaH := b.add(plumbing.BlobObject, meta)
	progH := b.add(plumbing.BlobObject, []byte(rec.Program))
	var blobs []object.TreeEntry
	seen := map[string]bool{}
	for _, f := range rec.Files {
		for _, st := range []State{f.Before, f.After} {
			h := st.Blob
			if h == "" || st.NotKept != "" || seen[h] {
				continue
			}
			seen[h] = true
			if b.mem.HasEncodedObject(plumbing.NewHash(h)) != nil {
				return fmt.Errorf("record run %s: blob %s of %s is not in its pack", rec.ID, h, f.Path)
			}
			blobs = append(blobs, object.TreeEntry{Name: h, Mode: filemode.Regular, Hash: plumbing.NewHash(h)})
		}
	}
	slices.SortFunc(blobs, func(a, b object.TreeEntry) int { return strings.Compare(a.Name, b.Name) })
	blobsH, err := b.encode(&object.Tree{Entries: blobs})
	if err != nil {
		return err
	}
	treeH, err := b.encode(&object.Tree{Entries: []object.TreeEntry{
		{Name: "blobs", Mode: filemode.Dir, Hash: blobsH},
		{Name: "program.ts", Mode: filemode.Regular, Hash: progH},
		{Name: "run.json", Mode: filemode.Regular, Hash: metaH},
	}})
	if err != nil {
		return err
	}
	sig := object.Signature{Name: "omnidev", Email: "omnidev@localhost", When: rec.Time}
	ch, err := b.encode(&object.Commit{Author: sig, Committer: sig, Message: "run " + rec.ID + "\n", TreeHash: treeH})
	if err != nil {
		return err
	}
	d, err := s.openDir()
	if err != nil {
		return fmt.Errorf("write to the runs store: %w", err)
	}
	defer d.Close()
	pack, err := writePack(d, b)
	if err != nil {
		return fmt.Errorf("write to the runs store: %w", err)
	}
	sr := stored{pack: pack, commit: ch}
	f, err := d.OpenFile(packsFile, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err == nil {
		_, err = f.WriteString(s.line(rec.ID, sr))
		err = errors.Join(err, f.Close())
	}
	if err != nil {
		return fmt.Errorf("write to the runs store: %w", err)
	}
	s.runs[rec.ID] = sr
	s.recs[rec.ID] = rec.clone()
	s.ids = append(s.ids, rec.ID)
	slices.SortFunc(s.ids, newestFirst)
	if err := s.prune(d); err != nil {
		return err
	}
	s.seen = s.packsStat()
	return nil
}

// prune drops the oldest runs past keep, with their packs, and the loose
// blobs no dirty file holds any more; d is the store's folder.
func (s *Store) prune(d *os.Root) error {
	if len(s.ids) <= s.keep+pruneSlack {
		return nil
	}
	old := s.ids[s.keep:]
	s.ids = slices.Clone(s.ids[:s.keep])
	var lines strings.Builder
	for _, id := range s.ids {
		lines.WriteString(s.line(id, s.runs[id]))
	}
	if err := writeFile(d, packsFile, []byte(lines.String())); err != nil {
		return fmt.Errorf("prune the runs store: %w", err)
	}
	for _, id := range old {
		sr := s.runs[id]
		delete(s.runs, id)
		delete(s.recs, id)
		// Stores written before the commit was on the packs list have refs.
		if err := s.st.RemoveReference(plumbing.ReferenceName(refPrefix + id)); err != nil {
			return fmt.Errorf("prune the runs store: %w", err)
		}
		base := packPath(sr.pack)
		for _, ext := range []string{".pack", ".idx"} {
			if err := d.Remove(base + ext); err != nil && !errors.Is(err, os.ErrNotExist) {
				return fmt.Errorf("prune the runs store: %w", err)
			}
		}
	}
	live := map[plumbing.Hash]bool{}
	for _, k := range s.kept {
		live[k.hash] = true
	}
	var dead []plumbing.Hash
	err := s.st.ForEachObjectHash(func(h plumbing.Hash) error {
		if !live[h] {
			dead = append(dead, h)
		}
		return nil
	})
	for _, h := range dead {
		err = errors.Join(err, s.st.DeleteLooseObject(h))
	}
	if err != nil {
		return fmt.Errorf("prune the runs store: %w", err)
	}
	return nil
}

// List returns the last n runs (all kept if n <= 0), newest first.
func (s *Store) List(n int) ([]*Record, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.list(n)
}

func (s *Store) list(n int) ([]*Record, error) {
	if err := s.refresh(); err != nil {
		return nil, err
	}
	ids := s.ids
	if n > 0 && len(ids) > n {
		ids = ids[:n]
	}
	out := make([]*Record, 0, len(ids))
	for _, id := range ids {
		r, err := s.get(id)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// Get returns the run with id, or the only one whose id starts with it.
// The id of a run in progress is refused with ErrRunning.
func (s *Store) Get(id string) (*Record, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.refresh(); err != nil {
		return nil, err
	}
	return s.get(id)
}

func (s *Store) get(id string) (*Record, error) {
	if _, ok := s.runs[id]; !ok {
		var match []string
		for _, i := range slices.Concat(s.ids, slices.Collect(maps.Keys(s.running))) {
			if id != "" && strings.HasPrefix(i, id) {
				match = append(match, i)
			}
		}
		if len(match) != 1 {
			return nil, fmt.Errorf("%w: %q (omnidev runs lists them)", ErrNotFound, id)
		}
		id = match[0]
	}
	if s.running[id] {
		return nil, fmt.Errorf("%w: run %s has not ended, so it cannot be shown or undone yet (a program cannot undo itself); once it has ended, omnidev undo %s does", ErrRunning, id, id)
	}
	if r, ok := s.recs[id]; ok {
		return r.clone(), nil
	}
	p, err := s.openPack(s.runs[id].pack)
	if err != nil {
		return nil, fmt.Errorf("read run %s: %w", id, err)
	}
	defer p.Close()
	rec, err := p.record(s.runs[id].commit)
	if err != nil {
		return nil, fmt.Errorf("read run %s: %w", id, err)
	}
	s.recs[id] = rec
	return rec.clone(), nil
}

func (r *Record) clone() *Record {
	c := *r
	c.Files = slices.Clone(r.Files)
	return &c
}

// Latest returns the newest run that changed files.
func (s *Store) Latest() (*Record, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.latest()
}

func (s *Store) latest() (*Record, error) {
	recs, err := s.list(0)
	if err != nil {
		return nil, err
	}
	for _, r := range recs {
		if len(r.Files) > 0 {
			return r, nil
		}
	}
	return nil, ErrNoRuns
}

// loose reads a blob Prepare wrote.
func (s *Store) loose(h plumbing.Hash) ([]byte, error) {
	obj, err := s.st.EncodedObject(plumbing.BlobObject, h)
	if err != nil {
		return nil, fmt.Errorf("read blob %s from the runs store: %w", h, err)
	}
	return readObject(obj)
}

// readObject reads an object of the store, within maxObjectBytes: the
// largest is a run.json of 100,000 files.
func readObject(obj plumbing.EncodedObject) ([]byte, error) {
	if obj.Size() > maxObjectBytes {
		return nil, fmt.Errorf("object %s of the runs store is %d bytes, over %d MiB", obj.Hash(), obj.Size(), maxObjectBytes>>20)
	}
	r, err := obj.Reader()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var b bytes.Buffer
	_, err = io.Copy(&b, io.LimitReader(r, maxObjectBytes))
	return b.Bytes(), err
}

const maxObjectBytes = 64 << 20

// modeString is the mode as git writes it: 100644, not 0100644.
func modeString(m filemode.FileMode) string { return strconv.FormatUint(uint64(m), 8) }
