package pipeline

import (
	"runtime"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"github.com/zonal-ml/zonal/estimator"
)

// Fit adds a training pipeline to s and returns the PCollection of the
// single FitReport (emitted after the model file is written) and the
// dead-letter lines of the input (empty unless train.SkipErrors). Run
// c.Check first for an early error; the pipeline checks c again.
//
// The stages: a first pass counts the rows of every file (which fixes the
// global row order and, with c.Split, the training rows) and reports bad
// lines; a second pass sums the training rows' Summary (labels, column
// moments, stored entries), from which estimator.NewPlan makes the plan.
// Every later pass reads the files again, a block at a time.
//
// MethodFalkon: the centres (c.GivenCenters, or the training rows of
// solvers.UniformCenters, the draw solvers.FitFalkon makes) are a side
// input; the files are grouped into c.Workers groups, each group's K_nM
// blocks are summed into one Sums by one worker, a combiner adds the
// groups' sums and one worker solves the M x M system and writes a
// FALKON-kind model. MethodRidge: the same with the features Z of a random
// Fourier map. MethodParK: see fitParK. With c.Split the held-out rows are
// predicted by the written model and their Metrics written to
// HeldOutPath(c.Model).
func Fit(s beam.Scope, c Config, train Input) (report, deadLetters beam.PCollection) {
	s = s.Scope("zonal.Fit")
	sp := train.spec()
	workers := c.Workers
	if workers == 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	files := matchFiles(s, train.Glob)
	blocks, dead := parseFiles(s, files, train)
	counts := beam.Combine(s.Scope("count"), &summaryFn{}, blocks)
	layout := beam.ParDo(s.Scope("layout"), &layoutFn{Split: c.Split, Seed: c.Options.Seed, Workers: workers}, counts)
	parts := beam.ParDo(s.Scope("summary"), &trainSummaryFn{In: sp}, files, beam.SideInput{Input: layout})
	sum := beam.Combine(s.Scope("mergesummary"), &mergeSummaries{Moments: true}, parts)
	plan := beam.ParDo(s.Scope("plan"), newPlanFn(c), sum, beam.SideInput{Input: layout})
	switch c.Options.Method {
	case estimator.MethodRidge:
		groups := groupFilesByWorker(s.Scope("group"), files, plan)
		parts := beam.ParDo(s.Scope("features"), &featureSumsFn{In: sp}, groups, beam.SideInput{Input: plan})
		sums := beam.Combine(s.Scope("sum"), &sumsFn{}, parts)
		report = beam.ParDo(s.Scope("solve"), &solveRidgeFn{}, sums, beam.SideInput{Input: plan})
	case estimator.MethodParK:
		report = fitParK(s, sp, plan, files)
	default:
		var centres beam.PCollection
		if len(c.GivenCenters) > 0 {
			centres = beam.ParDo(s.Scope("centres"), &givenCentersFn{}, plan)
		} else {
			sel := beam.ParDo(s.Scope("centres"), &selectFn{In: sp, Which: "centers"}, files, beam.SideInput{Input: plan})
			centres = beam.Combine(s.Scope("gather"), &gatherFn{}, sel)
		}
		groups := groupFilesByWorker(s.Scope("group"), files, plan)
		parts := beam.ParDo(s.Scope("knm"), &knmSumsFn{In: sp}, groups, beam.SideInput{Input: plan}, beam.SideInput{Input: centres})
		sums := beam.Combine(s.Scope("sum"), &sumsFn{}, parts)
		report = beam.ParDo(s.Scope("solve"), &solveNystromFn{}, sums, beam.SideInput{Input: plan}, beam.SideInput{Input: centres})
	}
	if c.Split > 0 {
		heldOut(s.Scope("heldout"), sp, files, plan, report)
	}
	return report, dead
}
