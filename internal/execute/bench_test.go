package execute

import (
	"fmt"
	"log/slog"
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
//	snapshot    the change detection alone (two walks), without a program
//	overhead    run - bun, in ms and as a multiple of git status, and the
//	            test process's resident memory (rss-MB) once it has run
//
// Each sub-benchmark also reports CPU time per operation (ours and our
// children's), which load from other processes does not inflate as it does
// wall time. overhead measures bun, run and git status back to back in
// each iteration and reports medians, so that a burst of load on a shared
// machine hits all three alike.
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
			var cached *gitIndex
			snapshot := func(b *testing.B) {
				s, err := takeSnapshot(b.Context(), root, cached, slog.New(slog.DiscardHandler))
				if err != nil {
					b.Fatal(err)
				}
				cached = s.index
				f, err := os.OpenFile(filepath.Join(root, testrepo.Path(789)), os.O_APPEND|os.O_WRONLY, 0)
				if err != nil {
					b.Fatal(err)
				}
				f.WriteString("edit\n")
				f.Close()
				if _, err := s.changes(b.Context()); err != nil {
					b.Fatal(err)
				}
			}

			for _, sub := range []struct {
				name string
				op   func(*testing.B)
			}{{"bun", bare}, {"run", run}, {"git-status", status}, {"snapshot", snapshot}} {
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
// (namespaces: the init and a fresh /proc; filesystem: the view; cgroups:
// the limits) and for all of it, as omnidev runs programs.
//
// The init is omnidev-sandbox, built for the benchmark, as `just build`
// installs it beside omnidev.
//
// Run it with: go test -run '^$' -bench BenchmarkIsolation -benchtime 40x ./internal/execute/
func BenchmarkIsolation(b *testing.B) {
	requireBun(b)
	helper := filepath.Join(b.TempDir(), isolate.HelperName)
	if out, err := exec.Command("go", "build", "-o", helper, "github.com/omnidev/omnidev/cmd/omnidev-sandbox").CombinedOutput(); err != nil {
		b.Fatalf("build %s: %v\n%s", isolate.HelperName, err, out)
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
