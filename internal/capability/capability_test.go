package capability

import "testing"

// FuzzParseManifest checks that no capability.toml makes parseManifest
// panic, and that what it accepts obeys the rules Load relies on: the id is
// the folder's, the module is valid and the variable names can be exported.
// Seeds are in testdata/fuzz/FuzzParseManifest.
func FuzzParseManifest(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := parseManifest(data, "tasks")
		if err != nil {
			return
		}
		if c.ID != "tasks" {
			t.Fatalf("accepted id %q for folder tasks", c.ID)
		}
		if err := ValidateModule(c.Module); err != nil {
			t.Fatalf("accepted an invalid module: %v", err)
		}
		for _, d := range c.EnvDecls {
			if !validEnvName(d.Name) {
				t.Fatalf("accepted variable name %q", d.Name)
			}
		}
	})
}
