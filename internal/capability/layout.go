package capability

import (
	"errors"
	"fmt"
	"io/fs"
)

// Layout names the files a Registry was read from, relative to the
// repository root. omnidev's own layout keeps everything under omni/;
// OmniDev keeps its config in omni.toml at the root (later versions) or in
// .omni/config.toml (earlier ones), with its capabilities in
// .omni/capabilities/. The first layout whose config file exists is used.
type Layout struct {
	// Config is omni/config.toml, omni.toml or .omni/config.toml.
	Config string
	// LocalConfig is merged on top of Config when it exists.
	LocalConfig string
	// CapabilitiesDir holds one folder per capability.
	CapabilitiesDir string
}

// OmniDev reports whether the layout is one of OmniDev's.
func (l Layout) OmniDev() bool { return l.Config != configPath }

// layouts are the layouts Load looks for, in order.
var layouts = [...]Layout{
	{Config: configPath, LocalConfig: localConfigPath, CapabilitiesDir: capabilitiesDir},
	{Config: "omni.toml", LocalConfig: localConfigPath, CapabilitiesDir: omniDevCapabilitiesDir},
	{Config: ".omni/config.toml", LocalConfig: localConfigPath, CapabilitiesDir: omniDevCapabilitiesDir},
}

// omniDevCapabilitiesDir is where OmniDev keeps capabilities.
const omniDevCapabilitiesDir = ".omni/capabilities"

// ReloadPaths are the files and folders (relative to the root, with "/")
// whose changes may change a Registry, whichever layout is in use: a
// layout appears when its config file is created.
func ReloadPaths() []string {
	paths := []string{activeProfilePath, dotEnvPath, localConfigPath}
	for _, l := range layouts {
		paths = append(paths, l.Config, l.CapabilitiesDir)
	}
	return paths
}

// findLayout returns the first layout whose config file exists.
func findLayout(fsys fs.FS, root string) (Layout, error) {
	for _, l := range layouts {
		_, err := fs.Stat(fsys, l.Config)
		if err == nil {
			return l, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return Layout{}, fmt.Errorf("read %s: %w", l.Config, err)
		}
	}
	return Layout{}, fmt.Errorf("%s not found in %s (nor OmniDev's omni.toml or .omni/config.toml); run `omnidev init` to create it", configPath, root)
}
