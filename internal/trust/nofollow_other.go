//go:build !unix

package trust

const noFollow = 0
