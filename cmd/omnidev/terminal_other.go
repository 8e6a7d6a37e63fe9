//go:build !linux

package main

import "os"

// isTerminal reports false: elsewhere than Linux, serve does not tell a
// terminal from a host's pipe, and skips the notice meant for a person.
func isTerminal(*os.File) bool { return false }
