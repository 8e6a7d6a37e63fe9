package typecheck

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// compiler returns tsc: on PATH, or in the repository's .tools, where
// `just deps` installs it.
func compiler(t testing.TB) string {
	t.Helper()
	tools, _ := filepath.Abs(filepath.Join("..", "..", ".tools", "node_modules", ".bin"))
	tsc, err := LookupCompiler([]string{"PATH=" + os.Getenv("PATH") + string(os.PathListSeparator) + tools}, "")
	if err != nil {
		t.Fatalf("tsc is required by this test (`just deps` installs it into .tools/): %v", err)
	}
	return tsc
}

// everything is a wrapped server's generated module, as tsgen writes it.
const everything = `declare module 'everything' {
  export type ToolResult = { text: string; content: unknown[] };
  export interface EchoArgs {
    /** Message to echo */
    message: string;
  }
  export function echo(args: EchoArgs): Promise<ToolResult>;
}`

// tasks is a hand-written types.d.ts.
const tasks = `export interface Task { id: string; title: string }
export function add(title: string): Promise<Task>;
`

func TestCheck(t *testing.T) {
	tsc := compiler(t)
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "util.ts"), []byte("export const twice = (n: number) => 2 * n;\n"), 0o644)
	os.WriteFile(filepath.Join(root, "tsconfig.json"), []byte(`{"compilerOptions": {"strict": true, "noImplicitAny": true, "types": ["no-such-types"]}, "files": ["nope.ts"]}`), 0o644)
	modules := []Module{{Name: "everything", Types: everything}, {Name: "tasks", Types: tasks}, {Name: "untyped"}}
	for _, tc := range []struct {
		name string
		code string
		want []TypeError // messages: a part of them
	}{
		{"a correct program", `import { echo } from "everything";
import { add } from "tasks";
import { anything } from "untyped";
import { readFileSync } from "node:fs";
import path from "path";
import { twice } from "./util.ts";
export async function main() {
  const r = await echo({ message: "hi" });
  console.log(r.text, (await add("x")).id, anything, readFileSync, path, twice(2), process.env.HOME);
  return 0;
}
`, nil},
		{"a wrong argument name", `import { echo } from "everything";

await echo({ mesage: "hi" });
`, []TypeError{{Line: 3, Column: 14, Message: "mesage"}}},
		{"a missing import", `import { echo, ecko } from "everything";
import { nothing } from "./no-such-file.ts";
console.log(echo, ecko, nothing);
`, []TypeError{{Line: 1, Column: 16, Message: "ecko"}, {Line: 2, Column: 25, Message: "no-such-file"}}},
		{"a wrong return type of main", `import { add } from "tasks";

export async function main() {
  return (await add("x")).title;
}
`, []TypeError{{Line: 3, Column: 1, Message: "main"}}},
		{"an argument of the wrong type", `import { add } from "tasks";
add(42);
`, []TypeError{{Line: 2, Column: 5, Message: "number"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			errs, omitted, err := Check(t.Context(), Request{Code: tc.code, Modules: modules, Root: root, Compiler: tsc, Environ: os.Environ()})
			if err != nil {
				t.Fatal(err)
			}
			if omitted != 0 || len(errs) != len(tc.want) {
				t.Fatalf("errors %+v (%d omitted), want %d", errs, omitted, len(tc.want))
			}
			for i, w := range tc.want {
				if errs[i].Line != w.Line || errs[i].Column != w.Column || !strings.Contains(errs[i].Message, w.Message) {
					t.Errorf("error %d = %+v, want line %d column %d with %q", i, errs[i], w.Line, w.Column, w.Message)
				}
			}
		})
	}
	if entries, _ := os.ReadDir(filepath.Join(root, ".omni", "typecheck")); len(entries) != 0 {
		t.Errorf("the check left %d folders behind", len(entries))
	}
}

func TestCheckCapsErrors(t *testing.T) {
	code := strings.Repeat("const x: number = \"s\";\n", MaxErrors+5)
	errs, omitted, err := Check(t.Context(), Request{Code: strings.ReplaceAll(code, "const x", "var x"), Root: t.TempDir(), Compiler: compiler(t), Environ: os.Environ()})
	if err != nil {
		t.Fatal(err)
	}
	if len(errs) != MaxErrors || omitted != 5 {
		t.Fatalf("%d errors, %d omitted; want %d and 5", len(errs), omitted, MaxErrors)
	}
}

func TestLookupCompilerSkipsTheRepository(t *testing.T) {
	root := t.TempDir()
	bin := filepath.Join(root, "node_modules", ".bin")
	os.MkdirAll(bin, 0o755)
	os.WriteFile(filepath.Join(bin, "tsc"), []byte("#!/bin/sh\ntouch pwned\n"), 0o755)
	if p, err := LookupCompiler([]string{"PATH=" + bin}, root); err == nil {
		t.Fatalf("found %s inside the repository", p)
	}
}

// TestCheckRuntimeGlobals: what programs use from their runtime is never
// an error, as a value or as a type.
func TestCheckRuntimeGlobals(t *testing.T) {
	code := `const r: Response = await fetch(new URL("http://x/"), { signal: AbortSignal.timeout(10) });
setTimeout(() => console.log(process.env.HOME, Bun.version, Buffer.from("x"), new TextEncoder().encode("x")), 1);
const u: URLSearchParams = new URLSearchParams("a=1");
console.log(r.status, u.get("a"), structuredClone({}), performance.now(), crypto.randomUUID());
`
	errs, _, err := Check(t.Context(), Request{Code: code, Root: t.TempDir(), Compiler: compiler(t), Environ: os.Environ()})
	if err != nil || len(errs) != 0 {
		t.Fatalf("errors %+v, %v", errs, err)
	}
}
