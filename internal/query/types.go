package query

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/omnidev/omnidev/internal/capability"
	"github.com/omnidev/omnidev/internal/tsgen"
)

// TypesBudget bounds the type definitions an empty query returns, in bytes:
// about 6,000 tokens at 4 bytes a token, enough for the hand-written
// types.d.ts of a repository's few capabilities, so that an agent there
// still learns everything in one call and acts in the next. A capability
// whose definitions do not fit is listed with a note on where they are.
const TypesBudget = 24_000

// SmallTypes is the size, in bytes, up to which a capability's type
// definitions come whole in an include_types answer. Past it, a wrapped
// server's answer declares only the tools found, and a hand-written
// types.d.ts is one resources/read away.
const SmallTypes = 8_000

// TypeDefinitions renders one TypeScript ambient module per capability —
// declare module '<module>' { ... } with its types.d.ts indented by two
// spaces — separated by blank lines, so that an agent can see at once what
// it may import and call.
func TypeDefinitions(caps []*capability.Capability) string {
	quote := strings.NewReplacer(`\`, `\\`, `'`, `\'`)
	var b strings.Builder
	for _, c := range caps {
		if c == nil {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString("declare module '")
		quote.WriteString(&b, moduleOf(c))
		b.WriteString("' {\n")
		types := strings.Trim(strings.ReplaceAll(c.Types, "\r\n", "\n"), "\n")
		if strings.TrimSpace(types) == "" && c.MCP != nil && c.ToolsError != "" {
			b.WriteString("  // No type definitions yet: " + oneLine(c.ToolsError) + "\n")
		} else if strings.TrimSpace(types) == "" {
			b.WriteString("  // No type definitions available\n")
		} else {
			for line := range strings.SplitSeq(types, "\n") {
				// Blank lines stay blank: no trailing indentation.
				if line = strings.TrimRight(line, " \t\r"); line != "" {
					b.WriteString("  ")
					b.WriteString(line)
				}
				b.WriteByte('\n')
			}
		}
		b.WriteString("}")
	}
	return b.String()
}

// overview returns what an empty query answers beside the summary: the type
// definitions of the capabilities that fit TypesBudget, hand-written ones
// first, then the smallest, and a note for each capability left out.
func (st *state) overview() (defs string, notes map[string]string) {
	order := slices.Clone(st.caps)
	slices.SortStableFunc(order, func(a, b *capability.Capability) int {
		return cmp.Or(cmpBool(a.MCP != nil, b.MCP != nil), cmp.Compare(len(a.Types), len(b.Types)))
	})
	whole := map[*capability.Capability]bool{}
	left := TypesBudget
	for _, c := range order {
		if n := len(c.Types); n <= left {
			whole[c] = true
			left -= n
			continue
		}
		if notes == nil {
			notes = map[string]string{}
		}
		notes[c.ID] = typesNote(c, 0)
	}
	var in []*capability.Capability
	for _, c := range st.caps {
		if whole[c] {
			in = append(in, c)
		}
	}
	return TypeDefinitions(in), notes
}

// hitTypes returns the type definitions of an include_types answer: a small
// capability's whole, the declarations of the tools found of a wrapped
// server's, and a note for each capability whose definitions the answer
// does not hold whole.
func (st *state) hitTypes(caps []*capability.Capability, tools map[string][]string) (string, map[string]string) {
	var blocks []string
	notes := map[string]string{}
	for _, c := range caps {
		switch {
		case len(c.Types) <= SmallTypes:
			blocks = append(blocks, TypeDefinitions([]*capability.Capability{c}))
		case len(c.Tools) > 0 && len(tools[c.ID]) > 0:
			if d := st.generated(c).Select(tools[c.ID]); d != "" {
				blocks = append(blocks, d)
			}
			notes[c.ID] = typesNote(c, len(tools[c.ID]))
		default:
			notes[c.ID] = typesNote(c, 0)
		}
	}
	return strings.Join(blocks, "\n\n"), notes
}

// generated returns the parts of the declaration of c's module, made once
// per state and only when an answer needs them.
func (st *state) generated(c *capability.Capability) *tsgen.Types {
	g := st.tsTypes[c.ID]
	g.once.Do(func() { g.types = tsgen.Generate(moduleOf(c), c.Tools) })
	return g.types
}

// lazyTypes is the declaration of one wrapped server's module, in parts.
type lazyTypes struct {
	once  sync.Once
	types *tsgen.Types
}

// typesNote is the line of a summary that says where c's type definitions
// are when the answer holds none of them (declared == 0) or the
// declarations of the declared tools found.
func typesNote(c *capability.Capability, declared int) string {
	whole := fmt.Sprintf("resources/read %s, or `omnidev query --types %s`", capability.URI(c.ID, capability.TypesFile), c.ID)
	switch {
	case declared > 0:
		return fmt.Sprintf("declared here: the %s found; all of them: %s", plural(declared, "tool"), whole)
	case len(c.Tools) > 0:
		return fmt.Sprintf("not in this answer (%s): omni_query with words, kinds [\"tool\"] and include_types declares the tools it finds; all of them: %s", size(len(c.Types)), whole)
	}
	return fmt.Sprintf("not in this answer (%s): %s", size(len(c.Types)), whole)
}

// exportedFunction matches the name of a function a types.d.ts exports.
var exportedFunction = regexp.MustCompile(`(?m)^\s*export\s+(?:declare\s+)?(?:async\s+)?function\s*\*?\s*([A-Za-z_$][\w$]*)`)

// functions counts what c's module exports as functions: a wrapped server's
// tools, or the distinct functions its types.d.ts declares (overloads once).
func functions(c *capability.Capability) int {
	if c.MCP != nil {
		return len(c.Tools)
	}
	names := map[string]bool{}
	for _, m := range exportedFunction.FindAllStringSubmatch(c.Types, -1) {
		names[m[1]] = true
	}
	return len(names)
}

// size says how big n bytes of declarations are, and in tokens.
func size(n int) string {
	return fmt.Sprintf("%d KB, ~%d tokens", (n+1023)/1024, n/4)
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}
