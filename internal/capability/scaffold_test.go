package capability

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestInit(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, ".gitignore"), []byte("node_modules"), 0o644); err != nil {
		t.Fatal(err)
	}
	created, err := Init(root, "demo")
	if err != nil {
		t.Fatalf("Init: %v", err)
	}
	for _, want := range []string{
		"omni/config.toml",
		"omni/capabilities/example/capability.toml",
		"omni/capabilities/example/index.ts",
		"omni/capabilities/example/types.d.ts",
		"omni/capabilities/example/docs/usage.md",
		"omni/capabilities/example/skills/greet/SKILL.md",
		".gitignore",
	} {
		if !slices.Contains(created, want) {
			t.Errorf("Init did not report %s (created %v)", want, created)
		}
		if _, err := os.Stat(filepath.Join(root, want)); err != nil {
			t.Errorf("%s: %v", want, err)
		}
	}
	cfg, _ := os.ReadFile(filepath.Join(root, "omni/config.toml"))
	if !strings.Contains(string(cfg), `project = "demo"`) {
		t.Errorf("config.toml does not name the project:\n%s", cfg)
	}
	gi, _ := os.ReadFile(filepath.Join(root, ".gitignore"))
	if got, want := string(gi), "node_modules\n.omni/\n"; got != want {
		t.Errorf(".gitignore = %q, want %q", got, want)
	}
	if leftovers, _ := filepath.Glob(filepath.Join(root, ".omni-init-*")); len(leftovers) > 0 {
		t.Errorf("temporary folders left behind: %v", leftovers)
	}

	t.Run("second init refuses and changes nothing", func(t *testing.T) {
		before, _ := os.ReadFile(filepath.Join(root, "omni/config.toml"))
		_, err := Init(root, "other")
		if !errors.Is(err, ErrExists) {
			t.Fatalf("second Init: err = %v, want ErrExists", err)
		}
		after, _ := os.ReadFile(filepath.Join(root, "omni/config.toml"))
		if string(before) != string(after) {
			t.Error("second Init changed config.toml")
		}
		gi, _ := os.ReadFile(filepath.Join(root, ".gitignore"))
		if strings.Count(string(gi), ".omni") != 1 {
			t.Errorf(".gitignore has a duplicated line: %q", gi)
		}
	})
}

func TestEnsureGitignored(t *testing.T) {
	for _, tc := range []struct{ name, before, after string }{
		{"no file", "", ".omni/\n"},
		{"already there", "a\n.omni/\n", "a\n.omni/\n"},
		{"equivalent spelling", "/.omni\n", "/.omni\n"},
		{"no trailing newline", "a", "a\n.omni/\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			if tc.before != "" {
				os.WriteFile(filepath.Join(root, ".gitignore"), []byte(tc.before), 0o644)
			}
			if _, err := ensureGitignored(root, ".omni/"); err != nil {
				t.Fatal(err)
			}
			got, _ := os.ReadFile(filepath.Join(root, ".gitignore"))
			if string(got) != tc.after {
				t.Errorf("got %q, want %q", got, tc.after)
			}
		})
	}
}

func TestFindRoot(t *testing.T) {
	base := t.TempDir()
	omniRoot := filepath.Join(base, "withomni")
	deep := filepath.Join(omniRoot, "a", "b")
	gitRoot := filepath.Join(base, "withgit")
	gitDeep := filepath.Join(gitRoot, "x")
	// OmniDev's layouts inside a git repository: their config files mark
	// the root before the git root does.
	omniToml := filepath.Join(gitRoot, "omnitoml")
	dotOmni := filepath.Join(gitRoot, "dotomni")
	for _, d := range []string{filepath.Join(omniRoot, "omni"), deep, filepath.Join(gitRoot, ".git"), gitDeep,
		filepath.Join(omniToml, "src"), filepath.Join(dotOmni, ".omni"), filepath.Join(dotOmni, "src")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{filepath.Join(omniToml, "omni.toml"), filepath.Join(dotOmni, ".omni", "config.toml")} {
		if err := os.WriteFile(f, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct{ name, dir, want string }{
		{"omni folder above", deep, omniRoot},
		{"git root", gitDeep, gitRoot},
		{"OmniDev omni.toml above", filepath.Join(omniToml, "src"), omniToml},
		{"OmniDev .omni/config.toml above", filepath.Join(dotOmni, "src"), dotOmni},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := FindRoot(tc.dir)
			if err != nil || got != tc.want {
				t.Errorf("FindRoot(%s) = %q, %v; want %q", tc.dir, got, err, tc.want)
			}
		})
	}
	t.Run("neither", func(t *testing.T) {
		_, err := FindRoot(filepath.Join(base))
		if err == nil || !strings.Contains(err.Error(), "omnidev init") {
			t.Errorf("err = %v, want advice to run omnidev init", err)
		}
	})
}

// TestInitKeepsOmniDevConfig checks that init refuses a repository that
// OmniDev already configures: omni/ would take precedence over its config.
func TestInitKeepsOmniDevConfig(t *testing.T) {
	for _, config := range []string{"omni.toml", ".omni/config.toml"} {
		t.Run(config, func(t *testing.T) {
			root := t.TempDir()
			writeFiles(t, root, map[string]string{config: "[profiles.default]\ncapabilities = []\n"})
			_, err := Init(root, "x")
			if err == nil || !strings.Contains(err.Error(), "OmniDev's "+config) || !strings.Contains(err.Error(), "omnidev doctor") {
				t.Errorf("Init: %v; want a refusal naming %s and doctor", err, config)
			}
			if _, err := os.Stat(filepath.Join(root, "omni")); err == nil {
				t.Error("omni/ was created")
			}
		})
	}
}
