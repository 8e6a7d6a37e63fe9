package capability

import "strings"

// markdownTitle returns the text of the first ATX heading ("# Title",
// "## Title" ...) of a Markdown document, else fallback. Headings inside
// fenced code blocks and a leading frontmatter block are not titles: a
// shell comment in a code sample must not name the document.
func markdownTitle(doc, fallback string) string {
	if _, start, _, err := splitFrontmatter(doc); err == nil {
		doc = doc[start:]
	}
	var fence string // the opening fence while inside a code block
	for line := range strings.Lines(doc) {
		line = strings.TrimRight(line, "\r\n")
		if fence != "" {
			if isClosingFence(line, fence) {
				fence = ""
			}
			continue
		}
		if f := openingFence(line); f != "" {
			fence = f
			continue
		}
		if title, ok := atxHeading(line); ok && title != "" {
			return title
		}
	}
	return fallback
}

// trimIndent removes up to three leading spaces, the indentation CommonMark
// allows before a heading or a fence; it reports false for deeper indentation,
// which makes an indented code block instead.
func trimIndent(line string) (string, bool) {
	for range 3 {
		if !strings.HasPrefix(line, " ") {
			break
		}
		line = line[1:]
	}
	return line, !strings.HasPrefix(line, " ") && !strings.HasPrefix(line, "\t")
}

// openingFence returns the fence (``` or ~~~, three or more) that line opens, or "".
func openingFence(line string) string {
	line, ok := trimIndent(line)
	if !ok || len(line) < 3 || (line[0] != '`' && line[0] != '~') {
		return ""
	}
	n := len(line) - len(strings.TrimLeft(line, line[:1]))
	if n < 3 || (line[0] == '`' && strings.Contains(line[n:], "`")) {
		// A backtick fence's info string may not hold backticks: that is inline code.
		return ""
	}
	return line[:n]
}

// isClosingFence reports whether line closes a block opened by fence: the
// same character, at least as many times, and nothing else.
func isClosingFence(line, fence string) bool {
	line, ok := trimIndent(line)
	if !ok {
		return false
	}
	rest := strings.TrimLeft(line, fence[:1])
	return len(line)-len(rest) >= len(fence) && strings.TrimSpace(rest) == ""
}

// atxHeading returns the text of an ATX heading line without its optional
// closing sequence of #.
func atxHeading(line string) (string, bool) {
	line, ok := trimIndent(line)
	if !ok {
		return "", false
	}
	text := strings.TrimLeft(line, "#")
	level := len(line) - len(text)
	if level < 1 || level > 6 || (text != "" && text[0] != ' ' && text[0] != '\t') {
		return "", false
	}
	text = strings.TrimSpace(text)
	if closed := strings.TrimRight(text, "#"); closed == "" || strings.HasSuffix(closed, " ") || strings.HasSuffix(closed, "\t") {
		text = strings.TrimSpace(closed)
	}
	return text, true
}

// maxSummaryChars bounds a summary: hosts show it on one line of a menu.
const maxSummaryChars = 200

// unmark removes Markdown's emphasis and code marks. A Replacer is safe for
// concurrent use and never changes once built.
var unmark = strings.NewReplacer("**", "", "__", "", "`", "")

// markdownSummary returns the first sentence of a Markdown document's first
// paragraph (headings, code blocks, tables, HTML and a frontmatter block are
// not paragraphs), with Markdown emphasis and code marks removed, else
// fallback.
func markdownSummary(doc, fallback string) string {
	if _, start, _, err := splitFrontmatter(doc); err == nil {
		doc = doc[start:]
	}
	var para []string
	var fence string
	for line := range strings.Lines(doc) {
		line = strings.TrimRight(line, "\r\n")
		if fence != "" {
			if isClosingFence(line, fence) {
				fence = ""
			}
			continue
		}
		text := strings.TrimSpace(line)
		if text == "" {
			if len(para) > 0 {
				break
			}
			continue
		}
		if f := openingFence(line); f != "" {
			if len(para) > 0 {
				break
			}
			fence = f
			continue
		}
		if _, heading := atxHeading(line); heading || strings.HasPrefix(text, "|") || strings.HasPrefix(text, "<") {
			if len(para) > 0 {
				break
			}
			continue
		}
		if item, ok := listItem(text); ok {
			if len(para) > 0 {
				break
			}
			text = item
		}
		para = append(para, text)
	}
	s := firstSentence(strings.Join(para, " "))
	s = unmark.Replace(s)
	if s == "" {
		return fallback
	}
	if len(s) > maxSummaryChars {
		if r := []rune(s); len(r) > maxSummaryChars {
			s = strings.TrimSpace(string(r[:maxSummaryChars-1])) + "…"
		}
	}
	return s
}

// listItem returns the text of a list item line ("- x", "* x", "+ x", "1. x").
func listItem(line string) (string, bool) {
	if len(line) > 2 && strings.ContainsRune("-*+", rune(line[0])) && line[1] == ' ' {
		return strings.TrimSpace(line[2:]), true
	}
	digits := len(line) - len(strings.TrimLeft(line, "0123456789"))
	if digits > 0 && digits < 10 && strings.HasPrefix(line[digits:], ". ") {
		return strings.TrimSpace(line[digits+2:]), true
	}
	return "", false
}

// firstSentence returns s up to the first ".", "!" or "?" followed by a
// space, or all of s.
func firstSentence(s string) string {
	for i := 0; i+1 < len(s); i++ {
		if (s[i] == '.' || s[i] == '!' || s[i] == '?') && s[i+1] == ' ' {
			return s[:i+1]
		}
	}
	return s
}
