package main

import (
	"errors"
	"io"
)

// TEMPORARY: the demo (issue 8) replaces this.
func init() {
	addCommand(command{name: "demo", summary: "every method on the embedded digits set (the default)",
		run: func(args []string, stdout, stderr io.Writer) error {
			return errors.New("not built yet")
		}})
}
