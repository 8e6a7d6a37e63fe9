#!/usr/bin/env bash
# Smoke test: the built omnidev binary, serving this repository's own omni/
# over stdio, driven by the MCP Inspector CLI (a client we did not write).
set -euo pipefail
bin=${1:?usage: scripts/smoke.sh path/to/omnidev}
root=$(cd "$(dirname "$0")/.." && pwd)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# The server command as one word: the inspector's variadic --tool-arg would
# otherwise swallow the server's own arguments.
cat >"$out/serve" <<EOS
#!/bin/sh
exec "$bin" --dir "$root" serve --log-file "$out/server.log"
EOS
chmod +x "$out/serve"

inspect() { # inspect NAME ARGS... : one inspector call, its JSON kept in $out/NAME.json
  local name=$1
  shift
  if ! timeout 120 mcp-inspector --cli "$out/serve" "$@" >"$out/$name.json" 2>"$out/$name.err"; then
    echo "smoke: inspector $name failed:" >&2
    cat "$out/$name.err" "$out/$name.json" "$out/server.log" >&2
    exit 1
  fi
}

# check NAME JS: evaluates JS with `r` bound to the parsed result; it must be true.
check() {
  node -e '
    const fs = require("fs");
    const [file, expr] = process.argv.slice(1);
    const r = JSON.parse(fs.readFileSync(file, "utf8"));
    if (!eval(expr)) { console.error("smoke: failed: " + expr + "\n" + JSON.stringify(r, null, 2).slice(0, 4000)); process.exit(1); }
  ' "$out/$1.json" "$2"
  echo "ok   $1: $2"
}

inspect list --method tools/list
check list 'r.tools.map(t => t.name).sort().join() === "omni_execute,omni_query"'
check list 'r.tools.find(t => t.name === "omni_query").annotations.readOnlyHint === true'
check list 'r.tools.find(t => t.name === "omni_query").outputSchema.properties.results.type === "array"'

inspect summary --method tools/call --tool-name omni_query
check summary '!r.isError && r.structuredContent.summary.some(c => c.id === "tasks")'
check summary 'r.structuredContent.type_definitions.includes("declare module '"'"'repo'"'"'")'
check summary 'JSON.parse(r.content[0].text).summary.length === r.structuredContent.summary.length'

inspect search --method tools/call --tool-name omni_query --tool-arg 'query=add a taks' limit=3
check search '!r.isError && r.structuredContent.results.length > 0 && r.structuredContent.results.length <= 3'
check search 'r.structuredContent.results.some(h => h.capability === "tasks")'

inspect bad --method tools/call --tool-name omni_query --tool-arg query=x limit=500
check bad 'r.isError === true && r.content[0].text.includes("100")'

inspect exec --method tools/call --tool-name omni_execute --tool-arg 'code=import { listFiles } from "repo"; export async function main() { console.log((await listFiles({ limit: 5 })).length); return 0 }'
check exec '!r.isError && r.structuredContent.exit_code === 0 && r.structuredContent.stdout.trim() === "5"'
check exec 'r.structuredContent.changed_files.length === 0'

echo "smoke: all checks passed"
