package main

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestReadmeHostConfigs checks the README's MCP host setup: every JSON block
// parses, and every omnidev command it names is one the CLI has.
func TestReadmeHostConfigs(t *testing.T) {
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```(\\w*)\n(.*?)```").FindAllStringSubmatch(string(data), -1)
	jsonBlocks, commandsChecked := 0, 0
	for _, b := range blocks {
		lang, body := b[1], b[2]
		switch lang {
		case "json":
			jsonBlocks++
			var v any
			if err := json.Unmarshal([]byte(body), &v); err != nil {
				t.Errorf("README JSON block does not parse: %v\n%s", err, body)
				continue
			}
			for _, argv := range omnidevInvocations(v) {
				commandsChecked++
				checkSubcommand(t, argv, body)
			}
		case "sh":
			for _, line := range strings.Split(body, "\n") {
				if _, after, ok := strings.Cut(line, " -- omnidev "); ok && strings.HasPrefix(line, "claude mcp add") {
					commandsChecked++
					checkSubcommand(t, strings.Fields(after), line)
				}
			}
		}
	}
	if jsonBlocks < 8 || commandsChecked < 5 {
		t.Errorf("found %d JSON blocks and %d omnidev commands; the host sections seem to be missing", jsonBlocks, commandsChecked)
	}
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

// checkSubcommand checks that argv (after "omnidev", global flags first)
// names a subcommand the CLI has.
func checkSubcommand(t *testing.T, argv []string, context string) {
	t.Helper()
	for len(argv) > 0 && strings.HasPrefix(argv[0], "-") {
		argv = argv[1:]
		if len(argv) > 0 && !strings.Contains(argv[0], "=") { // --dir VALUE
			argv = argv[1:]
		}
	}
	if len(argv) == 0 {
		t.Errorf("no omnidev subcommand in %q", context)
		return
	}
	for _, c := range commands() {
		if c.name == argv[0] {
			return
		}
	}
	t.Errorf("README names `omnidev %s`, which is not a subcommand:\n%s", argv[0], context)
}
