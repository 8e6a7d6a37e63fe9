package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/omnidev/omnidev/internal/capability"
	"github.com/omnidev/omnidev/internal/changes"
	"github.com/omnidev/omnidev/internal/execute"
	"github.com/omnidev/omnidev/internal/tsgen"
	"github.com/omnidev/omnidev/internal/typecheck"
)

// ErrInvalidTypeCheck is a typecheck argument that is not a mode.
var ErrInvalidTypeCheck = errors.New(`typecheck must be "off", "warn" or "error"`)

// ErrTypeCheckUnavailable is a check asked for in "error" mode where the
// compiler cannot be found: the program is not run unchecked.
var ErrTypeCheckUnavailable = errors.New("typecheck \"error\" needs the TypeScript compiler")

// typeCheckMode returns the mode of a run: the request's, else the config's.
func typeCheckMode(requested string, cfg capability.Sandbox) (string, error) {
	if requested == "" {
		return cfg.TypeCheck, nil
	}
	if !typecheck.ValidMode(requested) {
		return "", fmt.Errorf("%w, got %q", ErrInvalidTypeCheck, requested)
	}
	return requested, nil
}

// typeCheck checks code against the modules of reg and fills res's
// typecheck fields. It returns an error only in "error" mode when no
// compiler is found; any other failure of the check is a note in res.
func (e *Engine) typeCheck(ctx context.Context, reg *capability.Registry, code, mode string, res *execute.Result) error {
	res.TypeCheck = typecheck.Off
	res.TypeErrors = []typecheck.TypeError{}
	if mode == typecheck.Off {
		return nil
	}
	tsc, err := typecheck.LookupCompiler(e.environ, e.root)
	if err != nil {
		if mode == typecheck.Error {
			return fmt.Errorf("%w: %v; or set [sandbox] typecheck = \"warn\" (or pass typecheck \"warn\") to run unchecked", ErrTypeCheckUnavailable, err)
		}
		res.TypeCheck = "not done: " + err.Error()
		return nil
	}
	modules := []typecheck.Module{{Name: tsgen.BuiltinModule, Types: tsgen.BuiltinTypes}}
	for _, c := range reg.Capabilities {
		modules = append(modules, typecheck.Module{Name: c.Module, Types: c.Types})
	}
	errs, omitted, err := typecheck.Check(ctx, typecheck.Request{Code: code, Modules: modules, Root: e.root, Compiler: tsc, Environ: e.environ})
	switch {
	case err != nil:
		e.logger.Warn("typecheck failed", "error", err)
		res.TypeCheck = "not done: " + strings.TrimPrefix(err.Error(), "typecheck: ")
	case len(errs) > 0:
		res.TypeCheck, res.TypeErrors, res.TypeErrorsOmitted = "errors", errs, omitted
	default:
		res.TypeCheck = "ok"
	}
	return nil
}

// notRun is the result of a program that type errors kept from running.
func notRun(checked *execute.Result) *execute.Result {
	res := *checked
	res.ExitCode = -1
	n := len(res.TypeErrors) + res.TypeErrorsOmitted
	res.Stderr = fmt.Sprintf("omnidev: the program was not run: %d type errors (typecheck \"error\"); fix them, or pass typecheck \"warn\" to run it anyway\n", n)
	res.ChangedFiles, res.Changes, res.Calls = []string{}, []changes.Change{}, []execute.ToolCall{}
	res.Isolation = "none: the program was not run"
	return &res
}
