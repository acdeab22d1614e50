package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/zonal-ml/zonal"
)

// paramFlags maps the library's option names (zonal.ParamError.Param) to
// the flags that set them.
var paramFlags = map[string]string{
	"Method": "method", "Kernel": "kernel", "Sigma": "sigma", "SigmaRule": "sigma", "Gamma": "gamma", "Coef0": "coef0",
	"Degree": "degree", "Lambda": "lambda", "Centers": "centers", "Map": "map", "Features": "features", "Cells": "cells",
	"Partition": "partition", "CellCap": "cell-cap", "CellBudget": "cell-centers", "CellOverlap": "cell-overlap",
	"CellValidation": "cell-validation", "Sampling": "sampling", "Iterations": "iterations", "Precision": "precision",
	"Task": "task", "Standardize": "standardize", "Scale": "scale", "Sparse": "sparse", "Seed": "seed", "Workers": "workers",
	"MemoryBudget": "memory", "Weights": "weights", "ClassWeight": "class-weight", "Loss": "loss",
	"Calibration": "calibration", "Intercept": "intercept", "Metric": "metric",
}

// flagError turns a library error about an option into a usage error
// naming the flag (a *zonal.ParamError), or naming -memory (a
// *zonal.TooLargeError); other errors are returned as they are.
func flagError(err error) error {
	if err == nil {
		return nil
	}
	var pe *zonal.ParamError
	if errors.As(err, &pe) {
		return usageError{errors.New(cliMessage(err))}
	}
	var tl *zonal.TooLargeError
	if errors.As(err, &tl) {
		return usageError{errors.New(cliMessage(err))}
	}
	return err
}

// cliParam is a ParamError in the command's terms: "-flag value: reason".
func cliParam(pe *zonal.ParamError) string {
	name, ok := paramFlags[pe.Param]
	if !ok {
		return pe.Error()
	}
	if pe.Value == nil {
		return fmt.Sprintf("-%s: %s", name, pe.Reason)
	}
	return fmt.Sprintf("-%s %v: %s", name, pe.Value, pe.Reason)
}

// cliTooLarge is a TooLargeError in the command's terms.
func cliTooLarge(tl *zonal.TooLargeError) string {
	if name, ok := paramFlags[tl.Param]; ok && tl.Value != nil {
		return fmt.Sprintf("-%s %v: %s needs %s, the memory budget is %s (raise it with -memory)", name, tl.Value, tl.What, zonal.FormatBytes(tl.Need), zonal.FormatBytes(tl.Budget))
	}
	return fmt.Sprintf("%s needs %s, the memory budget is %s (raise it with -memory)", tl.What, zonal.FormatBytes(tl.Need), zonal.FormatBytes(tl.Budget))
}

// structuredMessage rewrites the structured errors inside err's message
// into the command's terms.
func structuredMessage(err error) string {
	s := err.Error()
	var pe *zonal.ParamError
	if errors.As(err, &pe) {
		s = strings.Replace(s, pe.Error(), cliParam(pe), 1)
	}
	var tl *zonal.TooLargeError
	if errors.As(err, &tl) {
		s = strings.Replace(s, tl.Error(), cliTooLarge(tl), 1)
	}
	return s
}
