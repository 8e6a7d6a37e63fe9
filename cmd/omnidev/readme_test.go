package main

import (
	"context"
	"encoding/json"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// readmeMaxLines keeps the README a front door (STYLE 16): what omnidev is,
// install, host setup, a first capability and links. Reference text goes to
// a page under docs/.
const readmeMaxLines = 300

// docPage is README.md or a page under docs/, by its path from the
// repository root.
type docPage struct {
	path, text string
}

// docPages reads README.md and docs/*.md.
func docPages(t *testing.T) []docPage {
	t.Helper()
	names, err := filepath.Glob(filepath.Join("..", "..", "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	pages := []docPage{}
	for _, name := range append([]string{filepath.Join("..", "..", "README.md")}, names...) {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(filepath.Join("..", ".."), name)
		pages = append(pages, docPage{path: filepath.ToSlash(rel), text: string(data)})
	}
	if len(pages) < 2 {
		t.Fatalf("found %d pages; docs/ seems to be missing", len(pages))
	}
	return pages
}

// codeBlock is one fenced block of a Markdown page, its lines unindented
// by the fence's own indentation (a block inside a list item).
type codeBlock struct {
	lang, body string
	line       int // of the opening fence, 1-based
}

// codeBlocks returns the fenced blocks of a Markdown text.
func codeBlocks(text string) []codeBlock {
	var blocks []codeBlock
	var cur *codeBlock
	var indent string
	var body strings.Builder
	for i, line := range strings.Split(text, "\n") {
		trimmed := strings.TrimLeft(line, " ")
		if cur == nil {
			if rest, ok := strings.CutPrefix(trimmed, "```"); ok {
				cur = &codeBlock{lang: strings.TrimSpace(rest), line: i + 1}
				indent = line[:len(line)-len(trimmed)]
				body.Reset()
			}
			continue
		}
		if strings.TrimSpace(line) == "```" {
			cur.body = body.String()
			blocks = append(blocks, *cur)
			cur = nil
			continue
		}
		body.WriteString(strings.TrimPrefix(line, indent))
		body.WriteString("\n")
	}
	return blocks
}

// TestReadmeHostConfigs checks the host setup and the commands of the README
// and of docs/: every JSON block parses, every omnidev command they name is
// one the CLI has, and every flag given to it is one that command takes.
func TestReadmeHostConfigs(t *testing.T) {
	flags := subcommandFlags(t)
	jsonBlocks, commandsChecked, inReadme := 0, 0, 0
	for _, page := range docPages(t) {
		for _, b := range codeBlocks(page.text) {
			where := page.path + ":" + strconv.Itoa(b.line)
			var invocations [][]string
			var withFlags []bool
			switch b.lang {
			case "json":
				jsonBlocks++
				var v any
				if err := json.Unmarshal([]byte(b.body), &v); err != nil {
					t.Errorf("%s: JSON block does not parse: %v\n%s", where, err, b.body)
					continue
				}
				for _, argv := range omnidevInvocations(v) {
					invocations = append(invocations, argv)
					withFlags = append(withFlags, true)
				}
			case "sh":
				for _, line := range strings.Split(b.body, "\n") {
					argv, ours := shellInvocation(line)
					if argv != nil {
						invocations = append(invocations, argv)
						withFlags = append(withFlags, ours)
					}
				}
			}
			for i, argv := range invocations {
				commandsChecked++
				if page.path == "README.md" {
					inReadme++
				}
				checkSubcommand(t, flags, argv, withFlags[i], where)
			}
		}
	}
	if jsonBlocks < 8 || commandsChecked < 5 {
		t.Errorf("found %d JSON blocks and %d omnidev commands; the host sections seem to be missing", jsonBlocks, commandsChecked)
	}
	if inReadme < 5 {
		t.Errorf("found %d omnidev commands in README.md; its host setup seems to be missing", inReadme)
	}
}

// shellInvocation finds omnidev run as a command in a line of a shell block:
// at the start of the line, after `--` (claude mcp add ... -- omnidev ...)
// or a pipe, or as the program the MCP Inspector starts. It returns the
// arguments after "omnidev", and whether they are all omnidev's (not the
// Inspector's, which follow them).
func shellInvocation(line string) (argv []string, ours bool) {
	line = strings.TrimPrefix(strings.TrimSpace(line), "$ ")
	if i := strings.Index(line, " #"); i >= 0 {
		line = line[:i]
	}
	fields := strings.Fields(line)
	for i, f := range fields {
		if f != "omnidev" {
			continue
		}
		switch {
		case i == 0 || fields[i-1] == "--" || fields[i-1] == "|":
			return fields[i+1:], true
		case fields[i-1] == "--cli" || strings.HasSuffix(fields[i-1], "/inspector"):
			return fields[i+1:], false
		}
	}
	return nil, false
}

// omnidevInvocations finds {"command": "omnidev", "args": [...]} and
// {"command": ["omnidev", ...]} anywhere in a parsed JSON value, and returns
// the arguments after "omnidev".
func omnidevInvocations(v any) [][]string {
	var found [][]string
	switch v := v.(type) {
	case map[string]any:
		switch cmd := v["command"].(type) {
		case string:
			if cmd == "omnidev" {
				found = append(found, stringList(v["args"]))
			}
		case []any:
			if argv := stringList(cmd); len(argv) > 0 && argv[0] == "omnidev" {
				found = append(found, argv[1:])
			}
		}
		for _, x := range v {
			found = append(found, omnidevInvocations(x)...)
		}
	case []any:
		for _, x := range v {
			found = append(found, omnidevInvocations(x)...)
		}
	}
	return found
}

func stringList(v any) []string {
	list, _ := v.([]any)
	var out []string
	for _, x := range list {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// subcommandFlags returns the flags each subcommand takes, as its --help
// lists them.
func subcommandFlags(t *testing.T) map[string][]string {
	t.Helper()
	flagLine := regexp.MustCompile(`(?m)^  -([\w-]+)`)
	all := map[string][]string{}
	for _, c := range commands() {
		var stdout, stderr strings.Builder
		if code := run(context.Background(), []string{c.name, "--help"}, strings.NewReader(""), &stdout, &stderr); code != 0 {
			t.Fatalf("omnidev %s --help: exit %d\n%s", c.name, code, stderr.String())
		}
		for _, m := range flagLine.FindAllStringSubmatch(stderr.String(), -1) {
			all[c.name] = append(all[c.name], m[1])
		}
	}
	return all
}

// checkSubcommand checks that argv (after "omnidev", global flags first)
// names a subcommand the CLI has and, when withFlags is set, that the flags
// after it are that subcommand's.
func checkSubcommand(t *testing.T, flags map[string][]string, argv []string, withFlags bool, where string) {
	t.Helper()
	context := "omnidev " + strings.Join(argv, " ")
	for len(argv) > 0 && strings.HasPrefix(argv[0], "-") {
		if name := flagName(argv[0]); name != "dir" {
			t.Errorf("%s: %q gives omnidev the flag -%s before its command; only --dir goes there", where, context, name)
		}
		if !strings.Contains(argv[0], "=") { // --dir VALUE
			argv = argv[1:]
		}
		argv = argv[1:]
	}
	if len(argv) == 0 {
		t.Errorf("%s: no omnidev subcommand in %q", where, context)
		return
	}
	sub, ok := flags[argv[0]]
	if !ok {
		t.Errorf("%s: names `omnidev %s`, which is not a subcommand: %q", where, argv[0], context)
		return
	}
	if !withFlags {
		return
	}
	for _, a := range argv[1:] {
		if a == "-" || a == "--" || !strings.HasPrefix(a, "-") {
			continue
		}
		if name := flagName(a); !slices.Contains(sub, name) {
			t.Errorf("%s: `omnidev %s` has no flag -%s: %q", where, argv[0], name, context)
		}
	}
}

func flagName(arg string) string {
	name, _, _ := strings.Cut(strings.TrimLeft(arg, "-"), "=")
	return name
}

// TestReadmeLinks checks the links between the README and the pages of
// docs/: each names a file that exists and, after #, one of its headings;
// and docs/README.md, the index, links to every page.
func TestReadmeLinks(t *testing.T) {
	pages := docPages(t)
	headings := map[string][]string{}
	for _, p := range pages {
		headings[p.path] = anchors(p.text)
	}
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	indexed := map[string]bool{}
	for _, p := range pages {
		for _, m := range link.FindAllStringSubmatch(proseOf(p.text), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, anchor, _ := strings.Cut(target, "#")
			resolved := p.path
			if file != "" {
				resolved = path.Clean(path.Join(path.Dir(p.path), file))
				if strings.HasSuffix(file, "/") {
					resolved += "/"
				}
			}
			if p.path == "docs/README.md" {
				indexed[resolved] = true
			}
			if _, err := os.Stat(filepath.Join("..", "..", filepath.FromSlash(resolved))); err != nil {
				t.Errorf("%s links to %s, which does not exist", p.path, target)
				continue
			}
			if anchor != "" && !slices.Contains(headings[resolved], anchor) {
				t.Errorf("%s links to %s, but %s has no heading #%s (it has %v)", p.path, target, resolved, anchor, headings[resolved])
			}
		}
	}
	for _, p := range pages {
		if strings.HasPrefix(p.path, "docs/") && p.path != "docs/README.md" && !indexed[p.path] {
			t.Errorf("docs/README.md does not link to %s", p.path)
		}
	}
}

// TestReadmeLength keeps the README a front door.
func TestReadmeLength(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(data), "\n"); n > readmeMaxLines {
		t.Errorf("README.md has %d lines, more than %d: move reference text to a page under docs/", n, readmeMaxLines)
	}
}

// withoutFences returns a Markdown text without its fenced blocks, whose
// lines are examples: a link there is not followed, a # is a comment.
func withoutFences(text string) string {
	var b strings.Builder
	fenced := false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimLeft(line, " "), "```") {
			fenced = !fenced
			continue
		}
		if !fenced {
			b.WriteString(line + "\n")
		}
	}
	return b.String()
}

// proseOf returns a Markdown text without its fenced blocks and inline code.
func proseOf(text string) string {
	return regexp.MustCompile("`[^`\n]*`").ReplaceAllString(withoutFences(text), "")
}

// anchors returns the anchors GitHub gives a page's headings: lower case,
// spaces as hyphens, other punctuation dropped.
func anchors(text string) []string {
	var out []string
	for _, line := range strings.Split(withoutFences(text), "\n") {
		level := len(line) - len(strings.TrimLeft(line, "#"))
		title, ok := strings.CutPrefix(line[level:], " ")
		if level == 0 || !ok {
			continue
		}
		var slug strings.Builder
		for _, r := range strings.ToLower(strings.TrimSpace(title)) {
			switch {
			case r == ' ':
				slug.WriteRune('-')
			case r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r > 127:
				slug.WriteRune(r)
			}
		}
		out = append(out, slug.String())
	}
	return out
}
