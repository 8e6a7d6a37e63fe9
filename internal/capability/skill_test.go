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
		{name: "not a list", front: "arguments: area\n", wantErr: "arguments must be a list"},
		{name: "not items", front: "arguments:\n  name: area\n", wantErr: "line 5: expected a list item"},
		{name: "no name", front: "arguments:\n  - description: x\n", wantErr: "line 5: arguments: an item has no name"},
		{name: "bad name", front: "arguments:\n  - name: 1st\n", wantErr: `name "1st" must start with a letter`},
		{name: "unknown key", front: "arguments:\n  - name: a\n    requierd: true\n", wantErr: `unknown key "requierd"`},
		{name: "bad required", front: "arguments:\n  - name: a\n    required: yes\n", wantErr: `required of "a" must be true or false, got "yes"`},
		{name: "twice", front: "arguments:\n  - name: a\n  - name: a\n", wantErr: `"a" is listed twice`},
		{name: "values not a list", front: "arguments:\n  - name: a\n    values: x\n", wantErr: `values of "a": want a list`},
		{name: "empty value", front: "arguments:\n  - name: a\n    values: [x, , y]\n", wantErr: "a value is empty"},
		{name: "description as list", front: "arguments:\n  - name: a\n    description:\n      - x\n", wantErr: "description of \"a\" must be a single value"},
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
