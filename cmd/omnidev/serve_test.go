package main

import (
	"os/exec"
	"testing"
)

// TestShellQuote checks that what the terminal notice prints reaches a
// shell as the one word it was: paths with spaces or quotes included.
func TestShellQuote(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"/home/me/go/bin/omnidev", "/home/me/go/bin/omnidev"},
		{"/tmp/my repo", "'/tmp/my repo'"},
		{"/tmp/it's", `'/tmp/it'\''s'`},
		{"/tmp/$HOME;rm", "'/tmp/$HOME;rm'"},
		{"", "''"},
	} {
		t.Run(tt.in, func(t *testing.T) {
			got := shellQuote(tt.in)
			if got != tt.want {
				t.Errorf("shellQuote(%q) = %s, want %s", tt.in, got, tt.want)
			}
			out, err := exec.Command("sh", "-c", "printf %s "+got).Output()
			if err != nil || string(out) != tt.in {
				t.Errorf("sh reads %s as %q (%v), want %q", got, out, err, tt.in)
			}
		})
	}
}
