package tsgen

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
)

// maxDepth bounds nesting (and $ref chains): deeper parts become unknown.
const maxDepth = 12

// schema is the part of JSON Schema that becomes a TypeScript type.
type schema struct {
	Type                 any                `json:"type"`
	Description          string             `json:"description"`
	Properties           map[string]*schema `json:"properties"`
	Required             []string           `json:"required"`
	AdditionalProperties json.RawMessage    `json:"additionalProperties"`
	Items                json.RawMessage    `json:"items"`
	Enum                 []json.RawMessage  `json:"enum"`
	Const                json.RawMessage    `json:"const"`
	OneOf                []*schema          `json:"oneOf"`
	AnyOf                []*schema          `json:"anyOf"`
	AllOf                []*schema          `json:"allOf"`
	Ref                  string             `json:"$ref"`
	Defs                 map[string]*schema `json:"$defs"`
	Definitions          map[string]*schema `json:"definitions"`
}

func parseSchema(data []byte) *schema {
	var s schema
	if len(data) == 0 || json.Unmarshal(data, &s) != nil {
		return nil
	}
	return &s
}

// typer renders schemas of one tool, resolving local $refs against root.
type typer struct {
	root *schema
}

func (t typer) render(s *schema, indent string, depth int) string {
	if s == nil || depth > maxDepth {
		return "unknown"
	}
	if s.Ref != "" {
		if r := t.resolve(s.Ref); r != nil {
			return t.render(r, indent, depth+1)
		}
		return "unknown"
	}
	if len(s.Const) > 0 {
		return literal(s.Const)
	}
	if len(s.Enum) > 0 {
		var parts []string
		for _, v := range s.Enum {
			parts = append(parts, literal(v))
		}
		return union(parts)
	}
	if alts := append(slices.Clone(s.OneOf), s.AnyOf...); len(alts) > 0 {
		var parts []string
		for _, a := range alts {
			parts = append(parts, t.render(a, indent, depth+1))
		}
		return union(parts)
	}
	if len(s.AllOf) > 0 {
		var parts []string
		for _, a := range s.AllOf {
			parts = append(parts, paren(t.render(a, indent, depth+1)))
		}
		return strings.Join(parts, " & ")
	}
	var types []string
	switch v := s.Type.(type) {
	case string:
		types = []string{v}
	case []any:
		for _, x := range v {
			if str, ok := x.(string); ok {
				types = append(types, str)
			}
		}
	}
	if len(types) == 0 {
		if s.Properties != nil {
			types = []string{"object"}
		} else {
			return "unknown"
		}
	}
	var parts []string
	for _, ty := range types {
		parts = append(parts, t.renderType(s, ty, indent, depth))
	}
	return union(parts)
}

func (t typer) renderType(s *schema, ty, indent string, depth int) string {
	switch ty {
	case "string":
		return "string"
	case "number", "integer":
		return "number"
	case "boolean":
		return "boolean"
	case "null":
		return "null"
	case "array":
		if items := parseSchema(s.Items); items != nil {
			return paren(t.render(items, indent, depth+1)) + "[]"
		}
		return "unknown[]"
	case "object":
		return t.object(s, indent, depth)
	}
	return "unknown"
}

// object renders an object type, one property a line, with JSDoc.
func (t typer) object(s *schema, indent string, depth int) string {
	extra := ""
	switch ap := strings.TrimSpace(string(s.AdditionalProperties)); {
	case ap == "false":
	case ap == "" || ap == "true":
		if len(s.Properties) == 0 {
			extra = "unknown"
		}
	default:
		extra = t.render(parseSchema(s.AdditionalProperties), indent+"  ", depth+1)
		if len(s.Properties) > 0 {
			extra = "unknown" // an index signature must cover the named properties too
		}
	}
	if len(s.Properties) == 0 && extra == "" {
		return "{}"
	}
	inner := indent + "  "
	var b strings.Builder
	b.WriteString("{\n")
	for _, name := range sortedKeys(s.Properties) {
		p := s.Properties[name]
		if p != nil && p.Description != "" {
			b.WriteString(jsdoc(p.Description, inner))
		}
		b.WriteString(inner + propertyName(name))
		if !slices.Contains(s.Required, name) {
			b.WriteString("?")
		}
		b.WriteString(": " + t.render(p, inner, depth+1) + ";\n")
	}
	if extra != "" {
		b.WriteString(inner + "[key: string]: " + extra + ";\n")
	}
	b.WriteString(indent + "}")
	return b.String()
}

func (t typer) resolve(ref string) *schema {
	for _, prefix := range []string{"#/$defs/", "#/definitions/"} {
		if name, ok := strings.CutPrefix(ref, prefix); ok && t.root != nil {
			if d := t.root.Defs[name]; d != nil {
				return d
			}
			return t.root.Definitions[name]
		}
	}
	if ref == "#" {
		return t.root
	}
	return nil
}

// literal renders a JSON value as a TypeScript literal type.
func literal(v json.RawMessage) string {
	var x any
	if json.Unmarshal(v, &x) != nil {
		return "unknown"
	}
	switch x.(type) {
	case string, float64, bool, nil:
		data, _ := json.Marshal(x)
		return string(data)
	}
	return "unknown"
}

func union(parts []string) string {
	var out []string
	for _, p := range parts {
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	if slices.Contains(out, "unknown") {
		return "unknown"
	}
	return strings.Join(out, " | ")
}

// paren wraps a union or intersection so that [] or & binds to all of it.
func paren(s string) string {
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '{', '(', '[':
			depth++
		case '}', ')', ']':
			depth--
		case '"':
			for i++; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' {
					i++
				}
			}
		case ' ':
			if depth == 0 && i+2 < len(s) && (s[i+1] == '|' || s[i+1] == '&') && s[i+2] == ' ' {
				return "(" + s + ")"
			}
		}
	}
	return s
}

var identRe = regexp.MustCompile(`^[A-Za-z_$][A-Za-z0-9_$]*$`)

func propertyName(name string) string {
	if identRe.MatchString(name) {
		return name
	}
	data, _ := json.Marshal(name)
	return string(data)
}

// jsdoc renders text as a JSDoc comment at indent; "*/" in it cannot end
// the comment.
func jsdoc(text, indent string) string {
	text = strings.TrimSpace(strings.ReplaceAll(text, "*/", "*\u200b/"))
	lines := strings.Split(text, "\n")
	if len(lines) == 1 {
		return indent + "/** " + lines[0] + " */\n"
	}
	var b strings.Builder
	b.WriteString(indent + "/**\n")
	for _, l := range lines {
		b.WriteString(strings.TrimRight(indent+" * "+strings.TrimRight(l, "\r"), " ") + "\n")
	}
	b.WriteString(indent + " */\n")
	return b.String()
}
