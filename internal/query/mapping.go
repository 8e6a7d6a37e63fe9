package query

import (
	"github.com/blevesearch/bleve/v2"
	// The "custom" analyzer type of the analyzers in analysis.go.
	_ "github.com/blevesearch/bleve/v2/analysis/analyzer/custom"
	"github.com/blevesearch/bleve/v2/mapping"
)

// schemaVersion is recorded in the manifest. Bump it whenever newMapping,
// the analysis (analysis.go) or what documents puts in a field changes: an
// index of another version is rebuilt rather than searched with
// assumptions it does not meet.
const schemaVersion = 2

// Field names of the mapping (the json names of document).
const (
	fieldKind        = "kind"
	fieldName        = "name"
	fieldTitle       = "title"
	fieldDescription = "description"
	fieldBody        = "body"
)

// newMapping returns the mapping of document. It is static: nothing outside
// these fields is indexed, and nothing goes to the catch-all _all field,
// which would double the indexing work for a field no query reads.
func newMapping() *mapping.IndexMappingImpl {
	text := func(store, vectors bool) *mapping.FieldMapping {
		f := bleve.NewTextFieldMapping()
		f.Analyzer = textAnalyzer
		f.Store = store
		// Term vectors hold positions (phrase queries) and byte offsets
		// (snippets, and the words a typo or prefix matched).
		f.IncludeTermVectors = vectors
		f.IncludeInAll = false
		f.DocValues = false
		return f
	}
	kind := bleve.NewKeywordFieldMapping()
	kind.Store = false
	kind.IncludeTermVectors = false
	kind.IncludeInAll = false
	kind.DocValues = false

	doc := bleve.NewDocumentStaticMapping()
	doc.AddFieldMappingsAt(fieldKind, kind)
	// Name is never shown (Hit.Name comes from the source tag), nor
	// searched as a phrase; title is shown; description and body are what
	// snippets are cut from.
	doc.AddFieldMappingsAt(fieldName, text(false, false))
	doc.AddFieldMappingsAt(fieldTitle, text(true, true))
	doc.AddFieldMappingsAt(fieldDescription, text(true, true))
	doc.AddFieldMappingsAt(fieldBody, text(true, true))

	m := bleve.NewIndexMapping()
	// The analyzers are static configuration: adding them cannot fail.
	if err := m.AddCustomAnalyzer(textAnalyzer, analyzerConfig(stemsFilter)); err != nil {
		panic(err)
	}
	if err := m.AddCustomAnalyzer(wordsAnalyzer, analyzerConfig()); err != nil {
		panic(err)
	}
	m.DefaultMapping = doc
	m.DefaultAnalyzer = textAnalyzer
	m.IndexDynamic = false
	m.StoreDynamic = false
	m.DocValuesDynamic = false
	return m
}
