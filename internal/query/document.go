package query

import (
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"hash"
	"maps"
	"slices"
	"strings"

	"github.com/omnidev/omnidev/internal/capability"
	"github.com/omnidev/omnidev/internal/tsgen"
)

// document is what bleve indexes for one capability, skill, doc or rule. Its
// bleve id is its source tag (see source); the json names are the bleve field
// names of the mapping (see newMapping).
type document struct {
	// Kind is KindCapability, KindSkill, KindDoc, KindRule or KindTool; kept only as a
	// keyword to filter on.
	Kind string `json:"kind"`
	// Name is how the document is referred to: a capability's id and module;
	// a skill's, doc's ("guide/setup") or rule's name after its capability's
	// id, so that "tasks naming" finds the naming rule of tasks.
	Name string `json:"name"`
	// Title is the human heading shown in hits.
	Title string `json:"title"`
	// Description is a capability's or skill's one-line description.
	Description string `json:"description"`
	// Body is the Markdown of a skill, doc or rule, and a capability's
	// types.d.ts: agents search for the functions they want to call, so the
	// exported names must be findable.
	Body string `json:"body"`
}

// documents returns the documents of every capability in reg, by source tag.
// A nil registry has none.
func documents(reg *capability.Registry) map[string]document {
	docs := make(map[string]document)
	if reg == nil {
		return docs
	}
	// The first of two documents with the same tag wins (two skill folders
	// whose frontmatter declares the same name), as it does in the registry's
	// sorted order, so the result does not depend on map iteration.
	add := func(id string, d document) {
		if _, dup := docs[id]; !dup {
			docs[id] = d
		}
	}
	for _, c := range reg.Capabilities {
		if c == nil {
			continue
		}
		name := c.ID
		if c.Module != "" && c.Module != c.ID {
			name += " " + c.Module
		}
		body := c.Types
		if len(c.Tools) > 0 {
			// Each tool is a document of its own: the generated declaration
			// would make one document of a whole API.
			body = ""
		}
		add(source(KindCapability, c.ID, ""), document{
			Kind:        KindCapability,
			Name:        name,
			Title:       cmp.Or(c.Name, c.ID),
			Description: c.Description,
			Body:        body,
		})
		for _, s := range c.Skills {
			add(source(KindSkill, c.ID, s.Name), document{
				Kind:        KindSkill,
				Name:        c.ID + " " + s.Name,
				Title:       s.Name,
				Description: s.Description,
				Body:        s.Body,
			})
		}
		for _, d := range c.Docs {
			add(source(KindDoc, c.ID, d.Name), document{
				Kind:  KindDoc,
				Name:  c.ID + " " + d.Name,
				Title: cmp.Or(d.Title, d.Name),
				Body:  d.Body,
			})
		}
		for _, t := range toolDocuments(c) {
			add(source(KindTool, c.ID, t.name), t.doc)
		}
		for _, r := range c.Rules {
			add(source(KindRule, c.ID, r.Name), document{
				Kind:  KindRule,
				Name:  c.ID + " " + r.Name,
				Title: cmp.Or(r.Title, r.Name),
				Body:  r.Body,
			})
		}
	}
	return docs
}

type toolDocument struct {
	name string
	doc  document
}

// toolDocuments returns a document per tool of the server c wraps: its
// MCP name and function name, title, description, and its parameters'
// names and descriptions, which are what an agent searches for.
func toolDocuments(c *capability.Capability) []toolDocument {
	if len(c.Tools) == 0 {
		return nil
	}
	fns := tsgen.Identifiers(c.Tools)
	out := make([]toolDocument, len(c.Tools))
	for i, t := range c.Tools {
		var schema struct {
			Properties map[string]struct {
				Description string `json:"description"`
			} `json:"properties"`
		}
		json.Unmarshal(t.InputSchema, &schema) // a schema that does not parse just has no parameters to show
		var params strings.Builder
		for _, name := range slices.Sorted(maps.Keys(schema.Properties)) {
			params.WriteString(name)
			if d := schema.Properties[name].Description; d != "" {
				params.WriteString(": " + d)
			}
			params.WriteString("\n")
		}
		out[i] = toolDocument{name: t.Name, doc: document{
			Kind:        KindTool,
			Name:        c.ID + " " + t.Name + " " + fns[i],
			Title:       cmp.Or(t.Title, t.Name),
			Description: t.Description,
			Body:        params.String(),
		}}
	}
	return out
}

// hasher computes document hashes. One hasher serves a whole update: the
// content of every document is hashed at every update, and copying each
// field to a new []byte for the digest cost as much as the digest itself.
type hasher struct {
	h   hash.Hash
	buf [4096]byte
}

func newHasher() *hasher { return &hasher{h: sha256.New()} }

// hash identifies the indexed content of d. Fields are length-prefixed so
// that moving text from one field to the next changes the hash.
func (hs *hasher) hash(d *document) string {
	hs.h.Reset()
	for _, f := range [...]string{d.Kind, d.Name, d.Title, d.Description, d.Body} {
		hs.h.Write(binary.AppendUvarint(hs.buf[:0], uint64(len(f))))
		for len(f) > 0 {
			n := copy(hs.buf[:], f)
			hs.h.Write(hs.buf[:n])
			f = f[n:]
		}
	}
	// 128 bits are plenty to tell versions of a document apart, and keep
	// the stored hashes half the size.
	return hex.EncodeToString(hs.h.Sum(hs.buf[:0])[:16])
}

// source returns the tag of a document: "capability:<id>" or
// "<kind>:<id>/<name>".
func source(kind, capID, name string) string {
	if kind == KindCapability {
		return kind + ":" + capID
	}
	return kind + ":" + capID + "/" + name
}

// parseSource splits a tag made by source. Capability ids never hold "/" or
// ":", names may hold "/" ("doc:tasks/guide/setup").
func parseSource(tag string) (kind, capID, name string) {
	kind, rest, _ := strings.Cut(tag, ":")
	capID, name, _ = strings.Cut(rest, "/")
	return kind, capID, name
}
