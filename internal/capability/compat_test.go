package capability

import (
	"reflect"
	"strings"
	"testing"
)

func TestLoadLayouts(t *testing.T) {
	tests := []struct {
		name       string
		files      map[string]string
		wantLayout Layout
		wantIDs    []string
	}{
		{
			name: "omnidev's own",
			files: map[string]string{
				configPath:                             "[capabilities]\nenable = [\"a\"]\n",
				capabilitiesDir + "/a/capability.toml": manifest("a"),
				"omni.toml":                            "[profiles.default]\ncapabilities = [\"b\"]\n",
			},
			wantLayout: layouts[0],
			wantIDs:    []string{"a"},
		},
		{
			name: "OmniDev omni.toml with a profile's capabilities list",
			files: map[string]string{
				"omni.toml":                            "[profiles.default]\ncapabilities = [\"b\"]\n[profiles.other]\ncapabilities = [\"c\"]\n",
				".omni/config.toml":                    "[capabilities]\nenable = [\"c\"]\n",
				".omni/capabilities/b/capability.toml": manifest("b"),
				".omni/capabilities/c/capability.toml": manifest("c"),
			},
			wantLayout: Layout{Config: "omni.toml", LocalConfig: localConfigPath, CapabilitiesDir: ".omni/capabilities"},
			wantIDs:    []string{"b"},
		},
		{
			name: "OmniDev .omni/config.toml, merged with config.local.toml",
			files: map[string]string{
				".omni/config.toml":                    "[profiles.default]\ncapabilities = [\"c\"]\nenable = [\"d\"]\n",
				localConfigPath:                        "[profiles.default]\ncapabilities = [\"b\"]\n",
				".omni/capabilities/b/capability.toml": manifest("b"),
				".omni/capabilities/c/capability.toml": manifest("c"),
				".omni/capabilities/d/capability.toml": manifest("d"),
			},
			wantLayout: Layout{Config: ".omni/config.toml", LocalConfig: localConfigPath, CapabilitiesDir: ".omni/capabilities"},
			wantIDs:    []string{"b", "c", "d"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg := loadRepo(t, tt.files, nil)
			if reg.Layout != tt.wantLayout {
				t.Errorf("Layout = %+v, want %+v", reg.Layout, tt.wantLayout)
			}
			if got := capIDs(reg); !reflect.DeepEqual(got, tt.wantIDs) {
				t.Errorf("loaded %q, want %q; problems:\n%s", got, tt.wantIDs, problemList(reg))
			}
			if len(reg.Problems) != 0 {
				t.Errorf("unexpected problems:\n%s", problemList(reg))
			}
		})
	}
}

func TestLoadNoConfigNamesEveryLayout(t *testing.T) {
	_, err := Load(t.TempDir(), nil)
	if err == nil || !strings.Contains(err.Error(), "omni/config.toml not found") || !strings.Contains(err.Error(), "omni.toml") {
		t.Errorf("Load of an empty folder: %v", err)
	}
}

func TestLoadUnknownKeys(t *testing.T) {
	reg := loadRepo(t, map[string]string{
		configPath: `project = "x"
[capabilities]
enable = ["a"]
enabel = ["b"]

[capabilities.sources]
tools = "github:user/repo"
more = "github:user/more"

[sandbox]
timout = "5s" # a typo
[sandbox.extra]
x = 1

[profiles.review]
enable = ["a"]
disabel = ["a"]
`,
		localConfigPath: "\n[sandbox]\nnetwrok = false\n",
		capabilitiesDir + "/a/capability.toml": `[capability]
id = "a"
descripton = "typo"

[env]
TOKEN = { required = true, secert = true }
PLAIN = "x"

[exports]
module = "a"
"main file" = "x.ts"
`,
	}, []string{"TOKEN=1"})
	const capToml = capabilitiesDir + "/a/capability.toml"
	want := []Problem{
		{Path: configPath + ":4", Message: "unknown key capabilities.enabel is ignored; check its spelling, or remove it"},
		{Path: configPath + ":6", Message: "unknown table capabilities.sources is ignored; omnidev does not fetch OmniDev capability sources or expand groups: put each capability's folder in the capabilities folder and list its id in an enable list"},
		{Path: configPath + ":11", Message: "unknown key sandbox.timout is ignored; check its spelling, or remove it"},
		{Path: configPath + ":12", Message: "unknown table sandbox.extra is ignored; check its spelling, or remove it"},
		{Path: configPath + ":17", Message: "unknown key profiles.review.disabel is ignored; check its spelling, or remove it"},
		{Path: localConfigPath + ":3", Message: "unknown key sandbox.netwrok is ignored; check its spelling, or remove it"},
		{Capability: "a", Path: capToml + ":3", Message: "unknown key capability.descripton is ignored; check its spelling, or remove it"},
		{Capability: "a", Path: capToml + ":6", Message: "unknown key env.TOKEN.secert is ignored; check its spelling, or remove it"},
		{Capability: "a", Path: capToml + ":11", Message: `unknown key exports."main file" is ignored; check its spelling, or remove it`},
	}
	if !reflect.DeepEqual(reg.Problems, want) {
		t.Errorf("Problems:\n%s\nwant:\n%s", problemList(reg), problemList(&Registry{Problems: want}))
	}
}

func TestLoadDocsInCode(t *testing.T) {
	tests := []struct {
		name  string
		entry string
		want  string // "" for no problem
	}{
		{"shorthand", "export default { name: 'x', docs, rules };\n", "declares docs and rules in code (export default { docs, rules })"},
		{"wrapped and nested", "export default defineCapability({\n  rules: [{ docs: 1 }],\n  cliCommands: {},\n});\n", "declares rules in code"},
		{"property", "const d = [];\nexport default {\n  docs: d,\n}\n", "declares docs in code"},
		{"words in strings and nested objects", "export default { description: \"the docs, rules\", meta: { docs: 1 } };\n", ""},
		{"no default export", "export const docs = [];\n", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg := loadRepo(t, repoFiles([]string{"a"}, map[string]string{
				"a/capability.toml": manifest("a"),
				"a/index.ts":        tt.entry,
				"a/types.d.ts":      "export {};\n",
			}), nil)
			if tt.want == "" {
				if len(reg.Problems) != 0 {
					t.Errorf("unexpected problems:\n%s", problemList(reg))
				}
				return
			}
			wantProblem(t, reg, capabilitiesDir+"/a/index.ts", tt.want)
			if len(reg.Capabilities) != 1 {
				t.Errorf("the capability was left out; its module still works")
			}
		})
	}
}

func TestLoadWarningsAndNotEnabled(t *testing.T) {
	reg := loadRepo(t, repoFiles([]string{"code", "docs-only"}, map[string]string{
		"code/capability.toml":      manifest("code"),
		"code/index.ts":             "export const x = 1;\n",
		"docs-only/capability.toml": manifest("docs-only"),
		"docs-only/definition.md":   "# Docs\n",
		"spare/capability.toml":     manifest("spare"),
		"unrelated/readme.md":       "not a capability",
	}), nil)
	want := []Problem{{Capability: "code", Path: capabilitiesDir + "/code/types.d.ts",
		Message: `not found: agents see no type definitions for module "code"; declare its exports there`}}
	if !reflect.DeepEqual(reg.Warnings, want) {
		t.Errorf("Warnings = %v, want %v", reg.Warnings, want)
	}
	if !reflect.DeepEqual(reg.NotEnabled, []string{"spare"}) {
		t.Errorf("NotEnabled = %q, want [spare]", reg.NotEnabled)
	}
}

func TestLoadUnavailable(t *testing.T) {
	reg := loadRepo(t, repoFiles([]string{"gh", "ok"}, map[string]string{
		"gh/capability.toml": manifest("gh", "[env]", "GH_TOKEN = { required = true, secret = true }"),
		"ok/capability.toml": manifest("ok"),
	}), nil)
	if got := capIDs(reg); !reflect.DeepEqual(got, []string{"ok"}) {
		t.Errorf("Capabilities = %q, want [ok]", got)
	}
	const msg = "required environment variable GH_TOKEN is not set; set it in the environment or in .omni/.env"
	if len(reg.Unavailable) != 1 || reg.Unavailable[0].ID != "gh" || reg.Unavailable[0].Error != msg {
		t.Fatalf("Unavailable = %+v", reg.Unavailable)
	}
	wantProblem(t, reg, capabilitiesDir+"/gh/capability.toml", msg)
}
