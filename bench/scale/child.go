//go:build linux

package main

import (
	"bufio"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/backend"
	"github.com/zonal-ml/zonal/dataset"
	"github.com/zonal-ml/zonal/kernels"
	"github.com/zonal-ml/zonal/solvers"
)

const (
	taskRegression     = "regression"
	taskClassification = "classification"
)

// spec is one run, handed to the child as JSON.
type spec struct {
	Set         string  `json:"set"`
	Task        string  `json:"task"`
	Method      string  `json:"method"`
	N           int     `json:"n"` // requested; Fertility: 0 is every training row
	M           int     `json:"m_requested"`
	Cells       int     `json:"cells,omitempty"`
	CellCenters int     `json:"cell_centers_requested,omitempty"`
	Lambda      float64 `json:"lambda"`
	Sigma       float64 `json:"sigma_requested"`
	Iterations  int     `json:"iterations_requested"`
	Memory      int64   `json:"memory_budget_bytes"`
	Seed        uint64  `json:"seed"`
	D           int     `json:"d_synthetic"`
	Bumps       int     `json:"bumps"`
	Noise       float64 `json:"noise"`
	TestRows    int     `json:"test_rows_requested"`
	Data        string  `json:"data_dir"`
}

// result is what the child measures (the spec's fields, then the
// measurements) and what the parent adds.
type result struct {
	spec
	Rows        int     `json:"rows"` // training rows fitted
	Cols        int     `json:"cols"`
	Tests       int     `json:"test_rows"`
	Centers     int     `json:"centers"` // FALKON: M; ParK: the total over the cells
	SigmaUsed   float64 `json:"sigma"`
	Backend     string  `json:"backend"`
	Outputs     int     `json:"outputs"`
	Cached      bool    `json:"cached_knm"` // FALKON: K_nM held whole; ParK: every cell's
	FitSeconds  float64 `json:"fit_seconds"`
	CGIters     int     `json:"cg_iterations"` // ParK: the largest over the cells
	IterSeconds float64 `json:"seconds_per_iteration"`
	// IterSeconds is the mean time between successive CG progress reports
	// (-1 when fewer than two, and for ParK, whose cells run in parallel).
	KnMEntries       float64 `json:"knm_entries"` // n M; ParK: sum of n_q M_q
	DataBytes        int64   `json:"data_bytes"`
	FactorBytes      int64   `json:"factor_bytes"`    // M x M float64; ParK: the cells that can run at once
	PeakRSS          int64   `json:"peak_rss_bytes"`  // VmHWM at the end of the child
	StartRSS         int64   `json:"start_rss_bytes"` // VmRSS when the child starts: the runtime and the binary
	Metric           string  `json:"metric"`
	Value            float64 `json:"metric_value"`
	Imbalance        float64 `json:"park_imbalance,omitempty"`         // largest cell over n / Q
	PartitionSeconds float64 `json:"park_partition_seconds,omitempty"` // of FitSeconds
	Error            string  `json:"error,omitempty"`
	// Filled by the parent.
	WallSeconds   float64 `json:"wall_seconds"`
	RusageMaxRSS  int64   `json:"rusage_maxrss_bytes"`
	C             float64 `json:"c"` // flops-equivalents per K_nM entry beside the 2d of its distance Gemm
	PredFlops     float64 `json:"predicted_flops_per_iteration"`
	PredSeconds   float64 `json:"predicted_seconds_per_iteration"`
	IterRatio     float64 `json:"iteration_ratio"` // IterSeconds / PredSeconds; -1 when not measured
	RSSBoundBytes int64   `json:"rss_bound_bytes"` // data + factors + memory budget
}

// runChild does one fit; any failure is reported in the result's Error.
func runChild(s spec) result {
	r := result{spec: s, IterSeconds: -1, StartRSS: procStatus("VmRSS:")}
	if err := fit(&r); err != nil {
		r.Error = err.Error()
	}
	r.PeakRSS = procStatus("VmHWM:")
	return r
}

func fit(r *result) error {
	xtr, ytr, xte, yte, err := load(r.spec)
	if err != nil {
		return err
	}
	n, d := xtr.Dims()
	r.Rows, r.Cols, r.Tests = n, d, len(yte)
	task := solvers.TaskRegression
	if r.Task == taskClassification {
		task = solvers.TaskClassification
	}
	enc, err := solvers.NewEncoding(ytr, task)
	if err != nil {
		return err
	}
	y, err := enc.Targets(ytr)
	if err != nil {
		return err
	}
	_, r.Outputs = y.Dims()
	r.DataBytes = 8 * (int64(n+len(yte))*int64(d+1) + int64(n)*int64(r.Outputs))
	r.SigmaUsed = r.Sigma
	if r.SigmaUsed == 0 {
		r.SigmaUsed = math.Sqrt(float64(d))
	}
	k, err := kernels.NewGaussian(r.SigmaUsed)
	if err != nil {
		return err
	}
	be := backend.Default()
	r.Backend = be.Name()
	var cgAt []time.Time
	progress := func(p zonal.Progress) {
		if p.Stage == "cg" {
			cgAt = append(cgAt, time.Now())
		}
	}
	opts := solvers.Options{Backend: be, MemoryBudget: r.Memory}
	// The smallest positive tolerance: CG runs every iteration (a residual of
	// exactly zero aside), so that the fits at different n do equal work.
	tol := math.SmallestNonzeroFloat64
	var model solvers.Model
	start := time.Now()
	switch r.Method {
	case methodFalkon64, methodFalkon32:
		prec := zonal.Float64
		if r.Method == methodFalkon32 {
			prec = zonal.Float32
		}
		opts.Progress = progress
		r.Centers = min(r.M, n)
		f, err := solvers.FitFalkon(context.Background(), k, xtr, y, r.Lambda, solvers.FalkonOptions{
			Options: opts, Centers: r.Centers, Precision: prec, Iterations: r.Iterations, Tol: tol, Seed: r.Seed})
		if err != nil {
			return err
		}
		r.FitSeconds = time.Since(start).Seconds()
		r.Cached, r.CGIters = f.CachedKnM(), f.CG().Iterations
		if len(cgAt) >= 2 {
			r.IterSeconds = cgAt[len(cgAt)-1].Sub(cgAt[0]).Seconds() / float64(len(cgAt)-1)
		}
		r.FactorBytes = 8 * int64(r.Centers) * int64(r.Centers)
		r.KnMEntries = float64(n) * float64(r.Centers)
		model = f
	case methodParK:
		q := min(r.Cells, n)
		r.Centers = max(q, min(q*r.CellCenters, n))
		p, err := solvers.FitParK(context.Background(), k, xtr, y, r.Lambda, solvers.ParKOptions{
			Options: opts, Cells: q, Centers: r.Centers, Iterations: r.Iterations, Tol: tol, Seed: r.Seed})
		if err != nil {
			return err
		}
		r.FitSeconds = time.Since(start).Seconds()
		rep := p.Report()
		r.Imbalance, r.PartitionSeconds = rep.Imbalance, rep.PartitionSeconds
		maxM := 0
		for _, c := range rep.Cells {
			r.CGIters = max(r.CGIters, c.Iterations)
			maxM = max(maxM, c.Centers)
			r.KnMEntries += float64(c.Rows) * float64(c.Centers)
		}
		// Cells run on at most GOMAXPROCS workers (ParKOptions.Workers 0),
		// each with its own M_q x M_q factors. Whether a cell cached its
		// K_nM is not reported (its share of the budget decides), so Cached
		// stays false.
		r.FactorBytes = 8 * int64(min(q, runtime.GOMAXPROCS(0))) * int64(maxM) * int64(maxM)
		model = p
	default:
		return fmt.Errorf("unknown method %q", r.Method)
	}
	pipe, err := solvers.NewPipeline(nil, enc, model)
	if err != nil {
		return err
	}
	pred := make([]float64, len(yte))
	if err := pipe.PredictLabels(pred, xte); err != nil {
		return err
	}
	m := enc.Evaluate(pred, yte)
	switch {
	case m.Accuracy != nil:
		r.Metric, r.Value = "accuracy", *m.Accuracy
	case m.RMSE != nil:
		r.Metric, r.Value = "rmse", *m.RMSE
	}
	return nil
}

// load gives the standardised training and test rows of the spec's set.
func load(s spec) (xtr *mat.Dense, ytr []float64, xte *mat.Dense, yte []float64, err error) {
	switch s.Set {
	case setRegression, setClassification:
		if s.N < 1 {
			return nil, nil, nil, nil, fmt.Errorf("synthetic sets need n >= 1, got %d", s.N)
		}
		g := newSynth(s.Seed, s.D, s.Bumps, s.Noise)
		cls := s.Set == setClassification
		xtr, ytr = mat.NewDense(s.N, s.D, nil), make([]float64, s.N)
		g.rows(xtr.RawMatrix().Data, ytr, trainStream, s.N, cls)
		xte, yte = mat.NewDense(s.TestRows, s.D, nil), make([]float64, s.TestRows)
		g.rows(xte.RawMatrix().Data, yte, testStream, s.TestRows, cls)
		// x ~ N(0, I): already standard.
		return xtr, ytr, xte, yte, nil
	case setFertility:
		return loadFertility(s)
	}
	return nil, nil, nil, nil, fmt.Errorf("unknown set %q", s.Set)
}

const fertilityFile = "Fertility.csv.gz"

// loadFertility holds out TestRows random rows of Fertility for testing and
// takes N random rows of the others for training (0 or more than there are:
// all of them), standardised by the training rows' means and deviations.
func loadFertility(s spec) (xtr *mat.Dense, ytr []float64, xte *mat.Dense, yte []float64, err error) {
	data, err := dataset.ReadFile(filepath.Join(s.Data, fertilityFile), dataset.Options{})
	if err != nil {
		return nil, nil, nil, nil, err
	}
	rows, d := data.X.Dims()
	if s.TestRows >= rows {
		return nil, nil, nil, nil, fmt.Errorf("%s has %d rows, no training rows are left after %d test rows", fertilityFile, rows, s.TestRows)
	}
	perm := rand.New(rand.NewPCG(s.Seed, 5<<32)).Perm(rows)
	test, pool := perm[:s.TestRows], perm[s.TestRows:]
	if s.N > 0 && s.N < len(pool) {
		pool = pool[:s.N]
	}
	pick := func(idx []int) (*mat.Dense, []float64) {
		x, y := mat.NewDense(len(idx), d, nil), make([]float64, len(idx))
		for i, j := range idx {
			x.SetRow(i, data.X.RawRowView(j))
			y[i] = data.Y[j]
		}
		return x, y
	}
	xtr, ytr = pick(pool)
	xte, yte = pick(test)
	data = nil
	debug.FreeOSMemory() // the file's rows and the reader's buffers are garbage now
	standardise(xtr, xte)
	return xtr, ytr, xte, yte, nil
}

// standardise centres and scales the columns of a and b by a's means and
// standard deviations (a constant column is only centred).
func standardise(a, b *mat.Dense) {
	n, d := a.Dims()
	for j := range d {
		var sum, sum2 float64
		for i := range n {
			sum += a.At(i, j)
		}
		mean := sum / float64(n)
		for i := range n {
			t := a.At(i, j) - mean
			sum2 += t * t
		}
		sd := 1.0
		if n > 1 && sum2 > 0 {
			sd = math.Sqrt(sum2 / float64(n-1))
		}
		for _, m := range []*mat.Dense{a, b} {
			r, _ := m.Dims()
			for i := range r {
				m.Set(i, j, (m.At(i, j)-mean)/sd)
			}
		}
	}
}

// procStatus reads a size field of /proc/self/status (VmHWM: the peak
// resident set size; VmRSS: the current one) in bytes; 0 when it cannot be
// read.
func procStatus(field string) int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), field); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err != nil {
				return 0
			}
			return kb << 10
		}
	}
	return 0
}
