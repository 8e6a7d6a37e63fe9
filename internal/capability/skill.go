package capability

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// argumentsVar in a skill's body stands for every argument value given,
// joined by spaces: the convention of Claude Code's skills and commands.
const argumentsVar = "$ARGUMENTS"

// implicitArgument is the argument of a skill whose body uses $ARGUMENTS
// without declaring any.
var implicitArgument = SkillArgument{
	Name:        "arguments",
	Description: "What to do, in your own words (fills $ARGUMENTS in the skill)",
}

// ErrSkillArguments is wrapped by the errors of Skill.Expand: the caller
// passed arguments the skill does not take, or left out a required one.
var ErrSkillArguments = errors.New("invalid skill arguments")

// Expand returns the skill's body with `${name}` replaced by the value of
// each declared argument (empty when not given) and `$ARGUMENTS` by the
// values given, in declaration order, joined by spaces. `${...}` of any other
// name is left alone: skill bodies hold TypeScript template literals.
// Inserted values are not expanded again.
func (s *Skill) Expand(args map[string]string) (string, error) {
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(args)) {
		if !s.hasArgument(name) {
			errs = append(errs, wrapped{fmt.Sprintf("skill %q has no argument %q; %s", s.Name, name, s.argumentList()), ErrSkillArguments})
		}
	}
	pairs := make([]string, 0, 2*len(s.Arguments)+2)
	var all []string
	for _, a := range s.Arguments {
		v := args[a.Name]
		if a.Required && strings.TrimSpace(v) == "" {
			msg := fmt.Sprintf("skill %q needs the argument %q", s.Name, a.Name)
			if a.Description != "" {
				msg += " (" + a.Description + ")"
			}
			errs = append(errs, wrapped{msg, ErrSkillArguments})
		}
		if v != "" {
			all = append(all, v)
		}
		pairs = append(pairs, "${"+a.Name+"}", v)
	}
	if err := errors.Join(errs...); err != nil {
		return "", err
	}
	pairs = append(pairs, argumentsVar, strings.Join(all, " "))
	return strings.NewReplacer(pairs...).Replace(s.Body), nil
}

func (s *Skill) hasArgument(name string) bool {
	for _, a := range s.Arguments {
		if a.Name == name {
			return true
		}
	}
	return false
}

// argumentList says which arguments the skill takes.
func (s *Skill) argumentList() string {
	if len(s.Arguments) == 0 {
		return "it takes none"
	}
	names := make([]string, len(s.Arguments))
	for i, a := range s.Arguments {
		names[i] = a.Name
	}
	return "its arguments are " + strings.Join(names, ", ")
}

// wrapped is an error with its own message that still matches target.
type wrapped struct {
	msg    string
	target error
}

func (w wrapped) Error() string { return w.msg }
func (w wrapped) Unwrap() error { return w.target }
