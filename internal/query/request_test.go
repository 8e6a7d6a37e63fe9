package query

import (
	"errors"
	"strings"
	"testing"
)

func TestValidate(t *testing.T) {
	tests := []struct {
		name string
		req  Request
		want []string // each must appear in the error; none means valid
	}{
		{name: "zero value", req: Request{}},
		{name: "bounds", req: Request{Query: strings.Repeat("é", MaxQueryChars), Limit: MaxLimit, Kinds: Kinds()}},
		{name: "limit 1", req: Request{Limit: 1}},
		{name: "limit too big", req: Request{Limit: 500}, want: []string{"limit must be between 1 and 100, got 500"}},
		{name: "negative limit", req: Request{Limit: -1}, want: []string{"limit must be between 1 and 100, got -1"}},
		{
			name: "query too long",
			req:  Request{Query: strings.Repeat("a", MaxQueryChars+1)},
			want: []string{"query must be at most 1000 characters, got 1001"},
		},
		{
			name: "unknown kind",
			req:  Request{Kinds: []string{"doc", "docs"}},
			want: []string{`unknown kind "docs": valid kinds are capability, skill, doc, rule, tool`},
		},
		{
			name: "every problem at once",
			req:  Request{Limit: 101, Query: strings.Repeat("x", 2000), Kinds: []string{"Skill"}},
			want: []string{"got 101", "got 2000", `unknown kind "Skill"`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.req.Validate()
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if !errors.Is(err, ErrInvalidRequest) {
				t.Fatalf("Validate() = %v, want an error wrapping ErrInvalidRequest", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Validate() = %q, want it to contain %q", err, w)
				}
			}
		})
	}
}

func TestSearchValidates(t *testing.T) {
	x := openFixture(t, fixture())
	_, err := x.Search(t.Context(), Request{Query: "tasks", Limit: 500})
	if !errors.Is(err, ErrInvalidRequest) {
		t.Fatalf("Search(limit 500) = %v, want ErrInvalidRequest", err)
	}
	if got, want := err.Error(), "limit must be between 1 and 100, got 500"; got != want {
		t.Errorf("error = %q, want %q", got, want)
	}
}
