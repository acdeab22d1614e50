package pipeline

import (
	"github.com/apache/beam/sdks/v2/go/pkg/beam"
)

// Fit adds a training pipeline to s: it reads train, makes one pass for the
// Summary (row counts, dimension, labels, moments), derives the Plan, then
// runs the method of c and writes c.Model. It returns the PCollection of
// the single FitReport (emitted after the model file is written) and the
// dead-letter lines of the input (empty unless train.SkipErrors).
//
// Nystrom: the centres (c.GivenCenters, or the rows of a uniform draw of
// global row indices, the same draw as solvers.FitFalkon's) are a side
// input; every Block gives its K_nM block's Sums, a combiner adds them, and
// one worker solves the M x M system and writes a FALKON-kind model.
// Ridge: the same with the features Z of a random Fourier map. ParK: see
// FitParK's stages in park.go.
func Fit(s beam.Scope, c Config, train Input) (report, deadLetters beam.PCollection) {
	s = s.Scope("zonal.Fit")
	blocks, dead := ReadBlocks(s, train)
	sum := beam.Combine(s.Scope("summary"), &summaryFn{Moments: c.Standardize}, blocks)
	plan := beam.ParDo(s.Scope("plan"), &planFn{Config: c}, sum)
	switch c.Method {
	case MethodRidge:
		parts := beam.ParDo(s.Scope("features"), &featureFn{}, blocks, beam.SideInput{Input: plan})
		sums := beam.Combine(s.Scope("sum"), &sumsFn{}, parts)
		return beam.ParDo(s.Scope("solve"), &solveRidgeFn{}, sums, beam.SideInput{Input: plan}), dead
	case MethodParK:
		return fitParK(s, plan, blocks), dead
	}
	var centres beam.PCollection
	if len(c.GivenCenters) > 0 {
		centres = beam.ParDo(s.Scope("centres"), &givenCentersFn{}, plan)
	} else {
		sel := beam.ParDo(s.Scope("centres"), &selectFn{Which: "centers"}, blocks, beam.SideInput{Input: plan})
		centres = beam.Combine(s.Scope("gather"), &gatherFn{}, sel)
	}
	parts := beam.ParDo(s.Scope("knm"), &knmFn{}, blocks, beam.SideInput{Input: plan}, beam.SideInput{Input: centres})
	sums := beam.Combine(s.Scope("sum"), &sumsFn{}, parts)
	return beam.ParDo(s.Scope("solve"), &solveNystromFn{}, sums, beam.SideInput{Input: plan}, beam.SideInput{Input: centres}), dead
}
