package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/zonal-ml/zonal"
)

// paramFlags maps the option names of the library's errors
// (zonal.ParamError.Param, zonal.TooLargeError.Param) to zonal-beam's flags.
var paramFlags = map[string]string{
	"Method": "method", "Kernel": "kernel", "Sigma": "sigma", "SigmaRule": "sigma", "Gamma": "gamma", "Coef0": "coef0",
	"Degree": "degree", "Lambda": "lambda", "Centers": "centers", "Map": "map", "Features": "features", "Cells": "cells",
	"Partition": "partition", "Iterations": "iterations", "Task": "task", "Standardize": "standardize", "Scale": "scale",
	"Sparse": "sparse", "Seed": "seed", "MemoryBudget": "memory", "Split": "split", "Workers": "workers",
	"Sample": "sample", "GivenCenters": "centers-file", "GivenCols": "centers-file", "Model": "model", "Format": "format",
}

// flagMessage is err's message with the library's option errors in flag
// terms: "-flag value: reason" for a *zonal.ParamError, "-flag value: what
// needs N, the memory budget is B (raise it with -memory)" for a
// *zonal.TooLargeError. Errors that come back from a pipeline run are text
// only; their "Param = value" parts are rewritten the same way.
func flagMessage(err error) string {
	s := err.Error()
	var pe *zonal.ParamError
	if errors.As(err, &pe) {
		if name, ok := paramFlags[pe.Param]; ok {
			s = strings.Replace(s, pe.Error(), fmt.Sprintf("-%s %v: %s", name, pe.Value, pe.Reason), 1)
		}
		return s
	}
	var tl *zonal.TooLargeError
	if errors.As(err, &tl) {
		if name, ok := paramFlags[tl.Param]; ok && tl.Value != nil {
			s = strings.Replace(s, tl.Error(), fmt.Sprintf("-%s %v: %s needs %s, the memory budget is %s (raise it with -memory)",
				name, tl.Value, tl.What, zonal.FormatBytes(tl.Need), zonal.FormatBytes(tl.Budget)), 1)
		}
		return s
	}
	for param, name := range paramFlags {
		s = strings.ReplaceAll(s, zonal.ErrParam.Error()+": "+param+" = ", "-"+name+" ")
	}
	return s
}
