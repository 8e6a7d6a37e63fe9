package capability

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestSkillArguments(t *testing.T) {
	tests := []struct {
		name    string
		front   string // frontmatter lines after name and description
		body    string
		want    []SkillArgument
		wantErr string // part of the problem's message; the skill is left out
	}{
		{name: "none", body: "Do it.\n"},
		{name: "empty list", front: "arguments: []\n", body: "Do it.\n"},
		{
			name: "implicit from $ARGUMENTS",
			body: "Plan: $ARGUMENTS\n",
			want: []SkillArgument{implicitArgument},
		},
		{
			name: "full list",
			front: "arguments:\n" +
				"  - name: area\n" +
				"    title: Area\n" +
				"    description: >\n      The part\n      to plan for\n" +
				"    required: true\n" +
				"    values: [server, \"engine, core\", 'query']\n" +
				"  # a comment\n" +
				"  - name: depth\n" +
				"    values:\n      - shallow\n      - \"deep\" # the default\n" +
				"  -\n    name: note\n",
			body: "Plan $ARGUMENTS\n",
			want: []SkillArgument{
				{Name: "area", Title: "Area", Description: "The part to plan for", Required: true, Values: []string{"server", "engine, core", "query"}},
				{Name: "depth", Values: []string{"shallow", "deep"}},
				{Name: "note"},
			},
		},
		{
			name: "YAML shapes",
			front: "tiers: &tiers [1.10, 2]\n" +
				"arguments:\n" +
				"  - &first {name: area, required: \"true\", values: [server,\n      engine]}\n" +
				"  - name: depth\n" +
				"    description: \"How deep\n      to go\"\n" +
				"    values: *tiers\n" +
				"    required: false\n",
			want: []SkillArgument{
				{Name: "area", Required: true, Values: []string{"server", "engine"}},
				{Name: "depth", Description: "How deep to go", Values: []string{"1.10", "2"}},
			},
		},
		{name: "not a list", front: "arguments: area\n", wantErr: "arguments must be a list"},
		{name: "not items", front: "arguments:\n  name: area\n", wantErr: "line 4: arguments must be a list"},
		{name: "an item that is text", front: "arguments:\n  - area\n", wantErr: `line 5: arguments: an item must be a mapping such as "- name: file", not "area"`},
		{name: "no name", front: "arguments:\n  - description: x\n", wantErr: "line 5: arguments: an item has no name"},
		{name: "bad name", front: "arguments:\n  - name: 1st\n", wantErr: `name "1st" must start with a letter`},
		{name: "unknown key", front: "arguments:\n  - name: a\n    requierd: true\n", wantErr: `unknown key "requierd"`},
		{name: "bad required", front: "arguments:\n  - name: a\n    required: yes\n", wantErr: `required of "a" must be true or false, got "yes"`},
		{name: "twice", front: "arguments:\n  - name: a\n  - name: a\n", wantErr: `"a" is listed twice`},
		{name: "values not a list", front: "arguments:\n  - name: a\n    values: x\n", wantErr: `values of "a": want a list`},
		{name: "empty value", front: "arguments:\n  - name: a\n    values: [x, \"\", y]\n", wantErr: `line 6: arguments: values of "a": a value is empty`},
		{name: "missing value", front: "arguments:\n  - name: a\n    values: [x, , y]\n", wantErr: "frontmatter line 6:"},
		{name: "a list in values", front: "arguments:\n  - name: a\n    values: [x, [y]]\n", wantErr: `values of "a": a value must be text, not a list`},
		{name: "description as list", front: "arguments:\n  - name: a\n    description:\n      - x\n", wantErr: `line 6: arguments: description of "a" must be text, not a list; write it on the line of the key, or as a block`},
		{name: "name a number", front: "arguments:\n  - name: 12\n", wantErr: `arguments: name must be text, but YAML reads 12 as a number; put it in quotes: name: "12"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			skill := "---\nname: plan\ndescription: Plan work\n" + tt.front + "---\n" + tt.body
			reg := loadRepo(t, repoFiles([]string{"tasks"}, map[string]string{
				"tasks/capability.toml":       manifest("tasks"),
				"tasks/skills/plan/SKILL.md":  skill,
				"tasks/skills/other/SKILL.md": "---\nname: other\ndescription: d\n---\n",
			}), nil)
			skills := reg.Capabilities[0].Skills
			if tt.wantErr != "" {
				if len(skills) != 1 || len(reg.Problems) != 1 || !strings.Contains(reg.Problems[0].Message, tt.wantErr) ||
					reg.Problems[0].Path != "omni/capabilities/tasks/skills/plan/SKILL.md" {
					t.Fatalf("skills %d, problems %v; want the skill left out with a problem mentioning %q", len(skills), reg.Problems, tt.wantErr)
				}
				return
			}
			if len(reg.Problems) != 0 || len(skills) != 2 {
				t.Fatalf("problems %v, %d skills", reg.Problems, len(skills))
			}
			if !reflect.DeepEqual(skills[1].Arguments, tt.want) {
				t.Errorf("arguments =\n%+v\nwant\n%+v", skills[1].Arguments, tt.want)
			}
		})
	}
}

// TestSkillTextFields checks how a skill's name, description and title are
// read: text as YAML writes it, and a clear problem, with the line and what
// to write, when YAML reads something else.
func TestSkillTextFields(t *testing.T) {
	tests := []struct {
		name      string
		front     string // the frontmatter's lines
		wantName  string
		wantDesc  string
		wantTitle string
		wantErr   string // part of the problem's message; the skill is left out
	}{
		{name: "plain", front: "name: plan\ndescription: Plan work\n", wantName: "plan", wantDesc: "Plan work", wantTitle: "Plan"},
		{name: "folded block", front: "name: plan\ndescription: >-\n  Plan work\n  in steps.\n", wantName: "plan", wantDesc: "Plan work in steps.", wantTitle: "Plan"},
		{name: "folded block, final line break trimmed", front: "name: plan\ndescription: >\n  Plan work.\n\n", wantName: "plan", wantDesc: "Plan work.", wantTitle: "Plan"},
		{name: "quoted over two lines", front: "name: plan\ndescription: \"Plan work\n  in steps.\"\n", wantName: "plan", wantDesc: "Plan work in steps.", wantTitle: "Plan"},
		{name: "alias", front: "metadata:\n  summary: &s Plan work\nname: plan\ndescription: *s\n", wantName: "plan", wantDesc: "Plan work", wantTitle: "Plan"},
		{name: "title from the frontmatter", front: "name: plan\ndescription: d\ntitle: \"2.0 plan\"\n", wantName: "plan", wantDesc: "d", wantTitle: "2.0 plan"},
		{name: "numbers elsewhere are fine", front: "name: plan\ndescription: d\nversion: 1.10\nmetadata: {version: 2}\n", wantName: "plan", wantDesc: "d", wantTitle: "Plan"},
		{name: "name read as a number", front: "name: 1.10\ndescription: d\n", wantErr: `frontmatter line 2: name must be text, but YAML reads 1.10 as a number; put it in quotes: name: "1.10"`},
		{name: "description read as a boolean", front: "name: plan\ndescription: true\n", wantErr: `frontmatter line 3: description must be text, but YAML reads true as a boolean; put it in quotes: description: "true"`},
		{name: "description as a list", front: "name: plan\ndescription:\n  - Plan\n  - work\n", wantErr: `frontmatter line 3: description must be text, not a list; write it on the line of the key, or as a block: "description: >-" followed by indented lines`},
		{name: "description as a mapping", front: "name: plan\ndescription:\n  when: asked\n", wantErr: "frontmatter line 3: description must be text, not a mapping"},
		{name: "description as a flow list", front: "name: plan\ndescription: [a, b\n", wantErr: "frontmatter line 3: sequence end token ']' not found"},
		{name: "title read as a number", front: "name: plan\ndescription: d\ntitle: 2024\n", wantErr: `frontmatter line 4: title must be text, but YAML reads 2024 as a number`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg := loadRepo(t, repoFiles([]string{"tasks"}, map[string]string{
				"tasks/capability.toml":       manifest("tasks"),
				"tasks/skills/plan/SKILL.md":  "---\n" + tt.front + "---\n# Plan\n",
				"tasks/skills/other/SKILL.md": "---\nname: other\ndescription: d\n---\n",
			}), nil)
			skills := reg.Capabilities[0].Skills
			if tt.wantErr != "" {
				if len(skills) != 1 || len(reg.Problems) != 1 || !strings.Contains(reg.Problems[0].Message, tt.wantErr) ||
					reg.Problems[0].Path != "omni/capabilities/tasks/skills/plan/SKILL.md" {
					t.Fatalf("skills %d, problems %v; want the skill left out with a problem mentioning %q", len(skills), reg.Problems, tt.wantErr)
				}
				return
			}
			if len(reg.Problems) != 0 || len(skills) != 2 {
				t.Fatalf("problems %v, %d skills", reg.Problems, len(skills))
			}
			s := skills[1]
			if s.Name != tt.wantName || s.Description != tt.wantDesc || s.Title != tt.wantTitle {
				t.Errorf("name %q, description %q, title %q; want %q, %q, %q", s.Name, s.Description, s.Title, tt.wantName, tt.wantDesc, tt.wantTitle)
			}
		})
	}
}

func TestSkillExpand(t *testing.T) {
	skill := Skill{
		Name: "plan",
		Body: "Plan ${area} (${depth}) for `${path}`: $ARGUMENTS.",
		Arguments: []SkillArgument{
			{Name: "area", Required: true, Description: "The part to plan for"},
			{Name: "depth"},
		},
	}
	tests := []struct {
		name    string
		args    map[string]string
		want    string
		wantErr string
	}{
		{name: "all", args: map[string]string{"area": "server", "depth": "deep"}, want: "Plan server (deep) for `${path}`: server deep."},
		{name: "optional left out", args: map[string]string{"area": "server"}, want: "Plan server () for `${path}`: server."},
		{name: "values are not expanded again", args: map[string]string{"area": "${depth} $ARGUMENTS", "depth": "x"}, want: "Plan ${depth} $ARGUMENTS (x) for `${path}`: ${depth} $ARGUMENTS x."},
		{name: "required missing", args: map[string]string{"depth": "deep"}, wantErr: `skill "plan" needs the argument "area" (The part to plan for)`},
		{name: "required blank", args: map[string]string{"area": "  "}, wantErr: `needs the argument "area"`},
		{name: "unknown", args: map[string]string{"area": "a", "zone": "b"}, wantErr: `skill "plan" has no argument "zone"; its arguments are area, depth`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := skill.Expand(tt.args)
			if tt.wantErr != "" {
				if !errors.Is(err, ErrSkillArguments) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v; want ErrSkillArguments mentioning %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("Expand = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
	none := Skill{Name: "x", Body: "b"}
	if _, err := none.Expand(map[string]string{"a": "1"}); err == nil || !strings.Contains(err.Error(), "it takes none") {
		t.Errorf("Expand of a skill without arguments = %v; want an error saying it takes none", err)
	}
}

// FuzzSkillArguments checks that no frontmatter makes the arguments parser
// panic, and that what it accepts is valid: named, each name once.
func FuzzSkillArguments(f *testing.F) {
	for _, seed := range []string{
		"---\narguments:\n  - name: a\n    required: true\n    values: [x, 'y z']\n  - name: b\n    values:\n      - c\n---\n",
		"---\narguments:\n  -\n    name: a\n  # c\n  - name: b\n---\n",
		"---\narguments: []\n---\n",
		"---\narguments:\n  - name: a\n    values: [\"x\\\"\", y\n---\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fm, _, err := parseFrontmatter(string(data))
		if err != nil {
			return
		}
		args, err := skillArguments(fm)
		if err != nil {
			return
		}
		seen := map[string]bool{}
		for _, a := range args {
			if !validArgumentName(a.Name) || seen[a.Name] {
				t.Fatalf("accepted argument %+v (seen before: %v)", a, seen[a.Name])
			}
			seen[a.Name] = true
			for _, v := range a.Values {
				if v == "" {
					t.Fatalf("accepted an empty value in %+v", a)
				}
			}
		}
	})
}
