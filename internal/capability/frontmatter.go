package capability

import (
	"errors"
	"fmt"
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
	fields, start, err := parseFrontmatter(string(data))
	if err != nil {
		return nil, nil, err
	}
	return fields, data[start:], nil
}

// parseFrontmatter is ParseFrontmatter on a string; it returns the offset at
// which the body starts.
func parseFrontmatter(s string) (map[string]string, int, error) {
	start := 0
	if strings.HasPrefix(s, utf8BOM) {
		start = len(utf8BOM)
	}
	first, next := lineAt(s, start)
	if !isDelimiter(first) {
		return nil, start, nil
	}
	var lines []string
	for offset := next; ; {
		if offset >= len(s) {
			return nil, 0, errors.New("frontmatter is not closed: add a --- line after its last field")
		}
		line, next := lineAt(s, offset)
		if isDelimiter(line) {
			fields, err := parseFields(lines)
			return fields, next, err
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

// parseFields reads the lines between the delimiters. Line numbers in errors
// count the opening delimiter as line 1.
func parseFields(lines []string) (map[string]string, error) {
	fields := make(map[string]string)
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		if isBlank(line) || isIndented(line) || isComment(line) {
			// Indented lines before any key belong to nothing we read.
			continue
		}
		lineNo := i + 2
		key, value, ok := splitField(line)
		if !ok {
			return nil, fmt.Errorf("frontmatter line %d: expected \"key: value\"", lineNo)
		}
		// The indented (and blank) lines that follow belong to this key.
		end := i + 1
		for end < len(lines) && (isBlank(lines[end]) || isIndented(lines[end])) {
			end++
		}
		for end > i+1 && isBlank(lines[end-1]) {
			end--
		}
		v, err := fieldValue(value, lines[i+1:end])
		if err != nil {
			return nil, fmt.Errorf("frontmatter line %d: %s: %w", lineNo, key, err)
		}
		fields[key] = v
		i = end - 1
	}
	return fields, nil
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
	if value == "" && startsCollection(more) {
		// A nested list or mapping: not a string, so not a field we read.
		return "", nil
	}
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
	end := -1
	for i := 1; i < len(value); i++ {
		if q == '"' && value[i] == '\\' {
			i++
			continue
		}
		if value[i] != q {
			continue
		}
		if q == '\'' && i+1 < len(value) && value[i+1] == '\'' {
			i++ // '' is an escaped quote
			continue
		}
		end = i
		break
	}
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
