package capability

import (
	"testing"

	"github.com/omnidev/omnidev/internal/capability/captest"
)

// BenchmarkLoad loads the default generated tree: 40 capabilities of 50
// docs each (plus a rule and a skill), 1–3 KB per doc.
func BenchmarkLoad(b *testing.B) {
	dir := b.TempDir()
	if _, err := captest.Generate(dir, captest.Options{}); err != nil {
		b.Fatal(err)
	}
	var docs int
	for b.Loop() {
		reg, err := Load(dir, nil)
		if err != nil {
			b.Fatal(err)
		}
		if len(reg.Problems) > 0 {
			b.Fatalf("unexpected problems: %v", reg.Problems)
		}
		docs = 0
		for _, c := range reg.Capabilities {
			docs += len(c.Docs) + len(c.Rules) + len(c.Skills)
		}
	}
	b.ReportMetric(float64(docs), "docs/op")
}
