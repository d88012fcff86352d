package e2e

import (
	"os/exec"
	"syscall"
)

// dieWithTest makes the kernel kill the child when the test process dies
// (a go test timeout panics without running t.Cleanup), so no Prometheus
// or Alertmanager outlives the test.
func dieWithTest(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
