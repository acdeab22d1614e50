//go:build !noasm

package asm

import "github.com/klauspost/cpuid/v2"

func cpuImpls() []*impl {
	var out []*impl
	hasAVX2 := cpuid.CPU.Supports(cpuid.AVX, cpuid.AVX2, cpuid.FMA3)
	if hasAVX2 && cpuid.CPU.Supports(cpuid.AVX512F, cpuid.AVX512DQ, cpuid.AVX512VL) {
		out = append(out, avx512Impl())
	}
	if hasAVX2 {
		out = append(out, avx2Impl())
	}
	return out
}
