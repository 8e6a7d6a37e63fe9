package execute

import (
	"bytes"
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

	"github.com/go-git/go-git/v5/plumbing/format/index"

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
			indexes := newIndexReader(nil)
			snapshot := func(b *testing.B) {
				s, err := takeSnapshot(b.Context(), root, indexes)
				if err != nil {
					b.Fatal(err)
				}
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

// BenchmarkRunBesideGit measures a run's overhead over a bare `bun` while
// git rewrites its index between runs, as a user working beside the agent
// does: before each timed program, `git checkout -q -- . && git clean -fdq
// && git status --porcelain` restores the worktree and refreshes the index.
// On generated repositories of 1k, 10k (and, with OMNIDEV_BENCH_LARGE=1,
// 50k) tracked files it reports:
//
//	overhead   overhead-ms: median of run - bun, both timed right after
//	           the same git commands; x-git-status: against the median
//	           `git status --porcelain` of those commands; x-1k: against
//	           the 1k repository's overhead, measured in the same process
//	first-run  first-ms: the overhead of the first run of an Executor
//	           warmed as the engine does when it opens (Warm), after 3 s
//	           idle; x-steady: against the overhead above
//
// Each figure also comes as CPU time (ours and our children's: cpu-...),
// which load from other processes on a shared machine inflates less than
// wall time.
//
// Run it with: go test -run '^$' -bench BenchmarkRunBesideGit -benchtime 9x ./internal/execute/
func BenchmarkRunBesideGit(b *testing.B) {
	benchEdit := testrepo.EditProgram()
	bun := requireBun(b)
	sizes := []int{1_000, 10_000}
	if os.Getenv(largeBenchEnv) != "" {
		sizes = append(sizes, 50_000)
	}
	var wall1k, cpu1k time.Duration
	for _, n := range sizes {
		b.Run(fmt.Sprintf("files=%d", n), func(b *testing.B) {
			root := testrepo.Generate(b, n)
			program := filepath.Join(b.TempDir(), "program.ts")
			if err := os.WriteFile(program, []byte(benchEdit), 0o644); err != nil {
				b.Fatal(err)
			}
			env := []string{"PATH=" + os.Getenv("PATH")}
			req := request(prepare(b, root), benchEdit)
			req.Env = env
			bare := func(b *testing.B) {
				cmd := exec.Command(bun, program)
				cmd.Dir, cmd.Env = root, env
				if out, err := cmd.CombinedOutput(); err != nil {
					b.Fatalf("bun: %v\n%s", err, out)
				}
			}
			run := func(e *Executor) func(*testing.B) {
				return func(b *testing.B) {
					res, err := e.Run(b.Context(), req)
					if err != nil || res.ExitCode != 0 {
						b.Fatalf("run: %v %+v", err, res)
					}
					if len(res.Changes) != 4 {
						b.Fatalf("run reported %+v, want the 3 edits and created.txt", res.Changes)
					}
				}
			}
			// restore is what the user's git does between runs; it returns
			// the time of its `git status`.
			restore := func(b *testing.B) time.Duration {
				testrepo.Git(b, root, "checkout", "-q", "--", ".")
				testrepo.Git(b, root, "clean", "-fdq")
				wall, _ := timed(b, func(b *testing.B) { testrepo.Git(b, root, "status", "--porcelain") })
				return wall
			}
			// overhead runs bare bun and then op, each after restore, and
			// returns op's wall and CPU time beyond bun's.
			overhead := func(b *testing.B, op func(*testing.B)) (wall, cpu, git time.Duration) {
				restore(b)
				bunWall, bunCPU := timed(b, bare)
				git = restore(b)
				opWall, opCPU := timed(b, op)
				return opWall - bunWall, opCPU - bunCPU, git
			}

			var steadyWall, steadyCPU time.Duration
			b.Run("overhead", func(b *testing.B) {
				e := New(root, nil)
				defer e.Close()
				e.Warm()
				var wall, cpu, git []time.Duration
				for b.Loop() {
					w, c, g := overhead(b, run(e))
					wall, cpu, git = append(wall, w), append(cpu, c), append(git, g)
				}
				steadyWall, steadyCPU = median(wall), median(cpu)
				b.ReportMetric(ms(steadyWall), "overhead-ms")
				b.ReportMetric(ms(steadyCPU), "overhead-cpu-ms")
				b.ReportMetric(float64(steadyWall)/float64(median(git)), "x-git-status")
				if n == 1_000 {
					wall1k, cpu1k = steadyWall, steadyCPU
				} else if wall1k > 0 {
					b.ReportMetric(float64(steadyWall)/float64(wall1k), "x-1k")
					b.ReportMetric(float64(steadyCPU)/float64(cpu1k), "cpu-x-1k")
				}
			})

			b.Run("first-run", func(b *testing.B) {
				const idle = 3 * time.Second
				var wall, cpu []time.Duration
				for b.Loop() {
					e := New(root, nil)
					e.Warm()
					time.Sleep(idle)
					w, c, _ := overhead(b, run(e))
					e.Close()
					wall, cpu = append(wall, w), append(cpu, c)
				}
				first, firstCPU := median(wall), median(cpu)
				b.ReportMetric(ms(first), "first-ms")
				b.ReportMetric(ms(firstCPU), "first-cpu-ms")
				if steadyWall > 0 {
					b.ReportMetric(float64(first)/float64(steadyWall), "x-steady")
					b.ReportMetric(float64(firstCPU)/float64(steadyCPU), "cpu-x-steady")
				}
			})
		})
	}
}

// BenchmarkIndexRead reads a git index of 50k entries three ways: after a
// rewrite that changed three entries' stat data (what `git status` or `git
// checkout -- .` leave behind), whole (a first read, or a rewrite that
// added or removed entries), and with go-git's decoder, which this
// package used before.
//
// Run it with: go test -run '^$' -bench BenchmarkIndexRead -benchtime 20x ./internal/execute/
func BenchmarkIndexRead(b *testing.B) {
	const n = 50_000
	root := testrepo.New(b, map[string]string{"a.txt": "a\n"})
	blob := strings.TrimSpace(testrepo.Git(b, root, "hash-object", "-w", "a.txt"))
	var entries strings.Builder
	for i := range n {
		fmt.Fprintf(&entries, "100644 %s\t%s\n", blob, testrepo.Path(i))
	}
	gitStdin(b, root, entries.String(), "update-index", "--index-info")
	r, err := openRepository(root)
	if err != nil {
		b.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(r.gitDir, "index"))
	if err != nil {
		b.Fatal(err)
	}
	// The same index, rewritten with three entries' mtimes changed.
	rewritten := r
	rewritten.gitDir = b.TempDir()
	f, err := parseIndexFile(bytes.Clone(data))
	if err != nil {
		b.Fatal(err)
	}
	changed := bytes.Clone(data)
	for _, i := range []int{0, 123, 456} {
		changed[f.entries[i].off+entryMtime+3]++
	}
	if err := os.WriteFile(filepath.Join(rewritten.gitDir, "index"), changed, 0o644); err != nil {
		b.Fatal(err)
	}

	b.Run("rewrite", func(b *testing.B) {
		ir := newIndexReader(nil)
		first := ir.read(b.Context(), r)
		if first.len() != n+1 {
			b.Fatalf("%d entries, want %d", first.len(), n+1)
		}
		for i := 0; b.Loop(); i++ {
			next := []repository{rewritten, r}[i%2]
			if x := ir.read(b.Context(), next); !x.sameFiles(first) || x.changed == nil {
				b.Fatal("the rewrite was decoded again")
			}
		}
	})
	b.Run("whole", func(b *testing.B) {
		for b.Loop() {
			if newIndexReader(nil).read(b.Context(), r).len() != n+1 {
				b.Fatal("entries missing")
			}
		}
	})
	b.Run("go-git", func(b *testing.B) {
		for b.Loop() {
			var idx index.Index
			if err := index.NewDecoder(bytes.NewReader(data)).Decode(&idx); err != nil || len(idx.Entries) != n+1 {
				b.Fatal(err)
			}
		}
	})
}
