package execute

import (
	"testing"

	"github.com/omnidev/omnidev/internal/isolate"
)

func TestIsolatedSmoke(t *testing.T) {
	requireBun(t)
	root := t.TempDir()
	sb := prepare(t, root)
	req := request(sb, `import { readdirSync, readFileSync, writeFileSync } from "node:fs";
console.log(process.pid, readdirSync("/proc").filter(x => /^[0-9]+$/.test(x)));
try { writeFileSync("/tmp/x", "x"); console.log("tmp ok"); } catch (e) { console.log("tmp", e.message); }
try { writeFileSync("/etc/x", "x"); console.log("etc ok"); } catch (e) { console.log("etc", e.message); }
try { console.log("shadow", readFileSync("/etc/shadow", "utf8").length); } catch (e) { console.log("shadow", e.message); }
writeFileSync("inrepo", "x");
`)
	req.Isolation = &isolate.Policy{Filesystem: true, MemoryBytes: 2 << 30, Processes: 256, MemoryNotice: "stopped by the memory limit"}
	res, err := New(root, nil).Run(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", res)
}
