package capability

import (
	"bytes"
	"cmp"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestParseFrontmatter(t *testing.T) {
	tests := []struct {
		name       string
		in         string
		wantFields map[string]string
		wantBody   string
		wantErr    string
	}{
		{
			name:       "bare values",
			in:         "---\nname: triage\ndescription: Sort new issues\n---\n# Triage\n",
			wantFields: map[string]string{"name": "triage", "description": "Sort new issues"},
			wantBody:   "# Triage\n",
		},
		{
			name:       "CRLF",
			in:         "---\r\nname: triage\r\ndescription: Sort issues\r\n---\r\nbody\r\n",
			wantFields: map[string]string{"name": "triage", "description": "Sort issues"},
			wantBody:   "body\r\n",
		},
		{
			name:       "byte order mark",
			in:         "\ufeff---\nname: a\n---\nbody",
			wantFields: map[string]string{"name": "a"},
			wantBody:   "body",
		},
		{
			name:       "delimiters with trailing blanks",
			in:         "--- \t\nname: a\n---  \nbody",
			wantFields: map[string]string{"name": "a"},
			wantBody:   "body",
		},
		{
			name:       "double quoted with escapes",
			in:         "---\nname: \"a: b\"\ndescription: \"say \\\"hi\\\"\\n\"\n---\n",
			wantFields: map[string]string{"name": "a: b", "description": "say \"hi\"\n"},
		},
		{
			name:       "single quoted",
			in:         "---\nname: 'it''s # not a comment'\n---\n",
			wantFields: map[string]string{"name": "it's # not a comment"},
		},
		{
			name:       "YAML escape \\/",
			in:         "---\nname: \"a\\/b\"\n---\n",
			wantFields: map[string]string{"name": "a/b"},
		},
		{
			name:       "trailing comments",
			in:         "---\nname: triage # short\ndescription: \"x\" # quoted\nurl: http://x/#frag\n---\n",
			wantFields: map[string]string{"name": "triage", "description": "x", "url": "http://x/#frag"},
		},
		{
			name:       "value with colons",
			in:         "---\nhomepage: https://example.com:8080/a\nname: gsd:resume-work\n---\n",
			wantFields: map[string]string{"homepage": "https://example.com:8080/a", "name": "gsd:resume-work"},
		},
		{
			name:       "folded block keeps one final line break",
			in:         "---\nname: a\ndescription: >\n  Sort new issues\n  by label.\n\n  Then assign.\n---\nbody\n",
			wantFields: map[string]string{"name": "a", "description": "Sort new issues by label.\nThen assign.\n"},
			wantBody:   "body\n",
		},
		{
			name:       "folded block stripped",
			in:         "---\ndescription: >-\n  Use this skill when the user asks\n  for a code review.\n\n  Never push.\nlicense: MIT\n---\n",
			wantFields: map[string]string{"description": "Use this skill when the user asks for a code review.\nNever push.", "license": "MIT"},
		},
		{
			name:       "literal block stripped",
			in:         "---\ndescription: |-\n  line one\n    indented\n  line three\nname: a\n---\n",
			wantFields: map[string]string{"description": "line one\n  indented\nline three", "name": "a"},
		},
		{
			name:       "plain value continued on indented lines",
			in:         "---\ndescription: Use this skill when\n  the user asks for triage.\nname: a\n---\n",
			wantFields: map[string]string{"description": "Use this skill when the user asks for triage.", "name": "a"},
		},
		{
			name:       "double-quoted value over two lines",
			in:         "---\nname: a\ndescription: \"Use this skill when\n  the user asks for triage.\"\n---\n",
			wantFields: map[string]string{"name": "a", "description": "Use this skill when the user asks for triage."},
		},
		{
			name:       "single-quoted value over two lines",
			in:         "---\ndescription: 'Use when\n  asked'\n---\n",
			wantFields: map[string]string{"description": "Use when asked"},
		},
		{
			name:       "lists and nested mappings read as empty",
			in:         "---\nname: a\ntags:\n  - x\n  - y\nmetadata:\n  author: me\n  nested:\n    version: \"1.0\"\ndescription: d\n---\n",
			wantFields: map[string]string{"name": "a", "tags": "", "metadata": "", "description": "d"},
		},
		{
			name:       "flow sequence over several lines",
			in:         "---\nallowed-tools: [Read, Grep,\n  Glob, \"Bash(git:*)\"]\nargument-hint: [name | description]\nname: a\n---\n",
			wantFields: map[string]string{"allowed-tools": "", "argument-hint": "", "name": "a"},
		},
		{
			name:       "numbers and booleans as written",
			in:         "---\nversion: 1.10\ncount: 007\nenabled: true\nlegacy: yes\nempty: ~\ndate: 2024-01-02\n---\n",
			wantFields: map[string]string{"version": "1.10", "count": "007", "enabled": "true", "legacy": "yes", "empty": "", "date": "2024-01-02"},
		},
		{
			name:       "explicit string tag",
			in:         "---\nversion: !!str 1.10\n---\n",
			wantFields: map[string]string{"version": "1.10"},
		},
		{
			name:       "anchor and alias",
			in:         "---\nmetadata:\n  author: &who Sam\ndescription: *who\n---\n",
			wantFields: map[string]string{"metadata": "", "description": "Sam"},
		},
		{
			name:       "alias takes the last anchor before it",
			in:         "---\na: &x one\nb: *x\nc: &x two\nd: *x\n---\n",
			wantFields: map[string]string{"a": "one", "b": "one", "c": "two", "d": "two"},
		},
		{
			name:       "merge key",
			in:         "---\ndefaults: &d {license: MIT, name: base}\n<<: *d\nname: mine\n---\n",
			wantFields: map[string]string{"defaults": "", "name": "mine", "license": "MIT"},
		},
		{
			name:       "comments and blank lines",
			in:         "---\n# a comment\n\nname: a\n---\n",
			wantFields: map[string]string{"name": "a"},
		},
		{
			name:       "empty value",
			in:         "---\nname:\ndescription: d\n---\n",
			wantFields: map[string]string{"name": "", "description": "d"},
		},
		{
			name:       "quoted key",
			in:         "---\n\"name\": a\n---\n",
			wantFields: map[string]string{"name": "a"},
		},
		{
			name:       "closing delimiter at end of file",
			in:         "---\nname: a\n---",
			wantFields: map[string]string{"name": "a"},
		},
		{
			name:       "empty frontmatter",
			in:         "---\n---\nbody",
			wantFields: map[string]string{},
			wantBody:   "body",
		},
		{
			name:       "only comments",
			in:         "---\n# nothing yet\n---\n",
			wantFields: map[string]string{},
		},
		{
			name:     "no frontmatter",
			in:       "# Title\n---\nname: a\n---\n",
			wantBody: "# Title\n---\nname: a\n---\n",
		},
		{
			name:     "no frontmatter with byte order mark",
			in:       "\ufeffhello",
			wantBody: "hello",
		},
		{name: "not closed", in: "---\nname: a\n", wantErr: "not closed"},
		{name: "only the opening", in: "---", wantErr: "not closed"},
		{name: "unclosed flow list", in: "---\nname: a\nallowed-tools: [Read, Grep\n---\n", wantErr: "frontmatter line 3: sequence end token ']' not found; close the [ list with ]"},
		{name: "repeated key", in: "---\nname: a\nlicense: MIT\nname: b\n---\n", wantErr: `frontmatter line 4: mapping key "name" already defined at [2:1]`},
		{name: "alias without anchor", in: "---\nname: a\ndescription: *who\n---\n", wantErr: "frontmatter line 3: *who refers to no anchor; define &who before it"},
		{name: "alias before its anchor", in: "---\ndescription: *who\nname: &who a\n---\n", wantErr: "frontmatter line 2: *who refers to no anchor"},
		{name: "a list, not a mapping", in: "---\n- name: a\n---\n", wantErr: `frontmatter line 2: expected "key: value" lines, found a list`},
		{name: "text, not a mapping", in: "---\n\njust text\n---\n", wantErr: `frontmatter line 3: expected "key: value" lines, found "just text"`},
		{name: "a list as a key", in: "---\n? [a, b]\n: c\n---\n", wantErr: "frontmatter line 3: found an invalid key for this map"},
		{name: "an alias to a list as a key", in: "---\nl: &l [a]\n*l : c\n---\n", wantErr: "frontmatter line 3: a key must be a word such as name, not a list"},
		{name: "second document", in: "---\nname: a\n...\nother: b\n---\n", wantErr: "frontmatter line 3: the YAML document ends here and another begins"},
		{name: "line numbers count the byte order mark's line and CRLF", in: "\ufeff---\r\nname: a\r\n\r\ndescription: \"x\" y\r\n---\r\n", wantErr: "frontmatter line 4:"},
		{
			name:    "larger than the bound",
			in:      "---\ndescription: >-\n" + strings.Repeat("  words words words words words\n", maxFrontmatterBytes/32) + "---\n",
			wantErr: "frontmatter is larger than 16 KiB; keep it to name, description and a few short keys",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fields, body, err := ParseFrontmatter([]byte(tt.in))
			checkErr(t, err, tt.wantErr)
			if tt.wantErr != "" {
				return
			}
			if !reflect.DeepEqual(fields, tt.wantFields) {
				t.Errorf("fields = %#v, want %#v", fields, tt.wantFields)
			}
			if string(body) != tt.wantBody {
				t.Errorf("body = %q, want %q", body, tt.wantBody)
			}
		})
	}
}

// TestFrontmatterSyntaxErrors checks that the mistakes people make in
// frontmatter are reported at the line of the file they are on, with advice.
// The messages are the YAML library's: this test notices when its wording
// or its positions move, and the hints in syntaxHints with them.
func TestFrontmatterSyntaxErrors(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"colon in a plain value", "---\nname: a\ndescription: Use when: the user asks\nlicense: MIT\n---\n", `frontmatter line 3: mapping value is not allowed in this context; put a value that holds ": " in quotes`},
		{"unclosed flow list before a key", "---\nname: a\nallowed-tools: [Read, Grep\nlicense: MIT\n---\n", "frontmatter line 4: ',' or ']' must be specified; close the [ list above with ]"},
		{"unclosed flow mapping", "---\nname: a\nmetadata: {author: me\nlicense: MIT\n---\n", "frontmatter line 4: ',' or '}' must be specified; close the { mapping above with }"},
		{"text after a closing quote", "---\nname: a\nlicense: MIT\ndescription: \"Sort issues\" by label\n---\n", "frontmatter line 4: value is not allowed in this context. map key-value is pre-defined; put the whole value in quotes"},
		{"unclosed quote", "---\nname: a\ndescription: \"Sort issues\nlicense: MIT\n---\n", "frontmatter line 3: could not find end character of double-quoted text; close the quote"},
		{"tab indentation", "---\nname: a\nmetadata:\n\tauthor: me\n---\n", "frontmatter line 4: found character '\t' that cannot start any token; indent with spaces, not tabs"},
		{"block less indented than its first line", "---\nname: a\ndescription: |-\n    x\n  bad\nk: v\n---\n", "frontmatter line 5: value is not allowed in this context"},
		{"line without a colon", "---\nname: a\nlicense: MIT\njust text\n---\n", `frontmatter line 4: non-map value is specified; write "key: value", or indent the line under the key it continues`},
		{"list item under a mapping", "---\nname: a\nmetadata:\n  author: me\n  - x\n---\n", "frontmatter line 5: non-map value is specified"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := ParseFrontmatter([]byte(tt.in))
			checkErr(t, err, tt.want)
		})
	}
}

// TestParseFrontmatterRealSkills reads SKILL.md files taken from public
// repositories (see testdata/skills/SOURCES.md).
func TestParseFrontmatterRealSkills(t *testing.T) {
	tests := []struct {
		file            string
		wantName        string
		wantDescription string // its start
		wantFields      []string
	}{
		{
			file:            "debugging-cypress-artifacts.md",
			wantName:        "debugging-cypress-artifacts",
			wantDescription: "Debugs Cypress bugs that only reproduce in packaged artifacts (cli/build CLI plus binary-package output), not yarn dev. Covers",
			wantFields:      []string{"description", "name"},
		},
		{
			file:            "snyk-vulnerabilities.md",
			wantName:        "snyk-vulnerabilities",
			wantDescription: "Triage, fix, and validate high-severity Snyk package vulnerabilities in a monorepo.",
			wantFields:      []string{"description", "metadata", "name"},
		},
		{
			file:            "vercel-deploy.md",
			wantName:        "vercel-deploy",
			wantDescription: "Build and deploy web UI projects (React, Vue, Svelte, Next.js, etc.) to Vercel",
			wantFields:      []string{"description", "metadata", "name"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", "skills", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			fm, start, err := parseFrontmatter(string(data))
			if err != nil {
				t.Fatal(err)
			}
			name, err1 := fm.text("name")
			desc, err2 := fm.text("description")
			if err := cmp.Or(err1, err2); err != nil {
				t.Fatal(err)
			}
			if name != tt.wantName || !strings.HasPrefix(desc, tt.wantDescription) || strings.HasSuffix(desc, "\n") {
				t.Errorf("name %q, description %q; want %q and a description starting %q", name, desc, tt.wantName, tt.wantDescription)
			}
			if got := slices.Sorted(maps.Keys(fm.fields)); !slices.Equal(got, tt.wantFields) {
				t.Errorf("fields %q, want %q", got, tt.wantFields)
			}
			if body := string(data[start:]); !strings.HasPrefix(body, "\n# ") {
				t.Errorf("body starts %q, want the first heading", body[:min(len(body), 20)])
			}
		})
	}
}

// TestFrontmatterAliasBomb checks that aliases cannot make reading a
// frontmatter expand a small file into a large structure ("billion laughs").
func TestFrontmatterAliasBomb(t *testing.T) {
	// Each level holds ten of the one before: 10^8 values at the last level.
	var b strings.Builder
	b.WriteString("---\nname: bomb\ndescription: d\nlaughs:\n  a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n")
	for level := 'b'; level <= 'h'; level++ {
		prev := string(level - 1)
		fmt.Fprintf(&b, "  %c: &%c [*%s, *%s, *%s, *%s, *%s, *%s, *%s, *%s, *%s, *%s]\n", level, level, prev, prev, prev, prev, prev, prev, prev, prev, prev, prev)
	}
	bomb := b.String()

	t.Run("in a field that is not read", func(t *testing.T) {
		fields, _, err := ParseFrontmatter([]byte(bomb + "---\n"))
		if err != nil || fields["laughs"] != "" || fields["name"] != "bomb" {
			t.Fatalf("fields %q, err %v; want the bomb left unread", fields, err)
		}
	})
	t.Run("in an argument's values", func(t *testing.T) {
		// Values are read one level deep: the nested lists are refused,
		// not expanded.
		fm, _, err := parseFrontmatter(bomb + "arguments:\n  - {name: x, values: *h}\n---\n")
		if err != nil {
			t.Fatal(err)
		}
		_, err = skillArguments(fm)
		checkErr(t, err, `frontmatter line 12: arguments: values of "x": a value must be text, not a list`)
	})
	// One list of 2,000 values given to 20 arguments: 40,000 values read.
	values := "[" + strings.Repeat("v, ", 1999) + "v]"
	var args strings.Builder
	for i := range 20 {
		fmt.Fprintf(&args, "  - {name: a%d, values: *many}\n", i)
	}
	t.Run("one list given to many arguments", func(t *testing.T) {
		fm, _, err := parseFrontmatter("---\nmany: &many " + values + "\narguments:\n" + args.String() + "---\n")
		if err != nil {
			t.Fatal(err)
		}
		_, err = skillArguments(fm)
		checkErr(t, err, "aliases (*name) expand to more than 16384 values; write the values out")
	})
	t.Run("merged into many arguments", func(t *testing.T) {
		in := "---\nbase: &base {values: " + values + "}\narguments:\n" +
			strings.ReplaceAll(args.String(), "values: *many", "<<: *base") + "---\n"
		fm, _, err := parseFrontmatter(in)
		if err != nil {
			t.Fatal(err)
		}
		_, err = skillArguments(fm)
		checkErr(t, err, "aliases (*name) expand to more than 16384 values")
	})
	t.Run("an alias that refers to itself", func(t *testing.T) {
		fm, _, err := parseFrontmatter("---\narguments: &a [*a]\n---\n")
		if err != nil {
			t.Fatal(err)
		}
		_, err = skillArguments(fm)
		checkErr(t, err, `frontmatter line 2: arguments: an item must be a mapping such as "- name: file", not a list`)
	})
}

// BenchmarkParseFrontmatter measures a typical SKILL.md frontmatter and the
// worst case the YAML library meets within maxFrontmatterBytes: lists nested
// as deep as the bound allows, whose parse time grows with the square of the
// depth.
func BenchmarkParseFrontmatter(b *testing.B) {
	cases := []struct{ name, in string }{
		{"typical", "---\nname: plan-work\ndescription: >-\n  Break a multi-step request into tasks. Use when the user asks\n  for a plan.\nlicense: MIT\nmetadata:\n  author: someone\n  version: \"1.0\"\nallowed-tools: [Read, Grep, Glob]\narguments:\n  - name: request\n    required: true\n  - name: tag\n    values: [bug, feature, refactor]\n---\n# Plan\n"},
		{"nested-at-bound", "---\nx: " + strings.Repeat("[", maxFrontmatterBytes-8) + "\n---\n"},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				_, _, _ = ParseFrontmatter([]byte(c.in))
			}
		})
	}
}

// FuzzParseFrontmatter checks that no input makes the parser panic, that the
// body is always the end of the input, and that what it parsed survives a
// round trip: writing the fields back as double-quoted keys and values in
// front of the same body parses to the same fields and body. Seeds are in
// testdata/fuzz/FuzzParseFrontmatter.
func FuzzParseFrontmatter(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		fields, body, err := ParseFrontmatter(data)
		if err != nil {
			return
		}
		if !bytes.HasSuffix(data, body) {
			t.Fatalf("body %q is not a suffix of the input", body)
		}
		if fields == nil {
			if want := bytes.TrimPrefix(data, []byte(utf8BOM)); !bytes.Equal(body, want) {
				t.Fatalf("without frontmatter, body = %q, want the whole input %q", body, want)
			}
			return
		}
		var b bytes.Buffer
		b.WriteString("---\n")
		for _, k := range slices.Sorted(maps.Keys(fields)) {
			b.WriteString(strconv.Quote(k) + ": " + strconv.Quote(fields[k]) + "\n")
		}
		b.WriteString("---\n")
		b.Write(body)
		fields2, body2, err := ParseFrontmatter(b.Bytes())
		if err != nil {
			t.Fatalf("reparse of %q: %v", b.Bytes(), err)
		}
		if !maps.Equal(fields, fields2) {
			t.Fatalf("fields changed on reparse of %q:\n got %q\nwant %q", b.Bytes(), fields2, fields)
		}
		if !bytes.Equal(body, body2) {
			t.Fatalf("body changed on reparse: got %q, want %q", body2, body)
		}
	})
}

func TestMarkdownTitle(t *testing.T) {
	tests := []struct {
		name, doc, want string
	}{
		{name: "h1", doc: "# Setup guide\n\ntext", want: "Setup guide"},
		{name: "h2 first", doc: "intro\n\n## Usage ##\n", want: "Usage"},
		{name: "indented up to three spaces", doc: "   ### Deep\n", want: "Deep"},
		{name: "four spaces is code", doc: "    # not a title\n", want: "fallback"},
		{name: "no space after hashes", doc: "#hashtag\n#\n# Real\n", want: "Real"},
		{name: "seven hashes", doc: "####### too deep\n", want: "fallback"},
		{name: "closing hashes kept when attached", doc: "# C#\n", want: "C#"},
		{name: "CRLF", doc: "# Title\r\nbody\r\n", want: "Title"},
		{name: "backtick fence", doc: "```sh\n# comment\n```\n# After\n", want: "After"},
		{name: "tilde fence", doc: "~~~\n# comment\n~~~~\n# After\n", want: "After"},
		{name: "shorter closing fence does not close", doc: "````\n```\n# inside\n````\n# After\n", want: "After"},
		{name: "unclosed fence", doc: "```\n# inside\n", want: "fallback"},
		{name: "inline backticks are not a fence", doc: "```code``` text\n# Title\n", want: "Title"},
		{name: "frontmatter skipped", doc: "---\ntitle: x\n# not a heading\n---\n# Title\n", want: "Title"},
		{name: "no heading", doc: "just text\n", want: "fallback"},
		{name: "empty", doc: "", want: "fallback"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := markdownTitle(tt.doc, "fallback"); got != tt.want {
				t.Errorf("markdownTitle(%q) = %q, want %q", tt.doc, got, tt.want)
			}
		})
	}
}

func TestParseDotEnv(t *testing.T) {
	in := strings.Join([]string{
		"# comment",
		"",
		"PLAIN=value",
		"export EXPORTED=yes",
		"  SPACED = padded  ",
		`DOUBLE="a # b"`,
		`SINGLE='x=y'`,
		`MISMATCHED="abc'`,
		"EMPTY=",
		"exported=lowercase-ok",
		"DUP=first",
		"DUP=second",
		"CRLF=value\r",
		"no equals sign here s3cr3t-token",
		"BAD-NAME=s3cr3t-token",
		"1BAD=x",
	}, "\n")
	vars, problems := parseDotEnv([]byte(in))
	want := map[string]string{
		"PLAIN": "value", "EXPORTED": "yes", "SPACED": "padded", "DOUBLE": "a # b",
		"SINGLE": "x=y", "MISMATCHED": `"abc'`, "EMPTY": "", "exported": "lowercase-ok",
		"DUP": "second", "CRLF": "value",
	}
	if !reflect.DeepEqual(vars, want) {
		t.Errorf("vars = %#v\nwant %#v", vars, want)
	}
	wantLines := []string{"line 14: expected KEY=VALUE", "line 15: the name", "line 16: the name"}
	if len(problems) != len(wantLines) {
		t.Fatalf("got %d problems %v, want %d", len(problems), problems, len(wantLines))
	}
	for i, p := range problems {
		if p.Path != dotEnvPath || !strings.HasPrefix(p.Message, wantLines[i]) {
			t.Errorf("problem %d = %+v, want path %s and message starting %q", i, p, dotEnvPath, wantLines[i])
		}
		if strings.Contains(p.String(), "s3cr3t") {
			t.Errorf("problem %d shows the line's content: %s", i, p)
		}
	}
}
