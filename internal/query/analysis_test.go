package query

import (
	"slices"
	"testing"
)

func TestAnalysis(t *testing.T) {
	m := newMapping()
	tests := []struct {
		analyzer, text string
		// want lists the terms at each position.
		want [][]string
	}{
		{wordsAnalyzer, "os.ReadFile", [][]string{{"os.readfile", "os", "readfile", "read", "file"}}},
		{wordsAnalyzer, "parseConfig(x)", [][]string{{"parseconfig", "parse", "config"}, {"x"}}},
		{wordsAnalyzer, "max_output_bytes", [][]string{{"max_output_bytes", "max", "output", "bytes"}}},
		{wordsAnalyzer, "Europe/Berlin", [][]string{{"europe"}, {"berlin"}}},
		{wordsAnalyzer, "HTTPServer v2", [][]string{{"httpserver", "http", "server"}, {"v2"}}},
		{wordsAnalyzer, "the tracking of tasks", [][]string{{"tracking"}, {"tasks"}}},
		{textAnalyzer, "the tracking of tasks", [][]string{{"tracking", "track"}, {"tasks", "task"}}},
		{textAnalyzer, "listTasks", [][]string{{"listtasks", "listtask", "list", "tasks", "task"}}},
		{textAnalyzer, "_private __x", [][]string{{"_private", "_privat", "private", "privat"}, {"__x", "x"}}},
	}
	for _, tt := range tests {
		t.Run(tt.analyzer+" "+tt.text, func(t *testing.T) {
			var got [][]string
			last := -1
			for _, tok := range m.AnalyzerNamed(tt.analyzer).Analyze([]byte(tt.text)) {
				if tok.Position != last {
					got = append(got, nil)
					last = tok.Position
				}
				got[len(got)-1] = append(got[len(got)-1], string(tok.Term))
				if string(tok.Term) != "" && tok.End <= len(tt.text) && tok.Start < tok.End {
					continue
				}
				t.Errorf("term %q has offsets %d-%d outside the text", tok.Term, tok.Start, tok.End)
			}
			if !slices.EqualFunc(got, tt.want, slices.Equal) {
				t.Errorf("Analyze(%q) = %q, want %q", tt.text, got, tt.want)
			}
		})
	}
}
