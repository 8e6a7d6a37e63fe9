// Command omnidev is an MCP server that gives AI agents "code mode" over a
// repository, and the CLI around it. See README.md.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/omnidev/omnidev/internal/isolate"
)

// version is set at build time with -ldflags "-X main.version=..."; when it
// is not, versionString reads the build info.
var version = ""

func main() {
	if isolate.IsInit(os.Args) {
		os.Exit(isolate.Init())
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		// The first signal asks for a graceful stop; a second one means now.
		<-ctx.Done()
		stop()
		again := make(chan os.Signal, 1)
		signal.Notify(again, os.Interrupt, syscall.SIGTERM)
		<-again
		fmt.Fprintln(os.Stderr, "omnidev: second signal, exiting now")
		os.Exit(130)
	}()
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
