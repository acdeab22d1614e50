//go:build !amd64 || noasm

package asm

func cpuKernels32(path string) *kernels32 { return nil }
