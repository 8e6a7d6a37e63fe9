package watch_test

import (
	"log"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/omnidev/omnidev/internal/watch"
)

// The server watches omni/ and .omni/ (which may not exist yet) and reloads
// when something it reads there changed.
func ExampleNew() {
	repo := "/path/to/repo"
	w, err := watch.New(watch.Options{
		Roots:  []string{filepath.Join(repo, "omni"), filepath.Join(repo, ".omni")},
		Logger: slog.New(slog.NewTextHandler(os.Stderr, nil)),
	}, func(b watch.Batch) {
		if b.Rescan {
			log.Print("events were lost: reload everything")
			return
		}
		log.Printf("reload: %d paths changed", len(b.Paths))
	})
	if err != nil {
		log.Fatal(err)
	}
	defer w.Close()
	// ... load the state the watcher guards, serve ...
}
