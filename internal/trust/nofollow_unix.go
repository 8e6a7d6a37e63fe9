//go:build unix

package trust

import "syscall"

const noFollow = syscall.O_NOFOLLOW
