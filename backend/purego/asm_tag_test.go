//go:build !noasm

package purego_test

const noasmTag = false
