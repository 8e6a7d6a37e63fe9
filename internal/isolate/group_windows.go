package isolate

import (
	"fmt"
	"os"
	"syscall"
	"unsafe"

	"golang.org/x/sys/windows"
)

// sysProcAttr starts the program in a new process group, apart from
// omnidev's console signals.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{CreationFlags: windows.CREATE_NEW_PROCESS_GROUP}
}

// group is a job object the program is put in once started: the processes
// it starts are in the job too, and closing the job's last handle kills
// whatever is left (JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE). What the program
// starts before join puts it in the job is not (os/exec cannot start a
// process suspended and resume it); a runtime starts nothing that early.
type group struct {
	job windows.Handle // 0: none (join failed or was not called)
}

// join creates the job and assigns p to it.
func (g *group) join(p *os.Process) error {
	job, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return fmt.Errorf("processes the program starts may outlive it (create a job object: %w)", err)
	}
	info := windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION{
		BasicLimitInformation: windows.JOBOBJECT_BASIC_LIMIT_INFORMATION{LimitFlags: windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE},
	}
	if _, err := windows.SetInformationJobObject(job, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err != nil {
		windows.CloseHandle(job)
		return fmt.Errorf("processes the program starts may outlive it (set the job object's limits: %w)", err)
	}
	h, err := windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE, false, uint32(p.Pid))
	if err == nil {
		err = windows.AssignProcessToJobObject(job, h)
		windows.CloseHandle(h)
	}
	if err != nil {
		windows.CloseHandle(job)
		return fmt.Errorf("processes the program starts may outlive it (assign it to a job object: %w)", err)
	}
	g.job = job
	return nil
}

// signal stops the group: Windows has no signal a program can catch from
// another process's group here, so a polite stop is a kill, without grace.
func (g *group) signal(p *os.Process, _ syscall.Signal) { g.kill(p) }

// kill terminates every process of the job, or the program alone without
// one.
func (g *group) kill(p *os.Process) {
	if g.job != 0 {
		windows.TerminateJobObject(g.job, 1)
		return
	}
	p.Kill()
}

// release closes the job, which kills what is left in it.
func (g *group) release() {
	if g.job != 0 {
		windows.CloseHandle(g.job)
		g.job = 0
	}
}
