package server

import (
	"reflect"
	"slices"

	"github.com/google/jsonschema-go/jsonschema"
)

// schemaFor infers the JSON schema of T, a tool's input or output. types
// gives the schemas of T's own named types (their bounds, enums and
// defaults), which jsonschema struct tags cannot express. Arrays are
// declared as arrays rather than the inferred ["null","array"]: our results
// never hold nil slices, and strict clients would otherwise have to
// special-case null.
func schemaFor[T any](types map[reflect.Type]*jsonschema.Schema) (*jsonschema.Schema, error) {
	s, err := jsonschema.For[T](&jsonschema.ForOptions{TypeSchemas: types})
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
