//go:build noasm

package main

// The binary under test is built with the test's own noasm tag.
func init() { binaryTags = append(binaryTags, "noasm") }
