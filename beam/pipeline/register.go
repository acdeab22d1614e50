package pipeline

import (
	"context"
	"reflect"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/fileio"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	// Local files; the command adds gs:// for Dataflow.
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/local"
)

// The DoFns, combiners and emitters are registered with generics, so that
// workers call them without reflection.
func init() {
	// Sums: a compact coder of exact size (see encodeSums).
	beam.RegisterCoder(reflect.TypeOf(Sums{}), encodeSums, decodeSums)
	register.DoFn4x1[context.Context, fileio.ReadableFile, func(Block), func(string), error](&parseFn{})
	register.Combiner2[Summary, Block](&summaryFn{})
	register.DoFn2x1[Summary, func(Layout), error](&layoutFn{})
	register.DoFn4x1[context.Context, fileio.ReadableFile, Layout, func(Summary), error](&trainSummaryFn{})
	register.Combiner1[Summary](&mergeSummaries{})
	register.DoFn4x1[context.Context, Summary, Layout, func(Plan), error](&planFn{})
	register.DoFn4x1[context.Context, fileio.ReadableFile, Plan, func(Rows), error](&selectFn{})
	register.DoFn3x1[fileio.ReadableFile, Plan, func(int, fileio.ReadableFile), error](&keyByGroupFn{})
	register.Combiner1[Rows](&gatherFn{})
	register.DoFn3x1[context.Context, Plan, func(Rows), error](&givenCentersFn{})
	register.DoFn6x1[context.Context, int, func(*fileio.ReadableFile) bool, Plan, Rows, func(Sums), error](&knmSumsFn{})
	register.DoFn5x1[context.Context, int, func(*fileio.ReadableFile) bool, Plan, func(Sums), error](&featureSumsFn{})
	register.Combiner1[Sums](&sumsFn{})
	register.DoFn5x1[context.Context, Sums, Plan, Rows, func(FitReport), error](&solveNystromFn{})
	register.DoFn4x1[context.Context, Sums, Plan, func(FitReport), error](&solveRidgeFn{})
	register.DoFn4x1[context.Context, Rows, Plan, func(Centroids), error](&centroidsFn{})
	register.DoFn5x1[context.Context, fileio.ReadableFile, Plan, Centroids, func(int, Rows), error](&assignFn{})
	register.DoFn5x1[context.Context, int, func(*Rows) bool, Plan, func(Cell), error](&cellFn{})
	register.Combiner2[[]Cell, Cell](&cellsFn{})
	register.DoFn5x1[context.Context, []Cell, Plan, Centroids, func(FitReport), error](&writeParKFn{})
	register.Function2x2(readBytesFn)
	register.Function1x2(keyByFile)
	register.DoFn3x1[Block, []byte, func(Predictions), error](&predictFn{})
	register.DoFn3x1[context.Context, string, func(*Predictions) bool, error](&writePredFn{})
	register.Combiner2[Metrics, Predictions](&metricsFn{})
	register.DoFn2x1[context.Context, Metrics, error](&writeMetricsFn{})
	register.DoFn5x1[context.Context, fileio.ReadableFile, Plan, FitReport, func(Predictions), error](&heldOutFn{})
	register.DoFn3x1[context.Context, Metrics, Plan, error](&writeHeldOutFn{})

	register.Emitter1[Block]()
	register.Emitter1[string]()
	register.Emitter1[Layout]()
	register.Emitter1[Summary]()
	register.Emitter1[Plan]()
	register.Emitter2[int, fileio.ReadableFile]()
	register.Iter1[fileio.ReadableFile]()
	register.Emitter1[Rows]()
	register.Emitter1[Sums]()
	register.Emitter1[FitReport]()
	register.Emitter1[Centroids]()
	register.Emitter2[int, Rows]()
	register.Emitter1[Cell]()
	register.Emitter1[Predictions]()
	register.Iter1[Rows]()
	register.Iter1[Predictions]()
}
