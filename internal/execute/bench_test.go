//go:build unix

package execute

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/omnidev/omnidev/internal/isolate"
	"github.com/omnidev/omnidev/internal/testrepo"
)

// largeBenchEnv adds the 50k-file repository to BenchmarkRun: building it
// takes about a minute, too long for every `just bench`.
const largeBenchEnv = "OMNIDEV_BENCH_LARGE"

// BenchmarkRun compares, on generated repositories of 1k, 10k (and, with
// OMNIDEV_BENCH_LARGE=1, 50k) tracked files:
//
//	bun         a bare `bun <program>` (what the program costs anyway)
//	run         Executor.Run of the same program
//	git-status  `git status --porcelain` (the yardstick for a worktree scan)
//	overhead    run - bun, in ms and as a multiple of git status, and the
//	            test process's resident memory (rss-MB) once it has run
//
// Each sub-benchmark also reports CPU time per operation (ours and our
// children's), which load from other processes does not inflate as it does
// wall time. overhead measures bun, run and git status back to back in
// each iteration and reports medians, so that a burst of load on a shared
// machine hits all three alike. The change detection alone, without a
// program, is internal/changes's BenchmarkSnapshot.
//
// Run it with: go test -run '^$' -bench BenchmarkRun -benchtime 40x ./internal/execute/
func BenchmarkRun(b *testing.B) {
	benchEdit := testrepo.EditProgram()
	bun := requireBun(b)
	sizes := []int{1_000, 10_000}
	if os.Getenv(largeBenchEnv) != "" {
		sizes = append(sizes, 50_000)
	}
	for _, n := range sizes {
		b.Run(fmt.Sprintf("files=%d", n), func(b *testing.B) {
			root := testrepo.Generate(b, n)
			program := filepath.Join(b.TempDir(), "program.ts")
			if err := os.WriteFile(program, []byte(benchEdit), 0o644); err != nil {
				b.Fatal(err)
			}
			env := []string{"PATH=" + os.Getenv("PATH")}
			e := New(root, nil)
			req := request(prepare(b, root), benchEdit)
			req.Env = env

			bare := func(b *testing.B) {
				cmd := exec.Command(bun, program)
				cmd.Dir, cmd.Env = root, env
				if out, err := cmd.CombinedOutput(); err != nil {
					b.Fatalf("bun: %v\n%s", err, out)
				}
			}
			run := func(b *testing.B) {
				res, err := e.Run(b.Context(), req)
				if err != nil || res.ExitCode != 0 {
					b.Fatalf("run: %v %+v", err, res)
				}
				// created.txt exists from the second run on, unchanged.
				if len(res.Changes) < 3 {
					b.Fatalf("run reported %+v, want the 3 edits", res.Changes)
				}
			}
			status := func(b *testing.B) { testrepo.Git(b, root, "status", "--porcelain") }

			for _, sub := range []struct {
				name string
				op   func(*testing.B)
			}{{"bun", bare}, {"run", run}, {"git-status", status}} {
				b.Run(sub.name, func(b *testing.B) {
					cpu := cpuTime()
					for b.Loop() {
						sub.op(b)
					}
					b.ReportMetric(ms(cpuTime()-cpu)/float64(b.N), "cpu-ms/op")
				})
			}

			b.Run("overhead", func(b *testing.B) {
				var wallOver, cpuOver, wallGit, cpuGit []time.Duration
				for b.Loop() {
					bunWall, bunCPU := timed(b, bare)
					runWall, runCPU := timed(b, run)
					gitWall, gitCPU := timed(b, status)
					wallOver, cpuOver = append(wallOver, runWall-bunWall), append(cpuOver, runCPU-bunCPU)
					wallGit, cpuGit = append(wallGit, gitWall), append(cpuGit, gitCPU)
				}
				b.ReportMetric(ms(median(wallOver)), "overhead-ms")
				b.ReportMetric(float64(median(wallOver))/float64(median(wallGit)), "x-git-status")
				b.ReportMetric(ms(median(cpuOver)), "overhead-cpu-ms")
				b.ReportMetric(float64(median(cpuOver))/float64(median(cpuGit)), "cpu-x-git-status")
				// The whole test process, tracker included: an upper bound
				// for the server's resident memory at this repository size.
				runtime.GC()
				b.ReportMetric(rssMB(), "rss-MB")
			})
		})
	}
}

// timed runs op once and returns its wall and CPU time.
func timed(b *testing.B, op func(*testing.B)) (wall, cpu time.Duration) {
	c, t := cpuTime(), time.Now()
	op(b)
	return time.Since(t), cpuTime() - c
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// rssMB returns this process's resident set size in MB (VmRSS).
func rssMB() float64 {
	data, _ := os.ReadFile("/proc/self/status")
	for line := range strings.Lines(string(data)) {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
			return float64(kb) / 1024
		}
	}
	return 0
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// selfCPU returns the CPU time used so far by this process, user and
// system.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// cpuTime returns the CPU time used so far by this process and its reaped
// children, user and system.
func cpuTime() time.Duration {
	var total time.Duration
	for _, who := range []int{syscall.RUSAGE_SELF, syscall.RUSAGE_CHILDREN} {
		var ru syscall.Rusage
		if err := syscall.Getrusage(who, &ru); err == nil {
			total += time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		}
	}
	return total
}

// BenchmarkRunBesideGit measures a run's overhead over a bare `bun` while
// git rewrites its index between runs, as a user working beside the agent
// does: before each timed program, `git checkout -q -- . && git clean -fdq
// && git status --porcelain` restores the worktree and refreshes the index.
// It uses generated repositories of 1k and 10k (and, with
// OMNIDEV_BENCH_LARGE=1, 50k) tracked files, and measures them in turn in
// each iteration, so that load from other processes on a shared machine
// hits every figure of a ratio alike:
//
//	overhead   <n>-overhead-ms: median of run - bun, both timed right
//	           after the same git commands, with an Executor warmed long
//	           before; <n>-x-1k: against the 1k repository's;
//	           <n>-x-git-status: against the `git status --porcelain` of
//	           those commands
//	first-run  <n>-first-ms: the overhead of the first run of an Executor
//	           warmed as the engine does when it opens (Warm), after 3 s
//	           idle; <n>-x-steady: against a warmed-long-before
//	           Executor's run measured beside it
//
// Each figure also comes as CPU time (ours and our children's: cpu-...),
// which load inflates less than wall time, and <n>-self-cpu-ms is this
// process's own CPU time in the run, without Bun's, whose variation from
// run to run is larger than what the repository's size adds to ours.
//
// Run it with: go test -run '^$' -bench BenchmarkRunBesideGit -benchtime 9x ./internal/execute/
func BenchmarkRunBesideGit(b *testing.B) {
	benchEdit := testrepo.EditProgram()
	bun := requireBun(b)
	sizes := []int{1_000, 10_000}
	if os.Getenv(largeBenchEnv) != "" {
		sizes = append(sizes, 50_000)
	}
	type repo struct {
		name    string
		root    string
		program string
		req     Request
		steady  *Executor
	}
	env := []string{"PATH=" + os.Getenv("PATH")}
	var repos []*repo
	for _, n := range sizes {
		r := &repo{name: fmt.Sprintf("%dk", n/1000), root: testrepo.Generate(b, n)}
		r.program = filepath.Join(b.TempDir(), "program.ts")
		if err := os.WriteFile(r.program, []byte(benchEdit), 0o644); err != nil {
			b.Fatal(err)
		}
		r.req = request(prepare(b, r.root), benchEdit)
		r.req.Env = env
		r.steady = New(r.root, nil)
		defer r.steady.Close()
		r.steady.Warm()
		repos = append(repos, r)
	}
	bare := func(r *repo) func(*testing.B) {
		return func(b *testing.B) {
			cmd := exec.Command(bun, r.program)
			cmd.Dir, cmd.Env = r.root, env
			if out, err := cmd.CombinedOutput(); err != nil {
				b.Fatalf("bun: %v\n%s", err, out)
			}
		}
	}
	run := func(r *repo, e *Executor) func(*testing.B) {
		return func(b *testing.B) {
			res, err := e.Run(b.Context(), r.req)
			if err != nil || res.ExitCode != 0 {
				b.Fatalf("run: %v %+v", err, res)
			}
			if len(res.Changes) != 4 {
				b.Fatalf("run reported %+v, want the 3 edits and created.txt", res.Changes)
			}
		}
	}
	// restore is what the user's git does between runs; it returns the
	// time of its `git status`.
	restore := func(b *testing.B, r *repo) time.Duration {
		testrepo.Git(b, r.root, "checkout", "-q", "--", ".")
		testrepo.Git(b, r.root, "clean", "-fdq")
		wall, _ := timed(b, func(b *testing.B) { testrepo.Git(b, r.root, "status", "--porcelain") })
		return wall
	}
	// overhead times bare bun and op, each right after restore, and
	// returns op's wall and CPU time beyond bun's, git status's time and
	// this process's CPU time in op.
	overhead := func(b *testing.B, r *repo, op func(*testing.B)) (wall, cpu, git, self time.Duration) {
		restore(b, r)
		bunWall, bunCPU := timed(b, bare(r))
		git = restore(b, r)
		self = selfCPU()
		opWall, opCPU := timed(b, op)
		return opWall - bunWall, opCPU - bunCPU, git, selfCPU() - self
	}
	// samples collects one figure per repository across iterations.
	type samples map[string][]time.Duration
	report := func(b *testing.B, s samples, name, unit string) time.Duration {
		m := median(s[name])
		b.ReportMetric(ms(m), name+"-"+unit)
		return m
	}

	// One run each, untimed: the baselines are built, the caches warm.
	for _, r := range repos {
		restore(b, r)
		run(r, r.steady)(b)
	}

	b.Run("overhead", func(b *testing.B) {
		wall, cpu, git, self := samples{}, samples{}, samples{}, samples{}
		for b.Loop() {
			for _, r := range repos {
				w, c, g, s := overhead(b, r, run(r, r.steady))
				wall[r.name], cpu[r.name], git[r.name] = append(wall[r.name], w), append(cpu[r.name], c), append(git[r.name], g)
				self[r.name] = append(self[r.name], s)
			}
		}
		for _, r := range repos {
			w, c := report(b, wall, r.name, "overhead-ms"), report(b, cpu, r.name, "overhead-cpu-ms")
			s := report(b, self, r.name, "self-cpu-ms")
			b.ReportMetric(float64(w)/float64(median(git[r.name])), r.name+"-x-git-status")
			if r != repos[0] {
				b.ReportMetric(float64(w)/float64(median(wall[repos[0].name])), r.name+"-x-1k")
				b.ReportMetric(float64(c)/float64(median(cpu[repos[0].name])), r.name+"-cpu-x-1k")
				b.ReportMetric(float64(s)/float64(median(self[repos[0].name])), r.name+"-self-x-1k")
			}
		}
	})

	b.Run("first-run", func(b *testing.B) {
		const idle = 3 * time.Second
		first, firstCPU, steady, steadyCPU := samples{}, samples{}, samples{}, samples{}
		for b.Loop() {
			fresh := make([]*Executor, len(repos))
			for i, r := range repos {
				fresh[i] = New(r.root, nil)
				fresh[i].Warm()
			}
			time.Sleep(idle)
			for i, r := range repos {
				w, c, _, _ := overhead(b, r, run(r, r.steady))
				steady[r.name], steadyCPU[r.name] = append(steady[r.name], w), append(steadyCPU[r.name], c)
				w, c, _, _ = overhead(b, r, run(r, fresh[i]))
				first[r.name], firstCPU[r.name] = append(first[r.name], w), append(firstCPU[r.name], c)
				fresh[i].Close()
			}
		}
		for _, r := range repos {
			w, c := report(b, first, r.name, "first-ms"), report(b, firstCPU, r.name, "first-cpu-ms")
			b.ReportMetric(float64(w)/float64(median(steady[r.name])), r.name+"-x-steady")
			b.ReportMetric(float64(c)/float64(median(steadyCPU[r.name])), r.name+"-cpu-x-steady")
		}
	})
}

// callGap is the pause between two calls in BenchmarkIsolation: an agent
// reads a result before it sends the next program, which leaves the
// executor time to prepare the next run's sandbox (see prepareSpare).
// all-back-to-back leaves none.
const callGap = 50 * time.Millisecond

// BenchmarkIsolation measures what isolation adds to a run: the same small
// program run on the host (Request.Isolation nil) and isolated, back to back
// in each iteration, from an Executor that has already run once (as a
// server's has). It reports the medians of both and of their difference,
// in wall time and in CPU time, for each part of the isolation alone
// (namespaces: the init, a fresh /proc, seccomp; filesystem: the view and
// Landlock; cgroups: the limits) and for all of it, as omnidev runs
// programs; and for the Landlock mode, alone and with the limits.
//
// The init is omnidev-sandbox, built for the benchmark, as `just build`
// installs it beside omnidev.
//
// Run it with: go test -run '^$' -bench BenchmarkIsolation -benchtime 40x ./internal/execute/
func BenchmarkIsolation(b *testing.B) {
	requireBun(b)
	helper := filepath.Join(b.TempDir(), isolate.HelperName)
	if err := testrepo.GoBuild(helper, "github.com/omnidev/omnidev/cmd/omnidev-sandbox"); err != nil {
		b.Fatal(err)
	}
	root := testrepo.Generate(b, 1_000)
	sb := prepare(b, root)
	e := New(root, nil)
	e.iso = isolate.NewWithInit(helper)
	host := request(sb, "console.log(\"hello\");\n")
	host.Env = append(host.Env, "HOME="+os.Getenv("HOME"))
	run := func(req Request) func(*testing.B) {
		return func(b *testing.B) {
			res, err := e.Run(b.Context(), req)
			if err != nil || res.ExitCode != 0 {
				b.Fatalf("run: %v %+v", err, res)
			}
		}
	}
	run(host)(b)
	all := &isolate.Policy{Filesystem: true, MemoryBytes: 2 << 30, Processes: 256}
	for _, part := range []struct {
		name   string
		policy *isolate.Policy
		gap    time.Duration
	}{
		{"namespaces", &isolate.Policy{}, callGap},
		{"filesystem", &isolate.Policy{Filesystem: true}, callGap},
		{"cgroups", &isolate.Policy{MemoryBytes: 2 << 30, Processes: 256}, callGap},
		{"all", all, callGap},
		{"all-back-to-back", all, 0},
		// The Landlock mode, as where user namespaces are refused.
		{"landlock", &isolate.Policy{Mode: isolate.ModeLandlock, Filesystem: true}, callGap},
		{"landlock-all", &isolate.Policy{Mode: isolate.ModeLandlock, Filesystem: true, MemoryBytes: 2 << 30, Processes: 256}, callGap},
	} {
		b.Run(part.name, func(b *testing.B) {
			isolated := host
			isolated.Isolation = part.policy
			run(isolated)(b)
			var hostD, isoD, diff, cpuDiff []time.Duration
			for b.Loop() {
				time.Sleep(part.gap)
				h, hc := timed(b, run(host))
				time.Sleep(part.gap)
				i, ic := timed(b, run(isolated))
				hostD, isoD, diff, cpuDiff = append(hostD, h), append(isoD, i), append(diff, i-h), append(cpuDiff, ic-hc)
			}
			b.ReportMetric(ms(median(hostD)), "host-ms")
			b.ReportMetric(ms(median(isoD)), "isolated-ms")
			b.ReportMetric(ms(median(diff)), "isolation-ms")
			// CPU time (ours and the reaped init's and runtime's) is what
			// a busy machine does not inflate as it does wall time.
			b.ReportMetric(ms(median(cpuDiff)), "isolation-cpu-ms")
		})
	}
}
