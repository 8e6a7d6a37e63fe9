//go:build !unix

package typecheck

import "os/exec"

// setGroup leaves tsc as it is: where there are no process groups, a
// cancelled check kills tsc itself (exec.CommandContext's default).
func setGroup(*exec.Cmd) {}
