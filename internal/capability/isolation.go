package capability

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Defaults and bounds of the [sandbox] isolation keys.
const (
	FilesystemIsolated = "isolated"
	FilesystemHost     = "host"
	// The modes of [sandbox] isolation: auto takes namespaces where the
	// kernel allows them, else Landlock and seccomp.
	IsolationAuto       = "auto"
	IsolationNamespaces = "namespaces"
	IsolationLandlock   = "landlock"
	IsolationNone       = "none"
	DefaultMemoryBytes  = 2 << 30
	DefaultProcesses    = 256
	// minMemoryBytes and minProcesses are below what a runtime needs to
	// start at all (Bun alone holds some 40 MB and a dozen threads): a
	// lower value is a mistake, not a limit.
	minMemoryBytes = 64 << 20
	minProcesses   = 16
	maxProcesses   = 1 << 22 // the kernel's largest pid_max
)

// isolationConfig holds the [sandbox] isolation values a file sets.
type isolationConfig struct {
	filesystem         *string
	mode               *string
	writable, readable []string
	memory             *int64
	processes          *int
}

// validateIsolation checks filesystem, writable, readable, memory and
// processes, appending to errs.
func (raw *rawSandbox) validateIsolation(errs []error) (isolationConfig, []error) {
	var c isolationConfig
	if raw.Filesystem != nil {
		switch *raw.Filesystem {
		case FilesystemIsolated, FilesystemHost:
			c.filesystem = raw.Filesystem
		default:
			errs = append(errs, fmt.Errorf(`[sandbox] filesystem %q is not supported; use "isolated" (the default) or "host" (no filesystem isolation)`, *raw.Filesystem))
		}
	}
	if raw.Isolation != nil {
		switch *raw.Isolation {
		case IsolationAuto, IsolationNamespaces, IsolationLandlock, IsolationNone:
			c.mode = raw.Isolation
		default:
			errs = append(errs, fmt.Errorf(`[sandbox] isolation %q is not supported; use "auto" (the default: namespaces where the kernel allows them, else Landlock and seccomp), "namespaces", "landlock" or "none"`, *raw.Isolation))
		}
	}
	for _, list := range []struct {
		key   string
		paths []string
		dst   *[]string
	}{{"writable", raw.Writable, &c.writable}, {"readable", raw.Readable, &c.readable}} {
		for _, p := range list.paths {
			if strings.TrimSpace(p) == "" {
				errs = append(errs, fmt.Errorf("[sandbox] %s holds an empty path; give a path relative to the repository, absolute, or starting with ~/", list.key))
			}
		}
		*list.dst = list.paths
	}
	if raw.Memory != nil {
		n, err := parseBytes(raw.Memory)
		ram := totalRAM()
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("[sandbox] memory: %v; use a size such as \"2GiB\" or \"512MiB\"", err))
		case n < minMemoryBytes || ram > 0 && n > ram:
			errs = append(errs, fmt.Errorf("[sandbox] memory is %s; it must be between 64MiB and this machine's memory (%s)", FormatBytes(n), FormatBytes(ram)))
		default:
			c.memory = &n
		}
	}
	if raw.Processes != nil {
		n := *raw.Processes
		if n < minProcesses || n > maxProcesses {
			errs = append(errs, fmt.Errorf("[sandbox] processes is %d; it must be between %d and %d (threads count)", n, minProcesses, maxProcesses))
		} else {
			v := int(n)
			c.processes = &v
		}
	}
	return c, errs
}

// merge lays local over c: scalars override, the path lists extend.
func (c *isolationConfig) merge(local isolationConfig) {
	override(&c.filesystem, local.filesystem)
	override(&c.mode, local.mode)
	override(&c.memory, local.memory)
	override(&c.processes, local.processes)
	c.writable = slices.Concat(c.writable, local.writable)
	c.readable = slices.Concat(c.readable, local.readable)
}

// resolve applies the defaults; paths are resolved by Load, which knows
// the root and the home.
func (c isolationConfig) resolve(out *Sandbox) {
	out.Filesystem = FilesystemIsolated
	if c.filesystem != nil {
		out.Filesystem = *c.filesystem
	}
	out.Isolation = IsolationAuto
	if c.mode != nil {
		out.Isolation = *c.mode
	}
	out.MemoryBytes = DefaultMemoryBytes
	if ram := totalRAM(); ram > 0 && ram < out.MemoryBytes {
		out.MemoryBytes = ram
	}
	if c.memory != nil {
		out.MemoryBytes = *c.memory
	}
	out.Processes = DefaultProcesses
	if c.processes != nil {
		out.Processes = *c.processes
	}
	out.Writable = slices.Clone(c.writable)
	out.Readable = slices.Clone(c.readable)
}

// resolvePaths makes the writable and readable paths absolute: ~ is home,
// a relative path is relative to root.
func (s *Sandbox) resolvePaths(root, home string) {
	for _, list := range []*[]string{&s.Writable, &s.Readable} {
		for i, p := range *list {
			switch {
			case p == "~" || strings.HasPrefix(p, "~/"):
				p = filepath.Join(home, p[1:])
			case !filepath.IsAbs(p):
				p = filepath.Join(root, p)
			}
			(*list)[i] = filepath.Clean(p)
		}
	}
}

// parseBytes reads a size: a number of bytes, or a string with a unit
// (B, KiB, MiB, GiB, TiB, or KB, MB, GB, TB in powers of ten).
func parseBytes(v any) (int64, error) {
	switch v := v.(type) {
	case int64:
		return v, nil
	case string:
		s := strings.TrimSpace(v)
		i := strings.IndexFunc(s, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
		num, unit := s, "B"
		if i >= 0 {
			num, unit = strings.TrimSpace(s[:i]), strings.TrimSpace(s[i:])
		}
		mult, ok := map[string]float64{
			"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40,
			"KB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12,
		}[unit]
		f, err := strconv.ParseFloat(num, 64)
		if !ok || err != nil || f < 0 {
			return 0, fmt.Errorf("%q is not a size", v)
		}
		if f*mult > math.MaxInt64/2 {
			return 0, fmt.Errorf("%q is too large", v)
		}
		return int64(f * mult), nil
	}
	return 0, fmt.Errorf("%v is not a size", v)
}

// FormatBytes renders a size as the config spells it ("2GiB", "512MiB").
func FormatBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return strconv.FormatFloat(float64(n)/(1<<30), 'f', -1, 64) + "GiB"
	case n >= 1<<20:
		return strconv.FormatFloat(float64(n)/(1<<20), 'f', -1, 64) + "MiB"
	}
	return strconv.FormatInt(n, 10) + "B"
}
