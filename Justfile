# omnidev: run `just --list` for the recipes.

set shell := ["bash", "-euo", "pipefail", "-c"]

# Tools installed from npm on demand live in .tools/ (git-ignored).
export PATH := justfile_directory() + "/.tools/node_modules/.bin:" + env_var("PATH")

version := `git describe --tags --always --dirty 2>/dev/null || echo dev`
bin := justfile_directory() + "/bin/omnidev"

# List the recipes.
default:
    @just --list

# No stdin, output to stderr: `just serve`'s stdin and stdout carry JSON-RPC.
# Install Bun, the runtime `serve` runs programs with, into .tools/ when it is missing.
runtime:
    @command -v bun >/dev/null || npm install --prefix .tools --no-audit --no-fund --loglevel=error bun </dev/null 1>&2

# Install what the tests need and a fresh machine lacks (Bun; Deno and tsx, the other runtimes the sandbox is tested with; tsc and Node's types for check-types; the reference MCP servers the relay's tests wrap), into .tools/.
deps: runtime
    @test -x .tools/node_modules/.bin/tsc -a -d .tools/node_modules/@types/node || npm install --prefix .tools --no-audit --no-fund --loglevel=error typescript@7.0.2 @types/node@26.6.6 </dev/null 1>&2
    @command -v mcp-server-everything >/dev/null || npm install --prefix .tools --no-audit --no-fund --loglevel=error @modelcontextprotocol/server-everything </dev/null 1>&2
    @command -v mcp-server-memory >/dev/null || npm install --prefix .tools --no-audit --no-fund --loglevel=error @modelcontextprotocol/server-memory </dev/null 1>&2
    @command -v deno >/dev/null || npm install --prefix .tools --no-audit --no-fund --loglevel=error deno@2.9.6 </dev/null 1>&2
    @command -v tsx >/dev/null || npm install --prefix .tools --no-audit --no-fund --loglevel=error tsx@4.23.15 </dev/null 1>&2

# Build bin/omnidev and, beside it, omnidev-sandbox (the small init each run starts in).
build:
    go build -ldflags "-X main.version={{version}}" -o {{bin}} ./cmd/omnidev
    go build -o {{bin}}-sandbox ./cmd/omnidev-sandbox

# Run every test with the race detector, the capabilities' own Bun tests, and check each index.ts against its types.d.ts.
test: deps
    go test -race -count=1 ./...
    bun test omni/
    ./scripts/check-types.sh

# Check formatting and vet the code.
lint:
    @test -z "$(gofmt -l .)" || { echo "gofmt would change:"; gofmt -l .; exit 1; }
    go vet ./...

# Build and vet for macOS (amd64, arm64) and Windows (amd64): no namespaces there, runs not isolated, and it must still build.
cross:
    for target in darwin/amd64 darwin/arm64 windows/amd64; do GOOS=${target%/*} GOARCH=${target#*/} go build ./... && GOOS=${target%/*} GOARCH=${target#*/} go vet ./... || exit 1; done

# Release archives for linux, darwin and windows on amd64 and arm64, version-stamped, with sha256 checksums, into dist/.
release:
    ./scripts/release.sh

# Format the code.
fmt:
    gofmt -w .

# Serve MCP over stdio on this repository's own omni/ (what an MCP host runs).
serve: runtime build
    {{bin}} serve

# Drive the built binary with clients we did not write: the MCP Inspector CLI over stdio, the MCP conformance suite over HTTP.
smoke: deps build
    @command -v mcp-inspector >/dev/null || npm install --prefix .tools --no-audit --no-fund --loglevel=error @modelcontextprotocol/inspector
    ./scripts/smoke.sh {{bin}}
    ./scripts/conformance.sh {{bin}}

# Run the benchmarks and print their figures (OMNIDEV_BENCH_LARGE=1 adds 50k-file repositories).
bench: deps build
    go test -run '^$' -bench . -benchtime 20x ./internal/capability/ ./internal/watch/
    go test -run '^$' -bench . -benchtime 2s ./internal/query/
    go test -run '^$' -bench . -benchtime 20x ./internal/changes/
    go test -run '^$' -bench . -skip BesideGit -benchtime 20x ./internal/execute/
    go test -run '^$' -bench BesideGit -benchtime 9x ./internal/execute/
    go test -run '^$' -bench 'Query$' -benchtime 1000x ./internal/server/
    go test -run '^$' -bench 'Startup|Execute$|ReloadVisible|CatalogSync' -benchtime 20x ./internal/server/
    go test -run '^$' -bench 'Reload$' -benchtime 20x ./internal/engine/
    go test -run '^$' -bench 'ExecuteLoudProgram|HTTPConcurrent' -benchtime 1x ./internal/server/
    go test -run '^$' -bench 'Relay' -benchtime 3x ./internal/server/ ./internal/relay/
    go test -run '^$' -bench 'Proxy' -benchtime 300x ./internal/egress/
    go test -run '^$' -bench 'APIScale' -benchtime 3x ./internal/server/
    go test -run '^$' -bench 'Generate|ModuleImport' -benchtime 9x ./internal/tsgen/
    go test -run '^$' -bench 'Record' -benchtime 100x ./internal/runs/
    go test -run '^$' -bench 'Undo' -benchtime 5x ./internal/runs/

# Everything CI runs.
ci: lint cross test smoke
