package capability

import (
	"fmt"

	"github.com/BurntSushi/toml"
)

// unknownKeys returns one Problem per key of a TOML file that decoding into
// its struct left unused: the known keys are exactly the struct's fields, so
// a section another part of omnidev adds to the struct is known at once.
// A table that is unknown as a whole is reported once, not once per key in
// it. path names the file; capID is "" for config files. known, when not
// nil, tells keys read from a value decoded as `any` (which the decoder
// cannot see being used) from unknown ones.
func unknownKeys(md toml.MetaData, data []byte, path, capID string, known func(toml.Key) bool) []Problem {
	var undecoded []toml.Key
	for _, k := range md.Undecoded() {
		if known == nil || !known(k) {
			undecoded = append(undecoded, k)
		}
	}
	unknown := make(map[string]bool, len(undecoded))
	for _, k := range undecoded {
		unknown[k.String()] = true
	}
	var problems []Problem
	for _, k := range undecoded {
		if parentUnknown(k, unknown) {
			continue
		}
		where := path
		if line := lineOf(data, k); line > 0 {
			where = fmt.Sprintf("%s:%d", path, line)
		}
		problems = append(problems, Problem{Capability: capID, Path: where, Message: unknownKeyMessage(k, md.Type(k...))})
	}
	return problems
}

func parentUnknown(k toml.Key, unknown map[string]bool) bool {
	for i := len(k) - 1; i > 0; i-- {
		if unknown[k[:i].String()] {
			return true
		}
	}
	return false
}

func unknownKeyMessage(k toml.Key, typ string) string {
	what := "key"
	if typ == "Hash" || typ == "ArrayHash" {
		what = "table"
	}
	msg := fmt.Sprintf("unknown %s %s is ignored", what, k)
	switch {
	case len(k) >= 2 && k[0] == "capabilities" && (k[1] == "sources" || k[1] == "groups"):
		return msg + "; omnidev does not fetch OmniDev capability sources or expand groups: put each capability's folder in the capabilities folder and list its id in an enable list"
	case len(k) >= 1 && (k[0] == "mcps" || k[0] == "providers"):
		return msg + "; omnidev does not read OmniDev's " + k[0] + " section"
	}
	return msg + "; check its spelling, or remove it"
}

// lineOf returns the line of k in data, else of its nearest parent that
// keyPosition can place; 0 when none.
func lineOf(data []byte, k toml.Key) int {
	for i := len(k); i > 0; i-- {
		if pos, ok := keyPosition(data, k[:i]); ok {
			return pos.Line
		}
	}
	return 0
}
