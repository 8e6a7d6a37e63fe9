package isolate

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
)

// InitArg, as the first argument of omnidev's own binary, makes it the
// sandbox's init (see Init). A main or a TestMain calls Init before it
// parses anything when IsInit says so.
const InitArg = "__omnidev_sandbox"

// IsInit reports whether a process started with args (os.Args) is the
// sandbox's init, or the step of the Landlock mode that raises the walls:
// Init serves both.
func IsInit(args []string) bool {
	return len(args) > 1 && (args[1] == InitArg || args[1] == wallArg)
}

// wallArg is WallArg where the Landlock mode exists (see the Linux files).
const wallArg = "__omnidev_sandbox_wall"

// InitOr runs this process as the sandbox's init when IsInit says so, and
// run otherwise; it returns the exit code. It is for TestMain functions
// whose tests start isolated programs from the test binary itself:
// os.Exit(isolate.InitOr(m.Run)).
func InitOr(run func() int) int {
	if IsInit(os.Args) {
		return Init()
	}
	return run()
}

// HelperName is the small binary New looks for beside the running one to
// serve as the init; see cmd/omnidev-sandbox.
const HelperName = "omnidev-sandbox"

// ProtocolArg, as the only argument of the helper, makes it print Protocol
// and exit (see HelperMain): how omnidev tells a helper of its own build
// from one installed by another, which would misread what it is sent.
const ProtocolArg = "__omnidev_sandbox_protocol"

// Protocol numbers what omnidev and its init say to each other (the specs
// and the status): raise it with any change to them.
const Protocol = 3

// HelperMain is the main of cmd/omnidev-sandbox; it returns the exit code.
func HelperMain(args []string) int {
	switch {
	case IsInit(args):
		return Init()
	case len(args) == 2 && args[1] == ProtocolArg:
		fmt.Println(Protocol)
		return 0
	}
	fmt.Fprintln(os.Stderr, HelperName+" is started by omnidev for each run; it is not meant to be run by hand")
	return 2
}

// Modes of isolation (Policy.Mode).
const (
	// ModeAuto is namespaces where the kernel allows them, else Landlock.
	ModeAuto = "auto"
	// ModeNamespaces is user, mount, PID, IPC, UTS (and network)
	// namespaces, with Landlock and seccomp inside.
	ModeNamespaces = "namespaces"
	// ModeLandlock is Landlock and seccomp without namespaces, for
	// machines that refuse unprivileged user namespaces.
	ModeLandlock = "landlock"
	// ModeNone runs the program on the host, in a session of its own.
	ModeNone = "none"
)

// NamespacesHint says in a line or two what would give this machine the
// namespace mode back.
const NamespacesHint = "for the full sandbox allow unprivileged user namespaces: sysctl kernel.apparmor_restrict_unprivileged_userns=0 " +
	"(or an AppArmor profile for omnidev like Ubuntu's for bwrap), sysctl user.max_user_namespaces=15000, or run the container " +
	"with --security-opt seccomp=unconfined"

// ErrIsolation is returned when a run cannot be contained as its policy
// asks and the error says what to change.
var ErrIsolation = errors.New("isolation unavailable")

// ErrNetworkIsolation is returned when a program must run without network
// and the kernel refuses the namespaces that would cut it off.
var ErrNetworkIsolation = errors.New("network isolation unavailable")

// Policy is what a run may do. A nil *Policy runs the program on the host,
// in its own process group only.
type Policy struct {
	// Mode is how a run is contained: ModeAuto (also ""), ModeNamespaces,
	// ModeLandlock or ModeNone.
	Mode string
	// Filesystem false leaves the host's filesystem as it is ([sandbox]
	// filesystem = "host"); the other protections stay.
	Filesystem bool
	// Writable and Readable are absolute host paths added to the view, the
	// first writable, the second read-only. Missing paths are skipped.
	Writable, Readable []string
	// Hosts is [sandbox] network as a list, for doctor (the run itself
	// gets its proxy through Program.Egress).
	Hosts []string
	// MemoryBytes and Processes are cgroup limits; 0 means none.
	MemoryBytes int64
	Processes   int
	// nproc is set by Prepare when the processes limit is RLIMIT_NPROC,
	// no pids cgroup being available.
	nproc bool
	// MemoryNotice is the line a run stopped by the memory limit gets on
	// stderr: it names the limit and the setting that raises it.
	MemoryNotice string
	// ProcessesNotice is the line a run that reached the processes limit
	// gets on stderr.
	ProcessesNotice string
}

// Program is what to run.
type Program struct {
	// Path is the absolute path of the runtime; Args follow it.
	Path string
	Args []string
	// Root is the repository root, writable in the view except for the
	// folders ReadOnlyIn names; Dir is where the program starts.
	Root string
	Dir  string
	// Env is the program's whole environment ("NAME=value").
	Env []string
	// Network false runs the program without any network, loopback
	// included.
	Network bool
	// Egress, with Network false, is the Unix socket of an egress proxy:
	// the program's network namespace then has a loopback on which the
	// init bridges EgressPort to it, and nothing else.
	Egress string
}

// EgressPort is the port on the run's loopback where the egress proxy is
// reached (HTTP_PROXY=http://127.0.0.1:3128).
const EgressPort = 3128

// Report is how a finished run was contained.
type Report struct {
	// Isolation says in a few words what contained the run: "namespaces",
	// "namespaces; not enforced: memory limit (...)", or "none: <reason>".
	Isolation string
	// OutOfMemory is true when the memory limit stopped the program.
	OutOfMemory bool
	// Notice, when set, is a line for the program's stderr (the memory
	// limit that stopped it, and the setting that raises it).
	Notice string
}

// Protection is one thing the sandbox guards, for doctor.
type Protection struct {
	Name string
	// State is Enforced, NotEnforced or Off.
	State string
	// Detail says how, or why not and what would change that.
	Detail string
}

// isolation renders the Report.Isolation of a run in namespaces: the
// layers that held ("namespaces+landlock+seccomp"), then what is not
// enforced.
func isolation(walls, notEnforced []string) string {
	return render("namespaces", walls, "", notEnforced)
}

// landlockIsolation renders the Report.Isolation of a run in the Landlock
// mode: "landlock+seccomp: <why>; not enforced: ...".
func landlockIsolation(walls []string, why string, notEnforced []string) string {
	return render("", walls, why, notEnforced)
}

func render(first string, walls []string, why string, notEnforced []string) string {
	s := strings.Join(slices.DeleteFunc(append([]string{first}, walls...), func(w string) bool { return w == "" }), "+")
	if why != "" {
		s += ": " + why
	}
	if len(notEnforced) == 0 {
		return s
	}
	return s + "; not enforced: " + strings.Join(notEnforced, "; ")
}
