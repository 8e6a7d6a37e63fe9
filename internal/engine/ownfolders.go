package engine

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// ownFolders are the folders below .omni that omnidev writes its own files
// in: the index, the run folder, the relay's and egress's sockets, the
// type check's files, the run records, what a guard moved aside, the
// programs' state, and the servers' PID files.
var ownFolders = []string{"index", "sandbox", "relay", "typecheck", "runs", "quarantine", "state", "servers"}

// checkOwnFolders refuses a repository whose .omni, or one of its
// ownFolders, is a symlink or not a folder. A repository can hold one (a
// clone carries any .omni), and omnidev would write its files wherever it
// leads: outside the repository, with the user's rights.
func checkOwnFolders(root string) error {
	for _, rel := range append([]string{"."}, ownFolders...) {
		p := filepath.Join(root, ".omni", rel)
		fi, err := os.Lstat(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue
		case err != nil:
			return err
		case fi.Mode()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			return fmt.Errorf("%s is a symlink (to %s): omnidev writes its own files there and follows no link a repository holds; replace it with a folder (rm %s)", p, target, p)
		case !fi.IsDir():
			return fmt.Errorf("%s is not a folder: omnidev writes its own files there; remove it (rm %s)", p, p)
		}
	}
	return nil
}
