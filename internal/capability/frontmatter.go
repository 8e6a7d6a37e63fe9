package capability

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
)

// utf8BOM is the byte order mark some Windows editors put at the start of a file.
const utf8BOM = "\ufeff"

// maxFrontmatterBytes bounds the YAML between the --- lines. The largest
// frontmatter the Agent Skills format allows (name, a 1024-character
// description, compatibility, a few keys) is about 2 KiB; the bound leaves
// room for tools that add keys. It is not larger because the YAML library's
// parse time grows with the square of the nesting depth, and a SKILL.md from
// a cloned repository is hostile input: at this size the worst case stays
// well under a second (see BenchmarkParseFrontmatter). It also bounds what
// aliases can expand to (see reader.visit).
const maxFrontmatterBytes = 16 << 10

// ParseFrontmatter splits a Markdown file into the fields of its frontmatter
// and the body that follows.
//
// Frontmatter is a block between two "---" lines at the very start of the
// file (after an optional UTF-8 byte order mark; LF or CRLF line endings; a
// delimiter line may end in spaces or tabs). The block is YAML: a mapping
// whose keys name the fields. A field holding text, a number or a boolean is
// returned as its text, as written ("1.10" stays "1.10", and a block scalar
// keeps the line breaks YAML gives it); a field holding null, a list or a
// mapping is returned as "". Anchors, aliases and merge keys (<<) are
// resolved. A repeated key is an error, as YAML has it.
//
// A file that does not start with "---" has no frontmatter: fields is nil and
// body is the whole file without its byte order mark. An opening "---"
// without a closing one, a block larger than 16 KiB, or YAML that does not
// parse to a mapping is an error that names the line of the file.
func ParseFrontmatter(data []byte) (fields map[string]string, body []byte, err error) {
	fm, start, err := parseFrontmatter(string(data))
	if err != nil {
		return nil, nil, err
	}
	return fm.fields, data[start:], nil
}

// frontmatter is a parsed frontmatter block.
type frontmatter struct {
	// fields holds every field as ParseFrontmatter returns it; nil when the
	// file has no frontmatter.
	fields map[string]string
	// entries holds the fields' values, for the keys read with a type.
	entries map[string]entry
	r       *reader
}

// entry is one key of a YAML mapping and its value, aliases resolved.
type entry struct {
	key string
	v   value
}

// value is a YAML value with its anchors, aliases and tags taken off.
type value struct {
	node ast.Node
	// str is set when the value was tagged !!str: a scalar is then text,
	// whatever it looks like.
	str  bool
	line int
}

// splitFrontmatter finds the frontmatter block at the start of s. block is
// the text from the opening "---" line to the closing one, excluded, so that
// YAML's line numbers are the file's; start is the offset of the body. ok is
// false when s has no frontmatter.
func splitFrontmatter(s string) (block string, start int, ok bool, err error) {
	if strings.HasPrefix(s, utf8BOM) {
		start = len(utf8BOM)
	}
	first, next := lineAt(s, start)
	if !isDelimiter(first) {
		return "", start, false, nil
	}
	for offset := next; offset < len(s); {
		line, next := lineAt(s, offset)
		if isDelimiter(line) {
			return s[start:offset], next, true, nil
		}
		offset = next
	}
	return "", 0, false, errors.New("frontmatter is not closed: add a --- line after its last field")
}

// lineAt returns the line starting at offset, without its line ending, and
// the offset of the next line.
func lineAt(s string, offset int) (line string, next int) {
	end := strings.IndexByte(s[offset:], '\n')
	if end < 0 {
		return strings.TrimSuffix(s[offset:], "\r"), len(s)
	}
	return strings.TrimSuffix(s[offset:offset+end], "\r"), offset + end + 1
}

func isDelimiter(line string) bool {
	return strings.TrimRight(line, " \t") == "---"
}

// parseFrontmatter is ParseFrontmatter on a string; it returns the offset at
// which the body starts.
func parseFrontmatter(s string) (frontmatter, int, error) {
	block, start, ok, err := splitFrontmatter(s)
	if err != nil || !ok {
		return frontmatter{}, start, err
	}
	if len(block) > maxFrontmatterBytes {
		return frontmatter{}, 0, fmt.Errorf("frontmatter is larger than %d KiB; keep it to name, description and a few short keys, and move long text into the body", maxFrontmatterBytes>>10)
	}
	file, err := parser.ParseBytes([]byte(block), 0)
	if err != nil {
		return frontmatter{}, 0, syntaxError(err)
	}
	fm, err := readFrontmatter(file)
	return fm, start, err
}

// syntaxError turns the YAML library's error into one that names the line
// and, for the mistakes people make most, says what to do.
func syntaxError(err error) error {
	var yerr yaml.Error
	if !errors.As(err, &yerr) || yerr.GetToken() == nil {
		return fmt.Errorf("frontmatter: %w", err)
	}
	msg := yerr.GetMessage()
	for _, h := range syntaxHints {
		if strings.Contains(msg, h.contains) {
			msg += "; " + h.hint
			break
		}
	}
	return fmt.Errorf("frontmatter line %d: %s", yerr.GetToken().Position.Line, msg)
}

// syntaxHints pairs parts of the YAML library's messages with advice.
// TestFrontmatterSyntaxErrors notices when the library's wording moves.
var syntaxHints = []struct{ contains, hint string }{
	{"mapping value is not allowed", `put a value that holds ": " in quotes`},
	{"']' must be specified", "close the [ list above with ]"},
	{"']' not found", "close the [ list with ]"},
	{"'}' must be specified", "close the { mapping above with }"},
	{"'}' not found", "close the { mapping with }"},
	{"non-map value", `write "key: value", or indent the line under the key it continues`},
	{"map key-value is pre-defined", "put the whole value in quotes, or indent the line like the keys above it"},
	{"could not find end character", "close the quote"},
	{"'\t'", "indent with spaces, not tabs"},
}

// readFrontmatter reads the fields of a parsed frontmatter block.
func readFrontmatter(file *ast.File) (frontmatter, error) {
	fm := frontmatter{fields: make(map[string]string), entries: make(map[string]entry)}
	if len(file.Docs) == 0 {
		return fm, nil
	}
	if len(file.Docs) > 1 {
		line := 0
		if end := file.Docs[0].End; end != nil {
			line = end.Position.Line
		} else if start := file.Docs[1].Start; start != nil {
			line = start.Position.Line
		}
		return frontmatter{}, fmt.Errorf("frontmatter line %d: the YAML document ends here and another begins; frontmatter is one block of \"key: value\" lines", line)
	}
	body := file.Docs[0].Body
	if body == nil {
		return fm, nil
	}
	fm.r = newReader(body)
	top, err := fm.r.resolve(body, 1)
	if err != nil {
		return frontmatter{}, err
	}
	entries, err := fm.r.mapping(top)
	if err != nil {
		return frontmatter{}, err
	}
	for _, e := range entries {
		fm.fields[e.key], _, _ = scalarText(e.v)
		fm.entries[e.key] = e
	}
	return fm, nil
}

// text returns the field key, which must be text (or absent or null: "").
func (fm frontmatter) text(key string) (string, error) {
	e, ok := fm.entries[key]
	if !ok {
		return "", nil
	}
	s, problem := textValue(e.v)
	if problem != "" {
		return "", fmt.Errorf("frontmatter line %d: %s %s; %s", e.v.line, key, problem, textAdvice(key, e.v, s))
	}
	return s, nil
}

// scalarText returns the text of a scalar as written, and its kind: "text",
// "null", "number" or "boolean". ok is false for lists and mappings.
func scalarText(v value) (text, kind string, ok bool) {
	switch n := v.node.(type) {
	case *ast.StringNode:
		return n.Value, "text", true
	case *ast.LiteralNode:
		if n.Value == nil {
			return "", "text", true
		}
		return n.Value.Value, "text", true
	case *ast.NullNode:
		if v.str {
			return "", "text", true
		}
		return "", "null", true
	case *ast.BoolNode:
		kind = "boolean"
	case *ast.IntegerNode, *ast.FloatNode, *ast.InfinityNode, *ast.NanNode:
		kind = "number"
	case ast.ScalarNode:
		kind = "text"
	default:
		return "", "", false
	}
	if v.str {
		kind = "text"
	}
	if tk := v.node.GetToken(); tk != nil {
		text = tk.Value
	}
	return text, kind, true
}

// textValue returns the text of a value that must be text; problem says
// why it is not ("is a list"), else it is "".
func textValue(v value) (s, problem string) {
	s, kind, ok := scalarText(v)
	switch {
	case !ok && isSequence(v.node):
		return "", "must be text, not a list"
	case !ok:
		return "", "must be text, not a mapping"
	case kind == "number" || kind == "boolean":
		return s, fmt.Sprintf("must be text, but YAML reads %s as a %s", s, kind)
	}
	return s, ""
}

// textAdvice says how to write key's value as text.
func textAdvice(key string, v value, s string) string {
	if _, _, ok := scalarText(v); ok {
		return fmt.Sprintf("put it in quotes: %s: %q", key, s)
	}
	return fmt.Sprintf(`write it on the line of the key, or as a block: "%s: >-" followed by indented lines`, key)
}

func isSequence(n ast.Node) bool {
	_, ok := n.(*ast.SequenceNode)
	return ok
}

// reader resolves the anchors and aliases of one frontmatter block, and
// bounds the work they can cause.
type reader struct {
	// anchors holds each anchor's definitions in document order; an alias
	// refers to the last one before it.
	anchors map[string][]*ast.AnchorNode
	// visits counts values read. Without aliases, that is at most one per
	// byte of the block; aliases can multiply it (a "billion laughs"
	// document), and past maxFrontmatterBytes reading stops.
	visits int
}

func newReader(body ast.Node) *reader {
	r := &reader{anchors: make(map[string][]*ast.AnchorNode)}
	ast.Walk(anchorCollector(r.anchors), body)
	return r
}

// anchorCollector records the anchors of a document as ast.Walk visits them.
type anchorCollector map[string][]*ast.AnchorNode

func (c anchorCollector) Visit(n ast.Node) ast.Visitor {
	if a, ok := n.(*ast.AnchorNode); ok && a.Name != nil && a.Name.GetToken() != nil {
		name := a.Name.GetToken().Value
		c[name] = append(c[name], a)
	}
	return c
}

// resolve takes off n's anchor, alias and tag; line is where n is written
// when the library does not say (the line of its key).
func (r *reader) resolve(n ast.Node, line int) (value, error) {
	v := value{line: nodeLine(n, line)}
	var seen []*ast.AnchorNode
	for {
		r.visits++
		if r.visits > maxFrontmatterBytes {
			return value{}, fmt.Errorf("frontmatter line %d: aliases (*name) expand to more than %d values; write the values out", v.line, maxFrontmatterBytes)
		}
		switch t := n.(type) {
		case *ast.AnchorNode:
			n = t.Value
		case *ast.TagNode:
			if t.Start != nil && t.Start.Value == "!!str" {
				v.str = true
			}
			n = t.Value
		case *ast.AliasNode:
			a := r.anchor(t)
			name := ""
			if t.Value != nil && t.Value.GetToken() != nil {
				name = t.Value.GetToken().Value
			}
			if a == nil {
				return value{}, fmt.Errorf("frontmatter line %d: *%s refers to no anchor; define &%s before it", v.line, name, name)
			}
			if slices.Contains(seen, a) {
				return value{}, fmt.Errorf("frontmatter line %d: *%s refers to itself", v.line, name)
			}
			seen = append(seen, a)
			n = a.Value
		case nil:
			v.node = &ast.NullNode{}
			return v, nil
		default:
			v.node = n
			return v, nil
		}
	}
}

// anchor returns the anchor an alias refers to: the last one of its name
// defined before it.
func (r *reader) anchor(alias *ast.AliasNode) *ast.AnchorNode {
	if alias.Value == nil || alias.Value.GetToken() == nil || alias.GetToken() == nil {
		return nil
	}
	at := alias.GetToken().Position
	var found *ast.AnchorNode
	for _, a := range r.anchors[alias.Value.GetToken().Value] {
		p := a.GetToken().Position
		if p.Line < at.Line || p.Line == at.Line && p.Column < at.Column {
			found = a
		}
	}
	return found
}

// mapping returns the entries of a mapping in document order, merge keys
// (<<) applied: a key written in the mapping wins over a merged one, and an
// earlier merged mapping over a later one.
func (r *reader) mapping(v value) ([]entry, error) {
	m, ok := v.node.(ast.MapNode)
	if !ok {
		return nil, fmt.Errorf(`frontmatter line %d: expected "key: value" lines, found %s`, v.line, describe(v))
	}
	var entries, merged []entry
	written := make(map[string]bool)
	for it := m.MapRange(); it.Next(); {
		kv := it.KeyValue()
		keyLine := nodeLine(kv.Key, v.line)
		if kv.Key.IsMergeKey() {
			more, err := r.merge(kv.Value, keyLine)
			if err != nil {
				return nil, err
			}
			merged = append(merged, more...)
			continue
		}
		k, err := r.resolve(kv.Key, keyLine)
		if err != nil {
			return nil, err
		}
		key, _, ok := scalarText(k)
		if !ok {
			return nil, fmt.Errorf("frontmatter line %d: a key must be a word such as name, not %s", keyLine, describe(k))
		}
		val, err := r.resolve(kv.Value, keyLine)
		if err != nil {
			return nil, err
		}
		// A block list or mapping starts on the lines below its key; the
		// key's line is the one to name in an error about the value.
		val.line = keyLine
		entries = append(entries, entry{key: key, v: val})
		written[key] = true
	}
	for _, e := range merged {
		if !written[e.key] {
			entries = append(entries, e)
			written[e.key] = true
		}
	}
	return entries, nil
}

// merge returns the entries a merge key brings: those of a mapping, or of
// each mapping of a list.
func (r *reader) merge(n ast.Node, line int) ([]entry, error) {
	v, err := r.resolve(n, line)
	if err != nil {
		return nil, err
	}
	seq, ok := v.node.(*ast.SequenceNode)
	if !ok {
		return r.mapping(v)
	}
	var entries []entry
	seen := make(map[string]bool)
	for _, item := range seq.Values {
		iv, err := r.resolve(item, v.line)
		if err != nil {
			return nil, err
		}
		more, err := r.mapping(iv)
		if err != nil {
			return nil, err
		}
		for _, e := range more {
			if !seen[e.key] {
				entries = append(entries, e)
				seen[e.key] = true
			}
		}
	}
	return entries, nil
}

// describe names what a value is, for errors.
func describe(v value) string {
	if isSequence(v.node) {
		return "a list"
	}
	if _, ok := v.node.(ast.MapNode); ok {
		return "a mapping"
	}
	s, kind, _ := scalarText(v)
	if kind == "null" {
		return "nothing"
	}
	return fmt.Sprintf("%q", s)
}

// nodeLine returns the line n is written on, else fallback.
func nodeLine(n ast.Node, fallback int) int {
	if n == nil {
		return fallback
	}
	if _, isDoc := n.(*ast.DocumentNode); isDoc {
		// A document's token is its body's, which may be absent.
		return fallback
	}
	if tk := n.GetToken(); tk != nil && tk.Position != nil && tk.Position.Line > 0 {
		return tk.Position.Line
	}
	return fallback
}

// argumentKeys are the keys an item of a skill's `arguments` list may have.
var argumentKeys = []string{"name", "title", "description", "required", "values"}

// maxArgumentName bounds an argument's name, which hosts show as a form label.
const maxArgumentName = 64

// skillArguments reads the `arguments` field of a SKILL.md frontmatter: a
// list of mappings with name (required), title, description, required
// (true or false) and values (a list of strings a host offers as completions):
//
//	arguments:
//	  - name: area
//	    description: The part of the code base to plan for
//	    required: true
//	    values: [server, engine, query]
//
// It returns nil when the field is absent, null, "" or an empty list.
func skillArguments(fm frontmatter) ([]SkillArgument, error) {
	e, ok := fm.entries["arguments"]
	if !ok {
		return nil, nil
	}
	seq, isList := e.v.node.(*ast.SequenceNode)
	if !isList {
		if s, _, ok := scalarText(e.v); ok && s == "" {
			return nil, nil
		}
		return nil, fmt.Errorf(`frontmatter line %d: arguments must be a list of items such as "- name: file", one per line`, e.v.line)
	}
	var args []SkillArgument
	seen := make(map[string]bool)
	for _, n := range seq.Values {
		item, err := fm.r.resolve(n, e.v.line)
		if err != nil {
			return nil, err
		}
		a, err := fm.r.skillArgument(item)
		if err != nil {
			return nil, err
		}
		if seen[a.Name] {
			return nil, argumentError(item.line, "%q is listed twice; give each argument its own name", a.Name)
		}
		seen[a.Name] = true
		args = append(args, a)
	}
	return args, nil
}

// argumentError is an error in the `arguments` field at a line of the file.
func argumentError(line int, format string, args ...any) error {
	return fmt.Errorf("frontmatter line %d: arguments: %s", line, fmt.Sprintf(format, args...))
}

// skillArgument validates one item of an `arguments` list.
func (r *reader) skillArgument(item value) (SkillArgument, error) {
	var a SkillArgument
	if _, ok := item.node.(*ast.NullNode); ok {
		return a, argumentError(item.line, `an item has no name; add "name: ..." to it`)
	}
	if _, ok := item.node.(ast.MapNode); !ok {
		return a, argumentError(item.line, `an item must be a mapping such as "- name: file", not %s`, describe(item))
	}
	entries, err := r.mapping(item)
	if err != nil {
		return a, err
	}
	fields := make(map[string]value)
	for _, e := range entries {
		if !slices.Contains(argumentKeys, e.key) {
			return a, argumentError(e.v.line, "unknown key %q; an argument has %s", e.key, strings.Join(argumentKeys, ", "))
		}
		fields[e.key] = e.v
	}
	for _, f := range []struct {
		key string
		dst *string
	}{{"name", &a.Name}, {"title", &a.Title}, {"description", &a.Description}} {
		v, ok := fields[f.key]
		if !ok {
			continue
		}
		s, problem := textValue(v)
		if problem != "" {
			of := ""
			if a.Name != "" {
				of = fmt.Sprintf(" of %q", a.Name)
			}
			return a, argumentError(v.line, "%s%s %s; %s", f.key, of, problem, textAdvice(f.key, v, s))
		}
		*f.dst = strings.TrimSpace(s)
	}
	if a.Name == "" {
		return a, argumentError(item.line, `an item has no name; add "name: ..." to it`)
	}
	if !validArgumentName(a.Name) {
		return a, argumentError(fields["name"].line, "name %q must start with a letter and hold only letters, digits, _ and - (at most %d)", a.Name, maxArgumentName)
	}
	if v, ok := fields["required"]; ok {
		switch s, kind, _ := scalarText(v); {
		case kind == "null":
		case (kind == "boolean" || kind == "text") && (s == "true" || s == "True" || s == "TRUE"):
			a.Required = true
		case (kind == "boolean" || kind == "text") && (s == "false" || s == "False" || s == "FALSE"):
		default:
			return a, argumentError(v.line, "required of %q must be true or false, got %s", a.Name, describe(v))
		}
	}
	if v, ok := fields["values"]; ok {
		if a.Values, err = r.argumentValues(a.Name, v); err != nil {
			return a, err
		}
	}
	return a, nil
}

// argumentValues reads the values of the argument name: a list of
// non-empty scalars, [a, b] or one "- a" per line; null is no list.
func (r *reader) argumentValues(name string, v value) ([]string, error) {
	seq, ok := v.node.(*ast.SequenceNode)
	if !ok {
		if _, kind, _ := scalarText(v); kind == "null" {
			return nil, nil
		}
		return nil, argumentError(v.line, "values of %q: want a list such as [a, b], got %s", name, describe(v))
	}
	var out []string
	for _, n := range seq.Values {
		item, err := r.resolve(n, v.line)
		if err != nil {
			return nil, err
		}
		s, _, ok := scalarText(item)
		if !ok {
			return nil, argumentError(item.line, "values of %q: a value must be text, not %s", name, describe(item))
		}
		if s == "" {
			return nil, argumentError(item.line, "values of %q: a value is empty", name)
		}
		out = append(out, s)
	}
	return out, nil
}

func validArgumentName(name string) bool {
	if len(name) > maxArgumentName || !isASCIILetter(name[0]) {
		return false
	}
	for i := 1; i < len(name); i++ {
		c := name[i]
		if !isASCIILetter(c) && !('0' <= c && c <= '9') && c != '_' && c != '-' {
			return false
		}
	}
	return true
}

func isASCIILetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
