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
	mkdirs(t, base, "home/.bun/bin", "home/.ssh/keys", "pkg/node_modules/tool/bin", "pkg/node_modules/tool/package.json",
		"home/repo/node_modules/tool/bin", "home/repo/node_modules/tool/package.json")
	tool := filepath.Join(base, "pkg/node_modules/tool/bin/tool.exe")
	if err := os.WriteFile(tool, nil, 0o755); err != nil {
		t.Fatal(err)
	}
	// A runtime from `npm install -D` in a repository in the home folder,
	// which the view hides but for the repository.
	repo := filepath.Join(home, "repo")
	local := filepath.Join(repo, "node_modules/tool/bin/tool.exe")
	if err := os.WriteFile(local, nil, 0o755); err != nil {
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
		runtime     string // default: link
		root        string
		env         []string
		want        []string
		wantRefused int
	}{
		{
			name: "what the server's environment names is shown",
			env:  []string{"HOME=" + home, "PATH=" + bunBin + ":relative:/nonexistent"},
			want: []string{filepath.Join(base, "pkg/node_modules"), bunBin, filepath.Join(home, ".bun")},
		},
		{
			name:        "a hidden folder named by the configuration is refused (E4)",
			env:         []string{"HOME=" + home, "PATH=" + bunBin, "DENO_DIR=" + filepath.Join(home, ".ssh"), "BUN_INSTALL=" + filepath.Join(home, ".ssh")},
			want:        []string{filepath.Join(base, "pkg/node_modules"), bunBin},
			wantRefused: 2,
		},
		{
			name: "a folder the view does not hide may come from the configuration",
			env:  []string{"HOME=" + home, "PATH=" + bunBin, "BUN_INSTALL=/usr/lib"},
			want: []string{filepath.Join(base, "pkg/node_modules"), bunBin, "/usr/lib"},
		},
		{
			name:    "a runtime inside the repository is shown, read-only",
			runtime: local,
			root:    repo,
			env:     []string{"HOME=" + home, "PATH=/usr/bin"},
			want:    []string{filepath.Join(repo, "node_modules"), "/usr/bin", filepath.Join(home, ".bun")},
		},
		{
			name:        "the same runtime, were the repository elsewhere, is refused",
			runtime:     local,
			root:        filepath.Join(base, "pkg"),
			env:         []string{"HOME=" + home, "PATH=/usr/bin"},
			want:        []string{"/usr/bin", filepath.Join(home, ".bun")},
			wantRefused: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			runtime := tt.runtime
			if runtime == "" {
				runtime = link
			}
			got, refused := RuntimePaths(runtime, tt.root, tt.env)
			if !reflect.DeepEqual(tt.want, got) {
				t.Errorf("RuntimePaths = %v\nwant %v", got, tt.want)
			}
			if len(refused) != tt.wantRefused {
				t.Errorf("refused = %q, want %d", refused, tt.wantRefused)
			}
		})
	}
}

func TestPlanViewRefusesRetargetedPaths(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "repo")
	outside := filepath.Join(base, "outside")
	mkdirs(t, root, "omni/capabilities", "real/bin", "data")
	mkdirs(t, outside, "bin")
	if err := os.Symlink(outside, filepath.Join(root, "tools")); err != nil {
		t.Fatal(err)
	}
	p := Policy{Filesystem: true, Writable: []string{
		filepath.Join(root, "tools/bin"),         // through a symlink in the repository (E7)
		filepath.Join(root, "omni/capabilities"), // inside a protected path
		root,                                     // holds the protected paths
		filepath.Join(root, "data"),              // fine
	}}
	v := planView(Program{Root: root}, &p, nil, nil)
	var writable []string
	for _, b := range v.Binds {
		if b.Writable {
			writable = append(writable, b.Path)
		}
	}
	if want := []string{root, filepath.Join(root, "data"), filepath.Join(root, ".omni/state")}; !slices.Equal(writable[:2], want[:2]) || len(writable) != 2 {
		t.Errorf("writable binds = %v, want %v (no .omni/state: it does not exist)", writable, want[:2])
	}
	if len(v.Refused) != 2 {
		t.Errorf("refused = %q, want 2", v.Refused)
	}
	var guardedPaths []string
	for _, g := range v.Guarded {
		guardedPaths = append(guardedPaths, g.Path)
	}
	if want := []string{filepath.Join(root, ".git"), filepath.Join(root, ".omni"), filepath.Join(root, "omni.toml")}; !reflect.DeepEqual(want, guardedPaths) {
		t.Errorf("guarded = %v, want the absent protected paths %v", guardedPaths, want)
	}
}

func TestGuard(t *testing.T) {
	root := t.TempDir()
	mkdirs(t, root, ".omni/state")
	shared := filepath.Join(root, "shared.toml")
	if err := os.WriteFile(shared, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(shared, filepath.Join(root, "omni.toml")); err != nil {
		t.Fatal(err)
	}
	planned := []guarded{guardOf(filepath.Join(root, "omni")), guardOf(filepath.Join(root, "omni.toml")), guardOf(filepath.Join(root, ".git"))}
	// What a run did: created omni/ with a config in it, left unreadable,
	// and pointed omni.toml elsewhere.
	mkdirs(t, root, "omni/capabilities/evil")
	os.WriteFile(filepath.Join(root, "omni/config.toml"), []byte("[sandbox]\nfilesystem = \"host\"\n"), 0o644)
	os.Chmod(filepath.Join(root, "omni/capabilities"), 0)
	defer os.Chmod(filepath.Join(root, "omni/capabilities"), 0o755)
	os.Remove(filepath.Join(root, "omni.toml"))
	os.Symlink("/etc/passwd", filepath.Join(root, "omni.toml"))

	notices, stuck := guard(root, planned)
	if len(stuck) != 0 {
		t.Errorf("stuck = %q, want none", stuck)
	}
	if len(notices) != 2 {
		t.Errorf("notices = %q, want one for omni and one for omni.toml", notices)
	}
	if _, err := os.Lstat(filepath.Join(root, "omni")); !os.IsNotExist(err) {
		t.Errorf("omni/ is still there: %v", err)
	}
	if got, _ := os.Readlink(filepath.Join(root, "omni.toml")); got != shared {
		t.Errorf("omni.toml leads to %q, want %q", got, shared)
	}
	if _, err := os.Lstat(filepath.Join(root, ".git")); !os.IsNotExist(err) {
		t.Errorf(".git appeared: %v", err)
	}
	entries, _ := os.ReadDir(filepath.Join(root, ".omni", "quarantine"))
	if len(entries) != 2 {
		t.Errorf("quarantine holds %d entries, want 2", len(entries))
	}
	if again, _ := guard(root, planned); len(again) != 0 {
		t.Errorf("a second look found %q; the paths are as planned", again)
	}
}
