package capability

import (
	"bytes"
	"maps"
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
			name:       "double quoted with escapes",
			in:         "---\nname: \"a: b\"\ndescription: \"say \\\"hi\\\"\\n\"\n---\n",
			wantFields: map[string]string{"name": "a: b", "description": "say \"hi\"\n"},
			wantBody:   "",
		},
		{
			name:       "single quoted",
			in:         "---\nname: 'it''s # not a comment'\n---\n",
			wantFields: map[string]string{"name": "it's # not a comment"},
		},
		{
			name:       "quoted value then comment",
			in:         "---\nname: \"x\" # the name\n---\n",
			wantFields: map[string]string{"name": "x"},
		},
		{
			name:       "YAML-only escape kept as written",
			in:         "---\nname: \"a\\/b\"\n---\n",
			wantFields: map[string]string{"name": `a\/b`},
		},
		{
			name:       "comment after bare value",
			in:         "---\nname: triage # short\nurl: http://x/#frag\n---\n",
			wantFields: map[string]string{"name": "triage", "url": "http://x/#frag"},
		},
		{
			name:       "value with colons",
			in:         "---\nhomepage: https://example.com:8080/a\n---\n",
			wantFields: map[string]string{"homepage": "https://example.com:8080/a"},
		},
		{
			name:       "folded block",
			in:         "---\nname: a\ndescription: >\n  Sort new issues\n  by label.\n\n  Then assign.\n---\nbody\n",
			wantFields: map[string]string{"name": "a", "description": "Sort new issues by label.\nThen assign."},
			wantBody:   "body\n",
		},
		{
			name:       "literal block with chomping",
			in:         "---\ndescription: |-\n  line one\n    indented\n  line three\nname: a\n---\n",
			wantFields: map[string]string{"description": "line one\n  indented\nline three", "name": "a"},
		},
		{
			name:       "bare value continued on indented lines",
			in:         "---\ndescription: Use this skill when\n  the user asks for triage.\nname: a\n---\n",
			wantFields: map[string]string{"description": "Use this skill when the user asks for triage.", "name": "a"},
		},
		{
			name:       "nested list and mapping skipped",
			in:         "---\nname: a\ntags:\n  - x\n  - y\nmetadata:\n  author: me\ndescription: d\n---\n",
			wantFields: map[string]string{"name": "a", "tags": "", "metadata": "", "description": "d"},
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
		{name: "line without colon", in: "---\nname: a\njust text\n---\n", wantErr: "line 3: expected \"key: value\""},
		{name: "empty key", in: "---\n: a\n---\n", wantErr: "line 2"},
		{name: "unclosed quote", in: "---\nname: \"a\n---\n", wantErr: "not closed on its line"},
		{name: "text after quote", in: "---\nname: \"a\" b\n---\n", wantErr: "after the closing quote"},
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

// FuzzParseFrontmatter checks that no input makes the parser panic, that the
// body is always the end of the input, and that what it parsed survives a
// round trip: writing the fields back as double-quoted values in front of
// the same body parses to the same fields and body. Seeds are in
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
			b.WriteString(k + ": " + strconv.Quote(fields[k]) + "\n")
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
