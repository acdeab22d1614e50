//go:build netlib

package main

// The binary under test is built with the test's own netlib tag.
func init() { binaryTags = append(binaryTags, "netlib") }
