package capability

import (
	"fmt"
	"strings"
)

// parseDotEnv reads .omni/.env: KEY=VALUE lines, optionally prefixed with
// "export ", the value optionally wrapped in matching single or double quotes
// (taken literally, without escapes). Blank lines and # comments are skipped;
// a later line overrides an earlier one, as in a shell.
//
// A malformed line is a Problem, never an error: one typo must not take the
// server down. Problems name the line number only, because the line may hold
// a secret.
func parseDotEnv(data []byte) (map[string]string, []Problem) {
	vars := make(map[string]string)
	var problems []Problem
	lineNo := 0
	for line := range strings.Lines(strings.TrimPrefix(string(data), utf8BOM)) {
		lineNo++
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		if rest, ok := strings.CutPrefix(line, "export"); ok && rest != "" && (rest[0] == ' ' || rest[0] == '\t') {
			line = strings.TrimSpace(rest)
		}
		name, value, ok := strings.Cut(line, "=")
		name = strings.TrimSpace(name)
		switch {
		case !ok:
			problems = append(problems, dotEnvProblem(lineNo, "expected KEY=VALUE"))
		case !validEnvName(name):
			problems = append(problems, dotEnvProblem(lineNo, "the name must be letters, digits and _, not starting with a digit"))
		default:
			vars[name] = unquote(strings.TrimSpace(value))
		}
	}
	return vars, problems
}

func dotEnvProblem(lineNo int, msg string) Problem {
	return Problem{
		Path:    dotEnvPath,
		Message: fmt.Sprintf("line %d: %s; the line is ignored", lineNo, msg),
	}
}

// unquote strips one pair of matching surrounding quotes.
func unquote(v string) string {
	if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
		return v[1 : len(v)-1]
	}
	return v
}
