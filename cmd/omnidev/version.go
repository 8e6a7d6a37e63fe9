package main

import (
	"runtime/debug"
	"strings"
)

// versionString is the version omnidev reports (`omnidev version`, the
// server's serverInfo): the one set with -ldflags, else the build info's.
func versionString() string {
	if version != "" {
		return version
	}
	bi, _ := debug.ReadBuildInfo()
	return buildVersion(bi)
}

// buildVersion names the build from its build info: the module version
// (`go install ...@v1.2.0` sets it; a build in a clone gets a
// pseudo-version from git), then the VCS revision when the version does not
// already hold it, and "+dirty" for a build with uncommitted changes. With
// no build info it is "dev".
func buildVersion(bi *debug.BuildInfo) string {
	if bi == nil {
		return "dev"
	}
	v := bi.Main.Version
	if v == "(devel)" {
		v = ""
	}
	var rev string
	var modified bool
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if rev != "" && !strings.Contains(v, rev) {
		if v == "" {
			v = "devel"
		}
		v += "+" + rev
	}
	if modified && !strings.Contains(v, "dirty") {
		v += "+dirty"
	}
	if v == "" {
		return "dev"
	}
	return v
}
