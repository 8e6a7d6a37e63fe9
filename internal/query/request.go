package query

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// Kinds of indexed documents, as used in Request.Kinds, Hit.Kind and the
// prefix of Hit.Source.
const (
	KindCapability = "capability"
	KindSkill      = "skill"
	KindDoc        = "doc"
	KindRule       = "rule"
	// KindTool is a tool of an MCP server a capability wraps.
	KindTool = "tool"
)

// Kinds returns every document kind, in the order results list them.
func Kinds() []string {
	return []string{KindCapability, KindSkill, KindDoc, KindRule, KindTool}
}

// Bounds of a Request.
const (
	// DefaultLimit keeps the hits of an answer under about 6k tokens
	// however long each hit is (docs/tools.md, "Answer budget").
	DefaultLimit = 8
	MaxLimit     = 100
	// MaxQueryChars bounds the query, in characters (runes). It keeps the
	// number of clauses a query expands to, and so its latency, bounded.
	MaxQueryChars = 1000
)

// ErrInvalidRequest is wrapped by every error Validate returns: the caller
// (an agent) sent something it must fix, as opposed to a failure of the index.
var ErrInvalidRequest = errors.New("invalid query request")

// Request is one omni_query call.
type Request struct {
	// Query is free text. Words are stemmed, misspellings and prefixes still
	// match, and "double-quoted phrases" must appear as such. Empty (or only
	// white space) asks for the capability summary instead of hits.
	Query string
	// Limit is the maximum number of hits: 0 means DefaultLimit, else 1 to MaxLimit.
	Limit int
	// IncludeTypes asks for summaries and type definitions of the capabilities
	// that have a returned hit (an empty query always includes them all).
	IncludeTypes bool
	// Kinds restricts hits to these kinds (see Kinds); empty means all.
	Kinds []string
}

// Validate reports every problem of r at once, each error wrapping
// ErrInvalidRequest and naming the bound or values that are accepted.
func (r *Request) Validate() error {
	var errs []error
	if r.Limit < 0 || r.Limit > MaxLimit {
		errs = append(errs, invalidf("limit must be between 1 and %d, got %d", MaxLimit, r.Limit))
	}
	if n := utf8.RuneCountInString(r.Query); n > MaxQueryChars {
		errs = append(errs, invalidf("query must be at most %d characters, got %d", MaxQueryChars, n))
	}
	valid := Kinds()
	for _, k := range r.Kinds {
		if !slices.Contains(valid, k) {
			errs = append(errs, invalidf("unknown kind %q: valid kinds are %s", k, strings.Join(valid, ", ")))
		}
	}
	return errors.Join(errs...)
}

// limit returns the effective limit of a valid request.
func (r *Request) limit() int {
	if r.Limit == 0 {
		return DefaultLimit
	}
	return r.Limit
}

// invalidError keeps the message exactly what the agent must read ("limit
// must be between 1 and 100, got 500") while still matching ErrInvalidRequest.
type invalidError string

func invalidf(format string, args ...any) error {
	return invalidError(fmt.Sprintf(format, args...))
}

func (e invalidError) Error() string { return string(e) }

func (e invalidError) Is(target error) bool { return target == ErrInvalidRequest }
