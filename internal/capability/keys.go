package capability

import (
	"fmt"
	"strings"

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
	lines := keyLines(data)
	for _, k := range undecoded {
		if parentUnknown(k, unknown) {
			continue
		}
		where := path
		if line := lineOf(lines, k); line > 0 {
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

// keyLines maps every key path a TOML file spells out (tables, dotted keys,
// keys of inline tables on their line) to the line that first names it.
// It is a line scanner, not a parser: the file already decoded, and a key
// it cannot place is reported without a line, never wrongly placed inside
// a multi-line string.
func keyLines(data []byte) map[string]int {
	lines := make(map[string]int)
	record := func(path []string, line int) {
		for i := 1; i <= len(path); i++ {
			k := toml.Key(path[:i]).String()
			if _, ok := lines[k]; !ok {
				lines[k] = line
			}
		}
	}
	var table []string
	inString := "" // the closing quotes of a multi-line string being skipped
	for n, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if inString != "" {
			if strings.Contains(line, inString) {
				inString = ""
			}
			continue
		}
		if line == "" || line[0] == '#' {
			continue
		}
		if line[0] == '[' {
			header := strings.Trim(strings.TrimSpace(stripTOMLComment(line)), "[]")
			table = splitKey(header)
			record(table, n+1)
			continue
		}
		key, value, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		path := append(append([]string(nil), table...), splitKey(key)...)
		record(path, n+1)
		value = strings.TrimSpace(value)
		for _, q := range []string{`"""`, `'''`} {
			if strings.HasPrefix(value, q) && !strings.Contains(value[3:], q) {
				inString = q
			}
		}
		if strings.HasPrefix(value, "{") {
			for _, part := range strings.Split(strings.Trim(stripTOMLComment(value), "{} "), ",") {
				if k, _, ok := strings.Cut(part, "="); ok {
					record(append(append([]string(nil), path...), splitKey(k)...), n+1)
				}
			}
		}
	}
	return lines
}

// lineOf returns the line of k, else of its nearest parent that has one; 0
// when none does.
func lineOf(lines map[string]int, k toml.Key) int {
	for i := len(k); i > 0; i-- {
		if line, ok := lines[k[:i].String()]; ok {
			return line
		}
	}
	return 0
}

// splitKey splits a dotted TOML key, unquoting quoted parts.
func splitKey(s string) []string {
	var parts []string
	var cur strings.Builder
	quote := byte(0)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0 && c == quote:
			quote = 0
		case quote != 0:
			cur.WriteByte(c)
		case c == '"' || c == '\'':
			quote = c
		case c == '.':
			parts = append(parts, strings.TrimSpace(cur.String()))
			cur.Reset()
		case c != ' ' && c != '\t':
			cur.WriteByte(c)
		}
	}
	return append(parts, strings.TrimSpace(cur.String()))
}

// stripTOMLComment drops a # comment that is not inside quotes.
func stripTOMLComment(s string) string {
	quote := byte(0)
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case quote != 0 && c == quote:
			quote = 0
		case quote == 0 && (c == '"' || c == '\''):
			quote = c
		case quote == 0 && c == '#':
			return s[:i]
		}
	}
	return s
}
