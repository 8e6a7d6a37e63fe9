package engine

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// ServerInfoFileName is where an HTTP server records its URL, relative to
// the repository root, so editors and scripts can find it.
const ServerInfoFileName = ".omni/server.json"

// ServerInfo is the content of .omni/server.json.
type ServerInfo struct {
	URL       string `json:"url"`
	PID       int    `json:"pid"`
	Transport string `json:"transport"`
}

// WriteServerInfo records the URL in .omni/server.json and returns a func
// that removes it, only if it still names this process.
func WriteServerInfo(root string, info ServerInfo) (remove func() error, err error) {
	path := filepath.Join(root, filepath.FromSlash(ServerInfoFileName))
	data, err := json.MarshalIndent(info, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := writeFileAtomic(path, append(data, '\n')); err != nil {
		return nil, fmt.Errorf("write %s: %w", ServerInfoFileName, err)
	}
	return func() error {
		cur, err := ReadServerInfo(root)
		if errors.Is(err, fs.ErrNotExist) || (err == nil && cur.PID != info.PID) {
			return nil
		}
		return os.Remove(path)
	}, nil
}

// ReadServerInfo reads .omni/server.json.
func ReadServerInfo(root string) (ServerInfo, error) {
	var info ServerInfo
	data, err := readOwnFile(root, filepath.Join(root, filepath.FromSlash(ServerInfoFileName)))
	if err != nil {
		return info, err
	}
	if err := json.Unmarshal(data, &info); err != nil {
		return info, fmt.Errorf("read %s: %w", ServerInfoFileName, err)
	}
	return info, nil
}
