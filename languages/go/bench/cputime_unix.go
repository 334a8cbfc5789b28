//go:build unix

package bench

import "syscall"

// processCPUNs is the CPU time of the whole process so far (user and system,
// every thread), or -1 when it cannot be read.
func processCPUNs() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return -1
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
