package main

import (
	"errors"
	"strings"
	"testing"

	"github.com/zonal-ml/zonal"
)

// TestFlagErrors: the flags map to estimator.Options and the library's
// errors about them come back naming the flag.
func TestFlagErrors(t *testing.T) {
	for _, c := range []struct {
		flags map[string]string
		want  string
	}{
		{map[string]string{"sigma": "5"}, "-lambda auto: "},
		{map[string]string{"lambda": "1e-4"}, "-sigma auto: "},
		{map[string]string{"method": "exact", "sigma": "5", "lambda": "1e-4"}, "-method exact: "},
		{map[string]string{"method": "ridge", "sigma": "5", "lambda": "1e-4"}, "-map nystrom: "},
		{map[string]string{"method": "park", "partition": "kmeans", "sigma": "5", "lambda": "1e-4"}, "-partition kmeans: "},
		{map[string]string{"sigma": "-1", "lambda": "1e-4"}, "-sigma -1: "},
		{map[string]string{"sigma": "5", "lambda": "1e-4", "kernel": "cosine"}, "-kernel "},
		// -split as zonal fit checks it: in (0, 1), also when -test makes it unused.
		{map[string]string{"sigma": "5", "lambda": "1e-4", "split": "1.5"}, "-split must be in (0, 1), got 1.5"},
		{map[string]string{"sigma": "5", "lambda": "1e-4", "split": "0", "test": "t.libsvm"}, "-split must be in (0, 1), got 0"},
	} {
		t.Run(c.want, func(t *testing.T) {
			setFlags(t, c.flags)
			set := map[string]bool{}
			for k := range c.flags {
				set[k] = true
			}
			cfg, err := config(set)
			if err == nil {
				err = cfg.Check()
			}
			if err == nil || !strings.Contains(flagMessage(err), c.want) {
				t.Errorf("%v: error %v, want %q", c.flags, err, c.want)
			}
		})
	}
	tl := &zonal.TooLargeError{What: "20000 centres", Need: 3 << 30, Budget: 2 << 30, Param: "Centers", Value: 20000}
	if m := flagMessage(tl); !strings.HasPrefix(m, "-centers 20000: 20000 centres needs") || !strings.Contains(m, "-memory") {
		t.Errorf("too large: %q", m)
	}
	// From a pipeline run the error is text only.
	run := errors.New("stage failed: " + (&zonal.ParamError{Param: "Centers", Value: 5000, Reason: "need 1 <= centres <= n = 1400"}).Error())
	if m := flagMessage(run); !strings.Contains(m, "-centers 5000: need 1 <= centres") {
		t.Errorf("run error: %q", m)
	}
}
