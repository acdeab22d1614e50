package estimator

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/solvers"
)

// ClassWeight is the per-class factor of a classifier's row weights
// (Options.ClassWeight), scikit-learn's class_weight. The zero value is
// none (every class 1). Balanced gives class c the factor n / (k n_c), n
// training rows in k classes of n_c rows each (counts, not weights), so
// every class carries the same total weight, n / k. Explicit lists
// factors per label; classes not listed have factor 1.
type ClassWeight struct {
	Balanced bool
	Explicit []LabelWeight
}

// LabelWeight is the factor W of the class Label.
type LabelWeight struct {
	Label  float64 `json:"label"`
	Weight float64 `json:"weight"`
}

// IsZero reports whether c is none.
func (c ClassWeight) IsZero() bool { return !c.Balanced && len(c.Explicit) == 0 }

// String is "none", "balanced" or "LABEL:W,LABEL:W" (labels increasing),
// what ParseClassWeight reads back.
func (c ClassWeight) String() string {
	switch {
	case c.Balanced:
		return "balanced"
	case len(c.Explicit) == 0:
		return "none"
	}
	parts := make([]string, len(c.Explicit))
	for i, lw := range c.Explicit {
		parts[i] = strconv.FormatFloat(lw.Label, 'g', -1, 64) + ":" + strconv.FormatFloat(lw.Weight, 'g', -1, 64)
	}
	return strings.Join(parts, ",")
}

// ParseClassWeight parses "" or "none", "balanced", or explicit factors
// "LABEL:W,LABEL:W,..." (numbers; each label once, each W finite and
// >= 0). Errors are *zonal.ParamError on "ClassWeight".
func ParseClassWeight(s string) (ClassWeight, error) {
	s = strings.TrimSpace(s)
	switch s {
	case "", "none":
		return ClassWeight{}, nil
	case "balanced":
		return ClassWeight{Balanced: true}, nil
	}
	bad := func(reason string) (ClassWeight, error) {
		return ClassWeight{}, &zonal.ParamError{Param: "ClassWeight", Value: fmt.Sprintf("%q", s), Reason: reason}
	}
	var c ClassWeight
	for _, part := range strings.Split(s, ",") {
		lab, w, ok := strings.Cut(strings.TrimSpace(part), ":")
		if !ok {
			return bad(fmt.Sprintf("%q is not LABEL:WEIGHT (want none, balanced or LABEL:W,LABEL:W,...)", part))
		}
		l, err := strconv.ParseFloat(strings.TrimSpace(lab), 64)
		if err != nil {
			return bad(fmt.Sprintf("label %q is not a number", lab))
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(w), 64)
		if err != nil {
			return bad(fmt.Sprintf("weight %q of label %s is not a number", w, lab))
		}
		c.Explicit = append(c.Explicit, LabelWeight{Label: l, Weight: v})
	}
	slices.SortFunc(c.Explicit, func(a, b LabelWeight) int { return cmpFloat(a.Label, b.Label) })
	if err := c.check(); err != nil {
		return ClassWeight{}, err
	}
	return c, nil
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// check validates c without data: finite labels and factors >= 0, each
// label once, not both balanced and explicit.
func (c ClassWeight) check() error {
	bad := func(reason string) error {
		return &zonal.ParamError{Param: "ClassWeight", Value: c.String(), Reason: reason}
	}
	if c.Balanced && len(c.Explicit) > 0 {
		return bad("balanced and explicit class weights together")
	}
	seen := map[float64]bool{}
	for _, lw := range c.Explicit {
		switch {
		case math.IsNaN(lw.Label) || math.IsInf(lw.Label, 0):
			return bad(fmt.Sprintf("label %g is not finite", lw.Label))
		case math.IsNaN(lw.Weight) || math.IsInf(lw.Weight, 0) || lw.Weight < 0:
			return bad(fmt.Sprintf("the weight of label %g is %g (want a finite weight >= 0)", lw.Label, lw.Weight))
		case seen[lw.Label]:
			return bad(fmt.Sprintf("label %g is given twice", lw.Label))
		}
		seen[lw.Label] = true
	}
	return nil
}

// rowWeights is RowWeights for Fit's options.
func rowWeights(o Options, y []float64, enc solvers.Encoding) ([]float64, []LabelWeight, error) {
	return RowWeights(y, enc, o.Weights, o.ClassWeight)
}

// RowWeights returns the row weights Fit uses for the labels y under the
// encoding enc (nil when neither weights nor cw is set): the sample weight
// of each row times the factor of its class, and the class factors in the
// order of enc.Classes (nil without cw). It is the one validation of both
// against the data: errors are *zonal.ParamError on "Weights"
// (solvers.CheckWeights: length, sign, NaN or Inf, all zero; also all zero
// after the class factors) or "ClassWeight" (a bad setting, regression, a
// label that is not a class).
func RowWeights(y []float64, enc solvers.Encoding, weights []float64, cw ClassWeight) ([]float64, []LabelWeight, error) {
	n := len(y)
	if _, err := solvers.CheckWeights(weights, n); err != nil {
		return nil, nil, err
	}
	if err := cw.check(); err != nil {
		return nil, nil, err
	}
	if cw.IsZero() {
		return weights, nil, unweightedClass(y, enc, weights, "weights")
	}
	if enc.Task != solvers.TaskClassification {
		return nil, nil, &zonal.ParamError{Param: "ClassWeight", Value: cw.String(), Reason: "class weights apply to classification only, the task is " + enc.Task.String()}
	}
	classes := enc.Classes
	factor := make([]float64, len(classes))
	counts := classCounts(y, classes)
	for c := range factor {
		factor[c] = 1
		if cw.Balanced {
			factor[c] = float64(n) / (float64(len(classes)) * float64(counts[c]))
		}
	}
	for _, lw := range cw.Explicit {
		c, ok := slices.BinarySearch(classes, lw.Label)
		if !ok {
			return nil, nil, &zonal.ParamError{Param: "ClassWeight", Value: cw.String(),
				Reason: fmt.Sprintf("label %g is not a class of the training labels (%s)", lw.Label, formatLabels(classes))}
		}
		factor[c] = lw.Weight
	}
	for c, f := range factor {
		if f == 0 {
			return nil, nil, &zonal.ParamError{Param: "ClassWeight", Value: cw.String(),
				Reason: fmt.Sprintf("class %g has weight 0: the fit would not see its %d rows, yet the model would have the class (drop its rows instead)", classes[c], counts[c])}
		}
	}
	w := make([]float64, n)
	for i, v := range y {
		c, _ := slices.BinarySearch(classes, v)
		w[i] = factor[c]
		if weights != nil {
			w[i] *= weights[i]
		}
	}
	if _, err := solvers.CheckWeights(w, n); err != nil {
		return nil, nil, fmt.Errorf("the sample weights times the class weights (%s): %w", cw, err)
	}
	out := make([]LabelWeight, len(classes))
	for c, l := range classes {
		out[c] = LabelWeight{Label: l, Weight: factor[c]}
	}
	return w, out, unweightedClass(y, enc, w, "sample weights times the class weights ("+cw.String()+")")
}

// unweightedClass refuses row weights w (named what) that are zero on
// every row of a class: the fit would not see it, yet the model would
// have it as an output, never predicted, and its calibration and
// held-out folds no rows of it. nil w, or regression, passes.
func unweightedClass(y []float64, enc solvers.Encoding, w []float64, what string) error {
	if w == nil || enc.Task != solvers.TaskClassification {
		return nil
	}
	sums := make([]float64, len(enc.Classes))
	counts := make([]int, len(enc.Classes))
	for i, v := range y {
		c, _ := slices.BinarySearch(enc.Classes, v)
		sums[c] += w[i]
		counts[c]++
	}
	for c, s := range sums {
		if !(s > 0) {
			return &zonal.ParamError{Param: "Weights", Reason: fmt.Sprintf("the %s are 0 on all %d rows of class %g: the fit would not see the class (give some of its rows a positive weight, or drop them)", what, counts[c], enc.Classes[c])}
		}
	}
	return nil
}

// formatLabels lists labels for a message, at most 10.
func formatLabels(v []float64) string {
	var parts []string
	for i, x := range v {
		if i == 10 {
			parts = append(parts, fmt.Sprintf("... %d in all", len(v)))
			break
		}
		parts = append(parts, strconv.FormatFloat(x, 'g', -1, 64))
	}
	return strings.Join(parts, ", ")
}

// positiveCount is the number of positive weights.
func positiveCount(w []float64) int {
	c := 0
	for _, v := range w {
		if v > 0 {
			c++
		}
	}
	return c
}
