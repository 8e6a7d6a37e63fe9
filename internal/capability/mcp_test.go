package capability

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestLoadMCP(t *testing.T) {
	const id = "srv"
	mpath := capabilitiesDir + "/" + id + "/" + manifestFile
	tests := []struct {
		name     string
		toml     []string
		files    map[string]string // extra files in the capability folder
		dotEnv   string
		config   string // extra config lines
		environ  []string
		want     *MCPServer // nil: the capability is left out with problem
		problem  string
		notInEnv []string // names executed code must not see
		inEnv    []string
	}{
		{
			name: "stdio with defaults, config, .env and process expansion",
			toml: []string{
				`[env]`,
				`MEMORY_FILE = { default = ".omni/state/memory.json" }`,
				`TOKEN = { required = true, secret = true }`,
				`[mcp]`,
				`command = "npx"`,
				`args = ["-y", "server", "--file=${MEMORY_FILE}", "${FROM_CONFIG}", "--root=${OMNIDEV_ROOT}"]`,
				`env = { MEMORY_FILE_PATH = "${MEMORY_FILE}", AUTH = "Bearer ${TOKEN}", LITERAL = "$HOME and ${FROM_PROCESS}" }`,
				`cwd = "sub"`,
				`timeout = "5s"`,
			},
			dotEnv:   "TOKEN=from-dotenv\n",
			config:   "[env]\nFROM_CONFIG = \"cfg\"\n",
			environ:  []string{"FROM_PROCESS=proc", "TOKEN=from-process"},
			want:     &MCPServer{Transport: TransportStdio, Command: "npx", Args: []string{"-y", "server", "--file=.omni/state/memory.json", "cfg", "--root=ROOT"}, Env: map[string]string{"MEMORY_FILE_PATH": ".omni/state/memory.json", "AUTH": "Bearer from-process", "LITERAL": "$HOME and proc"}, Dir: "sub", Timeout: 5 * time.Second},
			notInEnv: []string{"TOKEN"},
			inEnv:    []string{"MEMORY_FILE", "FROM_CONFIG"},
		},
		{
			name:     "http with headers; a secret from .omni/.env stays out of the program",
			toml:     []string{`[env]`, `GH = { secret = true }`, `[mcp]`, `url = "https://example.com/mcp"`, `headers = { Authorization = "Bearer ${GH}" }`},
			dotEnv:   "GH=ghp_secret\n",
			want:     &MCPServer{Transport: TransportHTTP, URL: "https://example.com/mcp", Headers: map[string]string{"Authorization": "Bearer ghp_secret"}},
			notInEnv: []string{"GH"},
		},
		{
			name:     "a token in the URL stays out of its Target",
			toml:     []string{`[env]`, `KEY = { secret = true }`, `[mcp]`, `url = "https://u:${KEY}@example.com/mcp?key=${KEY}"`},
			dotEnv:   "KEY=secret-key\n",
			want:     &MCPServer{Transport: TransportHTTP, URL: "https://u:secret-key@example.com/mcp?key=secret-key"},
			notInEnv: []string{"KEY"},
		},
		{
			name: "explicit stdio transport",
			toml: []string{`[mcp]`, `transport = "stdio"`, `command = "srv"`},
			want: &MCPServer{Transport: TransportStdio, Command: "srv"},
		},
		{name: "undefined variable", toml: []string{`[mcp]`, `command = "srv"`, `args = ["${NOPE}", "${ALSO_NOT}"]`}, problem: "undefined variables ALSO_NOT, NOPE"},
		{name: "sse refused", toml: []string{`[mcp]`, `transport = "sse"`, `url = "https://x/sse"`}, problem: `use transport = "http"`},
		{name: "named form refused", toml: []string{`[mcps.one]`, `command = "srv"`}, problem: "[mcps.<name>] (several servers in one capability) is not supported yet"},
		{name: "no command", toml: []string{`[mcp]`, `args = ["x"]`}, problem: "[mcp] command is missing"},
		{name: "command and url", toml: []string{`[mcp]`, `command = "x"`, `url = "https://x"`}, problem: "command, args, env and cwd are for"},
		{name: "bad timeout", toml: []string{`[mcp]`, `command = "x"`, `timeout = "soon"`}, problem: `timeout "soon" is not a duration`},
		{name: "unknown transport", toml: []string{`[mcp]`, `transport = "ws"`, `url = "ws://x"`}, problem: `transport "ws" is unknown`},
		{name: "index.ts beside [mcp]", toml: []string{`[mcp]`, `command = "x"`}, files: map[string]string{"index.ts": "export {}\n"}, problem: "has a generated module; remove index.ts"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			caps := map[string]string{id + "/" + manifestFile: manifest(id, tt.toml...)}
			for name, content := range tt.files {
				caps[id+"/"+name] = content
			}
			files := repoFiles([]string{id}, caps)
			files[configPath] += tt.config
			if tt.dotEnv != "" {
				files[dotEnvPath] = tt.dotEnv
			}
			reg := loadRepo(t, files, tt.environ)
			if tt.want == nil {
				if len(reg.Capabilities) != 0 {
					t.Fatalf("capability loaded; want it left out with %q", tt.problem)
				}
				p := mpath
				if _, ok := tt.files["index.ts"]; ok {
					p = capabilitiesDir + "/" + id + "/index.ts"
				}
				wantProblem(t, reg, p, tt.problem)
				return
			}
			if len(reg.Capabilities) != 1 {
				t.Fatalf("capability left out: %s", problemList(reg))
			}
			got := reg.Capabilities[0].MCP
			want := *tt.want
			for i, a := range want.Args {
				want.Args[i] = strings.ReplaceAll(a, "ROOT", reg.Root)
			}
			if want.Dir == "" {
				want.Dir = reg.Root
			} else {
				want.Dir = reg.Root + "/" + want.Dir
			}
			if !reflect.DeepEqual(got, &want) {
				t.Errorf("MCP =\n%+v\nwant\n%+v", got, &want)
			}
			if !got.Equal(&want) {
				t.Error("Equal is false for equal servers")
			}
			for _, name := range tt.notInEnv {
				if v, ok := reg.Env.Lookup(name); ok {
					t.Errorf("executed code's env has %s (from %s); a secret of a wrapped server must stay out", name, v.Source)
				}
				if _, ok := reg.Withheld.Lookup(name); !ok {
					t.Errorf("Withheld lacks %s: its value must be known to redact it", name)
				}
			}
			for _, name := range tt.inEnv {
				if _, ok := reg.Env.Lookup(name); !ok {
					t.Errorf("executed code's env lacks %s", name)
				}
			}
			if strings.Contains(got.Target(), "secret") {
				t.Errorf("Target %q shows a secret", got.Target())
			}
		})
	}
}

// A secret of an ordinary capability's still reaches the program: only
// wrapped servers' secrets are withheld.
func TestLoadSecretOfOrdinaryCapabilityKept(t *testing.T) {
	files := repoFiles([]string{"a", "m"}, map[string]string{
		"a/" + manifestFile: manifest("a", `[env]`, `A_TOKEN = { secret = true }`),
		"m/" + manifestFile: manifest("m", `[env]`, `M_TOKEN = { secret = true }`, `[mcp]`, `command = "srv"`),
	})
	files[dotEnvPath] = "A_TOKEN=a\nM_TOKEN=m\n"
	reg := loadRepo(t, files, nil)
	if v, ok := reg.Env.Lookup("A_TOKEN"); !ok || v.Value != "a" {
		t.Errorf("A_TOKEN = %v, %v; want a, true", v, ok)
	}
	if _, ok := reg.Env.Lookup("M_TOKEN"); ok {
		t.Error("M_TOKEN reached executed code's env")
	}
}
