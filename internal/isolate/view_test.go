package isolate

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
)

func mkdirs(t *testing.T, root string, rels ...string) {
	t.Helper()
	for _, rel := range rels {
		p := filepath.Join(root, rel)
		if filepath.Ext(rel) != "" {
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

func TestPlanView(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "home", "repo")
	home := filepath.Join(base, "home")
	mkdirs(t, root, ".git/hooks", ".omni/state", "omni/config.toml", "omni.toml", "out")
	mkdirs(t, base, "home/.cache/ms-playwright", "tmpdir")
	env := []string{"HOME=" + home, "TMPDIR=" + filepath.Join(base, "tmpdir")}
	tests := []struct {
		name      string
		policy    Policy
		masks     []string
		wantBinds []bind
		wantTmpfs []string
		wantMasks []string
	}{
		{
			name:   "the worktree writable, its git, settings and config read-only, state writable",
			policy: Policy{Filesystem: true},
			wantBinds: []bind{
				{Path: root, Writable: true},
				{Path: filepath.Join(root, ".git")},
				{Path: filepath.Join(root, ".omni")},
				{Path: filepath.Join(root, "omni")},
				{Path: filepath.Join(root, "omni.toml")},
				{Path: filepath.Join(root, ".omni/state"), Writable: true},
			},
		},
		{
			name: "writable and readable paths; a readable path visible anyway gets no bind",
			policy: Policy{Filesystem: true,
				Writable: []string{filepath.Join(root, "out"), filepath.Join(base, "missing")},
				Readable: []string{filepath.Join(home, ".cache/ms-playwright"), "/usr"}},
			wantBinds: []bind{
				{Path: root, Writable: true},
				{Path: filepath.Join(root, "out"), Writable: true},
				{Path: filepath.Join(home, ".cache/ms-playwright")},
				{Path: filepath.Join(root, ".git")},
				{Path: filepath.Join(root, ".omni")},
				{Path: filepath.Join(root, "omni")},
				{Path: filepath.Join(root, "omni.toml")},
				{Path: filepath.Join(root, ".omni/state"), Writable: true},
			},
		},
		{
			name:      "a secret already in an empty folder needs no mask",
			policy:    Policy{Filesystem: true},
			masks:     []string{filepath.Join(home, "secret"), "/etc/shadow"},
			wantMasks: []string{"/etc/shadow"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := planView(Program{Root: root, Env: env}, &tt.policy, tt.masks, nil)
			if tt.wantBinds != nil {
				if !reflect.DeepEqual(tt.wantBinds, v.Binds) {
					t.Errorf("binds = %v\nwant %v", v.Binds, tt.wantBinds)
				}
			}
			for _, dir := range append([]string{"/tmp", home, filepath.Join(base, "tmpdir")}, tt.wantTmpfs...) {
				if !slices.Contains(v.Tmpfs, dir) {
					t.Errorf("tmpfs %v lacks %s", v.Tmpfs, dir)
				}
			}
			if !slices.IsSortedFunc(v.Tmpfs, func(a, b string) int { return len(a) - len(b) }) {
				t.Errorf("tmpfs %v not shallowest first", v.Tmpfs)
			}
			if !reflect.DeepEqual(tt.wantMasks, v.Masks) {
				t.Errorf("masks = %v\nwant %v", v.Masks, tt.wantMasks)
			}
		})
	}
}

func TestLinkedGitDirs(t *testing.T) {
	base := t.TempDir()
	common := filepath.Join(base, "main", ".git")
	gitdir := filepath.Join(common, "worktrees", "wt")
	mkdirs(t, base, "main/.git/worktrees/wt", "wt")
	if err := os.WriteFile(filepath.Join(gitdir, "commondir"), []byte("../..\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(base, "wt", ".git"), []byte("gitdir: "+gitdir+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got := linkedGitDirs(filepath.Join(base, "wt"))
	if want := []string{gitdir, common}; !reflect.DeepEqual(want, got) {
		t.Errorf("linkedGitDirs = %v\nwant %v", got, want)
	}
}

func TestRuntimePaths(t *testing.T) {
	base := t.TempDir()
	home := filepath.Join(base, "home")
	mkdirs(t, base, "home/.bun/bin", "home/.ssh/keys", "pkg/node_modules/tool/bin", "pkg/node_modules/tool/package.json")
	tool := filepath.Join(base, "pkg/node_modules/tool/bin/tool.exe")
	if err := os.WriteFile(tool, nil, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(home, ".bun/bin/tool")
	if err := os.Symlink(tool, link); err != nil {
		t.Fatal(err)
	}
	bunBin := filepath.Join(home, ".bun/bin")
	// The server's own environment names the home and the runtime's folder.
	t.Setenv("HOME", home)
	t.Setenv("PATH", bunBin+":/usr/bin")
	t.Setenv("DENO_DIR", "")
	t.Setenv("BUN_INSTALL", "")
	tests := []struct {
		name        string
		env         []string
		want        []string
		wantRefused int
	}{
		{
			name: "what the server's environment names is shown",
			env:  []string{"HOME=" + home, "PATH=" + bunBin + ":relative:/nonexistent"},
			want: []string{filepath.Join(base, "pkg/node_modules/tool"), bunBin, filepath.Join(home, ".bun")},
		},
		{
			name:        "a hidden folder named by the configuration is refused (E4)",
			env:         []string{"HOME=" + home, "PATH=" + bunBin, "DENO_DIR=" + filepath.Join(home, ".ssh"), "BUN_INSTALL=" + filepath.Join(home, ".ssh")},
			want:        []string{filepath.Join(base, "pkg/node_modules/tool"), bunBin},
			wantRefused: 2,
		},
		{
			name: "a folder the view does not hide may come from the configuration",
			env:  []string{"HOME=" + home, "PATH=" + bunBin, "BUN_INSTALL=/usr/lib"},
			want: []string{filepath.Join(base, "pkg/node_modules/tool"), bunBin, "/usr/lib"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, refused := RuntimePaths(link, tt.env)
			if !reflect.DeepEqual(tt.want, got) {
				t.Errorf("RuntimePaths = %v\nwant %v", got, tt.want)
			}
			if len(refused) != tt.wantRefused {
				t.Errorf("refused = %q, want %d", refused, tt.wantRefused)
			}
		})
	}
}
