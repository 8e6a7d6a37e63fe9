package capability

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestLoadConfigErrors(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		// wantErr holds substrings the error must contain.
		wantErr []string
	}{
		{
			name:    "missing config.toml",
			files:   map[string]string{"README.md": "hi"},
			wantErr: []string{"omni/config.toml not found", "run `omnidev init`"},
		},
		{
			name:    "malformed config.toml",
			files:   map[string]string{configPath: "project = \"x\"\n[capabilities]\nenable = [\"a\" \"b\"]\n"},
			wantErr: []string{"omni/config.toml:3:15: "},
		},
		{
			name:    "malformed config.local.toml",
			files:   map[string]string{configPath: "", localConfigPath: "\n\nproject = \n"},
			wantErr: []string{".omni/config.local.toml:3:11: expected value"},
		},
		{
			name:    "wrong type",
			files:   map[string]string{configPath: "[capabilities]\nenable = \"tasks\"\n"},
			wantErr: []string{"omni/config.toml: ", "line 2", "capabilities.enable"},
		},
		{
			name:  "unknown profile from active-profile",
			files: map[string]string{configPath: "[profiles.review]\n[profiles.ci]\n", activeProfilePath: "nope\n"},
			wantErr: []string{
				`profile "nope" (from .omni/active-profile) is not defined in omni/config.toml (defined: ci, default, review)`,
				"fix .omni/active-profile or default_profile",
			},
		},
		{
			name:    "runs keep below 1",
			files:   map[string]string{configPath: "[runs]\nkeep = 0\n"},
			wantErr: []string{"[runs] keep is 0; it must be between 1 and"},
		},
		{
			name:    "unknown default_profile",
			files:   map[string]string{configPath: "default_profile = \"prod\"\n"},
			wantErr: []string{`profile "prod" (from default_profile)`, "(defined: default)"},
		},
		{
			name: "invalid sandbox values are all reported",
			files: map[string]string{configPath: `
[sandbox]
runtime = "python"
timeout = "soon"
max_output_bytes = 0
env_passthrough = ["PATH", "BAD NAME"]
`},
			wantErr: []string{
				`omni/config.toml:3:12: [sandbox] runtime "python" is not supported`,
				`omni/config.toml:4:12: [sandbox] timeout "soon" is not a duration`,
				`omni/config.toml:5:20: [sandbox] max_output_bytes is 0, out of range; allowed: 1 to 16777216 (16 MiB)`,
				`omni/config.toml:6:20: [sandbox] env_passthrough: "BAD NAME"`,
			},
		},
		{
			name:    "negative timeout",
			files:   map[string]string{configPath: "[sandbox]\ntimeout = \"-1s\"\n"},
			wantErr: []string{`omni/config.toml:2:12: [sandbox] timeout "-1s" is out of range; allowed: more than 0 and at most 1h`},
		},
		{
			name:    "timeout over the bound",
			files:   map[string]string{configPath: "[sandbox]\ntimeout = \"1h0m1s\"\n"},
			wantErr: []string{`omni/config.toml:2:12: [sandbox] timeout "1h0m1s" is out of range; allowed: more than 0 and at most 1h`},
		},
		{
			name:    "timeout over the bound in the local file",
			files:   map[string]string{configPath: "[sandbox]\ntimeout = \"5s\"\n", localConfigPath: "network = true\n\n[sandbox]\n  timeout = \"24h\"\n"},
			wantErr: []string{`.omni/config.local.toml:4:14: [sandbox] timeout "24h" is out of range`},
		},
		{
			name:    "timeout as a dotted key",
			files:   map[string]string{configPath: "project = \"x\"\nsandbox.timeout = \"2h\"\n"},
			wantErr: []string{`omni/config.toml:2:20: [sandbox] timeout "2h" is out of range`},
		},
		{
			name:    "max_output_bytes over the bound in the local file",
			files:   map[string]string{configPath: "", localConfigPath: "[sandbox]\nmax_output_bytes = 99999999999\n"},
			wantErr: []string{".omni/config.local.toml:2:20: [sandbox] max_output_bytes is 99999999999, out of range; allowed: 1 to 16777216 (16 MiB) bytes per stream"},
		},
		{
			name:    "max_output_bytes just over the bound",
			files:   map[string]string{configPath: "sandbox = { max_output_bytes = 16777217 }\n"},
			wantErr: []string{"omni/config.toml:1:13: [sandbox] max_output_bytes is 16777217, out of range"},
		},
		{
			name:    "max_output_bytes past int64",
			files:   map[string]string{configPath: "[sandbox]\nmax_output_bytes = 99999999999999999999\n"},
			wantErr: []string{"omni/config.toml:2:"},
		},
		{
			name:    "negative max_output_bytes",
			files:   map[string]string{configPath: "[sandbox]\nmax_output_bytes = -5\n"},
			wantErr: []string{"omni/config.toml:2:20: [sandbox] max_output_bytes is -5, out of range"},
		},
		{
			name:    "empty runtime array",
			files:   map[string]string{configPath: "[sandbox]\nruntime = []\n"},
			wantErr: []string{"runtime is an empty array"},
		},
		{
			name:    "runtime array with an empty string",
			files:   map[string]string{configPath: "[sandbox]\nruntime = [\"bun\", \"\"]\n"},
			wantErr: []string{"runtime array element 2 must be a non-empty string"},
		},
		{
			name:    "runtime of another type",
			files:   map[string]string{configPath: "[sandbox]\nruntime = 3\n"},
			wantErr: []string{"runtime must be"},
		},
		{
			name:    "invalid sandbox value in the local file names that file",
			files:   map[string]string{configPath: "", localConfigPath: "[sandbox]\ntimeout = \"x\"\n"},
			wantErr: []string{`.omni/config.local.toml:2:12: [sandbox] timeout "x"`},
		},
		{
			name:    "env value that is not a string",
			files:   map[string]string{configPath: "[env]\nLIST = [1]\n\"BAD NAME\" = \"x\"\n"},
			wantErr: []string{"omni/config.toml:2:9: [env] LIST must be a string", `omni/config.toml:3:15: [env] "BAD NAME" is not a valid variable name`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			writeFiles(t, root, tt.files)
			reg, err := Load(root, nil)
			if err == nil {
				t.Fatalf("Load succeeded (%+v), want an error", reg)
			}
			for _, want := range tt.wantErr {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q\ndoes not contain %q", err, want)
				}
			}
		})
	}
}

func TestLoadSandbox(t *testing.T) {
	tests := []struct {
		name   string
		config string
		local  string
		want   Sandbox
	}{
		{
			name:   "defaults",
			config: "",
			want: Sandbox{Runtime: DefaultRuntime, Timeout: DefaultTimeout, MaxOutputBytes: DefaultMaxOutputBytes,
				Network: true, EnvPassthrough: DefaultEnvPassthrough()},
		},
		{
			name:   "every key set",
			config: "[sandbox]\nruntime = \"deno\"\ntimeout = \"1m30s\"\nmax_output_bytes = 1000\nnetwork = false\nenv_passthrough = [\"PATH\"]\n",
			want:   Sandbox{Runtime: "deno", Timeout: 90 * time.Second, MaxOutputBytes: 1000, Network: false, EnvPassthrough: []string{"PATH"}},
		},
		{
			name:   "the bounds themselves are allowed",
			config: "[sandbox]\ntimeout = \"1h\"\nmax_output_bytes = 16777216\n",
			want: Sandbox{Runtime: DefaultRuntime, Timeout: MaxTimeout, MaxOutputBytes: MaxMaxOutputBytes,
				Network: true, EnvPassthrough: DefaultEnvPassthrough()},
		},
		{
			name:   "runtime command and empty passthrough",
			config: "[sandbox]\nruntime = [\"node\", \"--import\", \"tsx\"]\nenv_passthrough = []\n",
			want: Sandbox{Command: []string{"node", "--import", "tsx"}, Timeout: DefaultTimeout,
				MaxOutputBytes: DefaultMaxOutputBytes, Network: true, EnvPassthrough: []string{}},
		},
		{
			name:   "local overrides scalars and replaces the passthrough list",
			config: "[sandbox]\nruntime = [\"x\"]\ntimeout = \"5s\"\nnetwork = false\nenv_passthrough = [\"PATH\", \"HOME\"]\n",
			local:  "[sandbox]\nruntime = \"node\"\nnetwork = true\nenv_passthrough = [\"LANG\"]\n",
			want: Sandbox{Runtime: "node", Timeout: 5 * time.Second, MaxOutputBytes: DefaultMaxOutputBytes,
				Network: true, EnvPassthrough: []string{"LANG"}},
		},
		{
			name:   "typecheck, overridden locally",
			config: "[sandbox]\ntypecheck = \"off\"\n",
			local:  "[sandbox]\ntypecheck = \"error\"\n",
			want: Sandbox{Runtime: DefaultRuntime, Timeout: DefaultTimeout, MaxOutputBytes: DefaultMaxOutputBytes,
				Network: true, EnvPassthrough: DefaultEnvPassthrough(), TypeCheck: TypeCheckError},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files := map[string]string{configPath: tt.config}
			if tt.local != "" {
				files[localConfigPath] = tt.local
			}
			reg := loadRepo(t, files, nil)
			if tt.want.TypeCheck == "" {
				tt.want.TypeCheck = DefaultTypeCheck
			}
			if want := withIsolationDefaults(tt.want); !reflect.DeepEqual(reg.Sandbox, want) {
				t.Errorf("Sandbox = %+v\nwant %+v", reg.Sandbox, want)
			}
		})
	}
}

func TestLoadRuns(t *testing.T) {
	tests := []struct {
		name, config, local string
		want                int
	}{
		{name: "default", want: DefaultKeepRuns},
		{name: "keep = 2 keeps 2", config: "[runs]\nkeep = 2\n", want: 2},
		{name: "local overrides", config: "[runs]\nkeep = 2\n", local: "[runs]\nkeep = 7\n", want: 7},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files := map[string]string{configPath: tt.config}
			if tt.local != "" {
				files[localConfigPath] = tt.local
			}
			if got := loadRepo(t, files, nil).KeepRuns; got != tt.want {
				t.Errorf("KeepRuns = %d, want %d", got, tt.want)
			}
		})
	}
}

func TestLoadProfiles(t *testing.T) {
	const config = `
project = "my-app"
default_profile = "review"

[capabilities]
enable = ["tasks", "repo", "tasks"]
disable = ["legacy"]

[profiles.review]
enable = ["code-review", "legacy"]
disable = ["tasks"]

[profiles.minimal]
disable = ["repo", "tasks"]

[profiles.default]
enable = ["extra"]
`
	tests := []struct {
		name          string
		activeProfile *string // nil: no .omni/active-profile file
		config        string
		local         string
		wantProfile   string
		wantProfiles  []string
		wantEnabled   []string
	}{
		{
			name:         "default_profile when no active-profile file",
			config:       config,
			wantProfile:  "review",
			wantProfiles: []string{"default", "minimal", "review"},
			wantEnabled:  []string{"code-review", "repo"},
		},
		{
			name:          "active-profile file wins, trimmed",
			activeProfile: ptr("  minimal\n"),
			config:        config,
			wantProfile:   "minimal",
			wantProfiles:  []string{"default", "minimal", "review"},
			wantEnabled:   nil,
		},
		{
			name:          "empty active-profile file falls back to default_profile",
			activeProfile: ptr(" \n"),
			config:        config,
			wantProfile:   "review",
			wantProfiles:  []string{"default", "minimal", "review"},
			wantEnabled:   []string{"code-review", "repo"},
		},
		{
			name:          "default profile defined in the config",
			activeProfile: ptr("default"),
			config:        config,
			wantProfile:   "default",
			wantProfiles:  []string{"default", "minimal", "review"},
			wantEnabled:   []string{"extra", "repo", "tasks"},
		},
		{
			name:         "no profile anywhere",
			config:       "[capabilities]\nenable = [\"b\", \"a\"]\n",
			wantProfile:  "default",
			wantProfiles: []string{"default"},
			wantEnabled:  []string{"a", "b"},
		},
		{
			name:          "default always exists",
			activeProfile: ptr("default"),
			config:        "",
			wantProfile:   "default",
			wantProfiles:  []string{"default"},
		},
		{
			name:   "local config merges profiles and lists",
			config: config,
			local: `
default_profile = "ci"
[capabilities]
enable = ["local-only"]
[profiles.ci]
enable = ["ci-tool"]
[profiles.review]
disable = ["repo"]
`,
			wantProfile:  "ci",
			wantProfiles: []string{"ci", "default", "minimal", "review"},
			wantEnabled:  []string{"ci-tool", "local-only", "repo", "tasks"},
		},
		{
			name:          "local profile lists concatenate with the base ones",
			activeProfile: ptr("review"),
			config:        config,
			local:         "[profiles.review]\ndisable = [\"repo\"]\nenable = [\"more\"]\n",
			wantProfile:   "review",
			wantProfiles:  []string{"default", "minimal", "review"},
			wantEnabled:   []string{"code-review", "more"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files := map[string]string{configPath: tt.config}
			if tt.local != "" {
				files[localConfigPath] = tt.local
			}
			if tt.activeProfile != nil {
				files[activeProfilePath] = *tt.activeProfile
			}
			reg := loadRepo(t, files, nil)
			if reg.Profile != tt.wantProfile {
				t.Errorf("Profile = %q, want %q", reg.Profile, tt.wantProfile)
			}
			if !reflect.DeepEqual(reg.Profiles, tt.wantProfiles) {
				t.Errorf("Profiles = %q, want %q", reg.Profiles, tt.wantProfiles)
			}
			// No folders exist: each enabled id is reported as missing, in ID order.
			var enabled []string
			for _, p := range reg.Problems {
				enabled = append(enabled, p.Capability)
			}
			if !reflect.DeepEqual(enabled, tt.wantEnabled) {
				t.Errorf("enabled = %q, want %q (problems: %v)", enabled, tt.wantEnabled, reg.Problems)
			}
		})
	}
}

func TestLoadProjectOverride(t *testing.T) {
	reg := loadRepo(t, map[string]string{configPath: `project = "base"`, localConfigPath: `project = "local"`}, nil)
	if reg.Project != "local" {
		t.Errorf("Project = %q, want %q", reg.Project, "local")
	}
	reg = loadRepo(t, map[string]string{configPath: `project = "base"`, localConfigPath: `# nothing`}, nil)
	if reg.Project != "base" {
		t.Errorf("Project = %q, want %q", reg.Project, "base")
	}
}

// FuzzLoadConfig checks that no config file makes parseConfig panic, and
// that a config it accepts yields a sandbox within the documented bounds.
// Seeds are in testdata/fuzz/FuzzLoadConfig.
func FuzzLoadConfig(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, _, err := parseConfig(data, configPath)
		if err != nil {
			if !strings.HasPrefix(err.Error(), configPath) {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		s := cfg.sandbox.resolve()
		if s.Timeout <= 0 || s.MaxOutputBytes <= 0 {
			t.Fatalf("accepted a non-positive limit: %+v", s)
		}
		if (s.Command == nil) == (s.Runtime == "") {
			t.Fatalf("want exactly one of Runtime and Command: %+v", s)
		}
		cfg.merge(cfg)
		_ = cfg.enabled(defaultProfile)
	})
}

func ptr[T any](v T) *T { return &v }
