// Command omnidev-sandbox is the first process of the namespaces omnidev
// runs each program in (see internal/isolate). omnidev starts it from its
// own folder when it is installed there and speaks the same protocol: a
// small binary starts in a fraction of the time omnidev's own does, and
// every run pays that start. Without it, omnidev re-executes itself for the
// same job.
package main

import (
	"os"

	"github.com/omnidev/omnidev/internal/isolate"
)

func main() {
	os.Exit(isolate.HelperMain(os.Args))
}
