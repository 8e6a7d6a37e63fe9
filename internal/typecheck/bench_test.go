package typecheck

import (
	"os"
	"testing"
)

// BenchmarkCheck is the cost of the check before a run: one tsc process on
// a short program that imports a generated module and a hand-written one.
func BenchmarkCheck(b *testing.B) {
	req := Request{
		Code: `import { echo } from "everything";
import { add } from "tasks";
export async function main() {
  console.log((await echo({ message: "hi" })).text, (await add("x")).id);
}
`,
		Modules:  []Module{{Name: "everything", Types: everything}, {Name: "tasks", Types: tasks}},
		Root:     b.TempDir(),
		Compiler: compiler(b),
		Environ:  os.Environ(),
	}
	for b.Loop() {
		if _, _, err := Check(b.Context(), req); err != nil {
			b.Fatal(err)
		}
	}
}
