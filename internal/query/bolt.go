package query

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"path/filepath"
)

// scorch keeps the list of its snapshots in a bbolt file. bbolt maps that
// file into memory past its end and trusts the page numbers it reads there:
// a truncated file makes it read a page the file no longer has, and the
// process dies of a memory fault, which no recover catches. checkBolt reads
// the file's two meta pages (bbolt's file format, version 2) and refuses a
// file shorter than the pages they say it holds, so that Open rebuilds the
// index instead. doc.go says what it costs, and which test notices when
// bleve no longer needs it.

// boltFile is where scorch keeps its bbolt file, under the index folder.
var boltFile = filepath.Join("store", "root.bolt")

const (
	boltMagic   = 0xED0CDAED
	boltVersion = 2
	// boltPageHeader is the size of a page's header (id, flags, count,
	// overflow), which the meta follows.
	boltPageHeader = 16
	// boltMetaSum is the length of the meta that its checksum covers:
	// magic, version, page size, flags, root bucket (page, sequence),
	// freelist page, high water mark, transaction id.
	boltMetaSum = 4 + 4 + 4 + 4 + 16 + 8 + 8 + 8
)

// errBoltTruncated is returned by checkBolt for a file shorter than its
// pages.
var errBoltTruncated = errors.New("bbolt file is truncated")

// checkBolt returns errBoltTruncated when the bbolt file at path is shorter
// than its newest valid meta page says. A file that does not exist, or
// whose meta pages are not valid (bbolt refuses those itself), passes.
func checkBolt(path string) error {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("check index store: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("check index store: %w", err)
	}
	var best *boltMeta
	// The first meta page is at 0; the second one page further, at the
	// page size the first one gives (or the usual 4 KiB when it is bad).
	m0 := readBoltMeta(f, 0)
	next := int64(4096)
	if m0 != nil {
		best, next = m0, int64(m0.pageSize)
	}
	if m1 := readBoltMeta(f, next); m1 != nil && (best == nil || m1.txid > best.txid) {
		best = m1
	}
	if best != nil && uint64(st.Size()) < best.pgid*uint64(best.pageSize) {
		return fmt.Errorf("%w: %d bytes, its pages need %d", errBoltTruncated, st.Size(), best.pgid*uint64(best.pageSize))
	}
	return nil
}

type boltMeta struct {
	pageSize uint32
	pgid     uint64 // high water mark: the pages the file holds
	txid     uint64
}

// readBoltMeta reads the meta page at off, or nil when it is not a valid
// one. bbolt writes its pages in the machine's byte order: little-endian
// on every platform this runs on.
func readBoltMeta(r io.ReaderAt, off int64) *boltMeta {
	var buf [boltPageHeader + boltMetaSum + 8]byte
	if _, err := r.ReadAt(buf[:], off); err != nil {
		return nil
	}
	m := buf[boltPageHeader:]
	le := binary.LittleEndian
	h := fnv.New64a()
	h.Write(m[:boltMetaSum])
	if le.Uint32(m[0:]) != boltMagic || le.Uint32(m[4:]) != boltVersion || le.Uint64(m[boltMetaSum:]) != h.Sum64() {
		return nil
	}
	return &boltMeta{pageSize: le.Uint32(m[8:]), pgid: le.Uint64(m[40:]), txid: le.Uint64(m[48:])}
}
