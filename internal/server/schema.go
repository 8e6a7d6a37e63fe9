package server

import (
	"slices"

	"github.com/google/jsonschema-go/jsonschema"
)

// outputSchema infers the JSON schema of T for a tool's output. Our results
// never hold nil slices, so arrays are declared as arrays rather than the
// inferred ["null","array"], which strict clients would otherwise have to
// special-case.
func outputSchema[T any]() (*jsonschema.Schema, error) {
	s, err := jsonschema.For[T](nil)
	if err != nil {
		return nil, err
	}
	fixArrays(s)
	return s, nil
}

func fixArrays(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	if slices.Equal(s.Types, []string{"null", "array"}) {
		s.Types, s.Type = nil, "array"
	}
	fixArrays(s.Items)
	for _, p := range s.Properties {
		fixArrays(p)
	}
}
