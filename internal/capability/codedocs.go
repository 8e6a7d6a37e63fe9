package capability

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"
)

// exportDefault finds the start of a default export that is an object
// literal, possibly wrapped in a call: `export default {` or
// `export default defineCapability({`.
var exportDefault = regexp.MustCompile(`export\s+default\s+(?:[\w.]+\s*\(\s*)?\{`)

// codeDocKey finds a docs or rules property: `docs,`, `rules:`, `docs }`.
var codeDocKey = regexp.MustCompile(`(?:^|[{,\s])(docs|rules)\s*(?:[,:}]|$)`)

// docsInCode reports an entry that declares docs or rules in code, as
// OmniDev allows (`export default { docs, rules }`). omnidev indexes
// Markdown files only: evaluating the module would run the capability's
// code in the server, so what it declares there is reported, never
// silently dropped.
func (l *capLoader) docsInCode(entry string) {
	switch path.Ext(entry) {
	case ".ts", ".js", ".mts", ".mjs":
	default:
		return
	}
	data, err := l.read(entry)
	if err != nil {
		return // the runtime reports an entry it cannot read
	}
	var found []string
	for _, key := range codeDocKeys(string(data)) {
		if !slices.Contains(found, key) {
			found = append(found, key)
		}
	}
	if len(found) == 0 {
		return
	}
	what := strings.Join(found, " and ")
	l.problem(entry, fmt.Sprintf("declares %s in code (export default { %s }), which omnidev does not evaluate: they are not indexed; move them to %s",
		what, strings.Join(found, ", "), markdownHome(found)))
}

// codeDocKeys returns the docs and rules keys at the top level of the
// default-exported object literal of src.
func codeDocKeys(src string) []string {
	loc := exportDefault.FindStringIndex(src)
	if loc == nil {
		return nil
	}
	// Keep the object's own top level: strings, nested objects and arrays
	// are left out.
	body := src[loc[1]:]
	var top strings.Builder
	depth := 0
	quote := rune(0)
	for _, r := range body {
		if quote != 0 {
			if r == quote {
				quote = 0
			}
			continue
		}
		switch r {
		case '"', '\'', '`':
			quote = r
			continue
		case '{', '[', '(':
			depth++
		case '}', ']', ')':
			depth--
		}
		if depth < 0 {
			break
		}
		if depth == 0 || r == '{' && depth == 1 {
			top.WriteRune(r)
		}
	}
	var keys []string
	for _, m := range codeDocKey.FindAllStringSubmatch(top.String(), -1) {
		keys = append(keys, m[1])
	}
	return keys
}

func markdownHome(keys []string) string {
	var homes []string
	for _, k := range keys {
		homes = append(homes, k+"/*.md")
	}
	return strings.Join(homes, " and ")
}
