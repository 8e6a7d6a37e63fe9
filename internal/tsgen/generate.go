package tsgen

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/omnidev/omnidev/internal/capability"
)

// contentItem and toolResult are the types every wrapped server's module
// declares: what a tool without an output schema resolves to.
const (
	contentItem = `  /** One item of an MCP tool result's content, as the server sent it. */
  export type ContentItem =
    | { type: "text"; text: string }
    | { type: "image"; data: string; mimeType: string }
    | { type: "audio"; data: string; mimeType: string }
    | { type: "resource_link"; uri: string; name: string; description?: string; mimeType?: string }
    | { type: "resource"; resource: { uri: string; mimeType?: string; text?: string; blob?: string } };
`
	toolResult = `  /** What a tool without an output schema resolves to. */
  export type ToolResult = {
    /** The text items of content, joined by newlines. */
    text: string;
    content: ContentItem[];
  };
`
	// moduleEnd declares what every wrapped server's module exports beside
	// its tools' functions.
	moduleEnd = `
  /** Calls any tool of the server by its exact MCP name. */
  export function call(name: string, args?: Record<string, unknown>): Promise<any>;
  /** The server's tools: MCP name, the function it is exported as, title and description. */
  export const tools: readonly { name: string; function: string; title?: string; description?: string }[];
}
`
)

// Types is the declaration of a wrapped server's module in parts: each
// tool's function, and the named types the functions refer to, so that an
// answer can hold the declarations of a few tools without the whole module.
type Types struct {
	module string
	tools  []toolTypes
	// named holds every named type of the module by name: its
	// `export type` declaration, JSDoc included.
	named map[string]string
	// byName indexes tools by MCP name.
	byName map[string]int
}

type toolTypes struct {
	// decls are the named types the tool's schemas declared first, in order.
	decls []string
	// fn is the function's JSDoc and signature.
	fn string
}

// Generate returns the declaration of the module of a capability that wraps
// an MCP server with tools.
func Generate(module string, tools []capability.Tool) *Types {
	names := Identifiers(tools)
	mod := &moduleTypes{taken: map[string]bool{}, shared: map[string]string{}}
	for _, n := range append(slices.Clone(names), reservedTypes...) {
		mod.taken[n] = true
	}
	ts := &Types{
		module: module,
		tools:  make([]toolTypes, len(tools)),
		named:  map[string]string{"ContentItem": contentItem, "ToolResult": toolResult},
		byName: make(map[string]int, len(tools)),
	}
	for i, t := range tools {
		ts.byName[t.Name] = i
		fn := strings.ToUpper(names[i][:1]) + names[i][1:]
		in := newTyper(mod, decode(t.InputSchema), fn+"Args")
		input := in.top()
		if input == "unknown" || input == "{}" {
			input = "Record<string, unknown>"
		}
		output := "ToolResult"
		out := newTyper(mod, decode(t.OutputSchema), fn+"Result")
		if out.root != nil {
			output = out.top()
		}
		tt := &ts.tools[i]
		for _, d := range append(in.decls, out.decls...) {
			tt.decls = append(tt.decls, d)
			if name, ok := declaredName(d); ok {
				if _, dup := ts.named[name]; !dup {
					ts.named[name] = d
				}
			}
		}
		var b strings.Builder
		doc := t.Description
		if t.Title != "" && !strings.HasPrefix(doc, t.Title) {
			doc = strings.TrimSpace(t.Title + "\n\n" + doc)
		}
		if t.Name != names[i] {
			doc = strings.TrimSpace(doc + "\n\nMCP tool " + quote(t.Name) + ".")
		}
		if doc != "" {
			b.WriteString(jsdoc(doc, "  "))
		}
		arg := "args?: "
		if in.requiresArgs(in.root, 0) {
			arg = "args: "
		}
		fmt.Fprintf(&b, "  export function %s(%s%s): Promise<%s>;\n", names[i], arg, input, output)
		tt.fn = b.String()
	}
	return ts
}

// Declaration returns the `declare module '<module>'` block of a capability
// that wraps an MCP server with tools.
func Declaration(module string, tools []capability.Tool) string {
	return Generate(module, tools).Full()
}

// Full returns the whole `declare module` block: every tool's function.
func (ts *Types) Full() string {
	var b strings.Builder
	fmt.Fprintf(&b, "declare module '%s' {\n", ts.module)
	b.WriteString(contentItem)
	b.WriteString(toolResult)
	for _, t := range ts.tools {
		b.WriteString("\n")
		for _, d := range t.decls {
			b.WriteString(d + "\n")
		}
		b.WriteString(t.fn)
	}
	b.WriteString(moduleEnd)
	return b.String()
}

// Body returns the module's declarations without the `declare module`
// block around them: what a wrapped capability's types.d.ts holds, which
// omni_query and the types resource wrap in a block of their own (a block
// in a block is TS1038).
func (ts *Types) Body() string {
	full := ts.Full()
	_, inner, _ := strings.Cut(full, "{\n")
	inner = strings.TrimSuffix(inner, "}\n")
	lines := strings.Split(inner, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimPrefix(l, "  ")
	}
	return strings.Join(lines, "\n")
}

// Select returns a `declare module` block with the functions of the named
// tools (MCP names; unknown ones are left out), each named type they refer
// to once, and call and tools. It is empty when no tool is known.
func (ts *Types) Select(tools []string) string {
	var fns []string
	for _, name := range tools {
		if i, ok := ts.byName[name]; ok && !slices.Contains(fns, ts.tools[i].fn) {
			fns = append(fns, ts.tools[i].fn)
		}
	}
	if len(fns) == 0 {
		return ""
	}
	// The named types the functions reach, in the order they are first
	// met: a type before the functions that use it.
	var order []string
	seen := map[string]bool{}
	var reach func(text string)
	reach = func(text string) {
		for _, w := range identifiersIn(text) {
			if d, ok := ts.named[w]; ok && !seen[w] {
				seen[w] = true
				reach(d)
				order = append(order, w)
			}
		}
	}
	for _, fn := range fns {
		reach(fn)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "declare module '%s' {\n", ts.module)
	for _, n := range order {
		b.WriteString(ts.named[n])
	}
	for _, fn := range fns {
		b.WriteString("\n")
		b.WriteString(fn)
	}
	b.WriteString(moduleEnd)
	return b.String()
}

// declaredName returns the name an `export type` declaration declares.
func declaredName(decl string) (string, bool) {
	_, rest, ok := strings.Cut(decl, "export type ")
	if !ok {
		return "", false
	}
	name, _, ok := strings.Cut(rest, " ")
	return name, ok
}

// identifiersIn returns the words of a declaration that may name a type:
// runs of letters, digits, _ and $. Words of JSDoc and property names that
// happen to name a type only bring that type along.
func identifiersIn(text string) []string {
	return strings.FieldsFunc(text, func(r rune) bool {
		return !(r == '_' || r == '$' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
	})
}

// Environment variables through which a run learns how to reach omnidev's
// relay: the socket's path (relative to the program's working folder) and
// the run's token.
const (
	EnvSocket = "OMNIDEV_RELAY"
	EnvToken  = "OMNIDEV_RELAY_TOKEN"
)

// Module returns the source of the module a program imports for the
// capability id: every tool's function, call and tools, which it reads
// from ToolsFile beside it. It is JavaScript (EntryFile), typed by
// Declaration beside it: TypeScript would be transpiled on every isolated
// run, whose TMPDIR and HOME are private and empty, so that no runtime
// finds the copy it cached the run before (BenchmarkModuleImport).
func Module(id string, tools []capability.Tool) string {
	return module(id, tools, nil)
}

// EntryFile is the name of a generated module's source file: JavaScript,
// so that no runtime transpiles it (see Module).
const EntryFile = "index.js"

// ModuleFor returns the module for a program that imports only the names
// given (exported names, as in `import { a, b } from`): the functions of
// those tools and call, and tools only if named. Importing the module then
// costs what the program uses, not what the server has: each runtime
// reads, hashes and links the whole of its source on every run. A name the
// module would not export is left out, so the runtime reports it as it
// would with the whole module.
func ModuleFor(id string, tools []capability.Tool, imported []string) string {
	return module(id, tools, imported)
}

// ToolsFile is the file beside a module's entry that holds its tool list
// (ToolList), which the module reads when it exports tools.
const ToolsFile = "tools.json"

// ToolList returns the content of ToolsFile: each tool's MCP name, the
// function it is exported as, title and description.
func ToolList(tools []capability.Tool) string {
	names := Identifiers(tools)
	type entry struct {
		Name        string `json:"name"`
		Function    string `json:"function"`
		Title       string `json:"title,omitempty"`
		Description string `json:"description,omitempty"`
	}
	list := make([]entry, len(tools))
	for i, t := range tools {
		list[i] = entry{t.Name, names[i], t.Title, t.Description}
	}
	data, _ := json.Marshal(list)
	return string(data) + "\n"
}

// module writes the module with every function, or with those imported
// when imported is not nil. Each function is one line: a runtime parses
// the whole source on every run, and Bun transpiles it too.
func module(id string, tools []capability.Tool, imported []string) string {
	names := Identifiers(tools)
	want := make(map[string]bool, len(imported))
	for _, n := range imported {
		want[n] = true
	}
	var b strings.Builder
	b.WriteString("// Generated by omnidev from the tools of an MCP server. Do not edit: it is\n// rewritten whenever the server's tools change. Its types are in index.d.ts.\n")
	b.WriteString(strings.NewReplacer("$SOCKET", EnvSocket, "$TOKEN", EnvToken).Replace(client))
	fmt.Fprintf(&b, "\nconst capability = %s;\n\n", quote(id))
	b.WriteString("/** Calls any tool of the server by its exact MCP name. */\n")
	b.WriteString("export function call(name, args = {}) {\n  return relayCall(capability, name, args);\n}\n")
	if imported == nil || want["tools"] {
		// Read from a file rather than parsed from a string literal: a
		// runtime reads, hashes and compiles the source on each run, and the
		// list is most of a big server's source.
		fmt.Fprintf(&b, "\nexport const tools = JSON.parse(readFileSync(new URL(%s, import.meta.url), \"utf8\"));\n", quote("./"+ToolsFile))
	}
	b.WriteString("\n")
	for i, t := range tools {
		if imported != nil && !want[names[i]] {
			continue
		}
		fmt.Fprintf(&b, "export function %s(args) { return call(%s, args); }\n", names[i], quote(t.Name))
	}
	return b.String()
}

func quote(s string) string {
	data, _ := json.Marshal(s)
	return string(data)
}

// client is the relay client every generated module shares (one connection
// per program, kept on globalThis). The connection holds the program's
// event loop open only while calls are in flight.
const client = `import { readFileSync } from "node:fs";
import { createConnection } from "node:net";

function relay() {
  const g = globalThis;
  if (g.__omnidevRelay) return g.__omnidevRelay;
  const path = process.env.$SOCKET;
  const token = process.env.$TOKEN;
  const pending = new Map();
  const state = { next: 1, pending, failed: null, sock: null };
  g.__omnidevRelay = state;
  if (!path || !token) {
    state.failed = new Error("omnidev relay unavailable: this module calls MCP servers through omnidev; run the program with omni_execute or omnidev exec");
    return state;
  }
  const sock = createConnection({ path });
  state.sock = sock;
  sock.setEncoding("utf8");
  sock.write(JSON.stringify({ token }) + "\n");
  let parts = [];
  sock.on("data", (chunk) => {
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf("\n", start);
      if (nl < 0) break;
      parts.push(chunk.slice(start, nl));
      start = nl + 1;
      const line = parts.join("");
      parts = [];
      if (line) settle(state, JSON.parse(line));
    }
    if (start < chunk.length) parts.push(chunk.slice(start));
  });
  const fail = (err) => {
    state.failed = err;
    for (const p of pending.values()) p.reject(new Error("omnidev relay: " + err.message));
    pending.clear();
  };
  sock.on("error", (err) => fail(err));
  sock.on("close", () => fail(new Error("connection closed")));
  sock.unref();
  return state;
}

function settle(state, msg) {
  const p = state.pending.get(msg.id);
  if (msg.id === null && msg.error) {
    state.failed = new Error(msg.error.message);
    return;
  }
  if (!p) return;
  state.pending.delete(msg.id);
  if (state.pending.size === 0) state.sock.unref();
  if (msg.error) {
    const err = new Error(msg.error.message);
    if (msg.error.code !== undefined) err.code = msg.error.code;
    p.reject(err);
    return;
  }
  const r = msg.result ?? {};
  const content = r.content ?? [];
  const text = content.filter((c) => c.type === "text").map((c) => c.text).join("\n");
  if (r.isError) p.reject(new Error(text || "tool " + p.tool + " failed"));
  else if (r.structuredContent !== undefined) p.resolve(r.structuredContent);
  else p.resolve({ text, content });
}

function relayCall(capability, tool, args) {
  const state = relay();
  if (state.failed) return Promise.reject(state.failed);
  return new Promise((resolve, reject) => {
    const id = state.next++;
    state.pending.set(id, { resolve, reject, tool });
    state.sock.ref();
    state.sock.write(JSON.stringify({ id, capability, tool, args }) + "\n");
  });
}
`
