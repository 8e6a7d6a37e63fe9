package query

import (
	"strings"

	"github.com/omnidev/omnidev/internal/capability"
)

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
