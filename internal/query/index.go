package query

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/index/scorch"

	"github.com/omnidev/omnidev/internal/capability"
)

// Names inside the folder given to Open. Nothing else in that folder is
// ever read, written or deleted.
const (
	bleveDir     = "bleve"
	manifestFile = "manifest.json"
	lockFile     = "lock"
)

var (
	// ErrLocked means another open Index (in this process or another) holds
	// the index folder. Reloads in a server must go through Update on the
	// Index they already hold.
	ErrLocked = errors.New("query index is in use by another process or Index; close it, or use Update to reload")
	// ErrClosed is returned by the methods of a closed Index.
	ErrClosed = errors.New("query index is closed")
)

// Index is a bleve index over a Registry. Search may be called concurrently
// with itself and with Update.
type Index struct {
	// Set by Open, then only read.
	dir      string
	logger   *slog.Logger
	bleve    bleve.Index
	analyzer analysis.Analyzer
	lock     *os.File
	onBuild  func() (end func(docs int))

	// mu serializes Open's loading, Update and Close, the writers of the
	// index, and guards hashes and stats.
	mu     sync.Mutex
	hashes map[string]string // the document hashes the index holds (see hashesKey)
	stats  UpdateStats

	// closed is set by Close, and read by Search without locking.
	closed atomic.Bool

	// state is replaced by Update once the index holds the new documents,
	// and read without locking by Search.
	state atomic.Pointer[state]
	// writes counts the starts and ends of apply: it is odd while the index
	// and state may disagree. A search that saw it even and unchanged from
	// before it read state to after it took its snapshot of the index reads
	// a snapshot that holds exactly state's documents (see Search).
	writes atomic.Uint64
}

// state is the registry searches render summaries and types from.
type state struct {
	caps []*capability.Capability          // enabled capabilities, sorted by id
	byID map[string]*capability.Capability // the same, by id
	// unavailable are listed in summaries, never indexed (see Registry.Unavailable).
	unavailable []*capability.Capability
	// docs are the documents of caps, by source tag: the text bleve stores
	// for them, which searches read from here rather than from the index.
	docs map[string]document
	// tsTypes holds the declaration of each wrapped server's module in
	// parts, by capability id, made when an answer first needs it.
	tsTypes map[string]*lazyTypes
}

func newState(reg *capability.Registry, docs map[string]document) *state {
	s := &state{byID: make(map[string]*capability.Capability), docs: docs, tsTypes: make(map[string]*lazyTypes)}
	if reg == nil {
		return s
	}
	for _, c := range reg.Capabilities {
		if c != nil {
			s.caps = append(s.caps, c)
			s.byID[c.ID] = c
			if len(c.Tools) > 0 {
				s.tsTypes[c.ID] = &lazyTypes{}
			}
		}
	}
	s.unavailable = reg.Unavailable
	return s
}

// UpdateStats says what Open or Update did to the index.
type UpdateStats struct {
	Added, Updated, Removed, Unchanged int
	// Rebuilt is set when Open found no usable index and started from nothing
	// (the log says why).
	Rebuilt  bool
	Duration time.Duration
}

// LogValue lets callers log the stats as one attribute group.
func (s UpdateStats) LogValue() slog.Value {
	return slog.GroupValue(
		slog.Int("added", s.Added),
		slog.Int("updated", s.Updated),
		slog.Int("removed", s.Removed),
		slog.Int("unchanged", s.Unchanged),
		slog.Bool("rebuilt", s.Rebuilt),
		slog.Duration("duration", s.Duration),
	)
}

// Options configure Open. The zero value logs nothing and leaves the
// process alone.
type Options struct {
	Logger *slog.Logger
	// OnBuild, if set, is called as a build from nothing starts (an index
	// created or rebuilt, or one that held no documents; or an update that
	// adds more than buildBatchDocs documents at once), and the function
	// it returns as that build ends, with the number of documents it
	// indexed. A build allocates much short-lived garbage: the owner of the
	// process may raise the collector's target meanwhile and return the
	// memory after (cmd/omnidev does). This package never changes
	// process-wide settings itself.
	OnBuild func() (end func(docs int))
}

// Open opens the index kept in dir (the server uses <root>/.omni/index),
// creating it when there is none, and brings it up to date with reg: only
// documents whose content changed since the index was written are indexed
// again. An index that cannot be used — corrupt, foreign, or written by
// another schema version — is deleted and rebuilt, and the reason logged.
// Open fails with ErrLocked when another Index holds dir.
func Open(ctx context.Context, dir string, reg *capability.Registry, opts Options) (*Index, error) {
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create index folder: %w", err)
	}
	lock, err := lockDir(filepath.Join(dir, lockFile))
	if err != nil {
		return nil, err
	}

	x := &Index{dir: dir, logger: logger, lock: lock, onBuild: opts.OnBuild}
	x.mu.Lock()
	defer x.mu.Unlock()
	stats, err := x.load(ctx, reg)
	x.stats = stats
	if err == nil {
		// The mapping is ours (created, or verified equal to ours), which
		// always has it.
		if x.analyzer = x.bleve.Mapping().AnalyzerNamed(wordsAnalyzer); x.analyzer == nil {
			err = fmt.Errorf("open query index: no analyzer %q", wordsAnalyzer)
		}
	}
	if err != nil {
		x.closeLocked()
		return nil, err
	}
	logger.Info("query index open", "dir", dir, "stats", stats)
	return x, nil
}

// load opens the index in x.dir and applies reg to it. An index that cannot
// be opened, or fails when reg is applied to it, is deleted and rebuilt.
// x.mu must be held.
func (x *Index) load(ctx context.Context, reg *capability.Registry) (UpdateStats, error) {
	idx, hashes, err := openExisting(x.dir)
	if err == nil {
		x.bleve, x.hashes = idx, hashes
		var stats UpdateStats
		if stats, err = x.apply(ctx, reg); err == nil || ctx.Err() != nil {
			return stats, err
		}
		x.bleve.Close()
		x.bleve = nil
	}
	switch {
	case errors.Is(err, errNoManifest) && !exists(filepath.Join(x.dir, bleveDir)):
		x.logger.Info("creating query index", "dir", x.dir)
	default:
		x.logger.Warn("query index unusable, rebuilding it", "dir", x.dir, "reason", err)
	}
	if x.bleve, err = create(x.dir); err != nil {
		return UpdateStats{}, err
	}
	x.hashes = map[string]string{}
	stats, err := x.apply(ctx, reg)
	stats.Rebuilt = true
	return stats, err
}

// openExisting opens the index in dir, checks that it is ours, of this
// schema version and whole, and returns the hashes of its documents. bleve
// may panic on files it cannot parse: that is one more reason to rebuild,
// not to crash.
func openExisting(dir string) (idx bleve.Index, hashes map[string]string, err error) {
	if err := readManifest(filepath.Join(dir, manifestFile)); err != nil {
		return nil, nil, err
	}
	if err := checkBolt(filepath.Join(dir, bleveDir, boltFile)); err != nil {
		return nil, nil, err
	}
	defer func() {
		if r := recover(); r != nil {
			idx, hashes, err = nil, nil, fmt.Errorf("open bleve index: panic: %v", r)
		}
	}()
	idx, err = bleve.Open(filepath.Join(dir, bleveDir))
	if err != nil {
		return nil, nil, fmt.Errorf("open bleve index: %w", err)
	}
	if hashes, err = verify(idx); err != nil {
		idx.Close()
		return nil, nil, err
	}
	return idx, hashes, nil
}

// verify catches an index that is not what the manifest says: another kind
// of bleve index, another mapping (a schema change nobody versioned), or
// documents that its hashes do not account for (files replaced or lost).
func verify(idx bleve.Index) (map[string]string, error) {
	adv, err := idx.Advanced()
	if err != nil {
		return nil, fmt.Errorf("open bleve index: %w", err)
	}
	if _, ok := adv.(*scorch.Scorch); !ok {
		return nil, fmt.Errorf("bleve index is of type %T, want scorch", adv)
	}
	got, err := json.Marshal(idx.Mapping())
	if err != nil {
		return nil, fmt.Errorf("encode stored mapping: %w", err)
	}
	want, err := json.Marshal(newMapping())
	if err != nil {
		return nil, fmt.Errorf("encode mapping: %w", err)
	}
	if string(got) != string(want) {
		return nil, errors.New("bleve index has another mapping")
	}
	data, err := idx.GetInternal([]byte(hashesKey))
	if err != nil {
		return nil, fmt.Errorf("read document hashes: %w", err)
	}
	hashes := map[string]string{}
	if data != nil { // none before the first batch
		if err := json.Unmarshal(data, &hashes); err != nil {
			return nil, fmt.Errorf("parse document hashes: %w", err)
		}
	}
	n, err := idx.DocCount()
	if err != nil {
		return nil, fmt.Errorf("count documents: %w", err)
	}
	if n != uint64(len(hashes)) {
		return nil, fmt.Errorf("bleve index holds %d documents, its hashes list %d", n, len(hashes))
	}
	return hashes, nil
}

// create deletes whatever index dir holds and creates an empty one. The
// manifest goes first and comes back last, so that a crash half-way leaves
// no manifest and the next Open rebuilds again.
func create(dir string) (bleve.Index, error) {
	mpath := filepath.Join(dir, manifestFile)
	if err := os.Remove(mpath); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("delete query index: %w", err)
	}
	path := filepath.Join(dir, bleveDir)
	if err := os.RemoveAll(path); err != nil {
		return nil, fmt.Errorf("delete query index: %w", err)
	}
	idx, err := bleve.NewUsing(path, newMapping(), scorch.Name, scorch.Name, nil)
	if err != nil {
		return nil, fmt.Errorf("create query index: %w", err)
	}
	if err := writeManifest(mpath); err != nil {
		idx.Close()
		return nil, err
	}
	return idx, nil
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// Update brings the index up to date with reg — only documents whose content
// changed are indexed again, all in one batch — then makes reg the registry
// summaries and type definitions come from. Searches running meanwhile see
// the index before or after the batch, never half of it.
func (x *Index) Update(ctx context.Context, reg *capability.Registry) (UpdateStats, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed.Load() {
		return UpdateStats{}, ErrClosed
	}
	stats, err := x.apply(ctx, reg)
	x.stats = stats
	return stats, err
}

// Stats returns what the last Open or Update did.
func (x *Index) Stats() UpdateStats {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.stats
}

// buildBatchDocs is how many documents a batch holds when an index is
// built from nothing. bleve builds a batch's segment in memory, with
// interim structures several times its size, so a big repository is built
// in parts; but each further segment is merged with the others beside the
// build, which slows it down: the size weighs the two (BenchmarkBuild). An
// empty index has no searcher to see a half-built state, and a crash
// half-way leaves documents its hashes do not list, which the next Open
// rebuilds.
const buildBatchDocs = 2500

// apply writes the difference between the index and reg, with the new
// document hashes, in one batch (several when the index was empty or gains
// more than buildBatchDocs documents, see buildBatchDocs). x.mu must be
// held.
func (x *Index) apply(ctx context.Context, reg *capability.Registry) (stats UpdateStats, err error) {
	// bleve may panic on segment files it cannot parse; an index that
	// does is unusable, which is an error, not a reason to crash.
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("update query index: panic: %v", r)
		}
	}()
	x.writes.Add(1)
	defer x.writes.Add(1)
	start := time.Now()
	docs := documents(reg)
	next := make(map[string]string, len(docs))
	batch := x.bleve.NewBatch()
	hs := newHasher()
	added := 0
	for id, d := range docs {
		next[id] = hs.hash(&d)
		if _, ok := x.hashes[id]; !ok {
			added++
		}
	}
	// An update that adds as many documents as a build (a wrapped server
	// that lists thousands of tools) is written as a build is: in parts,
	// with the build's memory policy. Searches meanwhile may see some of
	// the new documents before the registry that has them; they are the
	// hits of a batch newer than the state (see search).
	building := len(x.hashes) == 0 || added > buildBatchDocs
	if building && x.onBuild != nil {
		end := x.onBuild()
		defer func() { end(stats.Added) }()
	}
	for id, d := range docs {
		h := next[id]
		switch old, ok := x.hashes[id]; {
		case !ok:
			stats.Added++
		case old != h:
			stats.Updated++
		default:
			stats.Unchanged++
			continue
		}
		if err := batch.Index(id, d); err != nil {
			return stats, fmt.Errorf("index %s: %w", id, err)
		}
		if building && batch.Size() == buildBatchDocs {
			if err := ctx.Err(); err != nil {
				return stats, err
			}
			if err := x.bleve.Batch(batch); err != nil {
				return stats, fmt.Errorf("update query index: %w", err)
			}
			batch.Reset()
		}
	}
	for id := range x.hashes {
		if _, ok := docs[id]; !ok {
			stats.Removed++
			batch.Delete(id)
		}
	}

	if batch.Size() > 0 {
		if err := ctx.Err(); err != nil {
			return stats, err
		}
		data, err := json.Marshal(next)
		if err != nil {
			return stats, fmt.Errorf("encode document hashes: %w", err)
		}
		batch.SetInternal([]byte(hashesKey), data)
		if err := x.bleve.Batch(batch); err != nil {
			return stats, fmt.Errorf("update query index: %w", err)
		}
		x.hashes = next
	}
	x.state.Store(newState(reg, docs))
	stats.Duration = time.Since(start)
	return stats, nil
}

// Close releases the index. Searches after Close fail with ErrClosed.
func (x *Index) Close() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.closeLocked()
}

func (x *Index) closeLocked() error {
	if x.closed.Swap(true) {
		return nil
	}
	var err error
	if x.bleve != nil {
		err = x.bleve.Close()
	}
	// The lock goes last: nobody may open the folder while bleve still
	// writes to it.
	return errors.Join(err, x.lock.Close())
}
