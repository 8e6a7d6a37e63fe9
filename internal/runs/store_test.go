package runs

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/omnidev/omnidev/internal/changes"
)

// TestPrune: with keep = 2, once keep+pruneSlack runs are passed, two runs
// are left, each with its own pack, and a reopened store agrees.
func TestPrune(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, 2, testKey)
	if err != nil {
		t.Fatal(err)
	}
	start := time.UnixMilli(1_700_000_000_000)
	var last []string
	for i := range 2 + pruneSlack + 1 {
		b := newBatch()
		rec := &Record{ID: s.newID(start.Add(time.Duration(i) * time.Second)), Time: start, Program: "x",
			Files: []File{{Path: "a.txt", Status: changes.StatusModified, After: State{Mode: "100644", Blob: b.add(plumbing.BlobObject, []byte{byte(i)}).String()}}}}
		if err := s.save(b, rec); err != nil {
			t.Fatal(err)
		}
		last = append([]string{rec.ID}, last...)
	}
	want := last[:2]
	check := func(s *Store) {
		t.Helper()
		recs, err := s.List(0)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range recs {
			got = append(got, r.ID)
		}
		if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
			t.Errorf("runs = %v, want %v", got, want)
		}
		for _, r := range recs {
			p, err := s.openPack(s.runs[r.ID].pack)
			if err != nil {
				t.Fatalf("run %s: %v", r.ID, err)
			}
			if _, err := p.blob(r.Files[0].After.Blob); err != nil {
				t.Errorf("run %s: %v", r.ID, err)
			}
			p.Close()
		}
	}
	check(s)
	packs, _ := filepath.Glob(filepath.Join(dir, ".omni/runs/objects/pack/*.pack"))
	if len(packs) != 2 {
		t.Errorf("%d packs, want 2", len(packs))
	}
	if _, err := s.Get(last[2]); err == nil {
		t.Errorf("pruned run %s still found", last[2])
	}
	s2, err := Open(dir, 2, testKey)
	if err != nil {
		t.Fatal(err)
	}
	check(s2)
	if data, _ := os.ReadFile(filepath.Join(dir, ".omni/runs", packsFile)); len(data) == 0 {
		t.Error("the packs list is empty")
	}
}

// saveRun stores a run that changed a.txt from before to after.
func saveRun(t *testing.T, s *Store, at time.Time, before, after string) *Record {
	t.Helper()
	b := newBatch()
	rec := &Record{ID: s.newID(at), Time: at, Program: "x", Files: []File{{
		Path: "a.txt", Status: changes.StatusModified,
		Before: State{Mode: "100644", Blob: b.add(plumbing.BlobObject, []byte(before)).String(), Size: int64(len(before))},
		After:  State{Mode: "100644", Blob: b.add(plumbing.BlobObject, []byte(after)).String(), Size: int64(len(after))},
	}}}
	if err := s.save(b, rec); err != nil {
		t.Fatal(err)
	}
	return rec
}

// TestTwoProcesses: a store sees the runs another process recorded after
// it was opened, and its pruning keeps them.
func TestTwoProcesses(t *testing.T) {
	dir := t.TempDir()
	a, err := Open(dir, 3, testKey)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Open(dir, 3, testKey)
	if err != nil {
		t.Fatal(err)
	}
	start := time.UnixMilli(1_700_000_000_000)
	fromB := saveRun(t, b, start, "1\n", "2\n")
	got, err := a.Get(fromB.ID)
	if err != nil || got.ID != fromB.ID {
		t.Fatalf("a.Get(%s) = %v, %v", fromB.ID, got, err)
	}
	var last *Record
	for i := range 3 + pruneSlack {
		last = saveRun(t, a, start.Add(time.Duration(i+1)*time.Second), "x\n", "y\n")
	}
	recs, err := b.List(0)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 3 || recs[0].ID != last.ID {
		t.Errorf("b lists %d runs, newest %v; want 3, newest %s", len(recs), recs, last.ID)
	}
}

// testKey is the user's key in these tests.
var testKey = []byte("0123456789abcdef0123456789abcdef")

// TestForeignStore: a .omni/runs that the user's key did not sign (a
// clone's, another user's, an older omnidev's) is moved aside whole and
// never read; a line of the packs list the key did not sign is passed
// over.
func TestForeignStore(t *testing.T) {
	start := time.UnixMilli(1_700_000_000_000)
	t.Run("another key", func(t *testing.T) {
		dir := t.TempDir()
		theirs, err := Open(dir, 0, []byte("another user's key, 32 bytes.."))
		if err != nil {
			t.Fatal(err)
		}
		saveRun(t, theirs, start, "mine\n", "theirs\n")
		s, err := Open(dir, 0, testKey)
		if err != nil {
			t.Fatal(err)
		}
		if s.SetAside() == "" {
			t.Error("the other key's store was not moved aside")
		}
		if _, err := s.Latest(); !errors.Is(err, ErrNoRuns) {
			t.Errorf("Latest = %v, want ErrNoRuns", err)
		}
	})
	t.Run("unsigned", func(t *testing.T) {
		// As an older omnidev wrote it, or a clone's author: no owner
		// file, lines of two or three fields.
		dir := t.TempDir()
		runsDir := filepath.Join(dir, ".omni", "runs")
		os.MkdirAll(runsDir, 0o755)
		os.WriteFile(filepath.Join(runsDir, packsFile), []byte("zzzzzzzz 0123456789012345678901234567890123456789 0123456789012345678901234567890123456789\n"), 0o644)
		s, err := Open(dir, 0, testKey)
		if err != nil {
			t.Fatal(err)
		}
		if s.SetAside() == "" || s.Ignored() != 0 {
			t.Errorf("aside %q, ignored %d; want the store moved aside", s.SetAside(), s.Ignored())
		}
		if _, err := os.Stat(filepath.Join(s.SetAside(), packsFile)); err != nil {
			t.Errorf("the store moved aside lost its files: %v", err)
		}
	})
	t.Run("a line another key signed", func(t *testing.T) {
		dir := t.TempDir()
		s, err := Open(dir, 0, testKey)
		if err != nil {
			t.Fatal(err)
		}
		mine := saveRun(t, s, start, "a\n", "b\n")
		other := &Store{key: []byte("another user's key, 32 bytes..")}
		forged := other.line("zzzzzzzz", s.runs[mine.ID])
		f, _ := os.OpenFile(filepath.Join(dir, ".omni", "runs", packsFile), os.O_APPEND|os.O_WRONLY, 0)
		f.WriteString(forged + "zzzzzzzy " + s.runs[mine.ID].pack.String() + "\n")
		f.Close()
		again, err := Open(dir, 0, testKey)
		if err != nil {
			t.Fatal(err)
		}
		latest, err := again.Latest()
		if err != nil || latest.ID != mine.ID || again.Ignored() != 2 || again.SetAside() != "" {
			t.Errorf("Latest = %v, %v; ignored %d, aside %q; want run %s, 2 ignored", latest, err, again.Ignored(), again.SetAside(), mine.ID)
		}
	})
	t.Run("symlinked store", func(t *testing.T) {
		dir, elsewhere := t.TempDir(), t.TempDir()
		os.MkdirAll(filepath.Join(dir, ".omni"), 0o755)
		os.Symlink(elsewhere, filepath.Join(dir, ".omni", "runs"))
		if _, err := Open(dir, 0, testKey); err == nil || !strings.Contains(err.Error(), "not a folder") {
			t.Errorf("Open through a symlinked .omni/runs: %v", err)
		}
		if left, _ := os.ReadDir(elsewhere); len(left) != 0 {
			t.Errorf("the store wrote through the symlink: %v", left)
		}
	})
}

// TestDiffContext: the diff has git's header and hunks of three lines of
// context, not the whole file.
func TestDiffContext(t *testing.T) {
	s, err := Open(t.TempDir(), 0, testKey)
	if err != nil {
		t.Fatal(err)
	}
	var before, after strings.Builder
	for i := range 30 {
		fmt.Fprintf(&before, "line %d\n", i)
		if i == 15 {
			after.WriteString("changed\n")
			continue
		}
		fmt.Fprintf(&after, "line %d\n", i)
	}
	rec := saveRun(t, s, time.Now(), before.String(), after.String())
	var diff strings.Builder
	if err := s.WriteDiff(&diff, rec); err != nil {
		t.Fatal(err)
	}
	want := "diff --git a/a.txt b/a.txt\nindex " + rec.Files[0].Before.Blob + ".." + rec.Files[0].After.Blob + " 100644\n" +
		"--- a/a.txt\n+++ b/a.txt\n@@ -13,7 +13,7 @@ line 11\n line 12\n line 13\n line 14\n-line 15\n+changed\n line 16\n line 17\n line 18\n"
	if diff.String() != want {
		t.Errorf("diff:\n%s\nwant:\n%s", diff.String(), want)
	}
}

// TestSetKeep: a smaller keep applies from the next run on.
func TestSetKeep(t *testing.T) {
	s, err := Open(t.TempDir(), 100, testKey)
	if err != nil {
		t.Fatal(err)
	}
	start := time.UnixMilli(1_700_000_000_000)
	for i := range 20 {
		saveRun(t, s, start.Add(time.Duration(i)*time.Second), "a\n", "b\n")
	}
	s.SetKeep(5)
	saveRun(t, s, start.Add(time.Minute), "a\n", "b\n")
	if recs, err := s.List(0); err != nil || len(recs) != 5 {
		t.Errorf("%d runs kept, want 5 (%v)", len(recs), err)
	}
}

// TestDiffBounded: a program writes both sides of a diff, and Myers' diff
// of two files with no line in common takes the lines squared (two files
// of 60,000 lines: 37 s, 8 MiB ones an hour each), holding the store. The
// diff is coarser past a timeout, and still a diff of every file.
func TestDiffBounded(t *testing.T) {
	s, err := Open(t.TempDir(), 0, testKey)
	if err != nil {
		t.Fatal(err)
	}
	b := newBatch()
	rec := &Record{ID: s.newID(time.Now()), Time: time.Now(), Program: "x"}
	for _, name := range []string{"x1.txt", "x2.txt"} {
		var before, after strings.Builder
		for i := range 60000 {
			fmt.Fprintf(&before, "%s a%d\n", name, i)
			fmt.Fprintf(&after, "%s b%d\n", name, i)
		}
		rec.Files = append(rec.Files, File{Path: name, Status: changes.StatusModified,
			Before: State{Mode: "100644", Blob: b.add(plumbing.BlobObject, []byte(before.String())).String()},
			After:  State{Mode: "100644", Blob: b.add(plumbing.BlobObject, []byte(after.String())).String()}})
	}
	if err := s.save(b, rec); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	var diff strings.Builder
	if err := s.WriteDiff(&diff, rec); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 15*time.Second {
		t.Errorf("the diff took %v", took)
	}
	for _, w := range []string{"--- a/x1.txt\n", "-x1.txt a0\n", "+x1.txt b59999\n", "--- a/x2.txt\n", "-x2.txt a59999\n", "+x2.txt b0\n"} {
		if !strings.Contains(diff.String(), w) {
			t.Errorf("the diff lacks %q", w)
		}
	}
}
