package tsgen

import (
	"bytes"
	"encoding/json"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// maxDepth bounds the nesting of one type: deeper parts become unknown.
const maxDepth = 12

// Inlining the $refs that are not recursive reads best while it repeats
// little: a definition used twice by a definition used twice, and so on,
// doubles the output at each level. When rendering visits more than
// inlineFactor times the schema's JSON values plus inlineSlack, or nests
// past maxDepth through a $ref, the schema is rendered again with every
// $ref target as a named type, which visits each value about once.
const (
	inlineFactor = 2
	inlineSlack  = 100
)

// maxDefault bounds the JSON of a default value shown as @default.
const maxDefault = 120

// decode parses a JSON Schema, keeping numbers as written. A schema that is
// not JSON decodes to nil, which renders as unknown.
func decode(data []byte) any {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return nil
	}
	return v
}

// moduleTypes holds what the tools of one module share: the names taken in
// the `declare module` block, and the named types by what defines them, so
// that tools with the same definition share one type.
type moduleTypes struct {
	taken  map[string]bool
	shared map[string]string // closure key -> type name
}

// reservedTypes are names a generated type alias must not shadow: the
// module's own types and the globals its declarations use.
var reservedTypes = []string{"ContentItem", "ToolResult", "Promise", "Record", "Array", "Object", "call", "tools"}

// frame is a $ref target being rendered, with the depth of the containers
// entered when it started: what lies between it and a reference back to it
// decides whether that reference can be a recursive type alias.
type frame struct {
	ptr      string
	ctxLen   int
	property string // the property whose value it is, a name for it
	alias    bool   // rendered as the body of its type alias
}

// container is a type that holds others, as tsc sees it when it resolves a
// type alias.
type container uint8

const (
	inObject   container = iota // { ... }: members resolve lazily
	inArray                     // E[]
	inElem                      // [E]
	inOptional                  // [E?]
	inRest                      // [...E[]]
)

// deferred reports whether tsc accepts a reference to a type alias inside
// the containers path, from the alias inward, as a recursive one. An object
// defers its members. An array or tuple defers its elements only when the
// reference is an element itself (what tsc calls "may resolve a type
// alias"), and only when the array or tuple is not itself inside an
// optional or rest element: `type T = string | [T[]?]` and
// `type T = string | [string, ...[T][]]` are circular.
func deferred(path []container) bool {
	if len(path) == 0 {
		return false
	}
	if slices.Contains(path, inObject) {
		return true
	}
	outer := path[:len(path)-1]
	return !slices.Contains(outer, inOptional) && !slices.Contains(outer, inRest)
}

// typer renders the schemas of one tool's input or output, resolving local
// $refs against root. A $ref target met again while it is being rendered
// becomes a named type (`export type`), declared once and referred to by
// name, so that recursion stays exact and the output linear.
type typer struct {
	mod      *moduleTypes
	root     any
	rootName string // the name of the root when it is recursive

	allNamed  bool // name every $ref target instead of inlining it
	visits    int
	budget    int
	overflow  bool
	stack     []frame
	ctx       []container       // the containers being rendered
	property  string            // the property being rendered
	names     map[string]string // $ref target pointer -> allocated name
	declared  map[string]bool
	recursive map[string]bool
	decls     []string          // `export type` declarations, in order
	edges     [][2]string       // alias -> alias it refers to eagerly
	reused    map[string]bool   // pointers named by a type the module has
	newShared map[string]string // closure key -> name, for the module
	targets   map[string]bool   // pointers that some $ref names
	anchors   map[string]string
}

func newTyper(mod *moduleTypes, root any, rootName string) *typer {
	t := &typer{mod: mod, root: root, rootName: rootName}
	t.reset()
	return t
}

func (t *typer) reset() {
	t.visits, t.overflow, t.ctx = 0, false, nil
	t.stack = nil
	t.names = map[string]string{}
	t.declared = map[string]bool{}
	t.recursive = map[string]bool{}
	t.decls = nil
	t.edges = nil
	t.reused = map[string]bool{}
	t.newShared = map[string]string{}
}

// top renders the root schema at the indent of a function signature, and
// commits the names it declared to the module.
func (t *typer) top() string {
	out := t.renderRoot()
	if t.overflow {
		t.reset()
		t.allNamed = true
		out = t.renderRoot()
	}
	for _, n := range t.names {
		t.mod.taken[n] = true
	}
	maps.Copy(t.mod.shared, t.newShared)
	return out
}

func (t *typer) renderRoot() string {
	t.targets = t.refTargets()
	return t.render(t.root, "", "  ", 0)
}

// refTargets returns the canonical pointers of the root's $ref targets,
// and sets the budget of visits for inlining them.
func (t *typer) refTargets() map[string]bool {
	targets := map[string]bool{}
	values := 0
	var walk func(n any)
	walk = func(n any) {
		values++
		switch v := n.(type) {
		case map[string]any:
			if ref, ok := v["$ref"].(string); ok {
				if ptr, _, ok := t.resolve(ref); ok {
					targets[ptr] = true
				}
			}
			for _, x := range v {
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(t.root)
	t.budget = inlineFactor*values + inlineSlack
	return targets
}

// render renders the schema n found at ptr in the root. A $ref target is
// inlined while that stays finite and small, else named. A target met again
// while it is being rendered is recursive: it becomes a named type, unless
// tsc would find that type circular (`type A = A | string`; see deferred),
// and then unknown.
func (t *typer) render(n any, ptr, indent string, depth int) string {
	if !t.targets[ptr] {
		return t.renderNode(n, ptr, indent, depth)
	}
	// Met again while it is being rendered, through a $ref or through the
	// definition that holds it: a recursive type.
	for i := len(t.stack) - 1; i >= 0; i-- {
		if t.stack[i].ptr != ptr {
			continue
		}
		if !deferred(t.ctx[t.stack[i].ctxLen:]) {
			return "unknown"
		}
		t.recursive[ptr] = true
		return t.alias(t.name(ptr))
	}
	if t.declared[ptr] {
		return t.alias(t.names[ptr])
	}
	if t.allNamed {
		return t.alias(t.declare(ptr, n))
	}
	if depth >= maxDepth {
		t.overflow = true
		return "unknown"
	}
	edges := len(t.edges)
	t.stack = append(t.stack, frame{ptr: ptr, ctxLen: len(t.ctx), property: t.property})
	out := t.renderNode(n, ptr, indent, depth)
	t.stack = t.stack[:len(t.stack)-1]
	if t.recursive[ptr] {
		t.edges = t.edges[:edges] // that text is rendered again, as the type's
		return t.alias(t.declare(ptr, n))
	}
	return out
}

// alias returns a reference to the type alias name from where rendering
// is, or unknown where that would make the aliases circular for tsc: when
// the alias being declared would reach itself through references that tsc
// resolves eagerly (`type A = B | string; type B = A`).
func (t *typer) alias(name string) string {
	owner := -1
	for i := len(t.stack) - 1; i >= 0 && owner < 0; i-- {
		if t.stack[i].alias {
			owner = i
		}
	}
	if owner < 0 || deferred(t.ctx[t.stack[owner].ctxLen:]) {
		return name
	}
	from := t.names[t.stack[owner].ptr]
	if from == name || t.reaches(name, from) {
		return "unknown"
	}
	t.edges = append(t.edges, [2]string{from, name})
	return name
}

// reaches reports whether alias a refers to alias b through references
// that tsc resolves eagerly.
func (t *typer) reaches(a, b string) bool {
	seen := map[string]bool{a: true}
	next := []string{a}
	for len(next) > 0 {
		n := next[len(next)-1]
		next = next[:len(next)-1]
		for _, e := range t.edges {
			if e[0] != n || seen[e[1]] {
				continue
			}
			if e[1] == b {
				return true
			}
			seen[e[1]] = true
			next = append(next, e[1])
		}
	}
	return false
}

func (t *typer) renderNode(n any, ptr, indent string, depth int) string {
	if t.overflow {
		return "unknown"
	}
	t.visits++
	if t.visits > t.budget && !t.allNamed {
		t.overflow = true
		return "unknown"
	}
	if depth > maxDepth {
		return "unknown"
	}
	switch v := n.(type) {
	case bool:
		if v {
			return "unknown"
		}
		return "never"
	case map[string]any:
		out := t.renderMap(v, ptr, indent, depth)
		if nullable, _ := v["nullable"].(bool); nullable {
			out = union([]string{out, "null"})
		}
		return out
	}
	return "unknown"
}

func (t *typer) renderMap(s map[string]any, ptr, indent string, depth int) string {
	if ref, ok := s["$ref"].(string); ok {
		return t.ref(ref, indent, depth)
	}
	if c, ok := s["const"]; ok {
		return literal(c)
	}
	if list, ok := s["enum"].([]any); ok && len(list) > 0 {
		parts := make([]string, len(list))
		for i, v := range list {
			parts[i] = literal(v)
		}
		return union(parts)
	}
	own := t.own(s, ptr, indent, depth)
	var combined []string
	for _, key := range []string{"oneOf", "anyOf"} {
		if alts, ok := s[key].([]any); ok && len(alts) > 0 {
			parts := make([]string, len(alts))
			for i, a := range alts {
				parts[i] = t.render(a, ptr+"/"+key+"/"+strconv.Itoa(i), indent, depth+1)
			}
			combined = append(combined, union(parts))
		}
	}
	if all, ok := s["allOf"].([]any); ok {
		for i, a := range all {
			combined = append(combined, t.render(a, ptr+"/allOf/"+strconv.Itoa(i), indent, depth+1))
		}
	}
	// A bare `type` beside alternatives only repeats what they say
	// (`"type": "object", "anyOf": [...]`): the alternatives alone read better.
	if own != "" && len(combined) > 0 && onlyType(s) && intersection(combined) != "unknown" {
		own = ""
	}
	if own != "" {
		combined = append([]string{own}, combined...)
	}
	return intersection(combined)
}

// onlyType reports whether s says nothing about its structure but `type`.
func onlyType(s map[string]any) bool {
	for _, k := range []string{"properties", "additionalProperties", "patternProperties", "items", "prefixItems"} {
		if _, ok := s[k]; ok {
			return false
		}
	}
	return true
}

// own renders what s says itself, apart from its combinators: its `type`,
// or the type its keywords imply. It returns "" when s says nothing.
func (t *typer) own(s map[string]any, ptr, indent string, depth int) string {
	var types []string
	switch v := s["type"].(type) {
	case string:
		types = []string{v}
	case []any:
		for _, x := range v {
			if str, ok := x.(string); ok {
				types = append(types, str)
			}
		}
	}
	if len(types) == 0 {
		switch {
		case has(s, "properties", "additionalProperties", "patternProperties"):
			types = []string{"object"}
		case has(s, "items", "prefixItems"):
			types = []string{"array"}
		default:
			return ""
		}
	}
	parts := make([]string, len(types))
	for i, ty := range types {
		parts[i] = t.renderType(s, ty, ptr, indent, depth)
	}
	return union(parts)
}

func has(s map[string]any, keys ...string) bool {
	for _, k := range keys {
		if _, ok := s[k]; ok {
			return true
		}
	}
	return false
}

func (t *typer) renderType(s map[string]any, ty, ptr, indent string, depth int) string {
	switch ty {
	case "string":
		return "string"
	case "number", "integer":
		return "number"
	case "boolean":
		return "boolean"
	case "null":
		return "null"
	case "array":
		return t.array(s, ptr, indent, depth)
	case "object":
		t.ctx = append(t.ctx, inObject)
		defer func() { t.ctx = t.ctx[:len(t.ctx)-1] }()
		return t.object(s, ptr, indent, depth)
	}
	return "unknown"
}

// array renders an array type, or a tuple for prefixItems (2020-12) or an
// items list (draft 7 and before).
func (t *typer) array(s map[string]any, ptr, indent string, depth int) string {
	if prefix, ok := s["prefixItems"].([]any); ok {
		rest, hasRest := s["items"]
		return t.tuple(s, ptr, "prefixItems", "items", prefix, rest, hasRest, indent, depth)
	}
	items, ok := s["items"]
	if !ok {
		return "unknown[]"
	}
	if list, ok := items.([]any); ok {
		rest, hasRest := s["additionalItems"]
		return t.tuple(s, ptr, "items", "additionalItems", list, rest, hasRest, indent, depth)
	}
	if items == false {
		return "[]"
	}
	return paren(t.within(inArray, items, ptr+"/items", indent, depth+1)) + "[]"
}

// within renders n as held by a container of kind c.
func (t *typer) within(c container, n any, ptr, indent string, depth int) string {
	t.ctx = append(t.ctx, c)
	defer func() { t.ctx = t.ctx[:len(t.ctx)-1] }()
	return t.render(n, ptr, indent, depth)
}

// tuple renders positional items; those at or past minItems may be absent.
// Without maxItems or a false rest schema, more items may follow.
func (t *typer) tuple(s map[string]any, ptr, itemsKey, restKey string, items []any, rest any, hasRest bool, indent string, depth int) string {
	minItems, _ := count(s["minItems"])
	maxItems, hasMax := count(s["maxItems"])
	var parts []string
	for i, it := range items {
		if hasMax && i >= maxItems {
			break
		}
		kind := inElem
		if i >= minItems {
			kind = inOptional
		}
		p := t.within(kind, it, ptr+"/"+itemsKey+"/"+strconv.Itoa(i), indent, depth+1)
		if kind == inOptional {
			p = paren(p) + "?"
		}
		parts = append(parts, p)
	}
	switch {
	case hasMax && maxItems <= len(items), hasRest && rest == false:
	case hasRest:
		parts = append(parts, "..."+paren(t.within(inRest, rest, ptr+"/"+restKey, indent, depth+1))+"[]")
	default:
		parts = append(parts, "...unknown[]")
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func count(v any) (int, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	i, err := strconv.Atoi(n.String())
	return i, err == nil && i >= 0
}

// object renders an object type, one property a line, with JSDoc.
func (t *typer) object(s map[string]any, ptr, indent string, depth int) string {
	props, _ := s["properties"].(map[string]any)
	var required []string
	if list, ok := s["required"].([]any); ok {
		for _, r := range list {
			if name, ok := r.(string); ok {
				required = append(required, name)
			}
		}
	}
	inner := indent + "  "
	// Extra keys: additionalProperties and every patternProperties schema.
	var extras []string
	ap, hasAP := s["additionalProperties"]
	switch {
	case hasAP && ap != false:
		extras = append(extras, t.render(ap, ptr+"/additionalProperties", inner, depth+1))
	case !hasAP && len(props) == 0 && !has(s, "patternProperties"):
		extras = append(extras, "unknown")
	}
	if pp, ok := s["patternProperties"].(map[string]any); ok {
		for _, k := range sortedKeys(pp) {
			extras = append(extras, t.render(pp[k], ptr+"/patternProperties/"+escapeToken(k), inner, depth+1))
		}
	}
	extra := ""
	if len(extras) > 0 {
		extra = union(extras)
	}
	if hasAP && len(props) > 0 && (ap == true || isEmptyMap(ap)) && !has(s, "patternProperties") {
		extra = "" // the named properties read better without "and anything else"
	}

	names := sortedKeys(props)
	for _, r := range required {
		if _, ok := props[r]; !ok && !slices.Contains(names, r) {
			names = append(names, r)
		}
	}
	slices.Sort(names)
	types := make([]string, len(names))
	outer := t.property
	defer func() { t.property = outer }()
	for i, name := range names {
		t.property = name
		if p, ok := props[name]; ok {
			types[i] = t.render(p, ptr+"/properties/"+escapeToken(name), inner, depth+1)
		} else if extra != "" {
			types[i] = extra
		} else {
			types[i] = "unknown"
		}
	}
	// An index signature must admit the named properties too, and
	// undefined for an optional one.
	if extra != "" && extra != "unknown" && len(names) > 0 {
		all := append([]string{extra}, types...)
		for _, name := range names {
			if !slices.Contains(required, name) {
				all = append(all, "undefined")
			}
		}
		extra = union(all)
		for _, ty := range all {
			if strings.Contains(ty, "\n") {
				extra = "unknown"
			}
		}
	}
	if len(names) == 0 && extra == "" {
		return "{}"
	}
	var b strings.Builder
	b.WriteString("{\n")
	for i, name := range names {
		if p, ok := props[name].(map[string]any); ok {
			if doc := docText(p); doc != "" {
				b.WriteString(jsdoc(doc, inner))
			}
		}
		b.WriteString(inner + propertyName(name))
		if !slices.Contains(required, name) {
			b.WriteString("?")
		}
		b.WriteString(": " + types[i] + ";\n")
	}
	if extra != "" {
		b.WriteString(inner + "[key: string]: " + extra + ";\n")
	}
	b.WriteString(indent + "}")
	return b.String()
}

func isEmptyMap(v any) bool {
	m, ok := v.(map[string]any)
	return ok && len(m) == 0
}

// docText is the JSDoc of a schema: its description, default and
// deprecation.
func docText(s map[string]any) string {
	var lines []string
	if d, ok := s["description"].(string); ok && strings.TrimSpace(d) != "" {
		lines = append(lines, strings.TrimSpace(d))
	}
	if d, ok := s["default"]; ok {
		if data := jsonText(d); len(data) <= maxDefault {
			lines = append(lines, "@default "+data)
		}
	}
	if dep, _ := s["deprecated"].(bool); dep {
		lines = append(lines, "@deprecated")
	}
	return strings.Join(lines, "\n")
}

// ref renders a $ref as its target; unknown when it cannot be resolved.
func (t *typer) ref(ref, indent string, depth int) string {
	ptr, target, ok := t.resolve(ref)
	if !ok {
		return "unknown"
	}
	return t.render(target, ptr, indent, depth+1)
}

// declare renders the target at ptr as `export type <Name> = ...;` and
// returns the name.
func (t *typer) declare(ptr string, target any) string {
	name := t.name(ptr)
	t.declared[ptr] = true
	if t.reused[ptr] {
		return name
	}
	t.stack = append(t.stack, frame{ptr: ptr, ctxLen: len(t.ctx), property: t.property, alias: true})
	body := t.renderNode(target, ptr, "  ", 0)
	t.stack = t.stack[:len(t.stack)-1]
	var b strings.Builder
	if s, ok := target.(map[string]any); ok && ptr != "" {
		if doc := docText(s); doc != "" {
			b.WriteString(jsdoc(doc, "  "))
		}
	}
	b.WriteString("  export type " + name + " = " + body + ";\n")
	t.decls = append(t.decls, b.String())
	return name
}

// name allocates the type name of the $ref target at ptr, in PascalCase:
// the last definition or property name in the pointer; for a generated
// definition name (zod's "__schema0") or none, the target's title, else the
// property it is the value of; the root is named after its tool. "_2",
// "_3"... when the module has the name already.
func (t *typer) name(ptr string) string {
	if n, ok := t.names[ptr]; ok {
		return n
	}
	key := t.closureKey(ptr)
	if n, ok := t.mod.shared[key]; ok && key != "" {
		t.names[ptr] = n
		t.reused[ptr] = true
		return n
	}
	base := ""
	tokens := strings.Split(ptr, "/")
	for i := 1; i+1 < len(tokens); i++ {
		switch tokens[i] {
		case "$defs", "definitions", "properties", "patternProperties", "dependentSchemas":
			if tok := unescapeToken(tokens[i+1]); !strings.HasPrefix(tok, "__") {
				base = typeName(tok)
			} else {
				base = ""
			}
			i++
		}
	}
	if base == "" && ptr != "" {
		_, target, _ := t.lookup(ptr)
		if s, ok := target.(map[string]any); ok {
			title, _ := s["title"].(string)
			base = typeName(title)
		}
		for i := len(t.stack) - 1; base == "" && i >= 0; i-- {
			if t.stack[i].ptr == ptr {
				base = typeName(t.stack[i].property)
			}
		}
		if base == "" {
			base = typeName(t.property)
		}
	}
	if base == "" {
		base = t.rootName
	}
	taken := func(n string) bool {
		if t.mod.taken[n] {
			return true
		}
		for _, m := range t.names {
			if m == n {
				return true
			}
		}
		return false
	}
	name := base
	for i := 2; taken(name); i++ {
		name = base + "_" + strconv.Itoa(i)
	}
	t.names[ptr] = name
	if key != "" {
		t.newShared[key] = name
	}
	return name
}

// maxClosure bounds the $ref targets a closure key covers; a type that
// reaches more is not shared.
const maxClosure = 100

// closureKey identifies the type of the target at ptr: its pointer and
// JSON, and those of every target its $refs reach. Two schemas with the same
// key render the same type. The root is named after its tool, so it is
// never shared ("").
func (t *typer) closureKey(ptr string) string {
	if ptr == "" {
		return ""
	}
	seen := map[string]bool{}
	var parts []string
	var refs func(n any) bool
	visit := func(p string) bool {
		if seen[p] {
			return true
		}
		seen[p] = true
		_, node, ok := t.lookup(p)
		data, err := json.Marshal(node)
		if !ok || err != nil || len(seen) > maxClosure {
			return false
		}
		parts = append(parts, p+"\x00"+string(data))
		return refs(node)
	}
	refs = func(n any) bool {
		switch v := n.(type) {
		case map[string]any:
			if ref, ok := v["$ref"].(string); ok {
				if p, _, ok := t.resolve(ref); ok && (p == "" || !visit(p)) {
					return false
				}
			}
			for _, x := range v {
				if !refs(x) {
					return false
				}
			}
		case []any:
			for _, x := range v {
				if !refs(x) {
					return false
				}
			}
		}
		return true
	}
	if !visit(ptr) {
		return ""
	}
	slices.Sort(parts)
	return strings.Join(parts, "\x01")
}

// typeName turns a definition name into a PascalCase type name, like
// Identifier; "" when it has no letter or digit.
func typeName(s string) string {
	if !strings.ContainsFunc(s, func(r rune) bool { return r < 128 && (unicode.IsLetter(r) || unicode.IsDigit(r)) }) {
		return ""
	}
	id := strings.TrimSuffix(Identifier(s), "_") // reserved words are lower-case only
	if id[0] == '_' {
		return id
	}
	return strings.ToUpper(id[:1]) + id[1:]
}

// resolve finds a local $ref ("#", a JSON pointer "#/...", or an anchor
// "#name") in the root. It returns the target's canonical pointer.
func (t *typer) resolve(ref string) (string, any, bool) {
	frag, ok := strings.CutPrefix(ref, "#")
	if !ok {
		return "", nil, false // remote or relative: not ours to fetch
	}
	frag, err := url.PathUnescape(frag)
	if err != nil {
		return "", nil, false
	}
	if frag != "" && frag[0] != '/' {
		ptr, ok := t.anchor(frag)
		if !ok {
			return "", nil, false
		}
		frag = ptr
	}
	return t.lookup(frag)
}

// lookup finds the JSON pointer ptr (RFC 6901, not percent-encoded) in the
// root, and returns the target's canonical pointer.
func (t *typer) lookup(ptr string) (string, any, bool) {
	node := t.root
	var canon strings.Builder
	if ptr != "" {
		if ptr[0] != '/' {
			return "", nil, false
		}
		for _, tok := range strings.Split(ptr[1:], "/") {
			var ok bool
			tok = unescapeToken(tok)
			switch v := node.(type) {
			case map[string]any:
				node, ok = v[tok]
			case []any:
				i, err := strconv.Atoi(tok)
				ok = err == nil && i >= 0 && i < len(v) && strconv.Itoa(i) == tok
				if ok {
					node = v[i]
				}
			default:
				ok = false
			}
			if !ok {
				return "", nil, false
			}
			canon.WriteString("/" + escapeToken(tok))
		}
	}
	return canon.String(), node, true
}

// anchor finds the pointer of the subschema named by $anchor, or by a
// draft-7 `"$id": "#name"`.
func (t *typer) anchor(name string) (string, bool) {
	if t.anchors == nil {
		t.anchors = map[string]string{}
		var walk func(n any, ptr string)
		walk = func(n any, ptr string) {
			switch v := n.(type) {
			case map[string]any:
				if a, ok := v["$anchor"].(string); ok {
					t.anchors[a] = ptr
				}
				if id, ok := v["$id"].(string); ok && strings.HasPrefix(id, "#") {
					t.anchors[id[1:]] = ptr
				}
				for k, x := range v {
					walk(x, ptr+"/"+escapeToken(k))
				}
			case []any:
				for i, x := range v {
					walk(x, ptr+"/"+strconv.Itoa(i))
				}
			}
		}
		walk(t.root, "")
	}
	ptr, ok := t.anchors[name]
	return ptr, ok
}

// unescapeToken and escapeToken apply RFC 6901: "~1" is "/", "~0" is "~".
func unescapeToken(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~1", "/"), "~0", "~")
}

func escapeToken(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// requiresArgs reports whether a value must be given for the schema: an
// object with required properties, directly or through $ref and allOf, or
// alternatives that all require some.
func (t *typer) requiresArgs(n any, depth int) bool {
	s, ok := n.(map[string]any)
	if !ok || depth > maxDepth {
		return false
	}
	if ref, ok := s["$ref"].(string); ok {
		_, target, ok := t.resolve(ref)
		return ok && t.requiresArgs(target, depth+1)
	}
	if list, ok := s["required"].([]any); ok && len(list) > 0 {
		return true
	}
	if all, ok := s["allOf"].([]any); ok {
		for _, a := range all {
			if t.requiresArgs(a, depth+1) {
				return true
			}
		}
	}
	for _, key := range []string{"oneOf", "anyOf"} {
		if alts, ok := s[key].([]any); ok && len(alts) > 0 {
			every := true
			for _, a := range alts {
				every = every && t.requiresArgs(a, depth+1)
			}
			if every {
				return true
			}
		}
	}
	return false
}

// literal renders a JSON value as a TypeScript literal type.
func literal(v any) string {
	switch x := v.(type) {
	case string, json.Number, bool, nil:
		return jsonText(x)
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = literal(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case map[string]any:
		if len(x) == 0 {
			return "Record<string, never>"
		}
		var parts []string
		for _, k := range sortedKeys(x) {
			parts = append(parts, propertyName(k)+": "+literal(x[k]))
		}
		return "{ " + strings.Join(parts, "; ") + " }"
	}
	return "unknown"
}

// union joins alternatives: unknown absorbs the others, never adds nothing.
func union(parts []string) string {
	var out []string
	for _, p := range parts {
		if p != "never" && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	switch {
	case slices.Contains(out, "unknown"):
		return "unknown"
	case len(out) == 0:
		return "never"
	}
	return strings.Join(out, " | ")
}

// intersection joins constraints that all hold: unknown adds nothing, never
// absorbs the others.
func intersection(parts []string) string {
	var out []string
	for _, p := range parts {
		if p != "unknown" && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	switch {
	case slices.Contains(out, "never"):
		return "never"
	case len(out) == 0:
		return "unknown"
	case len(out) == 1:
		return out[0]
	}
	for i, p := range out {
		out[i] = paren(p)
	}
	return strings.Join(out, " & ")
}

// paren wraps a union or intersection so that [] or & binds to all of it.
func paren(s string) string {
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '{', '(', '[':
			depth++
		case '}', ')', ']':
			depth--
		case '"':
			for i++; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' {
					i++
				}
			}
		case '/':
			// A JSDoc comment may hold brackets and quotes of its own.
			if strings.HasPrefix(s[i:], "/*") {
				end := strings.Index(s[i+2:], "*/")
				if end < 0 {
					return "(" + s + ")"
				}
				i += end + 3
			}
		case ' ':
			if depth == 0 && i+2 < len(s) && (s[i+1] == '|' || s[i+1] == '&') && s[i+2] == ' ' {
				return "(" + s + ")"
			}
		}
	}
	return s
}

var identRe = regexp.MustCompile(`^[A-Za-z_$][A-Za-z0-9_$]*$`)

func propertyName(name string) string {
	if identRe.MatchString(name) {
		return name
	}
	return jsonText(name)
}

// jsonText is v as compact JSON, which is also a TypeScript literal: Go
// escapes U+2028 and U+2029, which JavaScript strings once could not hold.
func jsonText(v any) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if enc.Encode(v) != nil {
		return "null"
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// jsdoc renders text as a JSDoc comment at indent; "*/" in it cannot end
// the comment.
func jsdoc(text, indent string) string {
	text = strings.TrimSpace(strings.ReplaceAll(text, "*/", "*\u200b/"))
	lines := strings.Split(text, "\n")
	if len(lines) == 1 {
		return indent + "/** " + lines[0] + " */\n"
	}
	var b strings.Builder
	b.WriteString(indent + "/**\n")
	for _, l := range lines {
		b.WriteString(strings.TrimRight(indent+" * "+strings.TrimRight(l, "\r"), " ") + "\n")
	}
	b.WriteString(indent + " */\n")
	return b.String()
}
