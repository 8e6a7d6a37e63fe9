package tsgen

import (
	"encoding/json"
	"testing"

	"github.com/omnidev/omnidev/internal/capability"
)

// FuzzDeclaration: any bytes as a tool's schemas give a declaration,
// without a panic and without output out of proportion to the schema.
func FuzzDeclaration(f *testing.F) {
	for _, tt := range schemaCases {
		for _, in := range tt.tools {
			f.Add([]byte(in))
		}
	}
	f.Add([]byte(`{"$ref":"#"}`))
	f.Add([]byte(`{"properties":{"a":{"$ref":"#/properties/a/items"}},"items":{"$ref":"#/properties"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		tools := []capability.Tool{{Name: "t", InputSchema: json.RawMessage(data), OutputSchema: json.RawMessage(data)}}
		out := Declaration("m", tools)
		base := len(Declaration("m", nil))
		if n := len(out) - base; n > 2000+100*len(data) {
			t.Errorf("a %d-byte schema gave %d bytes of declarations", len(data), n)
		}
	})
}
