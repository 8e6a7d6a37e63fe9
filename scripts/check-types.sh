#!/usr/bin/env bash
# Checks that every capability's index.ts satisfies its hand-written
# types.d.ts (what omni_query shows agents): each declared export exists with
# a compatible type, and nothing is exported that types.d.ts does not
# declare. Covers this repository's omni/ and the template `omnidev init`
# writes. Needs tsc and @types/node (`just deps` installs them in .tools/).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/.tools/node_modules/.bin:$PATH"

out=.tools/check-types
mkdir -p "$out"
check="$out/check.ts"
: >"$check"
n=0
for dir in omni/capabilities/*/ internal/capability/template/omni/capabilities/*/; do
  dir=${dir%/}
  [[ -f $dir/index.ts && -f $dir/types.d.ts ]] || continue
  n=$((n + 1))
  cat >>"$check" <<TS
// $dir
import * as impl$n from "../../$dir/index.ts";
import type * as decl$n from "../../$dir/types.d.ts";
impl$n satisfies typeof decl$n;
type Undeclared$n = Exclude<keyof typeof impl$n, keyof typeof decl$n>;
export const allDeclared$n: [Undeclared$n] extends [never] ? true : { undeclared: Undeclared$n } = true;
TS
done
if ((n == 0)); then
  echo "check-types: no capability has both index.ts and types.d.ts" >&2
  exit 1
fi
cat >"$out/tsconfig.json" <<'JSON'
{
  "compilerOptions": {
    "strict": true,
    "noEmit": true,
    "target": "es2022",
    "module": "preserve",
    "moduleResolution": "bundler",
    "allowImportingTsExtensions": true,
    "types": ["node"],
    "skipLibCheck": true
  },
  "files": ["check.ts"]
}
JSON
tsc -p "$out/tsconfig.json"
echo "check-types: $n capabilities match their types.d.ts" >&2
