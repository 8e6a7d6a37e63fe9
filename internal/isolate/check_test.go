package isolate

import "testing"

func TestProtections(t *testing.T) {
	p := &Policy{Filesystem: true, MemoryBytes: 2 << 30, Processes: 256}
	tests := []struct {
		name      string
		isolation string
		network   bool
		policy    *Policy
		want      map[string]string // name -> state
	}{
		{"all enforced, network off", "namespaces+landlock+seccomp", false, p,
			map[string]string{"filesystem": Enforced, "processes": Enforced, "/proc": Enforced, "landlock": Enforced, "seccomp": Enforced,
				"network off": Enforced, "memory limit": Enforced, "processes limit": Enforced}},
		{"network on", "namespaces", true, p, map[string]string{"network off": Off}},
		{"filesystem host", "namespaces; not enforced: filesystem ([sandbox] filesystem = \"host\")", true, &Policy{MemoryBytes: 1 << 30, Processes: 64},
			map[string]string{"filesystem": Off, "processes": Enforced}},
		{"no cgroups", "namespaces; not enforced: memory limit (no cgroup); processes limit (cgroup v1 pids is read-only)", true, p,
			map[string]string{"memory limit": NotEnforced, "processes limit": NotEnforced, "processes": Enforced}},
		{"landlock mode", "landlock+seccomp: no user namespaces (user.max_user_namespaces=0); not enforced: private /tmp and /proc (x); host Unix sockets; memory limit (no cgroup)", false, p,
			map[string]string{"mode": NotEnforced, "filesystem": Enforced, "processes": Enforced, "/proc": NotEnforced, "host sockets": NotEnforced,
				"seccomp": Enforced, "network off": Enforced, "memory limit": NotEnforced, "processes limit": Enforced}},
		{"landlock missing in namespaces", "namespaces+seccomp; not enforced: landlock (the kernel has no Landlock ABI 2 or later: ABI 0)", false, p,
			map[string]string{"landlock": NotEnforced, "seccomp": Enforced, "filesystem": Enforced}},
		{"a list of hosts", "namespaces+landlock+seccomp+egress", false, &Policy{Filesystem: true, Hosts: []string{"registry.npmjs.org"}},
			map[string]string{"network hosts": Enforced}},
		{"a list of hosts in the Landlock mode", "landlock+seccomp: x", false, &Policy{Filesystem: true, Hosts: []string{"registry.npmjs.org"}},
			map[string]string{"network hosts": NotEnforced}},
		{"no namespaces", "none: darwin has no namespaces", true, p,
			map[string]string{"filesystem": NotEnforced, "/proc": NotEnforced, "memory limit": NotEnforced}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := map[string]Protection{}
			for _, pr := range protections(tt.isolation, tt.network, tt.policy) {
				got[pr.Name] = pr
			}
			for name, state := range tt.want {
				if got[name].State != state {
					t.Errorf("%s: %+v, want %s", name, got[name], state)
				}
			}
		})
	}
}
