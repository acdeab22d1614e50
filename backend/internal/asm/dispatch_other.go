//go:build !amd64 || noasm

package asm

func cpuImpls() []*impl { return nil }
