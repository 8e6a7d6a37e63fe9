package tsgen

import (
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/omnidev/omnidev/internal/capability"
)

// reserved are the words a function cannot be named, plus the module's own
// exports (call, tools) and default.
var reserved = map[string]bool{
	"break": true, "case": true, "catch": true, "class": true, "const": true, "continue": true,
	"debugger": true, "default": true, "delete": true, "do": true, "else": true, "enum": true,
	"export": true, "extends": true, "false": true, "finally": true, "for": true, "function": true,
	"if": true, "import": true, "in": true, "instanceof": true, "new": true, "null": true,
	"return": true, "super": true, "switch": true, "this": true, "throw": true, "true": true,
	"try": true, "typeof": true, "var": true, "void": true, "while": true, "with": true,
	"implements": true, "interface": true, "let": true, "package": true, "private": true,
	"protected": true, "public": true, "static": true, "yield": true, "await": true,
	"arguments": true, "eval": true, "undefined": true, "NaN": true, "Infinity": true,
	"call": true, "tools": true,
}

// Identifier turns a tool name into lowerCamelCase: the name is cut into
// words at every character that is not an ASCII letter or digit; a word in
// capitals only is lower-cased (HTTP_GET -> httpGet); the first word starts
// lower-case, the others upper-case (get-sum, get_sum, getSum -> getSum).
// A name with no letter or digit becomes "tool"; one that starts with a
// digit gets a leading "_"; a reserved word or one of the module's own
// exports (call, tools) gets a trailing "_".
func Identifier(name string) string {
	words := strings.FieldsFunc(name, func(r rune) bool {
		return !(r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r)))
	})
	var b strings.Builder
	for i, w := range words {
		if strings.ToUpper(w) == w {
			w = strings.ToLower(w)
		}
		if i == 0 {
			b.WriteString(strings.ToLower(w[:1]) + w[1:])
		} else {
			b.WriteString(strings.ToUpper(w[:1]) + w[1:])
		}
	}
	id := b.String()
	switch {
	case id == "":
		id = "tool"
	case id[0] >= '0' && id[0] <= '9':
		id = "_" + id
	}
	if reserved[id] {
		id += "_"
	}
	return id
}

// Identifiers returns the function name of each tool, in the order of
// tools. When several tools get the same Identifier, the one whose name is
// that identifier keeps it, else the first by name; the others, by name,
// get "_2", "_3"... A tool added later thus never renames one whose name
// already was its identifier.
func Identifiers(tools []capability.Tool) []string {
	byID := make(map[string][]int)
	for i, t := range tools {
		id := Identifier(t.Name)
		byID[id] = append(byID[id], i)
	}
	out := make([]string, len(tools))
	taken := make(map[string]bool, len(tools))
	for _, id := range sortedKeys(byID) {
		taken[id] = true
	}
	for _, id := range sortedKeys(byID) {
		idx := byID[id]
		slices.SortStableFunc(idx, func(a, b int) int {
			ea, eb := tools[a].Name == id, tools[b].Name == id
			switch {
			case ea && !eb:
				return -1
			case eb && !ea:
				return 1
			}
			return strings.Compare(tools[a].Name, tools[b].Name)
		})
		out[idx[0]] = id
		n := 2
		for _, i := range idx[1:] {
			for taken[id+"_"+strconv.Itoa(n)] {
				n++
			}
			out[i] = id + "_" + strconv.Itoa(n)
			taken[out[i]] = true
			n++
		}
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
