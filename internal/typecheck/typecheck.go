package typecheck

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/omnidev/omnidev/internal/capability"
)

// Modes of [sandbox] typecheck and of omni_execute's typecheck argument.
const (
	Off   = "off"   // no check
	Warn  = "warn"  // check, run anyway, report the errors with the result
	Error = "error" // check, and do not run a program with errors
)

// ValidMode reports whether m is a mode.
func ValidMode(m string) bool { return m == Off || m == Warn || m == Error }

// MaxErrors bounds the errors reported; the rest are counted.
const MaxErrors = 20

// maxMessage bounds one error's message, in bytes: the first line of the
// compiler's message and what follows it, cut.
const maxMessage = 160

// Timeout bounds one check: tsc on a program and the declarations of a few
// capabilities takes well under a second here (docs/tools.md).
const Timeout = 20 * time.Second

// ErrNoCompiler is returned when tsc is not on the server's PATH.
var ErrNoCompiler = errors.New("typecheck: tsc not found on the server's PATH; install it with `npm install -g typescript`")

// TypeError is one error the compiler found in the program.
type TypeError struct {
	// Line and Column are 1-based, in main.ts as the agent wrote it.
	Line    int    `json:"line"`
	Column  int    `json:"column"`
	Message string `json:"message"`
}

// Module is one importable capability module and its declarations.
type Module struct {
	Name string
	// Types is its declarations: the exports of a types.d.ts, or a
	// "declare module '<name>' { ... }" block; empty: none, anything goes.
	Types string
}

// Request is one check.
type Request struct {
	Code    string
	Modules []Module
	// Root is the repository root: relative imports resolve from it, as
	// they do when the program runs, and bare ones from its node_modules.
	Root string
	// Compiler is the path of tsc (see LookupCompiler).
	Compiler string
	// Environ is the server's environment; tsc gets its PATH, HOME and
	// TMPDIR only.
	Environ []string
}

// Check type-checks req.Code and returns at most MaxErrors errors in it and
// how many more there were. An error return means the check itself could
// not be done (the compiler failed, or took longer than Timeout).
func Check(ctx context.Context, req Request) (errs []TypeError, omitted int, err error) {
	dir := filepath.Join(req.Root, ".omni", "typecheck", rand.Text())
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, 0, fmt.Errorf("typecheck: create its folder: %w", err)
	}
	defer os.RemoveAll(dir)
	if err := writeProject(dir, req); err != nil {
		return nil, 0, fmt.Errorf("typecheck: write its project: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, req.Compiler, "-p", filepath.Join(dir, "tsconfig.json"), "--pretty", "false")
	cmd.Dir = dir
	cmd.Env = scrubbed(req.Environ)
	setGroup(cmd)
	cmd.WaitDelay = time.Second
	out, runErr := cmd.Output()
	if ctx.Err() != nil {
		return nil, 0, fmt.Errorf("typecheck: tsc did not finish within %v: %w", Timeout, ctx.Err())
	}
	all := parse(string(out), req.Code)
	var exit *exec.ExitError
	if runErr != nil && !errors.As(runErr, &exit) {
		return nil, 0, fmt.Errorf("typecheck: run tsc: %w", runErr)
	}
	if runErr != nil && len(all) == 0 && !strings.Contains(string(out), "error TS") {
		msg := strings.TrimSpace(string(out) + " " + string(exit.Stderr))
		return nil, 0, fmt.Errorf("typecheck: tsc failed: %s", firstLine(msg))
	}
	if len(all) > MaxErrors {
		return all[:MaxErrors], len(all) - MaxErrors, nil
	}
	return all, 0, nil
}

// Files of the project Check writes.
const (
	mainFile    = "main.ts"
	checkFile   = "check.ts"
	globalsFile = "globals.d.ts"
)

// checkMain holds the program's main, if it exports one, to what the
// runner does with it: await it, and exit with the number it returns.
const checkMain = `import * as program from "./main.ts";
export const checked: { main?: () => number | void | undefined | Promise<number | void | undefined> } = program;
`

func writeProject(dir string, req Request) error {
	// Globals of the runtimes, which the compiler cannot know without
	// packages it must not load from the repository: any, so that using
	// them is never an error. The DOM library would declare the web ones
	// precisely, but triples the cost of a check (docs/tools.md).
	var globals []string
	for _, name := range runtimeGlobals {
		globals = append(globals, fmt.Sprintf("declare var %s: any; type %s = any;", name, name))
	}
	globals = append(globals, `declare module "node:*";`, `declare module "bun:*";`, `declare module "npm:*";`, `declare module "jsr:*";`)
	paths := map[string][]string{}
	files := map[string]string{mainFile: req.Code, checkFile: checkMain}
	for _, m := range capability.BuiltinModules() {
		globals = append(globals, fmt.Sprintf("declare module %q;", m))
	}
	for _, m := range req.Modules {
		if strings.TrimSpace(m.Types) == "" {
			globals = append(globals, fmt.Sprintf("declare module %q;", m.Name))
			continue
		}
		name := "types/" + strconv.Itoa(len(paths)) + ".d.ts"
		files[name] = moduleBody(m)
		paths[m.Name] = []string{"./" + name}
	}
	files[globalsFile] = strings.Join(globals, "\n") + "\n"
	config := map[string]any{
		"compilerOptions": map[string]any{
			"noEmit":                     true,
			"strict":                     false,
			"target":                     "esnext",
			"lib":                        []string{"esnext"},
			"module":                     "preserve",
			"moduleResolution":           "bundler",
			"moduleDetection":            "force",
			"allowImportingTsExtensions": true,
			"allowJs":                    false,
			"skipLibCheck":               true,
			"types":                      []string{},
			"rootDirs":                   []string{".", req.Root},
			"paths":                      paths,
		},
		"files": []string{mainFile, checkFile, globalsFile},
	}
	data, err := json.MarshalIndent(config, "", "  ")
	if err != nil {
		return err
	}
	files["tsconfig.json"] = string(data)
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			return err
		}
	}
	return nil
}

// runtimeGlobals are the names Bun, Node and Deno define that the esnext
// library does not.
var runtimeGlobals = []string{"process", "Bun", "Deno", "require", "module", "exports", "Buffer", "global",
	"console", "fetch", "Request", "Response", "Headers", "FormData", "Blob", "File", "URL", "URLSearchParams",
	"TextEncoder", "TextDecoder", "AbortController", "AbortSignal", "Event", "EventTarget", "WebSocket",
	"setTimeout", "clearTimeout", "setInterval", "clearInterval", "setImmediate", "clearImmediate", "queueMicrotask",
	"structuredClone", "performance", "crypto", "atob", "btoa", "navigator", "ReadableStream", "WritableStream",
	"TransformStream", "DOMException", "__dirname", "__filename"}

// moduleBody returns m's declarations as a module file: a "declare module"
// block (the generated modules of wrapped servers) loses its wrapper.
func moduleBody(m Module) string {
	t := strings.TrimSpace(m.Types)
	for _, q := range []string{"'", `"`} {
		head := "declare module " + q + m.Name + q + " {"
		if body, ok := strings.CutPrefix(t, head); ok && strings.HasSuffix(body, "}") {
			return strings.TrimSuffix(body, "}") + "\nexport {};\n"
		}
	}
	return m.Types
}

// diagnostic matches the first line of one of tsc's errors (--pretty false).
var diagnostic = regexp.MustCompile(`^(.+)\((\d+),(\d+)\): error (TS\d+): (.*)$`)

// mainDecl finds the line that exports main in the program.
var mainDecl = regexp.MustCompile(`(?m)^\s*export\s+(?:default\s+)?(?:async\s+)?(?:function\s*\*?\s*main\b|(?:const|let|var)\s+main\b)|^\s*export\s*\{[^}]*\bmain\b`)

// parse returns the errors of tsc's output that are in the program: those
// in main.ts, and that of check.ts (main's type) placed at main's export.
func parse(out, code string) []TypeError {
	var errs []TypeError
	var last *TypeError
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		m := diagnostic.FindStringSubmatch(line)
		if m == nil {
			if last != nil && strings.HasPrefix(line, " ") && len(last.Message) < maxMessage {
				last.Message += " " + strings.TrimSpace(line)
			}
			continue
		}
		last = nil
		l, _ := strconv.Atoi(m[2])
		c, _ := strconv.Atoi(m[3])
		switch filepath.ToSlash(m[1]) {
		case mainFile:
		case checkFile:
			l, c = mainLine(code), 1
			m[5] = "main does not have the type the runner expects (a function returning a number, nothing, or a Promise of either): " + m[5]
		default:
			continue // in a capability's declarations or a repository file: not the program's to fix
		}
		errs = append(errs, TypeError{Line: l, Column: c, Message: m[4] + ": " + m[5]})
		last = &errs[len(errs)-1]
	}
	for i := range errs {
		errs[i].Message = cut(errs[i].Message)
	}
	slices.SortStableFunc(errs, func(a, b TypeError) int {
		if a.Line != b.Line {
			return a.Line - b.Line
		}
		return a.Column - b.Column
	})
	return errs
}

func mainLine(code string) int {
	loc := mainDecl.FindStringIndex(code)
	if loc == nil {
		return 1
	}
	// The match may start with the blank lines before the export.
	start := loc[0] + len(code[loc[0]:loc[1]]) - len(strings.TrimLeft(code[loc[0]:loc[1]], " \t\r\n"))
	return strings.Count(code[:start], "\n") + 1
}

func cut(s string) string {
	if len(s) <= maxMessage {
		return s
	}
	n := maxMessage
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return cut(s)
}

// LookupCompiler finds tsc on the PATH of environ (the server's), skipping
// relative entries and entries inside root: a compiler the repository
// holds is the repository's code, and the check runs on the host.
func LookupCompiler(environ []string, root string) (string, error) {
	path := ""
	for _, kv := range environ {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v
		}
	}
	name := "tsc"
	if os.PathSeparator == '\\' {
		name = "tsc.cmd"
	}
	for _, dir := range filepath.SplitList(path) {
		if !filepath.IsAbs(dir) || inside(dir, root) {
			continue
		}
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", ErrNoCompiler
}

func inside(dir, root string) bool {
	if root == "" {
		return false
	}
	rel, err := filepath.Rel(root, dir)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// scrubbed keeps what tsc needs of environ: where node is, a home and a
// temporary folder. NODE_OPTIONS and the like would let the environment
// load code into the compiler.
func scrubbed(environ []string) []string {
	var out []string
	for _, kv := range environ {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "PATH", "HOME", "TMPDIR", "SYSTEMROOT", "LANG":
			out = append(out, kv)
		}
	}
	return out
}
