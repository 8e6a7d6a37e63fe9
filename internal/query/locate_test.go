package query

import (
	"maps"
	"testing"
)

// While an Update writes the index, the text of the state may not be the
// text the index stores: snippets are then cut from the index's.
func TestSnippetTextDuringUpdate(t *testing.T) {
	x := openFixture(t, fixture())
	const want = "Search the repository with **ripgrep** and find symbols"
	st := x.state.Load()
	stale := *st
	stale.docs = maps.Clone(st.docs)
	d := stale.docs["capability:search"]
	d.Description = "Stale text, which the index does not hold"
	stale.docs["capability:search"] = d
	x.state.Store(&stale)

	snippet := func() string {
		t.Helper()
		res, err := x.Search(t.Context(), Request{Query: "ripgrep"})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Results) == 0 {
			t.Fatal("no hits")
		}
		return res.Results[0].Snippet
	}
	// The state is trusted when no write is under way...
	if got := snippet(); got == want {
		t.Fatalf("snippet %q read from the index, want it from the state", got)
	}
	// ...and not while one is.
	x.writes.Add(1)
	defer x.writes.Add(1)
	if got := snippet(); got != want {
		t.Errorf("snippet during a write = %q, want %q", got, want)
	}
}
