// Command omnidev-sandbox is the first process of the namespaces omnidev
// runs each program in (see internal/isolate). omnidev starts it from its
// own folder when it is installed there: a small binary starts in a
// fraction of the time omnidev's own does, and every run pays that start.
// Without it, omnidev re-executes itself for the same job.
package main

import (
	"fmt"
	"os"

	"github.com/omnidev/omnidev/internal/isolate"
)

func main() {
	if !isolate.IsInit(os.Args) {
		fmt.Fprintln(os.Stderr, "omnidev-sandbox is started by omnidev for each run; it is not meant to be run by hand")
		os.Exit(2)
	}
	os.Exit(isolate.Init())
}
