package main

import (
	"runtime/debug"
	"testing"
)

func TestIndexBuildMemory(t *testing.T) {
	for _, tc := range []struct {
		name        string
		setting     int
		during, end int
	}{
		{"default", 100, indexBuildGCPercent, 100},
		{"lower", 50, indexBuildGCPercent, 50},
		{"higher", 800, 800, 800},
		{"off", -1, -1, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			orig := debug.SetGCPercent(tc.setting)
			defer debug.SetGCPercent(orig)
			var m indexBuildMemory
			end1 := m.enter()
			end2 := m.enter() // a second build at the same time
			end1(0)
			if got := debug.SetGCPercent(tc.during); got != tc.during {
				t.Errorf("GC percent while a build runs = %d, want %d", got, tc.during)
			}
			end2(indexBuildFreeDocs)
			if got := debug.SetGCPercent(tc.end); got != tc.end {
				t.Errorf("GC percent after the builds = %d, want %d", got, tc.end)
			}
		})
	}
}
