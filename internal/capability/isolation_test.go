package capability

import (
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// withIsolationDefaults fills the isolation keys of want left unset with
// their defaults.
func withIsolationDefaults(want Sandbox) Sandbox {
	if want.Filesystem == "" {
		want.Filesystem = FilesystemIsolated
	}
	if want.Isolation == "" {
		want.Isolation = IsolationAuto
	}
	if want.MemoryBytes == 0 {
		want.MemoryBytes = min(DefaultMemoryBytes, totalRAM())
	}
	if want.Processes == 0 {
		want.Processes = DefaultProcesses
	}
	return want
}

func TestLoadSandboxIsolation(t *testing.T) {
	tests := []struct {
		name          string
		config, local string
		check         func(t *testing.T, root string, s Sandbox)
	}{
		{
			name: "defaults: isolated, 2 GiB, 256 processes, no extra paths",
			check: func(t *testing.T, _ string, s Sandbox) {
				if s.Filesystem != FilesystemIsolated || s.MemoryBytes != min(2<<30, totalRAM()) || s.Processes != 256 ||
					s.Writable != nil || s.Readable != nil {
					t.Errorf("Sandbox = %+v", s)
				}
			},
		},
		{
			name:   "every key set; paths relative, absolute and under ~",
			config: "[sandbox]\nfilesystem = \"host\"\nmemory = \"512MiB\"\nprocesses = 64\nwritable = [\"out\", \"/var/cache/x\"]\nreadable = [\"~/.cache/ms-playwright\", \"~\"]\n",
			check: func(t *testing.T, root string, s Sandbox) {
				want := Sandbox{Filesystem: "host", MemoryBytes: 512 << 20, Processes: 64,
					Writable: []string{filepath.Join(root, "out"), "/var/cache/x"},
					Readable: []string{"/home/u/.cache/ms-playwright", "/home/u"}}
				got := Sandbox{Filesystem: s.Filesystem, MemoryBytes: s.MemoryBytes, Processes: s.Processes, Writable: s.Writable, Readable: s.Readable}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("Sandbox = %+v\nwant %+v", got, want)
				}
			},
		},
		{
			name:   "isolation mode, overridden by the local file",
			config: "[sandbox]\nisolation = \"namespaces\"\n",
			local:  "[sandbox]\nisolation = \"landlock\"\n",
			check: func(t *testing.T, _ string, s Sandbox) {
				if s.Isolation != IsolationLandlock {
					t.Errorf("Isolation = %q, want landlock", s.Isolation)
				}
			},
		},
		{
			name:   "memory as a number of bytes; the local file extends the path lists",
			config: "[sandbox]\nmemory = 134217728\nwritable = [\"a\"]\n",
			local:  "[sandbox]\nwritable = [\"b\"]\nprocesses = 32\n",
			check: func(t *testing.T, root string, s Sandbox) {
				if s.MemoryBytes != 128<<20 || s.Processes != 32 ||
					!slices.Equal(s.Writable, []string{filepath.Join(root, "a"), filepath.Join(root, "b")}) {
					t.Errorf("Sandbox = %+v", s)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files := map[string]string{configPath: tt.config}
			if tt.local != "" {
				files[localConfigPath] = tt.local
			}
			reg := loadRepo(t, files, []string{"HOME=/home/u"})
			tt.check(t, reg.Root, reg.Sandbox)
		})
	}
}

func TestLoadSandboxIsolationErrors(t *testing.T) {
	tests := []struct {
		name, config string
		wantErr      []string
	}{
		{"unknown filesystem", "[sandbox]\nfilesystem = \"none\"\n", []string{`omni/config.toml: [sandbox] filesystem "none" is not supported`, `"host"`}},
		{"memory not a size", "[sandbox]\nmemory = \"lots\"\n", []string{`[sandbox] memory: "lots" is not a size`, `"2GiB"`}},
		{"memory too small", "[sandbox]\nmemory = \"1MiB\"\n", []string{"[sandbox] memory is 1MiB; it must be between 64MiB and this machine's memory"}},
		{"memory over the machine's", "[sandbox]\nmemory = \"100TiB\"\n", []string{"[sandbox] memory is 102400GiB; it must be between 64MiB and this machine's memory ("}},
		{"processes too few", "[sandbox]\nprocesses = 2\n", []string{"[sandbox] processes is 2; it must be between 16 and"}},
		{"empty path", "[sandbox]\nwritable = [\"\"]\n", []string{"[sandbox] writable holds an empty path"}},
		{"unknown isolation", "[sandbox]\nisolation = \"bubblewrap\"\n", []string{`[sandbox] isolation "bubblewrap" is not supported`, `"landlock"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			writeFiles(t, root, map[string]string{configPath: tt.config})
			_, err := Load(root, nil)
			if err == nil {
				t.Fatal("Load succeeded; want an error")
			}
			for _, want := range tt.wantErr {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not contain %q", err, want)
				}
			}
		})
	}
}
