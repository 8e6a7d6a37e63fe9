package capability

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
	"github.com/omnidev/omnidev/internal/egress"
)

// Paths Load reads, relative to the repository root.
const (
	configPath        = "omni/config.toml"
	localConfigPath   = ".omni/config.local.toml"
	activeProfilePath = ".omni/active-profile"
	dotEnvPath        = ".omni/.env"
	capabilitiesDir   = "omni/capabilities"
)

// defaultProfile is the profile that always exists, so that a config
// without profiles is valid.
const defaultProfile = "default"

// rawConfig is the TOML shape of config.toml and config.local.toml. Scalars
// are pointers so that merging can tell a value that is absent from a zero
// value. Keys it does not name are reported as problems and ignored.
type rawConfig struct {
	Project        *string               `toml:"project"`
	DefaultProfile *string               `toml:"default_profile"`
	Capabilities   rawLists              `toml:"capabilities"`
	Env            map[string]any        `toml:"env"`
	Profiles       map[string]rawProfile `toml:"profiles"`
	Sandbox        rawSandbox            `toml:"sandbox"`
	Runs           rawRuns               `toml:"runs"`
}

// rawRuns is the [runs] table: how many run records .omni/runs keeps.
type rawRuns struct {
	Keep *int64 `toml:"keep"`
}

type rawLists struct {
	Enable  []string `toml:"enable"`
	Disable []string `toml:"disable"`
}

// rawProfile is a [profiles.<name>] table. OmniDev lists a profile's
// capabilities as `capabilities = [...]`: it is read as more of enable.
type rawProfile struct {
	rawLists
	Capabilities []string `toml:"capabilities"`
}

type rawSandbox struct {
	Runtime        any       `toml:"runtime"` // a preset name or an argv array
	Timeout        *string   `toml:"timeout"`
	MaxOutputBytes *int64    `toml:"max_output_bytes"`
	Network        any       `toml:"network"` // true, false, or a list of hosts
	TypeCheck      *string   `toml:"typecheck"`
	EnvPassthrough *[]string `toml:"env_passthrough"`
	Filesystem     *string   `toml:"filesystem"`
	Isolation      *string   `toml:"isolation"`
	Writable       []string  `toml:"writable"`
	Readable       []string  `toml:"readable"`
	Memory         any       `toml:"memory"` // "2GiB" or a number of bytes
	Processes      *int64    `toml:"processes"`
}

// config is one validated config file, or several merged.
type config struct {
	layout         Layout
	project        *string
	defaultProfile *string
	capabilities   lists
	env            map[string]string
	profiles       map[string]lists
	sandbox        sandboxConfig
	keepRuns       *int
}

type lists struct {
	enable, disable []string
}

// sandboxConfig holds the [sandbox] values a file sets; nil means unset.
type sandboxConfig struct {
	runtime        *runtimeSpec
	timeout        *time.Duration
	maxOutputBytes *int
	network        *networkSetting
	envPassthrough *[]string
	typeCheck      *string
	isolation      isolationConfig
}

// runtimeSpec is either a preset name or an explicit command.
type runtimeSpec struct {
	preset  string
	command []string
}

// loadConfig reads the config file of the repository's layout (see Layout)
// and merges .omni/config.local.toml on top of it. root only names the
// repository in the error for a missing config.
func loadConfig(fsys fs.FS, root string) (*config, []Problem, error) {
	layout, err := findLayout(fsys, root)
	if err != nil {
		return nil, nil, err
	}
	data, err := readFile(fsys, layout.Config)
	if err != nil {
		return nil, nil, fmt.Errorf("read %s: %w", layout.Config, err)
	}
	cfg, problems, err := parseConfig(data, layout.Config)
	if err != nil {
		return nil, nil, err
	}
	cfg.layout = layout
	data, ok, err := readOptional(fsys, layout.LocalConfig)
	if err != nil {
		return nil, nil, fmt.Errorf("read %s: %w", layout.LocalConfig, err)
	}
	if ok {
		local, more, err := parseConfig(data, layout.LocalConfig)
		if err != nil {
			return nil, nil, err
		}
		cfg.merge(local)
		problems = append(problems, more...)
	}
	return cfg, problems, nil
}

// parseConfig decodes and validates one config file; path names it in
// errors and problems. Unknown keys are problems: a typo must not silently
// change what is enabled or how code runs.
func parseConfig(data []byte, path string) (*config, []Problem, error) {
	var raw rawConfig
	md, err := toml.Decode(string(data), &raw)
	if err != nil {
		line, col, msg := tomlError(err, data)
		if line > 0 {
			return nil, nil, fmt.Errorf("%s:%d:%d: %s", path, line, col, msg)
		}
		return nil, nil, fmt.Errorf("%s: %s", path, msg)
	}
	cfg, errs := raw.validate()
	if len(errs) > 0 {
		for i, err := range errs {
			errs[i] = placeError(data, path, err)
		}
		return nil, nil, errors.Join(errs...)
	}
	return cfg, unknownKeys(md, data, path, "", nil), nil
}

// tomlError returns the position and message of a TOML syntax error. Other
// decoding errors (a string where a list belongs...) have no column: line is
// 0 and msg is the decoder's message, which names the line and the key.
// A string left open is reported where the decoder gave up (the end of the
// line, or of the file) and placed at the quote that opened it, which is
// what the user has to close.
func tomlError(err error, data []byte) (line, col int, msg string) {
	var pe toml.ParseError
	if errors.As(err, &pe) {
		line, col, msg = pe.Position.Line, pe.Position.Col, pe.Message
		switch {
		case msg == "strings cannot contain newlines":
			if c := openQuote(tomlLine(data, line)); c > 0 {
				col, msg = c, `this string is not closed: close the quote on the same line (or use """ for a multi-line string)`
			}
		case strings.HasPrefix(msg, `unexpected EOF; expected '"""'`) || strings.HasPrefix(msg, `unexpected EOF; expected "'''"`):
			delim := msg[len(msg)-4 : len(msg)-1]
			if i := bytes.LastIndex(data, []byte(delim)); i >= 0 {
				line = bytes.Count(data[:i], []byte("\n")) + 1
				col = i - (bytes.LastIndexByte(data[:i], '\n') + 1) + 1
				msg = "this multi-line string is not closed: end it with " + delim
			}
		}
		return line, col, msg
	}
	return 0, 0, strings.TrimPrefix(err.Error(), "toml: ")
}

// tomlLine returns line n (from 1) of data.
func tomlLine(data []byte, n int) string {
	for i, l := range strings.Split(string(data), "\n") {
		if i+1 == n {
			return l
		}
	}
	return ""
}

// openQuote returns the column (from 1) of the quote that opens a string
// still open at the end of line, or 0.
func openQuote(line string) int {
	var quote byte
	start := 0
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case quote == 0 && c == '#':
			return 0
		case quote == 0 && (c == '"' || c == '\''):
			quote, start = c, i
		case quote == '"' && c == '\\':
			i++
		case quote != 0 && c == quote:
			quote = 0
		}
	}
	if quote == 0 {
		return 0
	}
	return start + 1
}

// keyError is an invalid value, with the key that holds it so that the
// error can name its line and column.
type keyError struct {
	key []string
	err error
}

func (e *keyError) Error() string { return e.err.Error() }
func (e *keyError) Unwrap() error { return e.err }

// placeError prefixes err with the file and, for a keyError, the position
// of its key's value.
func placeError(data []byte, path string, err error) error {
	var ke *keyError
	if errors.As(err, &ke) {
		if pos, ok := keyPosition(data, ke.key); ok {
			return fmt.Errorf("%s:%d:%d: %w", path, pos.Line, pos.Col, err)
		}
	}
	return fmt.Errorf("%s: %w", path, err)
}

// positionProbe fails to decode wherever it is placed, so that the
// decoder's error says where that is.
type positionProbe struct{}

var errPositionProbe = errors.New("position probe")

func (positionProbe) UnmarshalTOML(any) error { return errPositionProbe }

// keyPosition returns where key's value is in a TOML document. The decoder
// keeps positions private but puts them in the ParseError of a value that
// fails to decode, so the document is decoded again into a shape whose only
// field, at key, always fails. This costs a parse per error, never on a
// valid config.
func keyPosition(data []byte, key []string) (toml.Position, bool) {
	t := reflect.TypeFor[positionProbe]()
	for i := len(key) - 1; i >= 0; i-- {
		t = reflect.StructOf([]reflect.StructField{{
			Name: "Key",
			Type: t,
			Tag:  reflect.StructTag(fmt.Sprintf("toml:%q", key[i])),
		}})
	}
	_, err := toml.Decode(string(data), reflect.New(t).Interface())
	var pe toml.ParseError
	if !errors.As(err, &pe) || pe.Message != errPositionProbe.Error() || pe.Position.Line == 0 {
		return toml.Position{}, false
	}
	return pe.Position, true
}

// validate checks the values TOML types alone cannot, collecting every error.
func (raw *rawConfig) validate() (*config, []error) {
	var errs []error
	fail := func(key []string, format string, args ...any) {
		errs = append(errs, &keyError{key: key, err: fmt.Errorf(format, args...)})
	}
	cfg := &config{
		project:        raw.Project,
		defaultProfile: raw.DefaultProfile,
		capabilities:   lists{raw.Capabilities.Enable, raw.Capabilities.Disable},
		env:            make(map[string]string, len(raw.Env)),
		profiles:       make(map[string]lists, len(raw.Profiles)),
	}
	for name, p := range raw.Profiles {
		cfg.profiles[name] = lists{slices.Concat(p.Enable, p.Capabilities), p.Disable}
	}
	for _, name := range slices.Sorted(maps.Keys(raw.Env)) {
		value, ok := scalarString(raw.Env[name])
		switch {
		case !validEnvName(name):
			fail([]string{"env", name}, "[env] %q is not a valid variable name; use letters, digits and _", name)
		case !ok:
			fail([]string{"env", name}, "[env] %s must be a string", name)
		default:
			cfg.env[name] = value
		}
	}
	if k := raw.Runs.Keep; k != nil {
		if *k < 1 || *k > maxKeepRuns {
			fail([]string{"runs", "keep"}, "[runs] keep is %d; it must be between 1 and %d", *k, maxKeepRuns)
		} else {
			n := int(*k)
			cfg.keepRuns = &n
		}
	}
	s, sandboxErrs := raw.Sandbox.validate()
	errs = append(errs, sandboxErrs...)
	cfg.sandbox = s
	return cfg, errs
}

// validate checks the [sandbox] values that are set.
func (raw *rawSandbox) validate() (sandboxConfig, []error) {
	var s sandboxConfig
	var errs []error
	fail := func(key string, format string, args ...any) {
		errs = append(errs, &keyError{key: []string{"sandbox", key}, err: fmt.Errorf(format, args...)})
	}
	if raw.Runtime != nil {
		rt, err := parseRuntime(raw.Runtime)
		if err != nil {
			fail("runtime", "%w", err)
		}
		s.runtime = rt
	}
	if raw.Timeout != nil {
		d, err := time.ParseDuration(*raw.Timeout)
		switch {
		case err != nil:
			fail("timeout", "[sandbox] timeout %q is not a duration; use a value like \"30s\" or \"2m\"", *raw.Timeout)
		case d <= 0 || d > MaxTimeout:
			fail("timeout", "[sandbox] timeout %q is out of range; allowed: more than 0 and at most %s", *raw.Timeout, shortDuration(MaxTimeout))
		default:
			s.timeout = &d
		}
	}
	if raw.MaxOutputBytes != nil {
		if n := *raw.MaxOutputBytes; n <= 0 || n > MaxMaxOutputBytes {
			fail("max_output_bytes", "[sandbox] max_output_bytes is %d, out of range; allowed: 1 to %d (%d MiB) bytes per stream, such as 65536", n, MaxMaxOutputBytes, MaxMaxOutputBytes>>20)
		} else {
			v := int(n)
			s.maxOutputBytes = &v
		}
	}
	if raw.Network != nil {
		n, err := parseNetwork(raw.Network)
		if err != nil {
			fail("network", "%w", err)
		} else {
			s.network = &n
		}
	}
	if raw.EnvPassthrough != nil {
		for _, name := range *raw.EnvPassthrough {
			if !validEnvName(name) {
				fail("env_passthrough", "[sandbox] env_passthrough: %q is not a valid variable name", name)
			}
		}
		s.envPassthrough = raw.EnvPassthrough
	}
	if raw.TypeCheck != nil {
		switch *raw.TypeCheck {
		case TypeCheckOff, TypeCheckWarn, TypeCheckError:
			s.typeCheck = raw.TypeCheck
		default:
			fail("typecheck", `[sandbox] typecheck %q is not supported; use "off", "warn" (check, run anyway, report the errors) or "error" (do not run a program with type errors)`, *raw.TypeCheck)
		}
	}
	s.isolation, errs = raw.validateIsolation(errs)
	return s, errs
}

// shortDuration prints d without the zero units time.Duration.String
// appends: "1h" rather than "1h0m0s".
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = s[:len(s)-2]
	}
	if strings.HasSuffix(s, "h0m") {
		s = s[:len(s)-2]
	}
	return s
}

// parseRuntime reads `runtime = "bun"` or `runtime = ["cmd", "arg", ...]`.
func parseRuntime(v any) (*runtimeSpec, error) {
	switch v := v.(type) {
	case string:
		switch v {
		case "bun", "deno", "node":
			return &runtimeSpec{preset: v}, nil
		}
		return nil, fmt.Errorf(`[sandbox] runtime %q is not supported; use "bun", "deno", "node" or a command array such as ["bun", "run"]`, v)
	case []any:
		if len(v) == 0 {
			return nil, errors.New(`[sandbox] runtime is an empty array; give a command and its arguments, such as ["bun", "run"]`)
		}
		cmd := make([]string, len(v))
		for i, a := range v {
			s, ok := a.(string)
			if !ok || s == "" {
				return nil, fmt.Errorf("[sandbox] runtime array element %d must be a non-empty string", i+1)
			}
			cmd[i] = s
		}
		return &runtimeSpec{command: cmd}, nil
	}
	return nil, errors.New(`[sandbox] runtime must be "bun", "deno", "node" or an array of strings`)
}

// scalarString renders a TOML scalar as an environment value, so that
// `PORT = 8080` works as well as `PORT = "8080"`.
func scalarString(v any) (string, bool) {
	switch v := v.(type) {
	case string:
		return v, true
	case int64:
		return strconv.FormatInt(v, 10), true
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64), true
	case bool:
		return strconv.FormatBool(v), true
	}
	return "", false
}

// merge lays local over c: scalars override, enable and disable lists
// concatenate, env and profiles merge key by key. env_passthrough is a value,
// not a list to extend: a local file that sets it means exactly that list.
func (c *config) merge(local *config) {
	override(&c.project, local.project)
	override(&c.defaultProfile, local.defaultProfile)
	c.capabilities = c.capabilities.concat(local.capabilities)
	for name, value := range local.env {
		c.env[name] = value
	}
	for name, p := range local.profiles {
		c.profiles[name] = c.profiles[name].concat(p)
	}
	override(&c.keepRuns, local.keepRuns)
	override(&c.sandbox.runtime, local.sandbox.runtime)
	override(&c.sandbox.timeout, local.sandbox.timeout)
	override(&c.sandbox.maxOutputBytes, local.sandbox.maxOutputBytes)
	c.sandbox.network = c.sandbox.network.merge(local.sandbox.network)
	override(&c.sandbox.envPassthrough, local.sandbox.envPassthrough)
	override(&c.sandbox.typeCheck, local.sandbox.typeCheck)
	c.sandbox.isolation.merge(local.sandbox.isolation)
}

func override[T any](dst **T, src *T) {
	if src != nil {
		*dst = src
	}
}

func (l lists) concat(more lists) lists {
	return lists{slices.Concat(l.enable, more.enable), slices.Concat(l.disable, more.disable)}
}

// profileNames returns the defined profiles, sorted, "default" included.
func (c *config) profileNames() []string {
	names := []string{defaultProfile}
	for name := range c.profiles {
		if name != defaultProfile {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

// activeProfile picks the profile: .omni/active-profile, else
// default_profile, else "default".
func (c *config) activeProfile(fsys fs.FS) (string, error) {
	data, ok, err := readOptional(fsys, activeProfilePath)
	if err != nil {
		return "", fmt.Errorf("read %s: %w", activeProfilePath, err)
	}
	name, source := "", activeProfilePath
	if ok {
		name = strings.TrimSpace(string(data))
	}
	if name == "" && c.defaultProfile != nil {
		name, source = strings.TrimSpace(*c.defaultProfile), "default_profile"
	}
	if name == "" {
		return defaultProfile, nil
	}
	if _, defined := c.profiles[name]; defined || name == defaultProfile {
		return name, nil
	}
	return "", fmt.Errorf("profile %q (from %s) is not defined in %s (defined: %s); fix %s or default_profile",
		name, source, c.layout.Config, strings.Join(c.profileNames(), ", "), activeProfilePath)
}

// enabled returns (capabilities.enable ∪ profile.enable) − (capabilities.disable
// ∪ profile.disable), without duplicates, in the order first enabled.
func (c *config) enabled(profile string) []string {
	all := c.capabilities.concat(c.profiles[profile])
	disabled := make(map[string]bool, len(all.disable))
	for _, id := range all.disable {
		disabled[id] = true
	}
	var ids []string
	seen := make(map[string]bool, len(all.enable))
	for _, id := range all.enable {
		if !disabled[id] && !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	return ids
}

// resolve applies the [sandbox] defaults.
func (s sandboxConfig) resolve() Sandbox {
	out := Sandbox{
		Runtime:        DefaultRuntime,
		Timeout:        DefaultTimeout,
		MaxOutputBytes: DefaultMaxOutputBytes,
		Network:        true,
		EnvPassthrough: DefaultEnvPassthrough(),
		TypeCheck:      DefaultTypeCheck,
	}
	if s.typeCheck != nil {
		out.TypeCheck = *s.typeCheck
	}
	if s.runtime != nil {
		out.Runtime, out.Command = s.runtime.preset, slices.Clone(s.runtime.command)
	}
	if s.timeout != nil {
		out.Timeout = *s.timeout
	}
	if s.maxOutputBytes != nil {
		out.MaxOutputBytes = *s.maxOutputBytes
	}
	if s.network != nil {
		out.Network = s.network.on && s.network.hosts == nil
		out.NetworkHosts = slices.Clone(s.network.hosts)
	}
	if s.envPassthrough != nil {
		out.EnvPassthrough = slices.Clone(*s.envPassthrough)
	}
	s.isolation.resolve(&out)
	return out
}

// networkSetting is [sandbox] network: on or off, or a list of hosts
// (hosts non-nil; on is then false: only the listed hosts, through the
// egress proxy).
type networkSetting struct {
	on    bool
	hosts []string
}

// parseNetwork reads true, false or a list of hosts.
func parseNetwork(v any) (networkSetting, error) {
	switch v := v.(type) {
	case bool:
		return networkSetting{on: v}, nil
	case []any:
		hosts := []string{}
		var errs []error
		for _, e := range v {
			s, ok := e.(string)
			if !ok {
				errs = append(errs, fmt.Errorf("[sandbox] network: %v is not a host name in quotes", e))
				continue
			}
			if _, err := egress.ParseRule(s); err != nil {
				errs = append(errs, fmt.Errorf("[sandbox] network: %v", err))
				continue
			}
			hosts = append(hosts, strings.ToLower(strings.TrimSpace(s)))
		}
		if len(errs) > 0 {
			return networkSetting{}, errors.Join(errs...)
		}
		return networkSetting{hosts: hosts}, nil
	}
	return networkSetting{}, fmt.Errorf("[sandbox] network must be true, false or a list of hosts such as [\"registry.npmjs.org\", \"*.github.com\"]")
}

// merge lays a local setting over n: true or false replaces it; a list
// extends a committed list (as writable and readable do) and replaces a
// committed true or false.
func (n *networkSetting) merge(local *networkSetting) *networkSetting {
	switch {
	case local == nil:
		return n
	case n == nil || local.hosts == nil || n.hosts == nil:
		return local
	}
	return &networkSetting{hosts: slices.Concat(n.hosts, local.hosts)}
}
