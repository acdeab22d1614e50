package solvers

import (
	"context"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal/backend"
	"github.com/zonal-ml/zonal/kernels"
)

// FALKON's preconditioner B = (1/sqrt(n)) T^-1 A^-1 needs two M x M upper
// triangular factors:
//
//	T^T T = K_MM + eps M I,   A^T A = T T^T / M + lambda I.
//
// They are kept in one M x M array (the M x M factors are the largest cost
// of a fit that does not cache K_nM, and the second largest of one that
// does): the lower triangle, diagonal included, holds A^T, and the strict
// upper triangle holds T, whose diagonal is kept aside and put in place only
// for the duration of a solve with T. This is the layout of FALKON's
// reference implementation; it saves M^2 floats (0.8 GB at M = 10000).
type falkonFactors struct {
	be     backend.Backend
	p      blas64.General
	dT, dA []float64 // the diagonals of T and of A
}

// factorPanel is the row panel height of the product T T^T.
const factorPanel = 128

// panelRows is the panel height for M centres: factorPanel, smaller for
// small M so that the scratch stays a small fraction of the M x M array.
func panelRows(M int) int { return max(1, min(factorPanel, M/8)) }

// factorScratch is the number of floats of newFalkonFactors' scratch for M
// centres: a panel's diagonal block and its row of T T^T.
func factorScratch(M int) int64 {
	nb := int64(panelRows(M))
	return nb * (nb + int64(M))
}

// newFalkonFactors computes the two factors for the centres (rows of x at
// idx, already gathered in centers), with FALKON's jitter fallbacks. It
// returns the factors and the jitter added to K_MM.
//
// cw, when not nil, are the centres' weights of a weighted fit scaled to
// sum to M (centerWeights), and A^T A = T D T^T / M + lambda I with
// D = diag(cw). The preconditioner rests on K_nM^T K_nM / n ~ K_MM^2 / M,
// the centres standing in for the rows; in a weighted fit the operator
// holds K_nM^T W K_nM / sum(w), for which the centres, drawn uniformly,
// stand in with the importance weights D: K_MM D K_MM / M. Then B^T
// (K_MM D K_MM / M + lambda K_MM) B = I exactly as in the unweighted case.
func newFalkonFactors(ctx context.Context, be backend.Backend, k kernels.Kernel, centers mat.Matrix, M int, lambda float64, cw []float64) (*falkonFactors, float64, error) {
	f, jit, err := newFalkonT(ctx, be, k, centers, M)
	if err != nil {
		return nil, 0, err
	}
	if err := f.factorA(ctx, lambda, cw); err != nil {
		return nil, 0, err
	}
	return f, jit, nil
}

// newFalkonT computes T (T^T T = K_MM + eps M I, with the jitter
// fallbacks) into the strict upper triangle and dT; factorA must run
// before the factors are used. It returns the jitter added to K_MM.
func newFalkonT(ctx context.Context, be backend.Backend, k kernels.Kernel, centers mat.Matrix, M int) (*falkonFactors, float64, error) {
	p := mat.NewDense(M, M, nil)
	// L L^T = K_MM + eps M I, L lower (= T^T).
	jit, err := factorWithJitter(ctx, be, p, 1e-14*float64(M), "K_MM + eps M I", func(a *mat.Dense) error {
		return kernels.MatrixInto(ctx, a, k, centers, centers, kernels.Options{Backend: be})
	})
	if err != nil {
		return nil, 0, err
	}
	f := &falkonFactors{be: be, p: p.RawMatrix(), dT: make([]float64, M), dA: make([]float64, M)}
	// T = L^T into the strict upper triangle, its diagonal aside.
	g := f.p
	for i := 0; i < M; i++ {
		f.dT[i] = g.Data[i*g.Stride+i]
		for j := 0; j < i; j++ {
			g.Data[j*g.Stride+i] = g.Data[i*g.Stride+j]
		}
	}
	return f, jit, nil
}

// factorA (re)computes A, A^T A = T D T^T / M + lambda I, into the lower
// triangle from T (the strict upper triangle, not touched) with the jitter
// fallbacks. D is diag(w), or the identity for a nil w: a weighted FALKON
// passes its centre weights (newFalkonFactors), the logistic solver the
// loss's curvature at the centres, again at every Newton step. T itself
// is never modified (fillTTt scales copies of its blocks), so a weight of
// 0, or repeated refactorizations, leave it exact.
func (f *falkonFactors) factorA(ctx context.Context, lambda float64, w []float64) error {
	M := f.p.Rows
	nb := panelRows(M)
	d := make([]float64, nb*nb)
	r := make([]float64, nb*M)
	var ws []float64
	if w != nil {
		ws = make([]float64, nb*M)
	}
	a := &mat.Dense{}
	a.SetRawMatrix(f.p)
	if _, err := factorWithJitterBy(ctx, a, lambda, "T T^T / M + lambda I", func(*mat.Dense) error {
		return f.fillTTt(ctx, nb, d, r, w, ws)
	}, func(a blas64.General) error { return backend.CholeskyLower(f.be, a) }); err != nil {
		return err
	}
	g := f.p
	for i := 0; i < M; i++ {
		f.dA[i] = g.Data[i*g.Stride+i]
	}
	return nil
}

// fillTTt writes the lower triangle (diagonal included) of T T^T / M into
// the lower triangle of f.p, reading T from the strict upper triangle and
// f.dT. Row panel I = [i0, i1) of the product is
//
//	(T T^T)[I, 0:i1] = T[I, i0:M] T[0:i1, i0:M]^T,
//
// where T[I, i0:i1] (the panel's diagonal block, copied with its diagonal
// into d) is the only part of T that shares rows and columns with the lower
// triangle; every other block is read in place from the strict upper
// triangle, which the writes (lower triangle only) never reach. Two GEMMs a
// panel into r; about M^3/3 flops in all, a third of a Syrk on a full
// triangular factor. ctx is checked between panels.
//
// With weights w (length M; nil: none) the product is T diag(w) T^T / M:
// the left operand of every GEMM is a copy of its block with column j
// scaled by w_j, made in ws (nb M floats), so T itself is never modified.
func (f *falkonFactors) fillTTt(ctx context.Context, panel int, d, r, w, ws []float64) error {
	g := f.p
	M := g.Rows
	view := func(r0, r1, c0, c1 int) blas64.General {
		return blas64.General{Rows: r1 - r0, Cols: c1 - c0, Stride: g.Stride, Data: g.Data[r0*g.Stride+c0:]}
	}
	inv := 1 / float64(M)
	for i0 := 0; i0 < M; i0 += panel {
		if err := ctx.Err(); err != nil {
			return err
		}
		i1 := min(i0+panel, M)
		nb := i1 - i0
		db := blas64.General{Rows: nb, Cols: nb, Stride: nb, Data: d[:nb*nb]}
		for a := 0; a < nb; a++ {
			row := db.Data[a*nb : (a+1)*nb]
			clear(row[:a])
			row[a] = f.dT[i0+a]
			copy(row[a+1:], g.Data[(i0+a)*g.Stride+i0+a+1:(i0+a)*g.Stride+i1])
		}
		rb := blas64.General{Rows: nb, Cols: i1, Stride: i1, Data: r[:nb*i1]}
		left := blas64.General{Rows: nb, Cols: i0, Stride: i1, Data: rb.Data}
		diag := blas64.General{Rows: nb, Cols: nb, Stride: i1, Data: rb.Data[i0:]}
		dl := scaledCols(db, w, i0, ws)
		f.be.Gemm(blas.NoTrans, blas.Trans, inv, dl, db, 0, diag)
		if i0 > 0 {
			f.be.Gemm(blas.NoTrans, blas.Trans, inv, dl, view(0, i0, i0, i1), 0, left)
		}
		if i1 < M {
			right := view(i0, i1, i1, M)
			rl := scaledCols(right, w, i1, ws)
			f.be.Gemm(blas.NoTrans, blas.Trans, inv, rl, right, 1, diag)
			if i0 > 0 {
				f.be.Gemm(blas.NoTrans, blas.Trans, inv, rl, view(0, i0, i1, M), 1, left)
			}
		}
		for a := 0; a < nb; a++ {
			copy(g.Data[(i0+a)*g.Stride:(i0+a)*g.Stride+i0+a+1], rb.Data[a*i1:a*i1+i0+a+1])
		}
	}
	return nil
}

// scaledCols returns b itself for nil w, else a copy of b in ws with
// column c scaled by w[c0+c].
func scaledCols(b blas64.General, w []float64, c0 int, ws []float64) blas64.General {
	if w == nil {
		return b
	}
	s := blas64.General{Rows: b.Rows, Cols: b.Cols, Stride: b.Cols, Data: ws[:b.Rows*b.Cols]}
	for i := 0; i < b.Rows; i++ {
		src := b.Data[i*b.Stride : i*b.Stride+b.Cols]
		dst := s.Data[i*s.Stride : i*s.Stride+s.Cols]
		for c, v := range src {
			dst[c] = v * w[c0+c]
		}
	}
	return s
}

// solveA solves op(A) X = B in place (t = NoTrans: A X = B, A upper, whose
// transpose is the lower triangle of p).
func (f *falkonFactors) solveA(t blas.Transpose, b blas64.General) {
	if x, ok := oneColumn(b); ok {
		// A = L^T with L the lower triangle of p.
		f.solveVec(x, t == blas.NoTrans, false)
		return
	}
	if t == blas.NoTrans {
		f.be.TriSolve(blas.Trans, f.p, b)
	} else {
		f.be.TriSolve(blas.NoTrans, f.p, b)
	}
}

// solveT solves op(T) X = B in place, T's diagonal put in place for the
// solve and A^T's put back after.
func (f *falkonFactors) solveT(t blas.Transpose, b blas64.General) {
	g := f.p
	for i, v := range f.dT {
		g.Data[i*g.Stride+i] = v
	}
	if x, ok := oneColumn(b); ok {
		f.solveVec(x, t == blas.NoTrans, true)
	} else {
		backend.TriSolveUpper(f.be, t, g, b)
	}
	for i, v := range f.dA {
		g.Data[i*g.Stride+i] = v
	}
}

// oneColumn returns the one column of b as a contiguous slice (b n x 1,
// unit stride).
func oneColumn(b blas64.General) ([]float64, bool) {
	if b.Cols != 1 || b.Stride != 1 || b.Rows == 0 {
		return nil, false
	}
	return b.Data[:b.Rows], true
}

// solveVec solves a triangular system with the one right-hand side x in
// place, by row dot products (backend Dot) or row axpys (backend Axpy) on
// p, whose diagonal must hold the factor's: the triangle is p's upper one
// (upper) or lower one, and back is true for the systems solved from the
// last row up (U x = b, or L^T x = b), false for those solved from the
// first row down (L x = b, U^T x = b). The one-column preconditioner
// solves of a CG iteration (4 M^2 flops) were a general triangular solve
// whose off-diagonal blocks went through the packed Dgemm with one column,
// a third of a streamed float32 pass's CPU at n = 20000, M = 2000 (CPU
// profile of TestFalkon32StreamedFitProfile); the row forms read p once.
// The sums are in a different order from the blocked solve's, so the bits
// of x differ from it (by rounding only).
func (f *falkonFactors) solveVec(x []float64, back, upper bool) {
	g := f.p
	n := len(x)
	row := func(i, j0, j1 int) blas64.Vector {
		return blas64.Vector{N: j1 - j0, Inc: 1, Data: g.Data[i*g.Stride+j0 : i*g.Stride+j1]}
	}
	vec := func(j0, j1 int) blas64.Vector { return blas64.Vector{N: j1 - j0, Inc: 1, Data: x[j0:j1]} }
	// dotRows: x_i = (x_i - row_i . x_known) / diag, rows in the triangle's
	// own orientation (L x = b from the top, U x = b from the bottom).
	// axpyRows: the transposed systems, x_i final then eliminated from the
	// rest.
	dotRows := back == upper
	for s := 0; s < n; s++ {
		i := s
		if back {
			i = n - 1 - s
		}
		d := g.Data[i*g.Stride+i]
		j0, j1 := 0, i // the off-diagonal part of row i
		if upper {
			j0, j1 = i+1, n
		}
		if dotRows {
			if j1 > j0 {
				x[i] -= f.be.Dot(row(i, j0, j1), vec(j0, j1))
			}
			x[i] /= d
			continue
		}
		x[i] /= d
		if j1 > j0 && x[i] != 0 {
			f.be.Axpy(-x[i], row(i, j0, j1), vec(j0, j1))
		}
	}
}
