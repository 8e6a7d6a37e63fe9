package capability

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/omnidev/omnidev/internal/capability/captest"
)

// writeFiles writes files (slash-separated path relative to root -> content).
func writeFiles(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// loadRepo writes files into a new repository and loads it.
func loadRepo(t *testing.T, files map[string]string, environ []string) *Registry {
	t.Helper()
	root := t.TempDir()
	writeFiles(t, root, files)
	reg, err := Load(root, environ)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return reg
}

// repoFiles returns a config enabling ids, plus caps: capability files keyed
// "<id>/<path in the folder>".
func repoFiles(ids []string, caps map[string]string) map[string]string {
	quoted := make([]string, len(ids))
	for i, id := range ids {
		quoted[i] = fmt.Sprintf("%q", id)
	}
	files := map[string]string{configPath: fmt.Sprintf("[capabilities]\nenable = [%s]\n", strings.Join(quoted, ", "))}
	for name, content := range caps {
		files[capabilitiesDir+"/"+name] = content
	}
	return files
}

// manifest returns a capability.toml for id with extra lines appended.
func manifest(id string, extra ...string) string {
	return fmt.Sprintf("[capability]\nid = %q\nname = \"Name of %s\"\n", id, id) + strings.Join(extra, "\n") + "\n"
}

func capIDs(reg *Registry) []string {
	var ids []string
	for _, c := range reg.Capabilities {
		ids = append(ids, c.ID)
	}
	return ids
}

// wantProblem fails unless reg has a problem with the given path whose
// message contains msg.
func wantProblem(t *testing.T, reg *Registry, path, msg string) {
	t.Helper()
	for _, p := range reg.Problems {
		if p.Path == path && strings.Contains(p.Message, msg) {
			return
		}
	}
	t.Errorf("no problem at %q containing %q; problems:\n%s", path, msg, problemList(reg))
}

func problemList(reg *Registry) string {
	var b strings.Builder
	for _, p := range reg.Problems {
		fmt.Fprintf(&b, "\t%s\n", p)
	}
	return b.String()
}

func TestLoadCapabilityLeftOut(t *testing.T) {
	const tasksToml = capabilitiesDir + "/tasks/" + manifestFile
	tests := []struct {
		name    string
		enable  []string
		caps    map[string]string
		environ []string
		// wantIDs are the capabilities that load; "ok" is always added and must load.
		wantIDs []string
		path    string // of the problem
		msg     string // part of its message
	}{
		{
			name:   "invalid TOML",
			caps:   map[string]string{"tasks/capability.toml": "[capability]\nid = \"tasks\nname = 1\n"},
			path:   tasksToml,
			msg:    "invalid TOML at line 2, column",
			enable: []string{"tasks"},
		},
		{
			name:   "wrong value type",
			caps:   map[string]string{"tasks/capability.toml": manifest("tasks", "version = 1")},
			path:   tasksToml,
			msg:    "capability.version",
			enable: []string{"tasks"},
		},
		{
			name:   "no capability.toml",
			caps:   map[string]string{"tasks/index.ts": ""},
			path:   tasksToml,
			msg:    `not found; create it with [capability] id = "tasks"`,
			enable: []string{"tasks"},
		},
		{
			name:   "no id",
			caps:   map[string]string{"tasks/capability.toml": "[capability]\nname = \"Tasks\"\n"},
			path:   tasksToml,
			msg:    `[capability] id is missing; add id = "tasks"`,
			enable: []string{"tasks"},
		},
		{
			name:   "bad id",
			caps:   map[string]string{"tasks/capability.toml": manifest("Tasks")},
			path:   tasksToml,
			msg:    `invalid capability id "Tasks"`,
			enable: []string{"tasks"},
		},
		{
			name:   "id not matching the folder",
			caps:   map[string]string{"tasks/capability.toml": manifest("todo")},
			path:   tasksToml,
			msg:    `[capability] id "todo" does not match its folder "tasks"`,
			enable: []string{"tasks"},
		},
		{
			name:   "reserved module fs",
			caps:   map[string]string{"tasks/capability.toml": manifest("tasks", "[exports]", `module = "fs"`)},
			path:   tasksToml,
			msg:    `[exports] module name "fs" is reserved`,
			enable: []string{"tasks"},
		},
		{
			name:   "reserved module child_process",
			caps:   map[string]string{"tasks/capability.toml": manifest("tasks", "[exports]", `module = "child_process"`)},
			path:   tasksToml,
			msg:    "is reserved",
			enable: []string{"tasks"},
		},
		{
			name:   "reserved module node:fs",
			caps:   map[string]string{"tasks/capability.toml": manifest("tasks", "[exports]", `module = "node:fs"`)},
			path:   tasksToml,
			msg:    "is reserved",
			enable: []string{"tasks"},
		},
		{
			name:   "reserved id as default module",
			caps:   map[string]string{"path/capability.toml": manifest("path")},
			path:   capabilitiesDir + "/path/" + manifestFile,
			msg:    `module name "path" is reserved`,
			enable: []string{"path"},
		},
		{
			name:   "escaping module ../x",
			caps:   map[string]string{"tasks/capability.toml": manifest("tasks", "[exports]", `module = "../x"`)},
			path:   tasksToml,
			msg:    "is a path",
			enable: []string{"tasks"},
		},
		{
			name:   "escaping module a/b",
			caps:   map[string]string{"tasks/capability.toml": manifest("tasks", "[exports]", `module = "a/b"`)},
			path:   tasksToml,
			msg:    "is a path",
			enable: []string{"tasks"},
		},
		{
			name:   "escaping module .hidden",
			caps:   map[string]string{"tasks/capability.toml": manifest("tasks", "[exports]", `module = ".hidden"`)},
			path:   tasksToml,
			msg:    "is a path",
			enable: []string{"tasks"},
		},
		{
			name:   `escaping module a\b`,
			caps:   map[string]string{"tasks/capability.toml": manifest("tasks", "[exports]", `module = 'a\b'`)},
			path:   tasksToml,
			msg:    "is a path",
			enable: []string{"tasks"},
		},
		{
			name:   "empty module",
			caps:   map[string]string{"tasks/capability.toml": manifest("tasks", "[exports]", `module = ""`)},
			path:   tasksToml,
			msg:    "module name is empty",
			enable: []string{"tasks"},
		},
		{
			name:   "env flag of the wrong type",
			caps:   map[string]string{"tasks/capability.toml": manifest("tasks", "[env]", `TOKEN = { required = "yes" }`)},
			path:   tasksToml,
			msg:    "[env] TOKEN: required must be true or false",
			enable: []string{"tasks"},
		},
		{
			name:   "env entry of the wrong type",
			caps:   map[string]string{"tasks/capability.toml": manifest("tasks", "[env]", `TOKEN = ["a"]`)},
			path:   tasksToml,
			msg:    "[env] TOKEN must be a default value or a table",
			enable: []string{"tasks"},
		},
		{
			name:   "invalid env name",
			caps:   map[string]string{"tasks/capability.toml": manifest("tasks", "[env]", `"MY-VAR" = "x"`)},
			path:   tasksToml,
			msg:    `[env] "MY-VAR" is not a valid variable name`,
			enable: []string{"tasks"},
		},
		{
			name:    "required env var missing",
			caps:    map[string]string{"tasks/capability.toml": manifest("tasks", "[env]", "GITHUB_TOKEN = { required = true, secret = true }")},
			environ: []string{"OTHER=1"},
			path:    tasksToml,
			msg:     "required environment variable GITHUB_TOKEN is not set; set it in the environment or in .omni/.env",
			enable:  []string{"tasks"},
		},
		{
			name:    "required env var empty",
			caps:    map[string]string{"tasks/capability.toml": manifest("tasks", "[env]", "A = { required = true }", "B = { required = true }")},
			environ: []string{"A=", "B="},
			path:    tasksToml,
			msg:     "required environment variables A, B are not set; set them",
			enable:  []string{"tasks"},
		},
		{
			name:   "invalid package.json",
			caps:   map[string]string{"tasks/capability.toml": manifest("tasks"), "tasks/package.json": "{"},
			path:   capabilitiesDir + "/tasks/package.json",
			msg:    "invalid JSON",
			enable: []string{"tasks"},
		},
		{
			name:   "package.json main outside the folder",
			caps:   map[string]string{"tasks/capability.toml": manifest("tasks"), "tasks/package.json": `{"main": "../../x.ts"}`},
			path:   capabilitiesDir + "/tasks/package.json",
			msg:    `main "../../x.ts" must be a path inside the capability folder`,
			enable: []string{"tasks"},
		},
		{
			name:   "enabled id with no folder",
			path:   capabilitiesDir + "/tasks",
			msg:    `folder omni/capabilities/tasks not found; create it or remove "tasks" from the enable lists`,
			enable: []string{"tasks"},
		},
		{
			name:   "enabled id that is a file",
			caps:   map[string]string{"tasks": "not a folder"},
			path:   capabilitiesDir + "/tasks",
			msg:    "cannot read: not a directory",
			enable: []string{"tasks"},
		},
		{
			name:   "enabled id that is not an id",
			path:   "",
			msg:    `enable lists: invalid capability id "../../etc"`,
			enable: []string{"../../etc"},
		},
		{
			name: "duplicate module: the second in ID order is left out",
			caps: map[string]string{
				"alpha/capability.toml": manifest("alpha", "[exports]", `module = "shared"`),
				"beta/capability.toml":  manifest("beta", "[exports]", `module = "Shared"`),
			},
			enable:  []string{"beta", "alpha"},
			wantIDs: []string{"alpha"},
			path:    capabilitiesDir + "/beta/" + manifestFile,
			msg:     `[exports] module "Shared" is already used by capability "alpha"`,
		},
		{
			name: "a module taken by a capability left out is free",
			caps: map[string]string{
				"alpha/capability.toml": manifest("alpha", "[exports]", `module = "beta"`, "[exports]"),
				"beta/capability.toml":  manifest("beta"),
			},
			enable:  []string{"alpha", "beta"},
			wantIDs: []string{"beta"},
			path:    capabilitiesDir + "/alpha/" + manifestFile,
			msg:     "invalid TOML",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			caps := map[string]string{"ok/capability.toml": manifest("ok")}
			for k, v := range tt.caps {
				caps[k] = v
			}
			reg := loadRepo(t, repoFiles(append(tt.enable, "ok"), caps), tt.environ)
			wantIDs := slices.Sorted(slices.Values(append(tt.wantIDs, "ok")))
			if got := capIDs(reg); !reflect.DeepEqual(got, wantIDs) {
				t.Errorf("loaded %q, want %q; problems:\n%s", got, wantIDs, problemList(reg))
			}
			if len(reg.Problems) != 1 {
				t.Errorf("got %d problems, want 1:\n%s", len(reg.Problems), problemList(reg))
			}
			wantProblem(t, reg, tt.path, tt.msg)
		})
	}
}

func TestLoadCapability(t *testing.T) {
	const dir = capabilitiesDir + "/tasks/"
	reg := loadRepo(t, repoFiles([]string{"tasks"}, map[string]string{
		"tasks/capability.toml": `
[capability]
id = "tasks"
name = "Tasks"
version = "0.1.0"
description = "Track tasks"

[exports]
module = "todo"

[env]
TASKS_FILE = { default = ".omni/state/tasks.json" }
GITHUB_TOKEN = { required = true, secret = true }
PLAIN = "plain default"
PORT = 8080
`,
		"tasks/package.json":             `{"name": "tasks", "main": "./dist/main.js"}`,
		"tasks/types.d.ts":               "export function add(t: string): void;\n",
		"tasks/definition.md":            "# Tasks\nMain doc.\n",
		"tasks/docs/usage.md":            "Intro\n## Usage\n",
		"tasks/docs/guide/setup.md":      "no heading\n",
		"tasks/docs/guide-intro.md":      "# Intro\n",
		"tasks/docs/notes.txt":           "not markdown",
		"tasks/docs/.draft.md":           "# hidden",
		"tasks/docs/.cache/x.md":         "# hidden",
		"tasks/rules/naming.md":          "# Naming\n",
		"tasks/rules/a-b.md":             "text",
		"tasks/rules/nested/deep.md":     "# not a rule: rules are not recursive",
		"tasks/skills/triage/SKILL.md":   "---\nname: triage\ndescription: Sort new tasks\n---\n# Triage\n",
		"tasks/skills/archive/SKILL.md":  "---\r\nname: \"archive\"\r\ndescription: 'Archive done tasks'\r\n---\r\nBody\r\n",
		"tasks/skills/README.md":         "a file, not a skill folder",
		"tasks/skills/.hidden/SKILL.md":  "---\nname: hidden\n---\n",
		"tasks/skills/triage/extra.md":   "ignored",
		"tasks/skills/archive/script.sh": "ignored",
	}), []string{"GITHUB_TOKEN=t0ken"})
	if len(reg.Problems) != 0 {
		t.Fatalf("unexpected problems:\n%s", problemList(reg))
	}
	if len(reg.Capabilities) != 1 {
		t.Fatalf("got %d capabilities, want 1", len(reg.Capabilities))
	}
	got := reg.Capabilities[0]
	want := &Capability{
		ID: "tasks", Name: "Tasks", Version: "0.1.0", Description: "Track tasks",
		Module: "todo",
		Dir:    filepath.Join(reg.Root, "omni", "capabilities", "tasks"),
		Entry:  "dist/main.js",
		Types:  "export function add(t: string): void;\n",
		Docs: []Doc{
			{Name: "definition", Title: "Tasks", Body: "# Tasks\nMain doc.\n", Path: dir + "definition.md"},
			{Name: "guide-intro", Title: "Intro", Body: "# Intro\n", Path: dir + "docs/guide-intro.md"},
			{Name: "guide/setup", Title: "setup", Body: "no heading\n", Path: dir + "docs/guide/setup.md"},
			{Name: "usage", Title: "Usage", Body: "Intro\n## Usage\n", Path: dir + "docs/usage.md"},
		},
		Rules: []Doc{
			{Name: "a-b", Title: "a-b", Body: "text", Path: dir + "rules/a-b.md"},
			{Name: "naming", Title: "Naming", Body: "# Naming\n", Path: dir + "rules/naming.md"},
		},
		Skills: []Skill{
			{Name: "archive", Description: "Archive done tasks", Body: "Body\r\n", Path: dir + "skills/archive/SKILL.md",
				Title: "archive", Text: "---\r\nname: \"archive\"\r\ndescription: 'Archive done tasks'\r\n---\r\nBody\r\n"},
			{Name: "triage", Description: "Sort new tasks", Body: "# Triage\n", Path: dir + "skills/triage/SKILL.md",
				Title: "Triage", Text: "---\nname: triage\ndescription: Sort new tasks\n---\n# Triage\n"},
		},
		EnvDecls: []EnvDecl{
			{Name: "GITHUB_TOKEN", Required: true, Secret: true},
			{Name: "PLAIN", Default: "plain default", HasDefault: true},
			{Name: "PORT", Default: "8080", HasDefault: true},
			{Name: "TASKS_FILE", Default: ".omni/state/tasks.json", HasDefault: true},
		},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("capability =\n%+v\nwant\n%+v", got, want)
	}
	if d, ok := got.Definition(); !ok || d.Name != DefinitionDoc {
		t.Errorf("Definition() = %+v, %v", d, ok)
	}
	if !filepath.IsAbs(reg.Root) {
		t.Errorf("Root %q is not absolute", reg.Root)
	}
}

func TestLoadEntry(t *testing.T) {
	tests := []struct {
		name  string
		files []string // created empty; package.json gets content below
		pkg   string
		want  string
	}{
		{name: "no code", want: ""},
		{name: "index.ts", files: []string{"index.ts", "index.js"}, want: "index.ts"},
		{name: "index.js", files: []string{"index.js", "index.mjs"}, want: "index.js"},
		{name: "index.mts", files: []string{"index.mts", "index.mjs"}, want: "index.mts"},
		{name: "index.mjs", files: []string{"index.mjs"}, want: "index.mjs"},
		{name: "package.json main wins", files: []string{"index.ts"}, pkg: `{"main": "src/lib.ts"}`, want: "src/lib.ts"},
		{name: "package.json without main", files: []string{"index.ts"}, pkg: `{"name": "x"}`, want: "index.ts"},
		{name: "a folder named index.ts is not an entry", files: []string{"index.ts/x", "index.js"}, want: "index.js"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			caps := map[string]string{"tasks/capability.toml": manifest("tasks")}
			for _, f := range tt.files {
				caps["tasks/"+f] = ""
			}
			if tt.pkg != "" {
				caps["tasks/package.json"] = tt.pkg
			}
			reg := loadRepo(t, repoFiles([]string{"tasks"}, caps), nil)
			if len(reg.Capabilities) != 1 {
				t.Fatalf("capability not loaded:\n%s", problemList(reg))
			}
			if got := reg.Capabilities[0].Entry; got != tt.want {
				t.Errorf("Entry = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestLoadSkippedFiles covers files that are reported and skipped while
// their capability still loads.
func TestLoadSkippedFiles(t *testing.T) {
	const dir = capabilitiesDir + "/tasks/"
	tests := []struct {
		name       string
		files      map[string]string
		path, msg  string
		wantDocs   int // docs that still load, definition.md included
		wantSkills int
	}{
		{
			name:     "docs/definition.md collides with definition.md",
			files:    map[string]string{"definition.md": "# Main", "docs/definition.md": "# Other", "docs/a.md": "# A"},
			path:     dir + "docs/definition.md",
			msg:      `the doc name "definition" is reserved for definition.md`,
			wantDocs: 2,
		},
		{
			name:       "skill without name",
			files:      map[string]string{"skills/a/SKILL.md": "---\ndescription: d\n---\n", "skills/ok/SKILL.md": "---\nname: ok\ndescription: d\n---\n"},
			path:       dir + "skills/a/SKILL.md",
			msg:        "frontmatter has no name; add it between the --- lines",
			wantSkills: 1,
		},
		{
			name:  "skill without description",
			files: map[string]string{"skills/a/SKILL.md": "---\nname: a\ndescription: \"\"\n---\n"},
			path:  dir + "skills/a/SKILL.md",
			msg:   "frontmatter has no description",
		},
		{
			name:  "skill without name and description",
			files: map[string]string{"skills/a/SKILL.md": "---\ntitle: x\n---\n"},
			path:  dir + "skills/a/SKILL.md",
			msg:   "frontmatter has no name and no description",
		},
		{
			name:  "skill without frontmatter",
			files: map[string]string{"skills/a/SKILL.md": "# A skill\n"},
			path:  dir + "skills/a/SKILL.md",
			msg:   "no frontmatter",
		},
		{
			name:  "skill with unclosed frontmatter",
			files: map[string]string{"skills/a/SKILL.md": "---\nname: a\ndescription: d\n"},
			path:  dir + "skills/a/SKILL.md",
			msg:   "frontmatter is not closed",
		},
		{
			name:  "skill with a malformed line",
			files: map[string]string{"skills/a/SKILL.md": "---\nname: a\noops\n---\n"},
			path:  dir + "skills/a/SKILL.md",
			msg:   `frontmatter line 3: non-map value is specified; write "key: value"`,
		},
		{
			name: "two skills with the same name",
			files: map[string]string{
				"skills/one/SKILL.md": "---\nname: same\ndescription: first\n---\n",
				"skills/two/SKILL.md": "---\nname: same\ndescription: second\n---\n",
			},
			path:       dir + "skills/two/SKILL.md",
			msg:        `skill name "same" is already used by omni/capabilities/tasks/skills/one/SKILL.md`,
			wantSkills: 1,
		},
		{
			name:  "skill folder without SKILL.md",
			files: map[string]string{"skills/empty/notes.md": "x"},
			path:  dir + "skills/empty",
			msg:   "no SKILL.md",
		},
		{
			name:     "doc larger than the cap",
			files:    map[string]string{"definition.md": "# D", "docs/big.md": strings.Repeat("x", maxFileBytes+1)},
			path:     dir + "docs/big.md",
			msg:      "larger than 1 MiB",
			wantDocs: 1,
		},
		{
			name:  "types larger than the cap",
			files: map[string]string{"types.d.ts": strings.Repeat("x", maxFileBytes+1)},
			path:  dir + "types.d.ts",
			msg:   "larger than 1 MiB",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			caps := map[string]string{"tasks/capability.toml": manifest("tasks")}
			for k, v := range tt.files {
				caps["tasks/"+k] = v
			}
			reg := loadRepo(t, repoFiles([]string{"tasks"}, caps), nil)
			if len(reg.Capabilities) != 1 {
				t.Fatalf("capability left out:\n%s", problemList(reg))
			}
			c := reg.Capabilities[0]
			if len(reg.Problems) != 1 {
				t.Errorf("got %d problems, want 1:\n%s", len(reg.Problems), problemList(reg))
			}
			wantProblem(t, reg, tt.path, tt.msg)
			if len(c.Docs) != tt.wantDocs || len(c.Skills) != tt.wantSkills {
				t.Errorf("got %d docs and %d skills, want %d and %d", len(c.Docs), len(c.Skills), tt.wantDocs, tt.wantSkills)
			}
			if p := reg.Problems[0]; p.Capability != "tasks" {
				t.Errorf("problem names capability %q, want tasks", p.Capability)
			}
		})
	}
}

func TestLoadSymlinks(t *testing.T) {
	root := t.TempDir()
	const dir = capabilitiesDir + "/tasks/"
	writeFiles(t, root, repoFiles([]string{"tasks"}, map[string]string{
		"tasks/capability.toml":    manifest("tasks"),
		"tasks/shared/inside.md":   "# Inside\n",
		"tasks/shared/skill.md":    "---\nname: linked\ndescription: d\n---\n",
		"tasks/shared/rules/ok.md": "# OK\n",
	}))
	writeFiles(t, root, map[string]string{
		"outside/secret.md":      "# Outside\n",
		"outside/skill/SKILL.md": "---\nname: outside\ndescription: d\n---\n",
		"outside/docs/x.md":      "# X\n",
	})
	capDir := filepath.Join(root, "omni", "capabilities", "tasks")
	links := map[string]string{ // link in the capability folder -> target
		"docs/inside.md":         "../shared/inside.md",
		"docs/escape.md":         "../../../../outside/secret.md",
		"docs/absolute.md":       filepath.Join(root, "outside", "secret.md"),
		"docs/sub":               "../../../../outside/docs", // a linked folder is not walked
		"definition.md":          "../../../outside/secret.md",
		"skills/inside/SKILL.md": "../../shared/skill.md",
		"skills/outside":         "../../../../outside/skill",
		"rules":                  "shared/rules", // a linked folder inside the capability is read
		"shared/rules/escape.md": "/etc/passwd",
	}
	for link, target := range links {
		p := filepath.Join(capDir, filepath.FromSlash(link))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
	}
	reg, err := Load(root, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(reg.Capabilities) != 1 {
		t.Fatalf("capability left out:\n%s", problemList(reg))
	}
	c := reg.Capabilities[0]
	if len(c.Docs) != 1 || c.Docs[0].Name != "inside" || c.Docs[0].Title != "Inside" {
		t.Errorf("Docs = %+v, want only docs/inside.md", c.Docs)
	}
	if len(c.Skills) != 1 || c.Skills[0].Name != "linked" {
		t.Errorf("Skills = %+v, want only the linked skill inside the folder", c.Skills)
	}
	if len(c.Rules) != 1 || c.Rules[0].Title != "OK" {
		t.Errorf("Rules = %+v, want only rules/ok.md", c.Rules)
	}
	for _, rel := range []string{"docs/escape.md", "docs/absolute.md", "definition.md", "skills/outside/SKILL.md", "rules/escape.md"} {
		wantProblem(t, reg, dir+rel, "symlink leads outside the capability folder")
	}
	for _, p := range reg.Problems {
		if strings.Contains(p.Path, "docs/sub") {
			t.Errorf("a linked folder was walked: %s", p)
		}
	}
}

func TestLoadByteBudget(t *testing.T) {
	caps := map[string]string{"tasks/capability.toml": manifest("tasks")}
	doc := strings.Repeat("x", maxFileBytes)
	n := maxCapabilityBytes/maxFileBytes + 3
	for i := range n {
		caps[fmt.Sprintf("tasks/docs/d%02d.md", i)] = doc
	}
	reg := loadRepo(t, repoFiles([]string{"tasks"}, caps), nil)
	if len(reg.Capabilities) != 1 {
		t.Fatalf("capability left out:\n%s", problemList(reg))
	}
	if got := len(reg.Capabilities[0].Docs); got >= n || got == 0 {
		t.Errorf("loaded %d of %d docs, want some but not all", got, n)
	}
	if len(reg.Problems) != 1 {
		t.Errorf("want the budget reported once, got:\n%s", problemList(reg))
	}
	wantProblem(t, reg, capabilitiesDir+"/tasks", "more than 16 MiB of text")
}

func TestLoadEnv(t *testing.T) {
	const config = `
[capabilities]
enable = ["tasks"]
[env]
API_BASE = "http://localhost:8080"
SHARED = "from config"
HOME = "config home"
[sandbox]
env_passthrough = ["PATH", "HOME", "LANG"]
`
	const capToml = `
[capability]
id = "tasks"
[env]
TASKS_FILE = { default = ".omni/state/tasks.json" }
GITHUB_TOKEN = { required = true, secret = true }
OPTIONAL = { secret = true }
SHARED = "cap default"
FROM_PROCESS = "cap default"
`
	tests := []struct {
		name    string
		dotEnv  string
		environ []string
		want    Env
	}{
		{
			name:    "precedence: process, .omni/.env, config, default",
			dotEnv:  "GITHUB_TOKEN=dotenv-token\nDOTENV_ONLY=x\nSHARED=from dotenv\n",
			environ: []string{"PATH=/bin", "LANG=C", "FROM_PROCESS=p", "API_BASE=ignored", "AWS_SECRET_ACCESS_KEY=leak", "TERM=xterm"},
			want: Env{
				{Name: "API_BASE", Value: "http://localhost:8080", Source: "config"},
				{Name: "DOTENV_ONLY", Value: "x", Secret: true, Source: ".omni/.env"},
				{Name: "FROM_PROCESS", Value: "p", Source: "process"},
				{Name: "GITHUB_TOKEN", Value: "dotenv-token", Secret: true, Source: ".omni/.env"},
				{Name: "HOME", Value: "config home", Source: "config"},
				{Name: "LANG", Value: "C", Source: "process"},
				{Name: "PATH", Value: "/bin", Source: "process"},
				{Name: "SHARED", Value: "from dotenv", Secret: true, Source: ".omni/.env"},
				{Name: "TASKS_FILE", Value: ".omni/state/tasks.json", Source: "default"},
			},
		},
		{
			name:    "process wins over .omni/.env and config for passthrough names",
			dotEnv:  "GITHUB_TOKEN=dotenv-token\nSHARED=from dotenv\n",
			environ: []string{"GITHUB_TOKEN=process-token", "SHARED=process", "HOME=/home/me", "TASKS_FILE=/tmp/t.json"},
			want: Env{
				{Name: "API_BASE", Value: "http://localhost:8080", Source: "config"},
				{Name: "FROM_PROCESS", Value: "cap default", Source: "default"},
				{Name: "GITHUB_TOKEN", Value: "process-token", Secret: true, Source: "process"},
				{Name: "HOME", Value: "/home/me", Source: "process"},
				{Name: "SHARED", Value: "process", Secret: true, Source: "process"},
				{Name: "TASKS_FILE", Value: "/tmp/t.json", Source: "process"},
			},
		},
		{
			name:    "config [env] beats a capability default; first duplicate in environ wins",
			environ: []string{"GITHUB_TOKEN=a", "GITHUB_TOKEN=b", "OPTIONAL=o"},
			want: Env{
				{Name: "API_BASE", Value: "http://localhost:8080", Source: "config"},
				{Name: "FROM_PROCESS", Value: "cap default", Source: "default"},
				{Name: "GITHUB_TOKEN", Value: "a", Secret: true, Source: "process"},
				{Name: "HOME", Value: "config home", Source: "config"},
				{Name: "OPTIONAL", Value: "o", Secret: true, Source: "process"},
				{Name: "SHARED", Value: "from config", Source: "config"},
				{Name: "TASKS_FILE", Value: ".omni/state/tasks.json", Source: "default"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files := map[string]string{configPath: config, capabilitiesDir + "/tasks/capability.toml": capToml}
			if tt.dotEnv != "" {
				files[dotEnvPath] = tt.dotEnv
			}
			reg := loadRepo(t, files, tt.environ)
			if len(reg.Problems) != 0 {
				t.Fatalf("unexpected problems:\n%s", problemList(reg))
			}
			if !reflect.DeepEqual(reg.Env, tt.want) {
				t.Errorf("Env =\n%s\nwant\n%s", envDump(reg.Env), envDump(tt.want))
			}
		})
	}
}

func envDump(e Env) string {
	var b strings.Builder
	for _, v := range e {
		fmt.Fprintf(&b, "\t%s=%q secret=%v source=%s\n", v.Name, v.Value, v.Secret, v.Source)
	}
	return b.String()
}

func TestLoadRequiredEnvSources(t *testing.T) {
	capToml := manifest("tasks", "[env]", "TOKEN = { required = true, secret = true }")
	tests := []struct {
		name     string
		files    map[string]string
		environ  []string
		wantLoad bool
	}{
		{name: "unset", wantLoad: false},
		{name: "process", environ: []string{"TOKEN=x"}, wantLoad: true},
		{name: ".omni/.env", files: map[string]string{dotEnvPath: "TOKEN=x\n"}, wantLoad: true},
		{name: "config [env]", files: map[string]string{configPath: "[capabilities]\nenable = [\"tasks\"]\n[env]\nTOKEN = \"x\"\n"}, wantLoad: true},
		{name: "own default", files: map[string]string{capabilitiesDir + "/tasks/capability.toml": manifest("tasks", "[env]", `TOKEN = { required = true, default = "d" }`)}, wantLoad: true},
		{name: "empty in .omni/.env", files: map[string]string{dotEnvPath: "TOKEN=\"\"\n"}, wantLoad: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files := repoFiles([]string{"tasks"}, map[string]string{"tasks/capability.toml": capToml})
			for k, v := range tt.files {
				files[k] = v
			}
			reg := loadRepo(t, files, tt.environ)
			if got := len(reg.Capabilities) == 1; got != tt.wantLoad {
				t.Errorf("loaded = %v, want %v; problems:\n%s", got, tt.wantLoad, problemList(reg))
			}
			if !tt.wantLoad {
				if _, ok := reg.Env.Lookup("TOKEN"); ok && reg.Env[0].Value != "" {
					t.Errorf("a left-out capability's variable is in Env: %v", reg.Env)
				}
			}
		})
	}
}

// TestLoadSecretsStayOut checks that no Problem shows a secret value and
// that the server's unrelated variables never reach Env.
func TestLoadSecretsStayOut(t *testing.T) {
	const secretDotEnv, secretProcess, secretMalformed = "s3cret-dotenv", "s3cret-process", "s3cret-malformed"
	reg := loadRepo(t, repoFiles([]string{"tasks", "other"}, map[string]string{
		"tasks/capability.toml": manifest("tasks", "[env]", "API_TOKEN = { required = true, secret = true }", "MISSING = { required = true, secret = true }"),
		"other/capability.toml": manifest("other", "[env]", "API_TOKEN = { secret = true }"),
		"../../.omni/.env":      "API_TOKEN=" + secretDotEnv + "\n" + secretMalformed + "\nBAD-" + secretMalformed + "=1\n",
	}), []string{"AWS_SECRET_ACCESS_KEY=" + secretProcess, "PATH=/bin"})

	if len(reg.Problems) != 3 {
		t.Errorf("want 3 problems (two .env lines, one missing variable), got:\n%s", problemList(reg))
	}
	wantProblem(t, reg, capabilitiesDir+"/tasks/"+manifestFile, "MISSING")
	for _, p := range reg.Problems {
		for _, s := range []string{secretDotEnv, secretProcess, secretMalformed} {
			if strings.Contains(p.String(), s) {
				t.Errorf("problem shows a secret: %s", p)
			}
		}
	}
	if _, ok := reg.Env.Lookup("AWS_SECRET_ACCESS_KEY"); ok {
		t.Error("AWS_SECRET_ACCESS_KEY leaked into Env")
	}
	v, ok := reg.Env.Lookup("API_TOKEN")
	if !ok || !v.Secret || v.Value != secretDotEnv {
		t.Fatalf("API_TOKEN = %+v, %v; want the secret .env value", v, ok)
	}
	if strings.Contains(v.String(), secretDotEnv) || strings.Contains(v.LogValue().String(), secretDotEnv) {
		t.Errorf("String or LogValue shows the secret: %s", v)
	}
}

// TestLoadDeterministic loads the same tree twice, with problems, and
// expects identical registries despite concurrent loading.
func TestLoadDeterministic(t *testing.T) {
	root := t.TempDir()
	ids, err := captest.Generate(root, captest.Options{Capabilities: 12, DocsPerCap: 6})
	if err != nil {
		t.Fatal(err)
	}
	writeFiles(t, root, map[string]string{
		configPath: fmt.Sprintf("[capabilities]\nenable = [%q, %q, %q, \"missing\", %q]\n", ids[5], ids[0], ids[11], ids[3]) +
			"[profiles.default]\nenable = [" + `"` + strings.Join(ids[6:9], `", "`) + `"]` + "\n",
		capabilitiesDir + "/" + ids[3] + "/skills/bad/SKILL.md": "no frontmatter",
		capabilitiesDir + "/" + ids[6] + "/capability.toml":     "[capability\n",
	})
	first, err := Load(root, []string{"PATH=/bin"})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		again, err := Load(root, []string{"PATH=/bin"})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(first, again) {
			t.Fatal("two loads of the same tree differ")
		}
	}
	wantIDs := []string{ids[0], ids[3], ids[5], ids[7], ids[8], ids[11]}
	if got := capIDs(first); !reflect.DeepEqual(got, wantIDs) {
		t.Errorf("loaded %q, want %q", got, wantIDs)
	}
	var problemCaps []string
	for _, p := range first.Problems {
		problemCaps = append(problemCaps, p.Capability)
	}
	if want := []string{ids[3], ids[6], "missing"}; !reflect.DeepEqual(problemCaps, want) {
		t.Errorf("problems are for %q, want %q:\n%s", problemCaps, want, problemList(first))
	}
}

// TestLoadCapabilityFolderSymlink checks that a capability folder linked
// from elsewhere in the repository loads, and one linked from outside it is
// refused with a problem while the others load.
func TestLoadCapabilityFolderSymlink(t *testing.T) {
	outside := t.TempDir()
	writeFiles(t, outside, map[string]string{
		"stolen/capability.toml": manifest("stolen"),
		"stolen/index.ts":        "export const x = 1;\n",
		"stolen/definition.md":   "# Secret from outside\n",
	})
	root := t.TempDir()
	writeFiles(t, root, repoFiles([]string{"tasks", "shared", "stolen", "absolute"}, map[string]string{
		"tasks/capability.toml": manifest("tasks"),
	}))
	writeFiles(t, root, map[string]string{
		"lib/shared/capability.toml": manifest("shared"),
		"lib/shared/index.ts":        "export const y = 2;\n",
	})
	capsDir := filepath.Join(root, filepath.FromSlash(capabilitiesDir))
	relOutside, err := filepath.Rel(capsDir, filepath.Join(outside, "stolen"))
	if err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{
		"shared":   "../../lib/shared",
		"stolen":   relOutside,
		"absolute": filepath.Join(outside, "stolen"),
	} {
		if err := os.Symlink(target, filepath.Join(capsDir, link)); err != nil {
			t.Fatal(err)
		}
	}
	reg, err := Load(root, nil)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, c := range reg.Capabilities {
		ids = append(ids, c.ID)
	}
	if got := strings.Join(ids, ","); got != "shared,tasks" {
		t.Errorf("loaded %s, want shared,tasks:\n%s", got, problemList(reg))
	}
	for _, id := range []string{"stolen", "absolute"} {
		wantProblem(t, reg, capabilitiesDir+"/"+id, "symlink that leads outside the repository")
	}
}
