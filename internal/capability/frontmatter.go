package capability

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// utf8BOM is the byte order mark some Windows editors put at the start of a file.
const utf8BOM = "\ufeff"

// ParseFrontmatter splits a Markdown file into the fields of its frontmatter
// and the body that follows.
//
// Frontmatter is a block between two "---" lines at the very start of the
// file (after an optional UTF-8 byte order mark; LF or CRLF line endings).
// Its fields are read with a small subset of YAML, enough for SKILL.md files:
//
//   - `key: value` lines, the value bare, 'single-quoted' or "double-quoted";
//   - a bare value continued on more-indented lines (joined with spaces);
//   - `key: >` and `key: |` blocks (folded or literal), trailing line breaks dropped;
//   - `#` comment lines, and nested lists or mappings, which are skipped.
//
// A repeated key keeps its last value.
//
// A file that does not start with "---" has no frontmatter: fields is nil and
// body is the whole file without its byte order mark. An opening "---" without
// a closing one, or a line that is not `key: value`, is an error.
func ParseFrontmatter(data []byte) (fields map[string]string, body []byte, err error) {
	fm, start, err := parseFrontmatter(string(data))
	if err != nil {
		return nil, nil, err
	}
	return fm.fields, data[start:], nil
}

// frontmatter is a parsed frontmatter block.
type frontmatter struct {
	// fields holds the string fields; nil when the file has no frontmatter.
	fields map[string]string
	// blocks holds the nested lists and mappings, by key, as written.
	blocks map[string]block
}

// block is the lines of a nested list or mapping, with their indentation.
type block struct {
	lines []string
	// lineNo is the line number of lines[0] in the file.
	lineNo int
}

// parseFrontmatter is ParseFrontmatter on a string; it returns the offset at
// which the body starts.
func parseFrontmatter(s string) (frontmatter, int, error) {
	start := 0
	if strings.HasPrefix(s, utf8BOM) {
		start = len(utf8BOM)
	}
	first, next := lineAt(s, start)
	if !isDelimiter(first) {
		return frontmatter{}, start, nil
	}
	var lines []string
	for offset := next; ; {
		if offset >= len(s) {
			return frontmatter{}, 0, errors.New("frontmatter is not closed: add a --- line after its last field")
		}
		line, next := lineAt(s, offset)
		if isDelimiter(line) {
			fm, err := parseFields(lines, 2)
			return fm, next, err
		}
		lines = append(lines, line)
		offset = next
	}
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

// parseFields reads the lines between the delimiters, or those of a nested
// mapping. firstLineNo is the line number of lines[0] in the file, for errors
// (the opening delimiter is line 1).
func parseFields(lines []string, firstLineNo int) (frontmatter, error) {
	fm := frontmatter{fields: make(map[string]string)}
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		if isBlank(line) || isIndented(line) || isComment(line) {
			// Indented lines before any key belong to nothing we read.
			continue
		}
		lineNo := firstLineNo + i
		key, value, ok := splitField(line)
		if !ok {
			return frontmatter{}, fmt.Errorf("frontmatter line %d: expected \"key: value\"", lineNo)
		}
		// The indented (and blank) lines that follow belong to this key.
		end := i + 1
		for end < len(lines) && (isBlank(lines[end]) || isIndented(lines[end])) {
			end++
		}
		for end > i+1 && isBlank(lines[end-1]) {
			end--
		}
		more := lines[i+1 : end]
		if stripComment(value) == "" && startsCollection(more) {
			// A nested list or mapping: not a string field; kept for the
			// keys that are read as structures (see parseArguments).
			if fm.blocks == nil {
				fm.blocks = make(map[string]block)
			}
			fm.blocks[key] = block{lines: more, lineNo: lineNo + 1}
			fm.fields[key] = ""
			i = end - 1
			continue
		}
		v, err := fieldValue(value, more)
		if err != nil {
			return frontmatter{}, fmt.Errorf("frontmatter line %d: %s: %w", lineNo, key, err)
		}
		fm.fields[key] = v
		delete(fm.blocks, key)
		i = end - 1
	}
	return fm, nil
}

func isBlank(line string) bool    { return strings.TrimSpace(line) == "" }
func isIndented(line string) bool { return line[0] == ' ' || line[0] == '\t' }
func isComment(line string) bool  { return line[0] == '#' }

// splitField splits `key: value` at the first colon followed by a space, a
// tab or the end of the line, as YAML does, so that values may hold URLs.
func splitField(line string) (key, value string, ok bool) {
	for i := 0; i < len(line); i++ {
		if line[i] != ':' || (i+1 < len(line) && line[i+1] != ' ' && line[i+1] != '\t') {
			continue
		}
		key = strings.TrimSpace(line[:i])
		if len(key) >= 2 && (key[0] == '"' || key[0] == '\'') && key[len(key)-1] == key[0] {
			key = key[1 : len(key)-1]
		}
		return key, strings.TrimSpace(line[i+1:]), key != ""
	}
	return "", "", false
}

// fieldValue decodes a value and the indented lines that follow its key.
func fieldValue(value string, more []string) (string, error) {
	switch {
	case isBlockIndicator(value):
		return blockScalar(value[0], more), nil
	case strings.HasPrefix(value, `"`), strings.HasPrefix(value, "'"):
		// Indented lines after a closed quoted value are not valid YAML;
		// they are ignored rather than guessed at.
		return quotedValue(value)
	}
	value = stripComment(value)
	parts := []string{value}
	for _, l := range more {
		if l = strings.TrimSpace(l); l != "" {
			parts = append(parts, l)
		}
	}
	return strings.TrimSpace(strings.Join(parts, " ")), nil
}

// isBlockIndicator reports whether value starts a YAML block scalar: "|" or
// ">", optionally with chomping and indentation indicators and a comment.
func isBlockIndicator(value string) bool {
	if value == "" || (value[0] != '|' && value[0] != '>') {
		return false
	}
	rest := strings.TrimSpace(strings.TrimLeft(value[1:], "+-0123456789"))
	return rest == "" || rest[0] == '#'
}

// blockScalar joins the lines of a "|" (literal) or ">" (folded) block,
// removing the indentation of its first line.
func blockScalar(style byte, lines []string) string {
	indent := ""
	for _, l := range lines {
		if !isBlank(l) {
			indent = l[:len(l)-len(strings.TrimLeft(l, " \t"))]
			break
		}
	}
	var b strings.Builder
	prev := ""
	for i, l := range lines {
		l = strings.TrimPrefix(l, indent)
		if isBlank(l) {
			l = ""
		}
		switch {
		case i == 0:
		case style == '|':
			b.WriteByte('\n')
		case l == "":
			// Folding keeps each blank line as a line break...
			b.WriteByte('\n')
		case prev != "":
			// ...and turns the break between two text lines into a space.
			b.WriteByte(' ')
		}
		b.WriteString(l)
		prev = l
	}
	return strings.TrimRight(b.String(), "\n")
}

// startsCollection reports whether the first non-blank line of more begins
// a YAML list item or a mapping.
func startsCollection(more []string) bool {
	for _, l := range more {
		l = strings.TrimSpace(l)
		if l == "" {
			continue
		}
		_, _, isMapping := splitField(l)
		return l == "-" || strings.HasPrefix(l, "- ") || isMapping
	}
	return false
}

// quotedValue decodes a single- or double-quoted value that must close on
// its own line; a comment may follow the closing quote.
func quotedValue(value string) (string, error) {
	q := value[0]
	end := closingQuote(value)
	if end < 0 {
		return "", errors.New("quoted value is not closed on its line; close the quote or use a > block")
	}
	if rest := strings.TrimSpace(value[end+1:]); rest != "" && rest[0] != '#' {
		return "", errors.New("unexpected text after the closing quote")
	}
	inner := value[1:end]
	if q == '\'' {
		return strings.ReplaceAll(inner, "''", "'"), nil
	}
	if s, err := strconv.Unquote(value[:end+1]); err == nil {
		return s, nil
	}
	// YAML has escapes Go does not (\/, \e, \_ ...); keep such text as written.
	return inner, nil
}

// stripComment removes a trailing " # comment" from a bare value.
func stripComment(value string) string {
	for i := 0; i < len(value); i++ {
		// The value arrives trimmed, so a '#' at its start followed a space.
		if value[i] == '#' && (i == 0 || value[i-1] == ' ' || value[i-1] == '\t') {
			return strings.TrimSpace(value[:i])
		}
	}
	return value
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
// It returns nil when the field is absent or an empty list.
func skillArguments(fm frontmatter) ([]SkillArgument, error) {
	b, isBlock := fm.blocks["arguments"]
	if !isBlock {
		v, set := fm.fields["arguments"]
		if !set || v == "" || v == "[]" {
			return nil, nil
		}
		return nil, errors.New(`frontmatter: arguments must be a list of items such as "- name: file", one per line`)
	}
	items, err := listItems(b)
	if err != nil {
		return nil, err
	}
	var args []SkillArgument
	seen := make(map[string]bool)
	for _, it := range items {
		item, err := parseFields(it.lines, it.lineNo)
		if err != nil {
			return nil, err
		}
		a, err := skillArgument(item)
		if err != nil {
			return nil, fmt.Errorf("frontmatter line %d: arguments: %w", it.lineNo, err)
		}
		if seen[a.Name] {
			return nil, fmt.Errorf("frontmatter line %d: arguments: %q is listed twice; give each argument its own name", it.lineNo, a.Name)
		}
		seen[a.Name] = true
		args = append(args, a)
	}
	return args, nil
}

// skillArgument validates one item of an `arguments` list.
func skillArgument(item frontmatter) (SkillArgument, error) {
	for key := range item.fields {
		if !slices.Contains(argumentKeys, key) {
			return SkillArgument{}, fmt.Errorf("unknown key %q; an argument has %s", key, strings.Join(argumentKeys, ", "))
		}
	}
	a := SkillArgument{
		Name:        strings.TrimSpace(item.fields["name"]),
		Title:       strings.TrimSpace(item.fields["title"]),
		Description: strings.TrimSpace(item.fields["description"]),
	}
	if a.Name == "" {
		return a, errors.New(`an item has no name; add "name: ..." to it`)
	}
	if !validArgumentName(a.Name) {
		return a, fmt.Errorf("name %q must start with a letter and hold only letters, digits, _ and - (at most %d)", a.Name, maxArgumentName)
	}
	for key := range item.blocks {
		if key != "values" {
			return a, fmt.Errorf("%s of %q must be a single value, not a list", key, a.Name)
		}
	}
	switch r := item.fields["required"]; r {
	case "", "false":
	case "true":
		a.Required = true
	default:
		return a, fmt.Errorf("required of %q must be true or false, got %q", a.Name, r)
	}
	var err error
	if b, ok := item.blocks["values"]; ok {
		a.Values, err = blockList(b)
	} else if v := item.fields["values"]; v != "" {
		a.Values, err = flowList(v)
	}
	if err != nil {
		return a, fmt.Errorf("values of %q: %w", a.Name, err)
	}
	return a, nil
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

// listItems splits a block holding a list of mappings into one block per
// item, whose lines are the mapping's, unindented: "  - name: a" followed by
// "    required: true" gives "name: a" and "required: true".
func listItems(b block) ([]block, error) {
	var items []block
	indent, contentIndent := -1, -1
	for i, l := range b.lines {
		if isBlank(l) {
			continue
		}
		ind := len(l) - len(strings.TrimLeft(l, " \t"))
		rest := l[ind:]
		if indent < 0 {
			indent = ind
		}
		lineNo := b.lineNo + i
		switch {
		case ind == indent && rest[0] == '#':
		case ind < indent || ind == indent && rest != "-" && !strings.HasPrefix(rest, "- ") || ind > indent && len(items) == 0:
			return nil, fmt.Errorf(`frontmatter line %d: expected a list item such as "- name: file"`, lineNo)
		case ind == indent:
			content := strings.TrimLeft(rest[1:], " ")
			contentIndent = -1
			if content != "" {
				contentIndent = ind + len(rest) - len(content)
			}
			items = append(items, block{lines: []string{content}, lineNo: lineNo})
		default:
			if contentIndent < 0 {
				contentIndent = ind
			}
			it := &items[len(items)-1]
			if ind >= contentIndent {
				l = l[contentIndent:]
			} else {
				l = rest
			}
			if it.lines[0] == "" && len(it.lines) == 1 {
				it.lines, it.lineNo = nil, lineNo
			}
			it.lines = append(it.lines, l)
		}
	}
	return items, nil
}

// blockList reads a list of strings written one "- value" per line.
func blockList(b block) ([]string, error) {
	var out []string
	for i, l := range b.lines {
		l = strings.TrimSpace(l)
		if l == "" || l[0] == '#' {
			continue
		}
		if l != "-" && !strings.HasPrefix(l, "- ") {
			return nil, fmt.Errorf(`line %d: expected "- value"`, b.lineNo+i)
		}
		v, err := fieldValue(strings.TrimSpace(l[1:]), nil)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", b.lineNo+i, err)
		}
		if v == "" {
			return nil, fmt.Errorf("line %d: a value is empty", b.lineNo+i)
		}
		out = append(out, v)
	}
	return out, nil
}

// flowList reads a list of strings written [a, "b c", 'd'].
func flowList(s string) ([]string, error) {
	if len(s) < 2 || s[0] != '[' || s[len(s)-1] != ']' {
		return nil, fmt.Errorf("want a list such as [a, b], got %q", s)
	}
	inner := strings.TrimSpace(s[1 : len(s)-1])
	if inner == "" {
		return nil, nil
	}
	var out []string
	for len(inner) > 0 {
		var item string
		if inner[0] == '"' || inner[0] == '\'' {
			end := closingQuote(inner)
			if end < 0 {
				return nil, errors.New("a quoted value is not closed")
			}
			v, err := quotedValue(inner[:end+1])
			if err != nil {
				return nil, err
			}
			item, inner = v, strings.TrimSpace(inner[end+1:])
			if inner != "" && inner[0] != ',' {
				return nil, errors.New("expected a comma after a quoted value")
			}
		} else {
			comma := strings.IndexByte(inner, ',')
			if comma < 0 {
				comma = len(inner)
			}
			item, inner = strings.TrimSpace(inner[:comma]), inner[comma:]
		}
		if item == "" {
			return nil, errors.New("a value is empty")
		}
		out = append(out, item)
		inner = strings.TrimSpace(strings.TrimPrefix(inner, ","))
	}
	return out, nil
}

// closingQuote returns the index of the quote that closes the quoted value
// at the start of s, or -1.
func closingQuote(s string) int {
	q := s[0]
	for i := 1; i < len(s); i++ {
		switch {
		case q == '"' && s[i] == '\\':
			i++
		case s[i] == q && q == '\'' && i+1 < len(s) && s[i+1] == '\'':
			i++
		case s[i] == q:
			return i
		}
	}
	return -1
}
