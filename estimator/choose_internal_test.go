package estimator

import (
	"errors"
	"testing"
)

// TestKeepTransform: the whole-search rule keeps the raw features only
// when they tuned clearly better (by RawMargin) and without error, says
// why in the kept choice's Standardize (the note appended) and counts the
// seconds of both tunings.
func TestKeepTransform(t *testing.T) {
	tuned := func(standardize bool, rmse, seconds float64) choice {
		return choice{standardize: standardize, chosen: Chosen{TuneMetric: "rmse", TuneScore: rmse, TuneSeconds: seconds}}
	}
	for _, tc := range []struct {
		raw     float64
		errb    error
		note    string
		wantRaw bool
		want    string
	}{
		{0.8, nil, "", true, "raw features tuned better: rmse 0.8 vs 1 standardized"},
		{0.97, nil, "", false, "rmse 1 vs 0.97 on the raw features"},
		{0.8, errors.New("failed"), "", false, ""},
		{0.8, nil, " (both searched)", true, "raw features tuned better: rmse 0.8 vs 1 standardized (both searched)"},
		{0.97, nil, " (both searched)", false, "rmse 1 vs 0.97 on the raw features (both searched)"},
	} {
		c := keepTransform(tuned(true, 1, 2), tuned(false, tc.raw, 3), tc.errb, tc.note)
		if c.standardize == tc.wantRaw || c.chosen.Standardize != tc.want || c.chosen.TuneSeconds != 5 {
			t.Errorf("raw %g, err %v, note %q: kept standardized %v, %q, %g s; want standardized %v, %q, 5 s",
				tc.raw, tc.errb, tc.note, c.standardize, c.chosen.Standardize, c.chosen.TuneSeconds, !tc.wantRaw, tc.want)
		}
	}
}
