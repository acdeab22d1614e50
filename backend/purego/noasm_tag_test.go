//go:build noasm

package purego_test

const noasmTag = true
