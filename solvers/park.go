package solvers

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/backend"
	"github.com/zonal-ml/zonal/internal/budget"
	"github.com/zonal-ml/zonal/kernels"
)

// KindParK is the model kind of ParK in model files.
const KindParK = "park"

func init() { RegisterModel(KindParK, decodeParK) }

// ParKOptions configures FitParK.
type ParKOptions struct {
	Options
	// Cells is Q, the number of Voronoi cells (1 <= Q <= n).
	Cells int
	// Centers is the total number of Nystrom centres M, shared among the
	// cells by Budget.
	Centers int
	// Partition is the strategy that picks the centroids: PartitionGreedy,
	// PartitionSubsample or PartitionKMeans; "" means DefaultPartition.
	Partition Partition
	// LloydSteps bounds the Lloyd-style steps of PartitionKMeans; zero
	// means 3, negative means none (k-means++ seeding only).
	LloydSteps int
	// Cap, when positive (at least 1), caps every cell at ceil(Cap n / Q)
	// rows by the weighted assignment argmin_q ||phi(x) - phi(c_q)||^2 + w_q
	// (see cappedAssign); prediction uses the same weighted rule. Zero means
	// plain nearest-centroid cells.
	Cap float64
	// Budget shares the M centres among the cells: BudgetSize ("" too) or
	// BudgetEffDim. Either way each cell gets at least 1 and at most its
	// training rows.
	Budget CellBudget
	// Iterations is a hard cap on each cell's CG iterations; zero means
	// automatic, per cell (see FalkonOptions.Iterations: the cell's ceiling
	// is 3 M_q + 50).
	Iterations int
	// CellIterations, if set, gives the iteration bound of a cell from its
	// index, training rows and centres, overriding Iterations for it
	// (values below 1 mean Iterations).
	CellIterations func(cell, rows, centers int) int
	// Tol is each cell's CG tolerance; zero means 1e-9.
	Tol float64
	// Overlap, in [0, 1], adds to the training rows of every cell q up to
	// Overlap n_q rows of other cells whose second-nearest centroid (by the
	// assignment's rule) is c_q, those nearest to the boundary first: the
	// cell's model then sees both sides of its boundary, where its test
	// points are predicted from the fewest nearby training rows. Prediction
	// still uses one cell per point. Zero trains on the cell only (the
	// paper's estimator).
	Overlap float64
	// Validation, in [0, 0.5], holds out this fraction of every cell's rows
	// (seeded) from its fit and reports the cell's RMSE on them in
	// ParKReport; zero holds out nothing.
	Validation float64
	// Seed drives the partition and the centre sampling (cell q uses
	// Seed+q, so Q = 1 draws the same centres as FitFalkon with Seed).
	Seed uint64
	// Workers bounds the cells fitted at once; zero means GOMAXPROCS.
	// Cell q gets the share MemoryBudget n_q / n of the budget, so cells
	// running together never exceed it whatever their number, and the
	// big cells of an unbalanced partition can still cache their K_nM.
	Workers int
	// Precision of the cells' K_nM, passed to every cell's FALKON (see
	// FalkonOptions.Precision); the model records it.
	Precision zonal.Precision
}

// ParKCell describes the fit of one ParK cell.
type ParKCell struct {
	// Rows is n_q, the cell's rows (validation rows included, halo rows
	// of Overlap not).
	Rows int
	// Halo is the number of other cells' rows added by Overlap.
	Halo int
	// Centers is M_q.
	Centers int
	// Lambda is lambda_q = lambda n / n_q, n_q here the rows the cell was
	// fitted on (Rows - ValidationRows + Halo).
	Lambda float64
	// Iterations is the number of CG iterations run; Converged whether
	// every output met Tol.
	Iterations int
	Converged  bool
	// Diagnostics is the cell's CG solve in full.
	Diagnostics Diagnostics
	// FitSeconds is the wall time of the cell's FALKON fit.
	FitSeconds float64
	// ValidationRows and ValidationRMSE: the held-out rows and the root mean
	// squared error over them and every column of y, the targets FitParK was
	// given (for a classification pipeline, the encoded target columns); NaN
	// when none. Unweighted even in a weighted fit (a diagnostic of the
	// cell, not the objective).
	ValidationRows int
	ValidationRMSE float64
}

// ParKReport describes a ParK fit's partition and cells.
type ParKReport struct {
	// Partition is the strategy used; Cap the size cap factor (0: none);
	// Overlap the halo fraction; Budget the centre budget rule.
	Partition Partition
	Cap       float64
	Overlap   float64
	Budget    CellBudget
	// Imbalance is the largest cell over n / Q (1 is perfect balance).
	Imbalance float64
	// OffRule counts the training rows a capped assignment had to place
	// against the weighted nearest-centroid rule that prediction uses (see
	// cappedAssign; normally 0).
	OffRule int
	// PartitionSeconds is the wall time spent choosing centroids and
	// assigning rows.
	PartitionSeconds float64
	// Cells describes every cell.
	Cells []ParKCell
}

// ParK is a ParK model: Q centroids c_q in the input space whose feature
// vectors phi(c_q) induce a Voronoi partition of the RKHS (a weighted one
// with offsets w_q when the fit capped the cells), and one FALKON expansion
// per cell. A point is predicted by the cell q minimising
// ||phi(x) - phi(c_q)||^2 + w_q = k(x,x) + k(c_q,c_q) - 2 k(x,c_q) + w_q, only.
type ParK struct {
	kern      kernels.Kernel
	centroids mat.Matrix // Q x d: rows of the training matrix (*mat.Dense or *dataset.CSR)
	cdiag     []float64  // k(c_q, c_q)
	offsets   []float64  // w_q; nil: plain nearest centroid
	cells     []*expansion
	sizes     []int
	lambda    float64
	report    *ParKReport
	diag      Diagnostics // aggregated over the cells
	wsum      float64     // sum of the fit's Options.Weights (or the loaded record's); 0: unweighted
}

// FitParK fits ParK (Carratino, Vigogna, Calandriello, Rosasco 2021).
//
// Partition: opts.Partition picks Q centroids among the training rows (see
// PartitionGreedy, PartitionSubsample, PartitionKMeans) and every row goes
// to the cell of its nearest centroid in the RKHS, ties to the smaller cell
// index. With opts.Cap > 0 the assignment is the weighted one
// argmin_q ||phi(x_i) - phi(c_q)||^2 + w_q with offsets w_q >= 0 chosen so
// that no cell holds more than ceil(Cap n / Q) rows: the cells are then a
// power diagram in the RKHS, still intersections of half-spaces (each
// bisector shifted by (w_q - w_q')/2 along c_q - c_q') but no longer
// Voronoi cells (a centroid need not lie in its own cell). Assignment stays
// O(Q) kernel evaluations per point and prediction applies the same offsets,
// so a test point goes where a training row at its place went.
//
// opts.Weights, when set, drops the rows of weight zero, partitions the
// others as above (the partition does not look at the weights), and fits
// each cell with its rows' weights and lambda_q = lambda sum(w) / sum_q(w),
// so that every cell's absolute regulariser is again the global one (see
// the package doc; with one cell the fit is weighted FALKON).
//
// Cell q with n_q rows is fitted by FALKON with M_q centres (opts.Budget)
// and lambda_q = lambda n / n_q, the scaling of the paper's analysis, so each
// cell solves (K_qM^T K_qM + lambda n K_MM) a = K_qM^T Y_q and the targets
// are centred per cell. Cells run in parallel on at most Workers goroutines.
// Linear algebra runs on opts.Backend, at prediction time too. Report
// describes the partition and the cells.
//
// x is a *mat.Dense or a *dataset.CSR (any other matrix type is refused).
// A CSR x is never densified. Every partition strategy keeps centroids that
// are training rows and measures distances in the RKHS by kernel values
// only, so on CSR rows the centroids are CSR rows too (dataset.CSR.Subset),
// never dense d-vectors, whatever d: no mean of rows in the input space, and
// hence no sketch of the rows, is needed. k(x_i, x_i) of CSR rows comes from
// the diagonals of 32 x 32 kernel blocks; the cells' rows, centres, halo and
// validation rows are CSR subsets, and the model predicts dense and CSR rows
// alike.
//
// Errors: zonal.ErrParam for a nil kernel, lambda not positive and finite,
// bad Weights (CheckWeights), Cells outside 1..n, Centers outside Cells..n, an unknown Partition or
// Budget, Cap in (0, 1) or not finite, Overlap outside [0, 1], Validation
// outside [0, 0.5], fewer
// distinct points in feature space than Cells; zonal.ErrShape for nil
// inputs, x neither a *mat.Dense nor a *dataset.CSR, a CSR whose parts
// disagree with its shape, or a label count other than the row count;
// zonal.ErrRange for a CSR column index outside [0, d) or not increasing; zonal.ErrEmpty for no
// rows or columns; zonal.ErrNonFinite for NaN or Inf in x or y;
// zonal.ErrTooLarge when the working arrays exceed opts.MemoryBudget;
// zonal.ErrNotPositiveDefinite when a factorisation fails even with jitter;
// the kernel's errors; ctx.Err() (wrapped) when canceled.
//
// kernels.CheckScale runs before anything is formed: zonal.ErrNonFinite for
// features so large that the kernel values overflow, zonal.ErrParam for a
// kernel that underflows to 0 between all (sampled) rows, both naming the
// kernel and the data's scale.
func FitParK(ctx context.Context, k kernels.Kernel, x mat.Matrix, y *mat.Dense, lambda float64, opts ParKOptions) (*ParK, error) {
	if k == nil {
		return nil, fmt.Errorf("%w: nil kernel", zonal.ErrParam)
	}
	if _, _, _, err := checkXY(x, y); err != nil {
		return nil, err
	}
	if err := checkLambda(lambda); err != nil {
		return nil, err
	}
	x, y, rw, err := prepareWeights(x, y, opts.Weights)
	if err != nil {
		return nil, err
	}
	n, _ := x.Dims()
	if err := kernels.CheckScale(k, x); err != nil {
		return nil, err
	}
	if err := opts.Precision.Check(); err != nil {
		return nil, err
	}
	Q := opts.Cells
	if Q < 1 || Q > n {
		return nil, fmt.Errorf("%w: ParK needs 1 <= cells <= n = %d, got %d", zonal.ErrParam, n, Q)
	}
	M := opts.Centers
	if M < Q || M > n {
		return nil, fmt.Errorf("%w: ParK needs cells (%d) <= centres <= n = %d, got %d", zonal.ErrParam, Q, n, M)
	}
	if opts.Cap != 0 && !(opts.Cap >= 1 && !math.IsInf(opts.Cap, 0)) {
		return nil, fmt.Errorf("%w: ParK cell cap must be 0 (none) or a finite factor >= 1, got %g", zonal.ErrParam, opts.Cap)
	}
	if !(opts.Overlap >= 0 && opts.Overlap <= 1) {
		return nil, fmt.Errorf("%w: ParK overlap must be in [0, 1], got %g", zonal.ErrParam, opts.Overlap)
	}
	if !(opts.Validation >= 0 && opts.Validation <= 0.5) {
		return nil, fmt.Errorf("%w: ParK validation fraction must be in [0, 0.5], got %g", zonal.ErrParam, opts.Validation)
	}
	if opts.Partition != "" && !slices.Contains(PartitionStrategies, string(opts.Partition)) {
		return nil, fmt.Errorf("%w: unknown ParK partition %q (%s)", zonal.ErrParam, opts.Partition, strings.Join(PartitionStrategies, ", "))
	}
	if opts.Budget != "" && opts.Budget != BudgetSize && opts.Budget != BudgetEffDim {
		return nil, fmt.Errorf("%w: unknown ParK centre budget %q (size, effdim)", zonal.ErrParam, opts.Budget)
	}
	be := opts.backend()

	start := time.Now()
	diag, err := kernelDiag(ctx, be, k, x)
	if err != nil {
		return nil, err
	}
	part, err := makePartition(ctx, be, k, x, diag, opts)
	if err != nil {
		return nil, err
	}
	members := cellMembers(part.assign, Q)
	rep := &ParKReport{
		Partition: cmp.Or(opts.Partition, DefaultPartition), Cap: opts.Cap, Overlap: opts.Overlap, Budget: cmp.Or(opts.Budget, BudgetSize),
		PartitionSeconds: time.Since(start).Seconds(), Cells: make([]ParKCell, Q), OffRule: part.offRule,
	}
	largest := 0
	for _, rows := range members {
		largest = max(largest, len(rows))
	}
	rep.Imbalance = float64(largest) * float64(Q) / float64(n)

	// Validation rows (seeded per cell) leave the cells' fits.
	fitRows := members
	var valRows [][]int
	if opts.Validation > 0 {
		fitRows, valRows = make([][]int, Q), make([][]int, Q)
		rng := rand.New(rand.NewPCG(opts.Seed, 0x2545f4914f6cdd1d))
		for q, rows := range members {
			h := int(math.Floor(opts.Validation * float64(len(rows))))
			perm := rng.Perm(len(rows))
			for j, pi := range perm {
				if j < h {
					valRows[q] = append(valRows[q], rows[pi])
				} else {
					fitRows[q] = append(fitRows[q], rows[pi])
				}
			}
			slices.Sort(valRows[q])
			slices.Sort(fitRows[q])
		}
	}
	if opts.Overlap > 0 {
		if fitRows, err = addHalos(ctx, be, k, x, diag, part, fitRows, opts.Overlap); err != nil {
			return nil, err
		}
	}
	sizes := make([]int, Q)
	for q, rows := range fitRows {
		sizes[q] = len(rows)
	}
	var mq []int
	if opts.Budget == BudgetEffDim {
		if mq, err = effDimBudget(ctx, be, k, x, diag, fitRows, M, cellRegs(fitRows, rw, lambda), opts.Seed); err != nil {
			return nil, err
		}
	} else {
		mq = sizeBudget(sizes, M)
	}

	p := &ParK{
		kern: k, centroids: subsetRows(x, part.cidx), cdiag: make([]float64, Q), offsets: part.offsets,
		cells: make([]*expansion, Q), sizes: make([]int, Q), lambda: lambda, report: rep, wsum: rw.given,
	}
	for q, i := range part.cidx {
		p.cdiag[q] = diag[i]
	}
	workers := opts.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = min(workers, Q)
	cellOpts := FalkonOptions{
		Options:    opts.Options,
		Iterations: opts.Iterations,
		Tol:        opts.Tol,
		Precision:  opts.Precision,
	}
	limit := budget.Or(opts.MemoryBudget)
	var mu sync.Mutex
	done := 0
	cellOpts.Progress = nil
	cellOpts.Weights = nil // the cells' weights go to fitFalkonCentered
	cellOpts.Backend = be  // the cells' models predict on the fit's backend
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errs := make([]error, Q)
	sem := make(chan struct{}, workers)
	var wg sync.WaitGroup
	for q := 0; q < Q; q++ {
		wg.Add(1)
		sem <- struct{}{}
		go func(q int) {
			defer wg.Done()
			defer func() { <-sem }()
			t0 := time.Now()
			rows := fitRows[q]
			nq := len(rows)
			if nq == 0 { // no strategy leaves a cell empty; refuse rather than panic
				errs[q] = fmt.Errorf("%w: ParK cell %d is empty", zonal.ErrParam, q)
				return
			}
			m := mq[q]
			xq := subsetRows(x, rows)
			yq := gatherRows(y, rows)
			co := cellOpts
			co.Centers = m
			co.MemoryBudget = max(1, int64(float64(limit)*float64(nq)/float64(n)))
			co.Seed = opts.Seed + uint64(q)
			if opts.CellIterations != nil {
				if t := opts.CellIterations(q, nq, m); t > 0 {
					co.Iterations = t
				}
			}
			wq, sq := cellWeights(rw, rows)
			yc, mean := centerTargets(yq, wq)
			lq := lambda * rw.sum / sq
			f, err := fitFalkonCentered(ctx, k, xq, yc, mean, lq, uniformCenters(nq, m, co.Seed), wq, sq, co)
			if err != nil {
				errs[q] = fmt.Errorf("ParK cell %d (%d rows, %d centres): %w", q, nq, m, err)
				cancel()
				return
			}
			cr := ParKCell{Rows: len(members[q]), Halo: nq - len(members[q]) + len(valRowsOf(valRows, q)), Centers: m, Lambda: lq, Iterations: f.cg.Iterations,
				Converged: f.cg.Converged, Diagnostics: f.Diagnostics(), ValidationRMSE: math.NaN()}
			cr.FitSeconds = time.Since(t0).Seconds()
			if valRows != nil && len(valRows[q]) > 0 {
				cr.ValidationRows = len(valRows[q])
				cr.ValidationRMSE, err = cellRMSE(f.exp, subsetRows(x, valRows[q]), gatherRows(y, valRows[q]))
				if err != nil {
					errs[q] = err
					cancel()
					return
				}
			}
			p.cells[q] = f.exp
			p.sizes[q] = len(members[q])
			rep.Cells[q] = cr
			mu.Lock()
			done++
			opts.report(zonal.Progress{Stage: "cells", Done: done, Total: Q})
			mu.Unlock()
		}(q)
	}
	wg.Wait()
	// Report the root cause, not the cancellations it caused in other cells.
	var first error
	for _, err := range errs {
		if err != nil && (first == nil || errors.Is(first, context.Canceled) && !errors.Is(err, context.Canceled)) {
			first = err
		}
	}
	if first != nil {
		return nil, first
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	cd := make([]Diagnostics, Q)
	for q, c := range rep.Cells {
		cd[q] = c.Diagnostics
	}
	p.diag = aggregateDiagnostics(cd)
	return p, nil
}

func valRowsOf(v [][]int, q int) []int {
	if v == nil {
		return nil
	}
	return v[q]
}

// addHalos returns the training rows of every cell with its halo (see
// ParKOptions.Overlap), sorted.
func addHalos(ctx context.Context, be backend.Backend, k kernels.Kernel, x mat.Matrix, diag []float64, part *partition, fitRows [][]int, overlap float64) ([][]int, error) {
	D, err := centroidDists(ctx, be, k, x, diag, part.cidx)
	if err != nil {
		return nil, err
	}
	Q := len(part.cidx)
	type cand struct {
		i      int
		margin float64
	}
	cands := make([][]cand, Q)
	for i, a := range part.assign {
		r := rowOf(D, i)
		b, bv := -1, math.Inf(1)
		for j, v := range r {
			if part.offsets != nil {
				v += part.offsets[j]
			}
			if j != a && v < bv {
				b, bv = j, v
			}
		}
		if b >= 0 {
			own := r[a]
			if part.offsets != nil {
				own += part.offsets[a]
			}
			cands[b] = append(cands[b], cand{i, bv - own})
		}
	}
	out := make([][]int, Q)
	for q, c := range cands {
		slices.SortStableFunc(c, func(a, b cand) int { return cmp.Compare(a.margin, b.margin) })
		h := min(len(c), int(math.Floor(overlap*float64(len(fitRows[q])))))
		rows := slices.Clone(fitRows[q])
		for _, e := range c[:h] {
			rows = append(rows, e.i)
		}
		slices.Sort(rows)
		out[q] = rows
	}
	return out, nil
}

// sizeBudget is BudgetSize: M_q = round(M n_q / n), within 1..n_q.
func sizeBudget(sizes []int, M int) []int {
	n := 0
	for _, s := range sizes {
		n += s
	}
	mq := make([]int, len(sizes))
	for q, nq := range sizes {
		m := int(math.Round(float64(M) * float64(nq) / float64(n)))
		mq[q] = max(1, min(m, nq))
	}
	return mq
}

// effDimSample is the largest Nystrom sample S of a cell, effDimRows the
// largest set R of its rows whose leverage scores are summed.
const (
	effDimSample = 400
	effDimRows   = 2000
)

// effDimBudget is BudgetEffDim: M_q proportional to the estimate of
// N_q(lambda_q) (see BudgetEffDim), lambda_q = lambda n / n_q, within
// 1..n_q; the centres a capped cell cannot take go to the others in
// proportion again.
func effDimBudget(ctx context.Context, be backend.Backend, k kernels.Kernel, x mat.Matrix, diag []float64, rows [][]int, M int, regs []float64, seed uint64) ([]int, error) {
	Q := len(rows)
	eff := make([]float64, Q)
	rng := rand.New(rand.NewPCG(seed, 0x14057b7ef767814f))
	for q, r := range rows {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("solvers: ParK canceled: %w", err)
		}
		S := sampleRows(r, effDimSample, rng)
		R := sampleRows(r, effDimRows, rng)
		m := len(S)
		// lambda_q n_q = lambda n: the absolute regulariser of every cell
		// (cellRegs).
		reg := regs[q]
		kss := mat.NewDense(m, m, nil)
		if err := kernels.MatrixInto(ctx, kss, k, subsetRows(x, S), subsetRows(x, S), kernels.Options{Backend: be}); err != nil {
			return nil, err
		}
		for i := 0; i < m; i++ {
			kss.Set(i, i, kss.At(i, i)+reg)
		}
		var ch mat.Cholesky
		if !ch.Factorize(mat.NewSymDense(m, kss.RawMatrix().Data)) {
			return nil, fmt.Errorf("%w: ParK cell %d: K_SS + lambda n I is not positive definite", zonal.ErrNotPositiveDefinite, q)
		}
		var L mat.TriDense
		ch.LTo(&L)
		xr := subsetRows(x, R)
		ksr := mat.NewDense(m, len(R), nil)
		if err := kernels.MatrixInto(ctx, ksr, k, subsetRows(x, S), xr, kernels.Options{Backend: be}); err != nil {
			return nil, err
		}
		var v mat.Dense
		if err := v.Solve(&L, ksr); err != nil {
			return nil, fmt.Errorf("%w: ParK cell %d: %v", zonal.ErrNotPositiveDefinite, q, err)
		}
		sum := 0.0
		for j, rj := range R {
			res := diag[rj]
			for i := 0; i < m; i++ {
				res -= v.At(i, j) * v.At(i, j)
			}
			sum += math.Min(1, math.Max(0, res)/reg)
		}
		eff[q] = math.Max(sum*float64(len(r))/float64(len(R)), 1e-12)
	}
	// Water-filling: cells whose share exceeds their rows take all their
	// rows; the rest share what is left in proportion to eff.
	mq := make([]int, Q)
	fixed := make([]bool, Q)
	left := M
	for range Q {
		tot := 0.0
		for q := range eff {
			if !fixed[q] {
				tot += eff[q]
			}
		}
		changed := false
		for q := range eff {
			if !fixed[q] && float64(left)*eff[q]/tot >= float64(len(rows[q])) {
				fixed[q], mq[q] = true, len(rows[q])
				left -= len(rows[q])
				changed = true
			}
		}
		if !changed {
			break
		}
	}
	tot := 0.0
	for q := range eff {
		if !fixed[q] {
			tot += eff[q]
		}
	}
	for q := range eff {
		if !fixed[q] {
			mq[q] = max(1, min(len(rows[q]), int(math.Round(float64(left)*eff[q]/tot))))
		}
	}
	return mq, nil
}

// cellRMSE is the root mean squared error of e on (x, y) over every output.
func cellRMSE(e *expansion, x mat.Matrix, y *mat.Dense) (float64, error) {
	n, k := y.Dims()
	out := mat.NewDense(n, k, nil)
	if err := e.predictBatch(out, x); err != nil {
		return 0, err
	}
	s := 0.0
	for i := 0; i < n; i++ {
		yr := rowOf(y, i)
		for j, v := range rowOf(out, i) {
			s += (v - yr[j]) * (v - yr[j])
		}
	}
	return math.Sqrt(s / float64(n*k)), nil
}

// Report describes the fit's partition and cells (nil after loading from a
// file).
func (p *ParK) Report() *ParKReport { return p.report }

// Offsets returns the offsets w_q of a capped partition (nil when the cells
// are plain nearest-centroid cells; not a copy).
func (p *ParK) Offsets() []float64 { return p.offsets }

// Kind returns "park".
func (p *ParK) Kind() string { return KindParK }

// InputDim is d.
func (p *ParK) InputDim() int { _, d := p.centroids.Dims(); return d }

// Outputs is k.
func (p *ParK) Outputs() int { _, _, k := p.cells[0].dims(); return k }

// cellRegs is the absolute regulariser of each cell for effDimBudget's
// unweighted kernel samples: lambda_q n_q = lambda n unweighted; weighted,
// lambda_q = lambda sum(w) / sum_q(w) in units of the cell's mean weight
// sum_q(w) / n_q, that is lambda sum(w) n_q / sum_q(w) (lambda n again
// when the weights are equal).
func cellRegs(rows [][]int, rw rowWeights, lambda float64) []float64 {
	regs := make([]float64, len(rows))
	for q, r := range rows {
		regs[q] = lambda * rw.sum
		if rw.w != nil {
			if _, sq := cellWeights(rw, r); sq > 0 {
				regs[q] *= float64(len(r)) / sq
			}
		}
	}
	return regs
}

// cellWeights returns the weights of a cell's rows (nil when unweighted)
// and their sum (the row count when unweighted).
func cellWeights(rw rowWeights, rows []int) ([]float64, float64) {
	if rw.w == nil {
		return nil, float64(len(rows))
	}
	wq := SubsetWeights(rw.w, rows)
	var sq float64
	for _, v := range wq {
		sq += v
	}
	return wq, sq
}

// WeightSum is the sum of the Options.Weights the model was fitted with:
// 0 for an unweighted fit; for a loaded model the Sum of the pipeline's
// recorded TrainingWeights (0 when the file records none).
func (p *ParK) WeightSum() float64 { return p.wsum }

func (p *ParK) setWeightSum(s float64) { p.wsum = s }

// Cells is Q.
func (p *ParK) Cells() int { return len(p.cells) }

// CellSizes returns n_q for every cell (nil after loading from a file).
func (p *ParK) CellSizes() []int { return p.sizes }

// Centroids returns the Q x d centroids (not a copy): a *mat.Dense, or a
// *dataset.CSR when the model was fitted on CSR rows.
func (p *ParK) Centroids() mat.Matrix { return p.centroids }

// Cell returns the index of the cell of point x (length d): the q
// minimising ||phi(x) - phi(c_q)||^2 + w_q (w_q = 0 unless the fit capped
// the cells), ties to the smaller index, the rule that assigned the training
// rows; -1 when x does not have length d (or, for CSR centroids, when the
// kernel row cannot be formed).
func (p *ParK) Cell(x []float64) int {
	_, d := p.centroids.Dims()
	if len(x) != d {
		return -1
	}
	c, ok := p.centroids.(*mat.Dense)
	if !ok {
		a, err := p.assignRows(mat.NewDense(1, d, x))
		if err != nil {
			return -1
		}
		return a[0]
	}
	best, bestD := 0, math.Inf(1)
	cr := c.RawMatrix()
	for q := range p.cells {
		dq := p.cdiag[q] - 2*p.kern.Eval(x, cr.Data[q*cr.Stride:q*cr.Stride+cr.Cols])
		if p.offsets != nil {
			dq += p.offsets[q]
		}
		if dq < bestD {
			best, bestD = q, dq
		}
	}
	return best
}

// assignRows returns the cell of every row of x (a *mat.Dense or a
// *dataset.CSR) by the rule of Cell, from kernel blocks K(x, C) (k(x,x) is
// the same for every cell and drops out).
func (p *ParK) assignRows(x mat.Matrix) ([]int, error) {
	x = likeCenters(x, p.centroids)
	n, _ := x.Dims()
	Q := len(p.cells)
	out := make([]int, n)
	bs := min(predictBlock, n)
	kb := mat.NewDense(bs, Q, nil)
	for i0 := 0; i0 < n; i0 += bs {
		i1 := min(i0+bs, n)
		kv := kb.Slice(0, i1-i0, 0, Q).(*mat.Dense)
		if err := kernels.MatrixInto(context.Background(), kv, p.kern, rowRange(x, i0, i1), p.centroids, kernels.Options{Backend: p.cells[0].be}); err != nil {
			return nil, err
		}
		for i := i0; i < i1; i++ {
			best, bestD := 0, math.Inf(1)
			for q, v := range rowOf(kv, i-i0) {
				dq := p.cdiag[q] - 2*v
				if p.offsets != nil {
					dq += p.offsets[q]
				}
				if dq < bestD {
					best, bestD = q, dq
				}
			}
			out[i] = best
		}
	}
	return out, nil
}

// Predict writes f(x_i) to the rows of dst, each row by its own cell's
// model only. x is a *mat.Dense or a *dataset.CSR; dense batches of at most
// 32 rows on dense centroids do not allocate after warm-up.
//
// Errors: zonal.ErrShape unless x is n x d and dst n x k, or when x is
// neither a *mat.Dense nor a *dataset.CSR; zonal.ErrRange for a CSR with a
// column index out of range; zonal.ErrNonFinite for NaN or Inf in x; the
// kernel's errors.
func (p *ParK) Predict(dst *mat.Dense, x mat.Matrix) error {
	d, k := p.InputDim(), p.Outputs()
	if err := checkPredict(dst, x, d, k); err != nil {
		return err
	}
	if err := checkFinite("features", x); err != nil {
		return err
	}
	n, _ := x.Dims()
	if n == 0 {
		return nil
	}
	xd, dense := x.(*mat.Dense)
	_, denseC := p.centroids.(*mat.Dense)
	if dense && denseC && n <= smallBatch {
		for i := 0; i < n; i++ {
			r := rowOf(xd, i)
			p.cells[p.Cell(r)].predictRow(rowOf(dst, i), r)
		}
		return nil
	}
	var assign []int
	if dense && denseC {
		assign = make([]int, n)
		for i := range assign {
			assign[i] = p.Cell(rowOf(xd, i))
		}
	} else {
		var err error
		if assign, err = p.assignRows(x); err != nil {
			return err
		}
	}
	groups := make([][]int, len(p.cells))
	for i, q := range assign {
		groups[q] = append(groups[q], i)
	}
	for q, rows := range groups {
		if len(rows) == 0 {
			continue
		}
		xq := subsetRows(x, rows)
		out := mat.NewDense(len(rows), k, nil)
		if err := p.cells[q].predictBatch(out, xq); err != nil {
			return err
		}
		for j, i := range rows {
			copy(rowOf(dst, i), rowOf(out, j))
		}
	}
	return nil
}

// MarshalBinary encodes the model for a model file: lambda, the kernel's
// kind and parameters, the centroids and their k(c_q, c_q), then every
// cell's centres, alpha and output means (not CellSizes or Report), then,
// only for a capped partition, the byte 1 and the offsets w_q, then, only
// for a float32 model, the byte 2 and the precision byte. A float64 model
// without offsets is encoded exactly as before offsets existed, so files
// written by earlier builds load and re-save byte for byte.
//
// Errors: the kernel's MarshalBinary error.
func (p *ParK) MarshalBinary() ([]byte, error) {
	e := &enc{}
	e.f64(p.lambda)
	if err := e.kernel(p.kern); err != nil {
		return nil, err
	}
	e.matrix(p.centroids)
	e.floats(p.cdiag)
	for _, c := range p.cells {
		e.expansion(c)
	}
	if p.offsets != nil {
		e.u8(parkOffsetsTag)
		e.floats(p.offsets)
	}
	e.precision(parkPrecisionTag, p.Precision())
	return e.b, nil
}

// The optional sections of a ParK model, in this order.
const (
	parkOffsetsTag   = 1 // the offsets w_q of a capped partition
	parkPrecisionTag = 2 // the cells' precision, for a float32 model
)

// Precision is the precision of the cells' kernel blocks (every cell has
// the same): zonal.Float32 when fitted with ParKOptions.Precision Float32.
func (p *ParK) Precision() zonal.Precision { return p.cells[0].prec }

// decodeParK is the ModelDecoder of KindParK.
func decodeParK(data []byte, be backend.Backend) (Model, error) {
	d := &dec{b: data}
	lambda := d.f64("lambda")
	k := d.kernel()
	cent := d.matrix("centroids")
	cdiag := d.floats("centroid norms")
	if d.err != nil {
		return nil, d.err
	}
	q, dim := cent.Dims()
	if len(cdiag) != q {
		return nil, fmt.Errorf("%w: %d centroids, %d norms", zonal.ErrFormat, q, len(cdiag))
	}
	p := &ParK{kern: k, centroids: cent, cdiag: cdiag, lambda: lambda, cells: make([]*expansion, q)}
	for i := range p.cells {
		p.cells[i] = d.expansion(be, k, dim)
		if d.err != nil {
			return nil, d.err
		}
		if _, _, kk := p.cells[i].dims(); kk != p.cells[0].Outputs() {
			return nil, fmt.Errorf("%w: cells have different output counts", zonal.ErrFormat)
		}
	}
	last := uint8(0)
	for d.err == nil && len(d.b) > 0 {
		tag := d.u8("ParK section tag")
		if tag <= last || tag > parkPrecisionTag {
			d.fail("unknown or repeated ParK section %d", tag)
			break
		}
		last = tag
		if tag == parkPrecisionTag {
			prec := d.precisionValue()
			for _, c := range p.cells {
				c.prec = prec
			}
			continue
		}
		p.offsets = d.floats("cell offsets")
		if d.err == nil && len(p.offsets) != q {
			d.fail("%d cells, %d offsets", q, len(p.offsets))
		}
		for _, w := range p.offsets {
			if math.IsNaN(w) || math.IsInf(w, 0) {
				d.fail("non-finite cell offset %g", w)
				break
			}
		}
	}
	if err := d.end(); err != nil {
		return nil, err
	}
	return p, nil
}
