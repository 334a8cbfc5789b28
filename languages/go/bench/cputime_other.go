//go:build !unix

package bench

func processCPUNs() int64 { return -1 }
