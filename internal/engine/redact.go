package engine

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/omnidev/omnidev/internal/execute"
)

// redactor returns what removes the secrets' values from a wrapped
// server's answers to a program, as written in a JSON line (raw, and as a
// JSON string escapes them); nil when there is none.
func redactor(secrets []execute.Secret) func([]byte) []byte {
	secrets = slices.DeleteFunc(slices.Clone(secrets), func(s execute.Secret) bool { return s.Value == "" })
	if len(secrets) == 0 {
		return nil
	}
	slices.SortFunc(secrets, func(a, b execute.Secret) int { return len(b.Value) - len(a.Value) })
	var pairs []string
	for _, s := range secrets {
		mark := "[secret " + s.Name + "]"
		pairs = append(pairs, s.Value, mark)
		if q, err := json.Marshal(s.Value); err == nil {
			if esc := string(q[1 : len(q)-1]); esc != s.Value {
				pairs = append(pairs, esc, mark)
			}
		}
	}
	r := strings.NewReplacer(pairs...)
	return func(line []byte) []byte { return []byte(r.Replace(string(line))) }
}
