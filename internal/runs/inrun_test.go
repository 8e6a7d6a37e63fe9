package runs

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/omnidev/omnidev/internal/changes"
)

// saved stores a run that modified each of paths from "old <path>" to
// "new <path>".
func saved(t *testing.T, s *Store, at time.Time, paths ...string) *Record {
	t.Helper()
	b := newBatch()
	rec := &Record{ID: s.newID(at), Time: at, Program: "// test\n"}
	for _, p := range paths {
		rec.Files = append(rec.Files, File{
			Path: p, Status: changes.StatusModified, Insertions: 1, Deletions: 1,
			Before: State{Mode: "100644", Blob: b.add(plumbing.BlobObject, []byte("old "+p+"\n")).String()},
			After:  State{Mode: "100644", Blob: b.add(plumbing.BlobObject, []byte("new "+p+"\n")).String()},
		})
	}
	if err := s.save(b, rec); err != nil {
		t.Fatal(err)
	}
	return rec
}

func TestWriteDiffHiding(t *testing.T) {
	s, err := Open(t.TempDir(), 0, testKey)
	if err != nil {
		t.Fatal(err)
	}
	rec := saved(t, s, time.Now(), "public.txt", "secret/key.pem")
	tests := []struct {
		name          string
		hide          func(string) bool
		want, notWant []string
	}{
		{
			name: "nothing hidden",
			want: []string{"+new public.txt", "-old secret/key.pem", "+new secret/key.pem"},
		},
		{
			name:    "one file hidden",
			hide:    func(p string) bool { return strings.HasPrefix(p, "secret/") },
			want:    []string{"+new public.txt", "diff --git a/secret/key.pem b/secret/key.pem", "# content withheld: secret/key.pem"},
			notWant: []string{"old secret/key.pem", "new secret/key.pem"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			if err := s.WriteDiffHiding(&b, rec, tt.hide); err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if !strings.Contains(b.String(), w) {
					t.Errorf("diff lacks %q:\n%s", w, b.String())
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(b.String(), w) {
					t.Errorf("diff holds %q:\n%s", w, b.String())
				}
			}
		})
	}
}

// TestRunningRefused: the id of a run between Prepare and Record is taken
// and cannot be read or undone, by itself or by a prefix.
func TestRunningRefused(t *testing.T) {
	s, err := Open(t.TempDir(), 0, testKey)
	if err != nil {
		t.Fatal(err)
	}
	at := time.UnixMilli(1_700_000_000_000)
	done := saved(t, s, at.Add(-time.Hour), "a.txt")
	s.mu.Lock()
	id := s.newID(at)
	s.running[id] = true
	s.mu.Unlock()
	if other := s.newID(at); other == id {
		t.Fatalf("newID gave the running run's id %s again", id)
	}
	for _, q := range []string{id, id[:len(id)-1]} {
		if _, err := s.Get(q); !errors.Is(err, ErrRunning) {
			t.Errorf("Get(%q) = %v, want ErrRunning", q, err)
		}
		if _, err := s.Undo(t.Context(), q, true); !errors.Is(err, ErrRunning) || !strings.Contains(err.Error(), "cannot undo itself") {
			t.Errorf("Undo(%q) = %v, want ErrRunning saying a program cannot undo itself", q, err)
		}
	}
	if got, err := s.Get(done.ID); err != nil || got.ID != done.ID {
		t.Errorf("Get(%s) = %v, %v", done.ID, got, err)
	}
}

// TestConcurrentReads: the store serves calls from a running program's
// goroutines at once (go test -race).
func TestConcurrentReads(t *testing.T) {
	s, err := Open(t.TempDir(), 0, testKey)
	if err != nil {
		t.Fatal(err)
	}
	base := time.UnixMilli(1_700_000_000_000)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			b := newBatch()
			rec := &Record{ID: s.newID(base.Add(time.Duration(i) * time.Second)), Time: base, Program: "x"}
			rec.Files = []File{{Path: "a.txt", Status: changes.StatusAdded, After: State{Mode: "100644", Blob: b.add(plumbing.BlobObject, []byte{byte(i)}).String()}}}
			if err := s.save(b, rec); err != nil {
				t.Error(err)
			}
		})
		wg.Go(func() {
			if _, err := s.List(0); err != nil {
				t.Error(err)
			}
			if _, err := s.Latest(); err != nil && !errors.Is(err, ErrNoRuns) {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if recs, _ := s.List(0); len(recs) != 8 {
		t.Errorf("%d runs, want 8", len(recs))
	}
}
