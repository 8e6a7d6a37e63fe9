package query

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// The index folder holds two records of what it contains:
//
//   - manifest.json, beside the bleve index, says whose index it is and of
//     which schema version: it is written once, when the index is created,
//     and read before bleve opens anything, so that a foreign or outdated
//     index is never opened with assumptions it does not meet;
//   - the content hash of every document, kept inside the bleve index under
//     hashesKey and written in the same batch as the documents. scorch
//     applies and persists a batch's internal values with its documents, in
//     one snapshot, so the hashes always describe exactly what the index
//     holds, whenever a crash happens. (A separate file written after each
//     batch would need a second write marking the batch's documents as
//     unknown beforehand, to survive a crash between the two — two synced
//     writes more per update, which cost more than the batch itself here.)

// manifestFormat tells a manifest of ours apart from any other JSON file.
const manifestFormat = "omnidev-query-index"

// hashesKey is the bleve internal key of the document hashes: a JSON object
// from document id to document.hash.
const hashesKey = "omnidev/hashes"

// manifest is the content of manifest.json.
type manifest struct {
	Format string `json:"format"`
	Schema int    `json:"schema"`
}

// errNoManifest means there is no manifest at all: a first start, not a
// damaged index.
var errNoManifest = errors.New("no manifest")

// readManifest checks that the manifest at path is ours and of this
// schema version.
func readManifest(path string) error {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return errNoManifest
	}
	if err != nil {
		return fmt.Errorf("read manifest: %w", err)
	}
	var m manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return fmt.Errorf("parse manifest: %w", err)
	}
	switch {
	case m.Format != manifestFormat:
		return fmt.Errorf("manifest format is %q, want %q", m.Format, manifestFormat)
	case m.Schema != schemaVersion:
		return fmt.Errorf("manifest schema version is %d, want %d", m.Schema, schemaVersion)
	}
	return nil
}

// writeManifest writes the manifest at path atomically (temporary file,
// sync, rename): a crash leaves either no manifest, and the next Open
// rebuilds, or a whole one.
func writeManifest(path string) (err error) {
	data, err := json.Marshal(manifest{Format: manifestFormat, Schema: schemaVersion})
	if err != nil {
		return fmt.Errorf("encode manifest: %w", err)
	}
	f, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("write manifest: %w", err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if _, err := f.Write(data); err != nil {
		return fmt.Errorf("write manifest: %w", err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("write manifest: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write manifest: %w", err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("write manifest: %w", err)
	}
	return nil
}
