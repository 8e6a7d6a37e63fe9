package execute

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Secret is a variable whose value must not reach the agent: Run replaces
// the value with [secret NAME] in the output it returns.
type Secret struct {
	Name, Value string
}

// explain appends omnidev's own lines to a run's stderr, each starting with
// "omnidev: ", for what the runtime leaves unsaid: why the run was
// stopped, a module name that looks mistyped, a relative import that was
// looked for beside main.ts.
func explain(res *Result, req Request, root string) {
	var notes []string
	switch {
	case res.TimedOut:
		bound := req.TimeoutSource
		if bound == "" {
			bound = "the run's timeout"
		}
		notes = append(notes, fmt.Sprintf("the run was stopped after %s, the limit set by %s", seconds(req.Timeout), bound))
	case res.Cancelled:
		why := req.Cancelled
		if why == "" {
			why = "the call was cancelled (by the client, or because the server is stopping)"
		}
		notes = append(notes, fmt.Sprintf("the run was stopped after %s because %s",
			seconds(time.Duration(res.DurationMS)*time.Millisecond), why))
	}
	notes = append(notes, missingModuleNotes(res.Stderr, req.Folder.Modules(), req.Folder.MainPath(), root)...)
	notes = append(notes, unavailableNotes(res.Stderr, req.Folder.Unavailable())...)
	if len(notes) == 0 {
		return
	}
	var b strings.Builder
	b.WriteString(res.Stderr)
	if res.Stderr != "" && !strings.HasSuffix(res.Stderr, "\n") {
		b.WriteByte('\n')
	}
	for _, n := range notes {
		b.WriteString("omnidev: " + n + "\n")
	}
	res.Stderr = b.String()
}

// seconds renders d as "30 s" or "1.5 s".
func seconds(d time.Duration) string {
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.1f", d.Seconds()), "0"), ".") + " s"
}

// notFound matches the runtimes' errors for an import that does not
// resolve: Bun's "Cannot find package 'x' from '...'" and "Cannot find
// module 'x' from '...'", Node's "Cannot find package 'x' imported from
// ...", Deno's `Import "x" not a dependency` and `Relative import path "x"
// not prefixed with / or ./ or ../`.
var notFound = regexp.MustCompile(`(?:Cannot find (?:package|module)|Relative import path|Import) ['"]([^'"\s]+)['"](?: (?:imported )?from ['"]?([^'"\n]+))?`)

// missingModuleNotes explains the imports stderr says were not found: a
// bare name close to an importable module gets "did you mean"; a relative
// path imported by main.ts that exists from the repository root gets the
// specifier that works.
func missingModuleNotes(stderr string, modules []string, mainPath, root string) []string {
	var notes []string
	seen := make(map[string]bool)
	for _, m := range notFound.FindAllStringSubmatch(stderr, -1) {
		spec, from := m[1], strings.TrimSpace(m[2])
		if seen[spec] {
			continue
		}
		seen[spec] = true
		switch {
		case strings.HasPrefix(spec, "./") || strings.HasPrefix(spec, "../"):
			if from == "" || from == mainPath || strings.HasSuffix(from, "/.omni/sandbox/main.ts") {
				if n := relativeNote(spec, root); n != "" {
					notes = append(notes, n)
				}
			}
		case !strings.HasPrefix(spec, "/") && !strings.Contains(spec, ":"):
			if n := didYouMean(packageName(spec), modules); n != "" {
				notes = append(notes, n)
			}
		}
	}
	return notes
}

// relativeNote suggests the spelling of spec that resolves from root: Bun
// resolves main.ts's relative imports from the repository root only when
// they name the file's extension.
func relativeNote(spec, root string) string {
	base := filepath.Join(root, filepath.FromSlash(spec))
	for _, ext := range []string{".ts", ".tsx", ".js", ".mjs", ".mts", "/index.ts", "/index.js"} {
		if fi, err := os.Stat(base + ext); err == nil && fi.Mode().IsRegular() {
			return fmt.Sprintf("relative imports resolve from the repository root when they name the file: import %q", spec+ext)
		}
	}
	return ""
}

// packageName returns the package part of a bare specifier: "a/b" -> "a",
// "@s/a/b" -> "@s/a".
func packageName(spec string) string {
	parts := strings.SplitN(spec, "/", 3)
	if strings.HasPrefix(spec, "@") && len(parts) > 1 {
		return parts[0] + "/" + parts[1]
	}
	return parts[0]
}

// didYouMean names the modules closest to name, when some are close
// enough to be a typo of it.
func didYouMean(name string, modules []string) string {
	if slices.Contains(modules, name) || len(modules) == 0 {
		return ""
	}
	best, bestDist := []string(nil), 0
	for _, m := range modules {
		d := editDistance(strings.ToLower(name), strings.ToLower(m))
		// A third of the longer name, at least one edit: "http-clent" and
		// "http-client" are close; "fs" and "db" are not.
		if d > max(1, max(len(name), len(m))/3) {
			continue
		}
		switch {
		case best == nil || d < bestDist:
			best, bestDist = []string{m}, d
		case d == bestDist:
			best = append(best, m)
		}
	}
	if best == nil {
		return ""
	}
	quoted := make([]string, len(best))
	for i, m := range best {
		quoted[i] = "`" + m + "`"
	}
	return fmt.Sprintf("there is no module `%s`; did you mean %s?", name, strings.Join(quoted, " or "))
}

// editDistance is the Levenshtein distance between a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// unavailableNotes repeats why a module cannot run when stderr names it
// without saying why: Node and Deno check a named import against the
// module's exports before running it, so the stub's own error never shows.
func unavailableNotes(stderr string, unavailable map[string]string) []string {
	var notes []string
	for _, module := range slices.Sorted(maps.Keys(unavailable)) {
		msg := unavailable[module]
		if strings.Contains(stderr, msg) {
			continue
		}
		if strings.Contains(stderr, "'"+module+"'") || strings.Contains(stderr, `"`+module+`"`) {
			notes = append(notes, msg)
		}
	}
	return notes
}

// redact replaces every value of secrets in the run's output with
// [secret NAME]. Longer values go first, so that a secret containing
// another is replaced whole.
func redact(res *Result, secrets []Secret) {
	secrets = slices.DeleteFunc(slices.Clone(secrets), func(s Secret) bool { return s.Value == "" })
	if len(secrets) == 0 {
		return
	}
	slices.SortFunc(secrets, func(a, b Secret) int { return len(b.Value) - len(a.Value) })
	pairs := make([]string, 0, 2*len(secrets))
	for _, s := range secrets {
		pairs = append(pairs, s.Value, "[secret "+s.Name+"]")
	}
	r := strings.NewReplacer(pairs...)
	res.Stdout = r.Replace(res.Stdout)
	res.Stderr = r.Replace(res.Stderr)
}
