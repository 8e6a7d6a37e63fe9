package server

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/omnidev/omnidev/internal/capability"
	"github.com/omnidev/omnidev/internal/changes"
	"github.com/omnidev/omnidev/internal/execute"
	"github.com/omnidev/omnidev/internal/query"
	"github.com/omnidev/omnidev/internal/typecheck"
)

// Answer budgets (docs/tools.md, "Answer budget"), in tokens, counted as
// bytes/4 of the answer as it goes on the wire.
const (
	executeBudgetTokens = 10_000
	queryBudgetTokens   = 6_000
)

// checkRunSummary checks that omni_execute's text content states the facts
// of its structured content, without the program's output.
func checkRunSummary(t *testing.T, text string, structured any) {
	t.Helper()
	data, err := json.Marshal(structured)
	if err != nil {
		t.Fatal(err)
	}
	var res execute.Result
	if err := json.Unmarshal(data, &res); err != nil {
		t.Fatal(err)
	}
	// Hosts give the model one of the two (Claude Code and VS Code the
	// structured content, others the text): each must carry the output.
	want := []string{
		fmt.Sprintf("diff_stat: %d files, +%d -%d", res.DiffStat.Files, res.DiffStat.Insertions, res.DiffStat.Deletions),
		fmt.Sprintf(" in %d ms", res.DurationMS),
		strings.TrimSpace(res.Stdout),
		strings.TrimSpace(res.Stderr),
	}
	if !res.TimedOut && !res.Cancelled {
		want = append(want, fmt.Sprintf("exit_code %d", res.ExitCode))
	}
	for _, c := range res.Changes[:min(len(res.Changes), summaryChanges)] {
		want = append(want, string(c.Status)+" "+c.Path)
	}
	for _, w := range want {
		if !strings.Contains(text, w) {
			t.Errorf("text content lacks %q:\n%s", w, text)
		}
	}
}

// TestExecuteAnswerBudget measures the largest omni_execute answer the
// default caps allow: both streams full, every list at its bound, each
// entry long (in "warn" mode, the type errors of a program that ran), and
// checks it against the budget.
func TestExecuteAnswerBudget(t *testing.T) {
	// Output that JSON escapes the most among what programs print: lines
	// of quoted words (a quote costs two bytes, a newline two).
	line := `{"level":"info","msg":"processing item","path":"src/components/widget.tsx"}` + "\n"
	out := strings.Repeat(line, capability.DefaultMaxOutputBytes/len(line)+1)[:capability.DefaultMaxOutputBytes]
	res := &execute.Result{
		ExitCode: 1, Stdout: out, Stderr: out, DurationMS: 29_999,
		Truncated:      execute.Truncated{Stdout: true, Stderr: true},
		Isolation:      "namespaces (mount, pid, ipc, uts, net, user), landlock, seccomp, cgroup",
		ChangesOmitted: 1000,
	}
	for i := range execute.MaxListedChanges {
		c := changes.Change{Path: fmt.Sprintf("packages/frontend/src/components/generated/widget_%04d.test.tsx", i), Status: "modified", Insertions: 1234, Deletions: 567}
		res.Changes = append(res.Changes, c)
		res.ChangedFiles = append(res.ChangedFiles, c.Path)
	}
	res.DiffStat = execute.DiffStat{Files: 1050, Insertions: 123456, Deletions: 65432}
	for i := range execute.MaxListedCalls {
		res.Calls = append(res.Calls, execute.ToolCall{Capability: "github-enterprise", Tool: fmt.Sprintf("list-pull-request-review-comments-%d", i), MS: 12345,
			Error: strings.Repeat("x", 100) + "…"})
	}
	res.CallsOmitted = 950
	res.TypeCheck = "errors"
	for i := range typecheck.MaxErrors {
		res.TypeErrors = append(res.TypeErrors, typecheck.TypeError{Line: 1000 + i, Column: 42, Message: strings.Repeat("m", 160) + "…"})
	}
	res.TypeErrorsOmitted = 80
	tokens := answerTokens(t, res)
	t.Logf("largest omni_execute answer at the default caps: about %d tokens", tokens)
	if tokens > executeBudgetTokens {
		t.Errorf("largest omni_execute answer is about %d tokens, over the budget of %d", tokens, executeBudgetTokens)
	}
}

// answerTokens returns the size in tokens (bytes/4) of what a model reads
// of omni_execute's answer for res: hosts pass the model either the
// structured content (Claude Code, VS Code) or the text content (others),
// not both; the larger of the two counts.
func answerTokens(t *testing.T, res *execute.Result) int {
	t.Helper()
	answer, _, err := executeResult(res)
	if err != nil {
		t.Fatal(err)
	}
	structured, err := json.Marshal(answer.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	text := answer.Content[0].(*mcp.TextContent).Text
	return max(len(structured), len(text)) / 4
}

// TestQueryHitsBudget measures omni_query's answers at its default limit,
// hits only (no types, not the empty query's summary), on this
// repository's capabilities for common words and on hits made as long as
// their bounds allow (snippet of SnippetChars characters of 3 bytes each,
// maxMatched long words, a long title).
func TestQueryHitsBudget(t *testing.T) {
	cs, _, _, _ := newTestServer(t, nil)
	largest := 0
	for _, q := range []string{"the", "file", "task", "run a program", "capability docs skills rules"} {
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "omni_query", Arguments: map[string]any{"query": q}})
		if err != nil || res.IsError {
			t.Fatalf("omni_query %q: %v %s", q, err, text(res))
		}
		data, err := json.Marshal(res)
		if err != nil {
			t.Fatal(err)
		}
		largest = max(largest, len(data)/4)
	}
	hit := query.Hit{Source: "doc:" + strings.Repeat("c", 64) + "/" + strings.Repeat("n", 64), Kind: "doc", Capability: strings.Repeat("c", 64),
		Name: strings.Repeat("n", 64), Title: strings.Repeat("Title words ", 10), Snippet: strings.Repeat("é", query.SnippetChars),
		Score: 12.3456, URI: "omni://" + strings.Repeat("c", 64) + "/docs/" + strings.Repeat("n", 64) + ".md"}
	for range 5 {
		hit.Matched = append(hit.Matched, strings.Repeat("w", 20))
	}
	full := &query.Result{Total: 1000}
	for range query.DefaultLimit {
		full.Results = append(full.Results, hit)
	}
	answer, _, err := result(full)
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(answer)
	if err != nil {
		t.Fatal(err)
	}
	bound := len(data) / 4
	t.Logf("omni_query hits at the default limit of %d: about %d tokens on this repository, %d at most", query.DefaultLimit, largest, bound)
	if bound > queryBudgetTokens {
		t.Errorf("omni_query hits at the default limit can reach about %d tokens, over the budget of %d", bound, queryBudgetTokens)
	}
}
