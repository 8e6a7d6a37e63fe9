package engine

import (
	"fmt"
	"strings"
	"testing"

	"github.com/omnidev/omnidev/internal/execute"
)

func TestCallLog(t *testing.T) {
	t.Run("order, outcome and one-line errors", func(t *testing.T) {
		l := &callLog{redact: redactor([]execute.Secret{{Name: "TOKEN", Value: "s3cret"}})}
		first := l.begin("a", "one")
		second := l.begin("b", "two")
		third := l.begin("a", "three")
		second("invalid arguments: s3cret\nat line 2")
		first("")
		calls, omitted := l.end()
		third("too late") // the run ended under it
		if omitted != 0 || len(calls) != 3 {
			t.Fatalf("calls %+v, omitted %d", calls, omitted)
		}
		want := []execute.ToolCall{
			{Capability: "a", Tool: "one", OK: true},
			{Capability: "b", Tool: "two", Error: "invalid arguments: [secret TOKEN] …"},
			{Capability: "a", Tool: "three", Error: "no answer yet when the program ended; the call was cancelled"},
		}
		for i, c := range calls {
			c.MS = 0
			if c != want[i] {
				t.Errorf("call %d = %+v, want %+v", i, c, want[i])
			}
		}
	})
	t.Run("cap", func(t *testing.T) {
		l := &callLog{}
		for i := range execute.MaxListedCalls + 7 {
			l.begin("a", fmt.Sprint(i))("")
		}
		calls, omitted := l.end()
		if len(calls) != execute.MaxListedCalls || omitted != 7 || calls[0].Tool != "0" {
			t.Fatalf("%d calls (first %+v), %d omitted; want %d and 7", len(calls), calls[0], omitted, execute.MaxListedCalls)
		}
	})
	t.Run("long error", func(t *testing.T) {
		l := &callLog{}
		l.begin("a", "b")(strings.Repeat("é", 500))
		calls, _ := l.end()
		if n := len(calls[0].Error); n > maxCallError+len("…") || !strings.HasSuffix(calls[0].Error, "…") {
			t.Fatalf("error of %d bytes: %q", n, calls[0].Error)
		}
	})
}
