package tune

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal/backend"
	"github.com/zonal-ml/zonal/dataset"
	"github.com/zonal-ml/zonal/solvers"
)

// path is one family of fits, indexed by lambda, in eigen coordinates: the
// predictions on ne evaluation rows are
//
//	F(lambda) = 1 mean^T + A diag(1/(s + c)) B,   c = lambda * nTrain,
//
// nTrain the training rows' weight sum (their count when unweighted).
//
// A ne x r, s the r eigenvalues (clamped at 0), B r x k. See the package doc.
type path struct {
	a      *mat.Dense
	s      []float64
	b      *mat.Dense
	mean   []float64
	nTrain float64
	tmp    *mat.Dense // r x k scratch
}

// predict writes F(lambda) to dst (ne x k).
func (p *path) predict(be backend.Backend, dst *mat.Dense, lambda float64) error {
	c := lambda * p.nTrain
	r, k := p.b.Dims()
	if p.tmp == nil {
		p.tmp = mat.NewDense(r, k, nil)
	}
	for j := 0; j < r; j++ {
		w := 1 / (p.s[j] + c)
		src, out := p.b.RawRowView(j), p.tmp.RawRowView(j)
		for t := range out {
			out[t] = w * src[t]
		}
	}
	ne, _ := dst.Dims()
	for i := 0; i < ne; i++ {
		copy(dst.RawRowView(i), p.mean)
	}
	be.Gemm(blas.NoTrans, blas.NoTrans, 1, p.a.RawMatrix(), p.tmp.RawMatrix(), 1, dst.RawMatrix())
	return nil
}

// clampEig sets the negative round-off eigenvalues of a PSD matrix to 0.
func clampEig(s []float64) {
	for i, v := range s {
		if v < 0 {
			s[i] = 0
		}
	}
}

// centered returns the column means of the rows idx of t and those rows
// minus the means; the means are weighted by w (w[r] the weight of row
// idx[r]) when w is not nil.
func centered(t *mat.Dense, idx []int, w []float64) (*mat.Dense, []float64) {
	_, k := t.Dims()
	mean := make([]float64, k)
	total := 0.0
	for r, i := range idx {
		wi := 1.0
		if w != nil {
			wi = w[r]
		}
		total += wi
		for j, v := range t.RawRowView(i) {
			mean[j] += wi * v
		}
	}
	for j := range mean {
		mean[j] /= total
	}
	yc := mat.NewDense(len(idx), k, nil)
	for r, i := range idx {
		out := yc.RawRowView(r)
		for j, v := range t.RawRowView(i) {
			out[j] = v - mean[j]
		}
	}
	return yc, mean
}

// gatherBlock returns the submatrix K[rows, cols].
func gatherBlock(k *mat.Dense, rows, cols []int) *mat.Dense {
	out := mat.NewDense(len(rows), len(cols), nil)
	for r, i := range rows {
		src, dst := k.RawRowView(i), out.RawRowView(r)
		for c, j := range cols {
			dst[c] = src[j]
		}
	}
	return out
}

// system is the ridge system of one fold before any lambda is chosen:
// the fit for lambda solves (G + c I) W = R with c = lambda * nTrain and
// predicts 1 mean^T + A W on the evaluation rows. Exact KRR: G = K_tr,
// R = Y_c, A = K_te,tr; ridge on features: G = Z_tr^T Z_tr, R = Z_tr^T Y_c,
// A = Z_te.
type system struct {
	g, r, a *mat.Dense
	mean    []float64
	nTrain  float64 // the training rows' weight sum (count when unweighted)
}

// lambdaPath predicts the fits of one fold for any lambda.
type lambdaPath interface {
	predict(be backend.Backend, dst *mat.Dense, lambda float64) error
}

// krrSystem is exact KRR trained on the rows train of the full kernel
// matrix kfull (n x n) and the targets t, evaluated on the rows test.
// With the training rows' weights wtr (nil: unweighted) it is the scaled
// problem of the solvers' weighted KRR, D = diag(sqrt(wtr)): G = D K_tr D,
// R = D Y_c (weighted mean), A = K_te,tr D, c = lambda sum(wtr). Weights
// solvers.CheckWeights refuses (all zero, say) are its error.
func krrSystem(kfull, t *mat.Dense, wtr []float64, train, test []int) (*system, error) {
	nTrain, err := trainWeight(wtr, train)
	if err != nil {
		return nil, err
	}
	yc, mean := centered(t, train, wtr)
	g, a := gatherBlock(kfull, train, train), gatherBlock(kfull, test, train)
	sw := sqrtOf(wtr)
	scaleSym(g, sw)
	scaleRowsBy(yc, sw)
	scaleColsBy(a, sw)
	return &system{g: g, r: yc, a: a, mean: mean, nTrain: nTrain}, nil
}

// ridgeSystem is ridge regression on the features, trained on the rows
// train (all rows but test) and evaluated on test, from the full-data sums:
// G_tr = G - Z_te^T Z_te and Z_tr^T Y_c = (ZY - Z_te^T Y_te) - (Z1 - Z_te^T 1) mean^T.
// Weighted (fs.w), every sum has the rows' weights (G = Z^T W Z, ...), the
// mean is the training rows' weighted mean and c = lambda sum(w_train).
// Training weights solvers.CheckWeights refuses are its error.
func ridgeSystem(be backend.Backend, fs *featureStats, t *mat.Dense, train, test []int) (*system, error) {
	wte, wtr := subsetWeights(fs.w, test), subsetWeights(fs.w, train)
	nTrain, err := trainWeight(wtr, train)
	if err != nil {
		return nil, err
	}
	_, D := fs.z.Dims()
	zte := dataset.MustSelectRows(fs.z, test)
	yte := dataset.MustSelectRows(t, test)
	g := mat.DenseCopyOf(fs.g)
	zy := mat.DenseCopyOf(fs.zy)
	zs := zte // D_te Z_te for the Gram
	if wte != nil {
		zs = mat.DenseCopyOf(zte)
		scaleRowsBy(zs, sqrtOf(wte))
		scaleRowsBy(yte, wte) // Z_te^T W_te Y_te with the unscaled Z_te
	}
	be.Syrk(blas.Trans, -1, zs.RawMatrix(), 1, g.RawMatrix())
	be.Gemm(blas.Trans, blas.NoTrans, -1, zte.RawMatrix(), yte.RawMatrix(), 1, zy.RawMatrix())
	_, mean := centered(t, train, wtr)
	z1 := append([]float64(nil), fs.z1...)
	for r := range test {
		wr := 1.0
		if wte != nil {
			wr = wte[r]
		}
		for j, v := range zte.RawRowView(r) {
			z1[j] -= wr * v
		}
	}
	for j := 0; j < D; j++ {
		row := zy.RawRowView(j)
		for c := range row {
			row[c] -= z1[j] * mean[c]
		}
	}
	return &system{g: g, r: zy, a: zte, mean: mean, nTrain: nTrain}, nil
}

// trainWeight is the weight sum of a fold's training rows train (weights
// wtr, nil: unweighted, the row count), from solvers.CheckWeights, whose
// error (all weights zero, say) names the fold's row count.
func trainWeight(wtr []float64, train []int) (float64, error) {
	sum, err := solvers.CheckWeights(wtr, len(train))
	if err != nil {
		return 0, fmt.Errorf("tune: a fold's %d training rows: %w", len(train), err)
	}
	return sum, nil
}

// eigPath diagonalises the system once (G = U diag(s) U^T; G is
// overwritten by U): every lambda then costs one small product,
// A diag(1/(s+c)) (U^T R) with A U formed once.
func (sy *system) eigPath(be backend.Backend) (*path, error) {
	r, _ := sy.g.Dims()
	s := make([]float64, r)
	if err := be.SymEig(sy.g.RawMatrix(), s, true); err != nil {
		return nil, err
	}
	clampEig(s)
	_, k := sy.r.Dims()
	ne, _ := sy.a.Dims()
	b := mat.NewDense(r, k, nil)
	be.Gemm(blas.Trans, blas.NoTrans, 1, sy.g.RawMatrix(), sy.r.RawMatrix(), 0, b.RawMatrix())
	a := mat.NewDense(ne, r, nil)
	be.Gemm(blas.NoTrans, blas.NoTrans, 1, sy.a.RawMatrix(), sy.g.RawMatrix(), 0, a.RawMatrix())
	return &path{a: a, s: s, b: b, mean: sy.mean, nTrain: sy.nTrain}, nil
}

// directPath solves the system by one Cholesky factorisation per lambda
// (what the solvers do), for backends whose eigendecomposition costs more
// than the lambdas' factorisations together (see Search's Solver).
type directPath struct {
	sy      *system
	l, w    *mat.Dense
	meanDia float64
}

func (sy *system) directPath() *directPath {
	r, _ := sy.g.Dims()
	_, k := sy.r.Dims()
	d := &directPath{sy: sy, l: mat.NewDense(r, r, nil), w: mat.NewDense(r, k, nil)}
	for i := 0; i < r; i++ {
		d.meanDia += sy.g.At(i, i) / float64(r)
	}
	if d.meanDia <= 0 {
		d.meanDia = 1
	}
	return d
}

// predict factors G + c I (retrying with an added jitter of 1e-12 .. 1e-4
// times the mean diagonal, as the solvers do when c is below the rounding
// level of G), solves for W and writes 1 mean^T + A W to dst.
func (d *directPath) predict(be backend.Backend, dst *mat.Dense, lambda float64) error {
	c := lambda * float64(d.sy.nTrain)
	r, _ := d.sy.g.Dims()
	var err error
	for attempt := 0; attempt < 6; attempt++ {
		jit := 0.0
		if attempt > 0 {
			jit = d.meanDia * math.Pow(10, float64(-14+2*attempt))
		}
		d.l.Copy(d.sy.g)
		for i := 0; i < r; i++ {
			d.l.Set(i, i, d.l.At(i, i)+c+jit)
		}
		if err = be.Cholesky(d.l.RawMatrix()); err == nil {
			break
		}
	}
	if err != nil {
		return err
	}
	d.w.Copy(d.sy.r)
	be.CholSolve(d.l.RawMatrix(), d.w.RawMatrix())
	ne, _ := dst.Dims()
	for i := 0; i < ne; i++ {
		copy(dst.RawRowView(i), d.sy.mean)
	}
	be.Gemm(blas.NoTrans, blas.NoTrans, 1, d.sy.a.RawMatrix(), d.w.RawMatrix(), 1, dst.RawMatrix())
	return nil
}

const (
	blasNoTrans = blas.NoTrans
	blasTrans   = blas.Trans
)

// mulRightInPlace overwrites z (n x D) with z u (u D x D), 256 rows at a time.
func mulRightInPlace(be backend.Backend, z, u *mat.Dense) {
	n, D := z.Dims()
	bs := min(n, 256)
	tmp := mat.NewDense(bs, D, nil)
	for i0 := 0; i0 < n; i0 += bs {
		i1 := min(i0+bs, n)
		zb := z.Slice(i0, i1, 0, D).(*mat.Dense)
		tb := tmp.Slice(0, i1-i0, 0, D).(*mat.Dense)
		be.Gemm(blasNoTrans, blasNoTrans, 1, zb.RawMatrix(), u.RawMatrix(), 0, tb.RawMatrix())
		zb.Copy(tb)
	}
}

// featureStats are the full-data sums a ridge fold system is built from:
// G = Z^T Z, ZY = Z^T Y and Z1 = Z^T 1 over all n rows; with the row
// weights w (nil: unweighted) G = Z^T W Z, ZY = Z^T W Y and Z1 = Z^T w.
type featureStats struct {
	z, g, zy *mat.Dense
	z1       []float64
	w        []float64
}

func newFeatureStats(be backend.Backend, z, t *mat.Dense, w []float64) *featureStats {
	n, D := z.Dims()
	_, k := t.Dims()
	fs := &featureStats{z: z, g: mat.NewDense(D, D, nil), zy: mat.NewDense(D, k, nil), z1: make([]float64, D), w: w}
	if w == nil {
		be.Syrk(blas.Trans, 1, z.RawMatrix(), 0, fs.g.RawMatrix())
		be.Gemm(blas.Trans, blas.NoTrans, 1, z.RawMatrix(), t.RawMatrix(), 0, fs.zy.RawMatrix())
	} else {
		// In blocks of 256 rows: D_b Z_b for the Gram, W_b Y_b for Z^T W Y.
		bs := min(n, 256)
		zs, ys := mat.NewDense(bs, D, nil), mat.NewDense(bs, k, nil)
		sw := sqrtOf(w)
		for i0 := 0; i0 < n; i0 += bs {
			i1 := min(i0+bs, n)
			zb := zs.Slice(0, i1-i0, 0, D).(*mat.Dense)
			yb := ys.Slice(0, i1-i0, 0, k).(*mat.Dense)
			zb.Copy(z.Slice(i0, i1, 0, D))
			yb.Copy(t.Slice(i0, i1, 0, k))
			scaleRowsBy(zb, sw[i0:i1])
			scaleRowsBy(yb, w[i0:i1])
			be.Syrk(blas.Trans, 1, zb.RawMatrix(), 1, fs.g.RawMatrix())
			be.Gemm(blas.Trans, blas.NoTrans, 1, z.Slice(i0, i1, 0, D).(*mat.Dense).RawMatrix(), yb.RawMatrix(), 1, fs.zy.RawMatrix())
		}
	}
	for i := 0; i < n; i++ {
		wi := 1.0
		if w != nil {
			wi = w[i]
		}
		for j, v := range z.RawRowView(i) {
			fs.z1[j] += wi * v
		}
	}
	return fs
}
