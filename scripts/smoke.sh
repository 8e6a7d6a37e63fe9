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

# inspect_fails NAME WANT ARGS... : an inspector call that must fail with WANT in its output.
inspect_fails() {
  local name=$1 want=$2
  shift 2
  if timeout 120 mcp-inspector --cli "$out/serve" "$@" >"$out/$name.out" 2>&1; then
    echo "smoke: inspector $name succeeded; want a failure mentioning: $want" >&2
    cat "$out/$name.out" >&2
    exit 1
  fi
  if ! grep -qF -- "$want" "$out/$name.out"; then
    echo "smoke: inspector $name failed without mentioning: $want" >&2
    cat "$out/$name.out" >&2
    exit 1
  fi
  echo "ok   $name: fails with $want"
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
check search 'r.structuredContent.results.every(h => h.uri.startsWith("omni://"))'

inspect bad --method tools/call --tool-name omni_query --tool-arg query=x limit=500
check bad 'r.isError === true && r.content[0].text.includes("100")'

inspect exec --method tools/call --tool-name omni_execute --tool-arg 'code=import { listFiles } from "repo"; export async function main() { console.log((await listFiles({ limit: 5 })).length); return 0 }'
check exec '!r.isError && r.structuredContent.exit_code === 0 && r.structuredContent.stdout.trim() === "5"'
check exec 'r.structuredContent.changed_files.length === 0'

inspect prompts --method prompts/list
check prompts 'r.prompts.map(p => p.name).join() === "repo-find-and-edit,tasks-plan-work"'
check prompts 'r.prompts.find(p => p.name === "tasks-plan-work").arguments.find(a => a.name === "request").required === true'

inspect prompt --method prompts/get --prompt-name tasks-plan-work --prompt-args 'request=ship the release' tag=docs
check prompt 'r.messages.length === 1 && r.messages[0].role === "user"'
check prompt 'r.messages[0].content.text.startsWith("Skill \"plan-work\" of the tasks capability") && r.messages[0].content.text.includes("The request: ship the release\n")'
inspect_fails prompt-missing 'needs the argument "request"' --method prompts/get --prompt-name tasks-plan-work

inspect resources --method resources/list
check resources 'r.resources.some(x => x.uri === "omni://tasks/docs/usage.md" && x.mimeType === "text/markdown" && x.size > 0 && x.title)'
check resources 'r.resources.some(x => x.uri === "omni://repo/types.d.ts" && x.mimeType === "application/typescript")'

inspect read --method resources/read --uri omni://repo/rules/paths.md
check read 'r.contents[0].uri === "omni://repo/rules/paths.md" && r.contents[0].text === require("fs").readFileSync("'"$root"'/omni/capabilities/repo/rules/paths.md", "utf8")'
inspect_fails read-escape 'leaves the capability folder' --method resources/read --uri 'omni://repo/../../README.md'

# The commands a newcomer is given, run as given, with npx fetching the Inspector and no
# omnidev on PATH: the one `omnidev serve` prints on a terminal, and docs/hosts.md's HTTP one.
path=
IFS=: read -ra dirs <<<"$PATH"
for d in "${dirs[@]}"; do [[ -e $d/omnidev ]] || path+=${path:+:}$d; done
as_given() { # as_given NAME COMMAND: runs COMMAND with sh from an empty folder
  mkdir -p "$out/$1.cwd"
  if ! (cd "$out/$1.cwd" && PATH=$path npm_config_yes=true timeout 300 sh -c "$2" >"$out/$1.json" 2>"$out/$1.err"); then
    echo "smoke: $1 failed: $2" >&2
    cat "$out/$1.err" "$out/$1.json" >&2
    exit 1
  fi
}

banner=$(timeout 30 script -qec "$(printf %q "$bin") --dir $(printf %q "$root") serve" /dev/null </dev/null | tr -d '\r')
printed=$(sed -n 's/^ *\(npx .* --cli .*\)$/\1/p' <<<"$banner")
[[ -n $printed ]] || { echo "smoke: omnidev serve on a terminal printed no Inspector --cli command:" >&2; echo "$banner" >&2; exit 1; }
as_given banner "$printed"
check banner 'r.tools.map(t => t.name).sort().join() === "omni_execute,omni_query"'

# docs/hosts.md's HTTP command, its lines joined, on the port the server got.
http=$(sed -n '/^npx .*--cli http:/,/[^\\]$/p' "$root/docs/hosts.md" | sed 's/\\$//' | tr '\n' ' ')
[[ $http == *--header* ]] || { echo "smoke: no Inspector HTTP command with --header in docs/hosts.md" >&2; exit 1; }
export OMNIDEV_TOKEN=smoke-$RANDOM$RANDOM
"$bin" --dir "$root" serve --http 127.0.0.1:0 --log-file "$out/http.log" </dev/null 2>"$out/http.err" &
http_pid=$!
trap 'kill $http_pid 2>/dev/null; wait $http_pid 2>/dev/null; rm -rf "$out"' EXIT
url=
for _ in $(seq 100); do
  url=$(sed -n 's/.*msg="listening on \(http:[^"]*\)".*/\1/p;T;q' "$out/http.log" 2>/dev/null || true)
  [[ -n $url ]] && break
  sleep 0.1
done
[[ -n $url ]] || { echo "smoke: omnidev serve --http did not say where it listens:" >&2; cat "$out/http.err" "$out/http.log" >&2; exit 1; }
as_given http "${http//http:\/\/127.0.0.1:7777\/mcp/$url}"
check http 'r.tools.map(t => t.name).sort().join() === "omni_execute,omni_query"'

echo "smoke: all checks passed"
