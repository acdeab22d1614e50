package solvers

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"

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
	// Centers is the total number of Nystrom centres M; cell q gets
	// M_q = round(M n_q / n) (at least 1, at most n_q).
	Centers int
	// Iterations bounds each cell's CG iterations; zero means 20.
	Iterations int
	// Tol is each cell's CG tolerance; zero means 1e-9.
	Tol float64
	// Seed drives the first centroid and the centre sampling (cell q uses
	// Seed+q, so Q = 1 draws the same centres as FitFalkon with Seed).
	Seed uint64
	// Workers bounds the cells fitted at once; zero means GOMAXPROCS.
	// Cell q gets the share MemoryBudget n_q / n of the budget, so cells
	// running together never exceed it whatever their number, and the
	// big cells of an unbalanced partition can still cache their K_nM.
	Workers int
}

// ParK is a ParK model: Q centroids c_q in the input space whose feature
// vectors phi(c_q) induce a Voronoi partition of the RKHS, and one FALKON
// expansion per cell. A point is predicted by the cell of its nearest
// centroid, ||phi(x) - phi(c_q)||^2 = k(x,x) + k(c_q,c_q) - 2 k(x,c_q), only.
type ParK struct {
	kern      kernels.Kernel
	centroids *mat.Dense // Q x d
	cdiag     []float64  // k(c_q, c_q)
	cells     []*expansion
	sizes     []int
	lambda    float64
}

// FitParK fits ParK (Carratino, Vigogna, Calandriello, Rosasco 2021).
//
// Centroids: the first is a training row drawn with Seed; each next one is
// the training row farthest in the RKHS from the centroids chosen so far
// (Gonzalez's farthest-point rule). We use this rule rather than the
// principal-angle criterion of the paper's analysis because it needs only
// the distances, O(Q n) kernel evaluations in all, is a 2-approximation of
// the best Q-centre covering radius (so the cells are compact in the RKHS,
// which is what keeps the local subspaces close to orthogonal for a
// translation-invariant kernel such as the Gaussian), and its byproduct is
// the Voronoi assignment itself. Ties go to the smaller cell index. Its known
// weakness: it picks outliers first, so on data with a heavy-tailed spread
// (e.g. the standardized spam set) most rows can land in one cell and ParK
// costs as much as FALKON; CellSizes shows the partition.
//
// Cell q with n_q rows is fitted by FALKON with M_q centres and
// lambda_q = lambda n / n_q, the scaling of the paper's analysis, so each
// cell solves (K_qM^T K_qM + lambda n K_MM) a = K_qM^T Y_q and the targets
// are centred per cell. Cells run in parallel on at most Workers goroutines.
// Linear algebra runs on opts.Backend, at prediction time too.
//
// Errors: zonal.ErrParam for a nil kernel, lambda not positive and finite,
// Cells outside 1..n, Centers outside Cells..n, fewer distinct points in
// feature space than Cells; zonal.ErrShape for nil inputs or a label count
// other than the row count; zonal.ErrEmpty for no rows or columns;
// zonal.ErrNonFinite for NaN or Inf in x or y; zonal.ErrTooLarge when the
// working arrays exceed opts.MemoryBudget; zonal.ErrNotPositiveDefinite when a
// factorisation fails even with jitter; the kernel's errors; ctx.Err()
// (wrapped) when canceled.
//
// kernels.CheckScale runs before anything is formed: zonal.ErrNonFinite for
// features so large that the kernel values overflow, zonal.ErrParam for a
// kernel that underflows to 0 between all (sampled) rows, both naming the
// kernel and the data's scale.
func FitParK(ctx context.Context, k kernels.Kernel, x, y *mat.Dense, lambda float64, opts ParKOptions) (*ParK, error) {
	if k == nil {
		return nil, fmt.Errorf("%w: nil kernel", zonal.ErrParam)
	}
	n, d, _, err := checkXY(x, y)
	if err != nil {
		return nil, err
	}
	if err := checkLambda(lambda); err != nil {
		return nil, err
	}
	if err := kernels.CheckScale(k, x); err != nil {
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
	be := opts.backend()

	// Greedy farthest-point centroids and the Voronoi assignment.
	diag := make([]float64, n)
	for i := range diag {
		r := rowOf(x, i)
		diag[i] = k.Eval(r, r)
	}
	dist := make([]float64, n)
	for i := range dist {
		dist[i] = math.Inf(1)
	}
	assign := make([]int, n)
	col := mat.NewDense(n, 1, nil)
	cidx := make([]int, 0, Q)
	rng := rand.New(rand.NewPCG(opts.Seed, 0x5851f42d4c957f2d))
	next := rng.IntN(n)
	for q := 0; q < Q; q++ {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("solvers: ParK canceled: %w", err)
		}
		cidx = append(cidx, next)
		c := x.Slice(next, next+1, 0, d)
		if err := kernels.MatrixInto(ctx, col, k, x, c, kernels.Options{Backend: be}); err != nil {
			return nil, err
		}
		cr := col.RawMatrix()
		far, farD := -1, -1.0
		for i := 0; i < n; i++ {
			// Rounding can make di slightly negative, or NaN; clamping
			// at 0 and pinning the centroid at distance 0 keeps every
			// centroid in its own cell (ties go to the smaller index), so
			// no cell is ever empty.
			di := diag[i] + diag[next] - 2*cr.Data[i*cr.Stride]
			if !(di > 0) {
				di = 0
			}
			if i == next {
				di = 0
			}
			if di < dist[i] {
				dist[i] = di
				assign[i] = q
			}
			if dist[i] > farD {
				far, farD = i, dist[i]
			}
		}
		if q+1 < Q && !(farD > 0) {
			return nil, fmt.Errorf("%w: only %d distinct points in feature space, cannot make %d cells", zonal.ErrParam, q+1, Q)
		}
		next = far
		opts.report(zonal.Progress{Stage: "centroids", Done: q + 1, Total: Q})
	}
	members := make([][]int, Q)
	for i, q := range assign {
		members[q] = append(members[q], i)
	}

	p := &ParK{
		kern: k, centroids: gatherRows(x, cidx), cdiag: make([]float64, Q),
		cells: make([]*expansion, Q), sizes: make([]int, Q), lambda: lambda,
	}
	for q, i := range cidx {
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
	}
	limit := budget.Or(opts.MemoryBudget)
	var mu sync.Mutex
	done := 0
	cellOpts.Progress = nil
	cellOpts.Backend = be // the cells' models predict on the fit's backend
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
			rows := members[q]
			nq := len(rows)
			if nq == 0 { // impossible: the centroid is in its own cell
				errs[q] = fmt.Errorf("%w: ParK cell %d is empty", zonal.ErrParam, q)
				cancel()
				return
			}
			mq := int(math.Round(float64(M) * float64(nq) / float64(n)))
			mq = max(1, min(mq, nq))
			xq := gatherRows(x, rows)
			yq := gatherRows(y, rows)
			co := cellOpts
			co.Centers = mq
			co.MemoryBudget = max(1, int64(float64(limit)*float64(nq)/float64(n)))
			co.Seed = opts.Seed + uint64(q)
			yc, mean := centerTargets(yq)
			lq := lambda * float64(n) / float64(nq)
			f, err := fitFalkonCentered(ctx, k, xq, yc, mean, lq, uniformCenters(nq, mq, co.Seed), co)
			if err != nil {
				errs[q] = fmt.Errorf("ParK cell %d (%d rows, %d centres): %w", q, nq, mq, err)
				cancel()
				return
			}
			p.cells[q] = f.exp
			p.sizes[q] = nq
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
	return p, nil
}

// Kind returns "park".
func (p *ParK) Kind() string { return KindParK }

// InputDim is d.
func (p *ParK) InputDim() int { _, d := p.centroids.Dims(); return d }

// Outputs is k.
func (p *ParK) Outputs() int { _, _, k := p.cells[0].dims(); return k }

// Cells is Q.
func (p *ParK) Cells() int { return len(p.cells) }

// CellSizes returns n_q for every cell (nil after loading from a file).
func (p *ParK) CellSizes() []int { return p.sizes }

// Centroids returns the Q x d centroids (not a copy).
func (p *ParK) Centroids() *mat.Dense { return p.centroids }

// Cell returns the index of the cell of point x (length d): the nearest
// centroid in the RKHS, ties to the smaller index; -1 when x does not have
// length d.
func (p *ParK) Cell(x []float64) int {
	best, bestD := 0, math.Inf(1)
	c := p.centroids.RawMatrix()
	if len(x) != c.Cols {
		return -1
	}
	for q := range p.cells {
		dq := p.cdiag[q] - 2*p.kern.Eval(x, c.Data[q*c.Stride:q*c.Stride+c.Cols])
		if dq < bestD {
			best, bestD = q, dq
		}
	}
	return best
}

// Predict writes f(x_i) to the rows of dst, each row by its own cell's
// model only; batches of at most 32 rows do not allocate after warm-up.
//
// Errors: zonal.ErrShape unless x is n x d and dst n x k; zonal.ErrNonFinite
// for NaN or Inf in x.
func (p *ParK) Predict(dst, x *mat.Dense) error {
	d, k := p.InputDim(), p.Outputs()
	if err := checkPredict(dst, x, d, k); err != nil {
		return err
	}
	if err := checkFinite("features", x); err != nil {
		return err
	}
	n, _ := x.Dims()
	if n <= smallBatch {
		for i := 0; i < n; i++ {
			r := rowOf(x, i)
			p.cells[p.Cell(r)].predictRow(rowOf(dst, i), r)
		}
		return nil
	}
	groups := make([][]int, len(p.cells))
	for i := 0; i < n; i++ {
		q := p.Cell(rowOf(x, i))
		groups[q] = append(groups[q], i)
	}
	for q, rows := range groups {
		if len(rows) == 0 {
			continue
		}
		xq := gatherRows(x, rows)
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
// cell's centres, alpha and output means (not CellSizes).
//
// Errors: the kernel's MarshalBinary error.
func (p *ParK) MarshalBinary() ([]byte, error) {
	e := &enc{}
	e.f64(p.lambda)
	if err := e.kernel(p.kern); err != nil {
		return nil, err
	}
	e.dense(p.centroids)
	e.floats(p.cdiag)
	for _, c := range p.cells {
		e.expansion(c)
	}
	return e.b, nil
}

// decodeParK is the ModelDecoder of KindParK.
func decodeParK(data []byte, be backend.Backend) (Model, error) {
	d := &dec{b: data}
	lambda := d.f64("lambda")
	k := d.kernel()
	cent := d.dense("centroids")
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
	if err := d.end(); err != nil {
		return nil, err
	}
	return p, nil
}
