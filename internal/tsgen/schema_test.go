package tsgen

import (
	"strconv"
	"strings"
	"testing"
)

// signatures returns what Declaration writes for the tools, without the
// module's fixed parts (ContentItem, ToolResult, call, tools).
func signatures(decl string) string {
	_, rest, _ := strings.Cut(decl, contentItem+toolResult)
	body, _, _ := strings.Cut(rest, "\n  /** Calls any tool")
	return body
}

// schemaCases are input schemas as servers emit them, and the TypeScript
// each must become. TestDeclarationsTypeCheck also runs tsc over them.
var schemaCases = []struct {
	name  string
	tools []string
	want  string
}{
	{"boolean property schemas",
		[]string{`{"type":"object","properties":{"a":true,"b":{"type":"string"},"c":false},"required":["b"]}`}, `
  export function t(args: {
    a?: unknown;
    b: string;
    c?: never;
  }): Promise<ToolResult>;
`},
	{"boolean items and additionalProperties",
		[]string{`{"type":"object","properties":{"any":{"type":"array","items":true},"none":{"type":"array","items":false},"open":{"type":"object","additionalProperties":{}},"map":{"type":"object","additionalProperties":true},"closed":{"type":"object","properties":{"x":{"type":"number"}},"additionalProperties":false}},"required":["any"]}`}, `
  export function t(args: {
    any: unknown[];
    closed?: {
      x?: number;
    };
    map?: {
      [key: string]: unknown;
    };
    none?: [];
    open?: {
      [key: string]: unknown;
    };
  }): Promise<ToolResult>;
`},
	{"a true root schema",
		[]string{`true`}, `
  export function t(args?: Record<string, unknown>): Promise<ToolResult>;
`},
	{"JSON pointer refs into properties and anyOf",
		[]string{`{"type":"object","properties":{"edits":{"type":"array","items":{"type":"object","properties":{"old":{"type":"string"}},"required":["old"]}},"one":{"$ref":"#/properties/edits/items"},"kind":{"anyOf":[{"enum":["a","b"]},{"type":"number"}]},"letter":{"$ref":"#/properties/kind/anyOf/0"}},"required":["one"]}`}, `
  export function t(args: {
    edits?: {
      old: string;
    }[];
    kind?: "a" | "b" | number;
    letter?: "a" | "b";
    one: {
      old: string;
    };
  }): Promise<ToolResult>;
`},
	{"escaped and percent-encoded pointers",
		[]string{`{"type":"object","properties":{"a/b":{"type":"string"},"c~d":{"type":"number"},"e f":{"type":"boolean"},"x":{"$ref":"#/properties/a~1b"},"y":{"$ref":"#/properties/c~0d"},"z":{"$ref":"#/properties/e%20f"}}}`}, `
  export function t(args?: {
    "a/b"?: string;
    "c~d"?: number;
    "e f"?: boolean;
    x?: string;
    y?: number;
    z?: boolean;
  }): Promise<ToolResult>;
`},
	{"anchors, and refs to boolean schemas",
		[]string{`{"type":"object","properties":{"a":{"$ref":"#addr"},"b":{"$ref":"#legacy"},"c":{"$ref":"#/$defs/any"},"d":{"$ref":"#/$defs/none"}},"$defs":{"x":{"$anchor":"addr","type":"string"},"y":{"$id":"#legacy","type":"number"},"any":true,"none":false}}`}, `
  export function t(args?: {
    a?: string;
    b?: number;
    c?: unknown;
    d?: never;
  }): Promise<ToolResult>;
`},
	{"unresolvable refs are unknown, the rest stays",
		[]string{`{"type":"object","properties":{"remote":{"$ref":"https://example.com/s.json#/$defs/x"},"missing":{"$ref":"#/$defs/nope"},"bad":{"$ref":"#/properties/ok/items/7"},"index":{"$ref":"#/properties/list/prefixItems/01"},"escape":{"$ref":"#/%zz"},"ok":{"type":"string"}},"required":["ok"]}`}, `
  export function t(args: {
    bad?: unknown;
    escape?: unknown;
    index?: unknown;
    missing?: unknown;
    ok: string;
    remote?: unknown;
  }): Promise<ToolResult>;
`},
	{"recursive definition becomes a named type",
		[]string{`{"type":"object","properties":{"tree":{"$ref":"#/$defs/node"}},"required":["tree"],"$defs":{"node":{"type":"object","description":"A node.","properties":{"value":{"type":"number"},"left":{"$ref":"#/$defs/node"},"right":{"$ref":"#/$defs/node"}},"required":["value"]}}}`}, `
  /** A node. */
  export type Node = {
    left?: Node;
    right?: Node;
    value: number;
  };

  export function t(args: {
    tree: Node;
  }): Promise<ToolResult>;
`},
	{"mutual recursion through a property",
		[]string{`{"type":"object","properties":{"a":{"$ref":"#/definitions/A"}},"definitions":{"A":{"type":"object","properties":{"b":{"$ref":"#/definitions/B"}}},"B":{"type":"array","items":{"$ref":"#/definitions/A"}}}}`}, `
  export type A = {
    b?: A[];
  };

  export function t(args?: {
    a?: A;
  }): Promise<ToolResult>;
`},
	{"a recursive root is named after its function",
		[]string{`{"type":"object","properties":{"name":{"type":"string"},"children":{"type":"array","items":{"$ref":"#"}}},"required":["name"]}`}, `
  export type TArgs = {
    children?: TArgs[];
    name: string;
  };

  export function t(args: TArgs): Promise<ToolResult>;
`},
	{"same definition name in two tools, and names the module has",
		[]string{
			`{"type":"object","properties":{"n":{"$ref":"#/$defs/Node"}},"$defs":{"Node":{"type":"object","properties":{"next":{"$ref":"#/$defs/Node"}}}}}`,
			`{"type":"object","properties":{"n":{"$ref":"#/$defs/Node"},"c":{"$ref":"#/$defs/ContentItem"},"p":{"$ref":"#/$defs/Promise"}},"$defs":{"Node":{"type":"array","items":{"$ref":"#/$defs/Node"}},"ContentItem":{"type":"object","properties":{"c":{"$ref":"#/$defs/ContentItem"}}},"Promise":{"type":"object","properties":{"p":{"$ref":"#/$defs/Promise"}}}}}`,
		}, `
  export type Node = {
    next?: Node;
  };

  export function t(args?: {
    n?: Node;
  }): Promise<ToolResult>;

  export type ContentItem_2 = {
    c?: ContentItem_2;
  };

  export type Node_2 = Node_2[];

  export type Promise_2 = {
    p?: Promise_2;
  };

  export function t2(args?: {
    c?: ContentItem_2;
    n?: Node_2;
    p?: Promise_2;
  }): Promise<ToolResult>;
`},
	{"generated definition names give way to the title or the property",
		[]string{`{"type":"object","properties":{"json":{"$ref":"#/$defs/__schema0"},"list":{"$ref":"#/$defs/__schema1"}},"$defs":{"__schema0":{"anyOf":[{"type":"string"},{"type":"array","items":{"$ref":"#/$defs/__schema0"}}]},"__schema1":{"title":"Linked list","type":"object","properties":{"next":{"$ref":"#/$defs/__schema1"}}}}}`}, `
  export type Json = string | Json[];

  export type LinkedList = {
    next?: LinkedList;
  };

  export function t(args?: {
    json?: Json;
    list?: LinkedList;
  }): Promise<ToolResult>;
`},
	{"the same definition in two tools is one type",
		[]string{
			`{"type":"object","properties":{"n":{"$ref":"#/$defs/Node"}},"$defs":{"Node":{"type":"object","properties":{"next":{"$ref":"#/$defs/Node"},"v":{"$ref":"#/$defs/V"}}},"V":{"type":"string"}}}`,
			`{"type":"object","properties":{"m":{"type":"array","items":{"$ref":"#/$defs/Node"}}},"required":["m"],"$defs":{"V":{"type":"string"},"Node":{"type":"object","properties":{"v":{"$ref":"#/$defs/V"},"next":{"$ref":"#/$defs/Node"}}}}}`,
			`{"type":"object","properties":{"n":{"$ref":"#/$defs/Node"}},"$defs":{"Node":{"type":"object","properties":{"next":{"$ref":"#/$defs/Node"},"v":{"$ref":"#/$defs/V"}}},"V":{"type":"number"}}}`,
		}, `
  export type Node = {
    next?: Node;
    v?: string;
  };

  export function t(args?: {
    n?: Node;
  }): Promise<ToolResult>;

  export function t2(args: {
    m: Node[];
  }): Promise<ToolResult>;

  export type Node_2 = {
    next?: Node_2;
    v?: number;
  };

  export function t3(args?: {
    n?: Node_2;
  }): Promise<ToolResult>;
`},
	{"a cycle of refs alone is no type",
		[]string{`{"type":"object","properties":{"a":{"$ref":"#/$defs/A"},"s":{"$ref":"#/$defs/S"}},"$defs":{"A":{"$ref":"#/$defs/B"},"B":{"anyOf":[{"$ref":"#/$defs/A"},{"type":"string"}]},"S":{"$ref":"#/$defs/S"}}}`}, `
  export function t(args?: {
    a?: unknown;
    s?: unknown;
  }): Promise<ToolResult>;
`},
	{"recursion tsc resolves eagerly through tuple elements is unknown",
		[]string{`{"type":"object","properties":{"ok":{"$ref":"#/$defs/Ok"},"rest":{"$ref":"#/$defs/Rest"},"opt":{"$ref":"#/$defs/Opt"}},"$defs":{` +
			`"Ok":{"anyOf":[{"type":"string"},{"type":"array","prefixItems":[{"type":"number"}],"items":{"$ref":"#/$defs/Ok"},"minItems":1}]},` +
			`"Rest":{"anyOf":[{"type":"string"},{"type":"array","prefixItems":[{"type":"string"}],"items":{"type":"array","prefixItems":[{"$ref":"#/$defs/Rest"}],"items":false,"minItems":1},"minItems":1}]},` +
			`"Opt":{"anyOf":[{"type":"string"},{"type":"array","prefixItems":[{"type":"array","items":{"$ref":"#/$defs/Opt"}}]}]}}}`}, `
  export type Ok = string | [number, ...Ok[]];

  export function t(args?: {
    ok?: Ok;
    opt?: string | [unknown[]?, ...unknown[]];
    rest?: string | [string, ...[unknown][]];
  }): Promise<ToolResult>;
`},
	{"past 12 nested refs every target is named; aliases never resolve each other eagerly",
		[]string{`{"anyOf":[{"type":"array","items":{"type":"object","properties":{"c":{"$ref":"#/$defs/call"}}}},{"$ref":"#/$defs/call"},{"$ref":"#/$defs/l0"}],"$defs":{"call":{"$ref":"#"},` +
			`"l0":{"$ref":"#/$defs/l1"},"l1":{"$ref":"#/$defs/l2"},"l2":{"$ref":"#/$defs/l3"},"l3":{"$ref":"#/$defs/l4"},"l4":{"$ref":"#/$defs/l5"},"l5":{"$ref":"#/$defs/l6"},"l6":{"$ref":"#/$defs/l7"},` +
			`"l7":{"$ref":"#/$defs/l8"},"l8":{"$ref":"#/$defs/l9"},"l9":{"$ref":"#/$defs/l10"},"l10":{"$ref":"#/$defs/l11"},"l11":{"$ref":"#/$defs/l12"},"l12":{"$ref":"#/$defs/l13"},"l13":{"type":"string"}}}`}, `
  export type Call = TArgs;

  export type L13 = string;

  export type L12 = L13;

  export type L11 = L12;

  export type L10 = L11;

  export type L9 = L10;

  export type L8 = L9;

  export type L7 = L8;

  export type L6 = L7;

  export type L5 = L6;

  export type L4 = L5;

  export type L3 = L4;

  export type L2 = L3;

  export type L1 = L2;

  export type L0 = L1;

  export type TArgs = unknown;

  export function t(args?: TArgs): Promise<ToolResult>;
`},
	{"nullable types",
		[]string{`{"type":"object","properties":{"a":{"type":["string","null"]},"b":{"type":"string","nullable":true},"c":{"type":["integer","string"]},"d":{"anyOf":[{"type":"string"},{"type":"null"}]}}}`}, `
  export function t(args?: {
    a?: string | null;
    b?: string | null;
    c?: number | string;
    d?: string | null;
  }): Promise<ToolResult>;
`},
	{"tuples",
		[]string{`{"type":"object","properties":{"draft7":{"type":"array","items":[{"type":"string"},{"type":"number"}],"minItems":2,"maxItems":2},"rest":{"type":"array","items":[{"type":"string"}],"additionalItems":{"type":"number"},"minItems":1},"open":{"type":"array","items":[{"type":"string"}]},"prefix":{"type":"array","prefixItems":[{"type":"string"},{"anyOf":[{"type":"number"},{"type":"null"}]}],"items":false,"minItems":1},"prefixRest":{"type":"array","prefixItems":[{"type":"boolean"}],"items":{"type":"string"},"minItems":1}}}`}, `
  export function t(args?: {
    draft7?: [string, number];
    open?: [string?, ...unknown[]];
    prefix?: [string, (number | null)?];
    prefixRest?: [boolean, ...string[]];
    rest?: [string, ...number[]];
  }): Promise<ToolResult>;
`},
	{"enums and consts of every kind",
		[]string{`{"type":"object","properties":{"mixed":{"enum":["a",1,2.5,true,null,{"k":"v"},[1,"x"]]},"obj":{"const":{"b":[true],"a":{"c":null},"x-y":1}},"empty":{"const":{}},"nil":{"const":null},"big":{"enum":[12345678901234567890]}}}`}, `
  export function t(args?: {
    big?: 12345678901234567890;
    empty?: Record<string, never>;
    mixed?: "a" | 1 | 2.5 | true | null | { k: "v" } | [1, "x"];
    nil?: null;
    obj?: { a: { c: null }; b: [true]; "x-y": 1 };
  }): Promise<ToolResult>;
`},
	{"additionalProperties beside properties",
		[]string{`{"type":"object","properties":{"name":{"type":"string"},"size":{"type":"integer"}},"required":["name"],"additionalProperties":{"type":"boolean"}}`}, `
  export function t(args: {
    name: string;
    size?: number;
    [key: string]: boolean | string | number | undefined;
  }): Promise<ToolResult>;
`},
	{"patternProperties and required names without a schema",
		[]string{`{"type":"object","patternProperties":{"^x-":{"type":"string"}},"additionalProperties":false,"required":["x-id"]}`}, `
  export function t(args: {
    "x-id": string;
    [key: string]: string;
  }): Promise<ToolResult>;
`},
	{"quoted names, comment ends and defaults in JSDoc",
		[]string{`{"type":"object","properties":{"content-type":{"type":"string","description":"Globs like src/**/*.go; ends a comment */ twice */","default":"text/plain"},"0":{"type":"number","default":0},"ünï":{"type":"boolean","deprecated":true},"$ok_1":{"type":"string","default":{"a":"</script>"}}}}`}, `
  export function t(args?: {
    /** @default {"a":"</script>"} */
    $ok_1?: string;
    /** @default 0 */
    "0"?: number;
    /**
     * Globs like src/**` + "\u200b" + `/*.go; ends a comment *` + "\u200b" + `/ twice *` + "\u200b" + `/
     * @default "text/plain"
     */
    "content-type"?: string;
    /** @deprecated */
    "ünï"?: boolean;
  }): Promise<ToolResult>;
`},
	{"args required through a ref or allOf",
		[]string{
			`{"$ref":"#/$defs/Args","$defs":{"Args":{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}}}`,
			`{"allOf":[{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]},{"type":"object","properties":{"n":{"type":"number"}}}]}`,
		}, `
  export function t(args: {
    q: string;
  }): Promise<ToolResult>;

  export function t2(args: {
    q: string;
  } & {
    n?: number;
  }): Promise<ToolResult>;
`},
	{"a bare type beside alternatives, and constraints that are no type",
		[]string{`{"type":"object","properties":{"u":{"type":"object","oneOf":[{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]},{"type":"object","properties":{"b":{"type":"number"}},"required":["b"]}]},"s":{"type":"string","anyOf":[{"format":"date"},{"format":"time"}]}},"anyOf":[{"required":["u"]},{"required":["s"]}]}`}, `
  export function t(args: {
    s?: string;
    u?: {
      a: string;
    } | {
      b: number;
    };
  }): Promise<ToolResult>;
`},
	{"a description with brackets and quotes keeps unions grouped",
		[]string{`{"type":"object","properties":{"list":{"type":"array","items":{"anyOf":[{"type":"object","properties":{"a":{"type":"string","description":"closes ) and ] and } and opens \" a quote"}}},{"type":"null"}]}}}}`}, `
  export function t(args?: {
    list?: ({
      /** closes ) and ] and } and opens " a quote */
      a?: string;
    } | null)[];
  }): Promise<ToolResult>;
`},
}

func TestSchemaTypes(t *testing.T) {
	for _, tt := range schemaCases {
		t.Run(tt.name, func(t *testing.T) {
			got := signatures(Declaration("m", caseTools(tt.tools)))
			if got != tt.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}
}

// TestSchemaBlowUp: a definition used twice by a definition used twice,
// twenty levels deep, would inline as 2^20 copies; the output stays linear,
// with every definition a named type.
func TestSchemaBlowUp(t *testing.T) {
	var defs []string
	defs = append(defs, `"d0":{"type":"object","properties":{"leaf":{"type":"string"}}}`)
	for i := 1; i <= 20; i++ {
		prev := "#/$defs/d" + strconv.Itoa(i-1)
		defs = append(defs, `"d`+strconv.Itoa(i)+`":{"type":"object","properties":{"l":{"$ref":"`+prev+`"},"r":{"$ref":"`+prev+`"}}}`)
	}
	in := `{"type":"object","properties":{"top":{"$ref":"#/$defs/d20"},"small":{"$ref":"#/$defs/d0"}},"$defs":{` + strings.Join(defs, ",") + `}}`
	got := signatures(Declaration("m", caseTools([]string{in})))
	if len(got) > 4000 {
		t.Errorf("declaration is %d bytes, want it linear in the schema (< 4000):\n%s", len(got), got[:4000])
	}
	for _, want := range []string{"  export type D0 = {\n    leaf?: string;\n  };\n", "  export type D20 = {\n    l?: D19;\n    r?: D19;\n  };\n", "    top?: D20;\n", "    small?: D0;\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("declaration lacks %q:\n%s", want, got)
		}
	}
}
