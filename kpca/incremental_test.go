package kpca

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/backend"
	"github.com/zonal-ml/zonal/kernels"
)

// Tolerances. The updates must give eigenvalues equal to a batch
// eigendecomposition to 1e-10 relative to the largest; a backward-stable
// rank-one update loses O(n eps |M|) per update, i.e. ~1e-13 for the n <= 60
// used here after all updates, so 1e-10 has three orders of margin while
// still failing on any real error (a skipped point or a wrong term changes
// eigenvalues at the 1e-3..1 level).
const eigTol = 1e-10

func randPoints(seed uint64, n, d int, scale float64) *mat.Dense {
	rng := newRand(seed)
	x := mat.NewDense(n, d, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < d; j++ {
			x.Set(i, j, scale*rng.NormFloat64())
		}
	}
	return x
}

func gaussian(t testing.TB, sigma float64) kernels.Kernel {
	t.Helper()
	k, err := kernels.NewGaussian(sigma)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// batchEig returns the eigenvalues (descending) and eigenvectors of the
// symmetric m through gonum's own EigenSym (independent of the backend).
func batchEig(t testing.TB, m *mat.Dense) ([]float64, *mat.Dense) {
	t.Helper()
	n, _ := m.Dims()
	sym := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			sym.SetSym(i, j, 0.5*(m.At(i, j)+m.At(j, i)))
		}
	}
	var es mat.EigenSym
	if !es.Factorize(sym, true) {
		t.Fatal("EigenSym failed")
	}
	w := es.Values(nil)
	var v mat.Dense
	es.VectorsTo(&v)
	vals := make([]float64, n)
	vecs := mat.NewDense(n, n, nil)
	for j := 0; j < n; j++ {
		vals[j] = w[n-1-j]
		for i := 0; i < n; i++ {
			vecs.Set(i, j, v.At(i, n-1-j))
		}
	}
	return vals, vecs
}

// compareEigen checks eigenvalues (to eigTol relative to the largest) and, for
// every group of eigenvalues separated from the rest of the spectrum by a gap
// delta >= 1e-6 lambda_max, the subspace: by Davis-Kahan, sin of the largest
// principal angle is at most |E|/delta for a backward error E; with
// |E| <= eigTol lambda_max we require |(I - P_batch) U_inc|_F <=
// 4 sqrt(|group|) eigTol lambda_max / delta (the Frobenius norm bounds the
// largest sine from above, so this is a stricter check).
//
// scale is lambda_max of the matrix, or for a mean-adjusted matrix the larger
// of lambda_max(K') and lambda_max(K): K' is formed from K by subtractions
// that carry absolute rounding eps |K| (in batch as well), so when K' is tiny
// against K (nearly constant kernels) accuracy relative to K' is not defined.
func compareEigen(t *testing.T, ctx string, vals []float64, vecs *mat.Dense, bvals []float64, bvecs *mat.Dense, scale float64) {
	t.Helper()
	r := len(vals)
	lmax := scale
	for _, v := range bvals {
		lmax = math.Max(lmax, math.Abs(v))
	}
	if lmax == 0 {
		lmax = 1
	}
	for j := 0; j < r; j++ {
		if d := math.Abs(vals[j] - bvals[j]); d > eigTol*lmax {
			t.Fatalf("%s: eigenvalue %d: incremental %.17g batch %.17g (diff %.3g > %.3g)", ctx, j, vals[j], bvals[j], d, eigTol*lmax)
		}
	}
	n, _ := bvecs.Dims()
	// Groups over the batch spectrum (descending).
	start := 0
	for start < r {
		end := start + 1
		for end < n && bvals[end-1]-bvals[end] < 1e-6*lmax {
			end++
		}
		if end > r { // group straddles the truncation: not comparable
			break
		}
		delta := math.Inf(1)
		if start > 0 {
			delta = bvals[start-1] - bvals[start]
		}
		if end < n {
			delta = math.Min(delta, bvals[end-1]-bvals[end])
		}
		if delta >= 1e-6*lmax && !math.IsInf(delta, 1) {
			// (I - Pb) Ui = Ui - Vb (Vb^T Ui)
			ui := vecs.Slice(0, n, start, end)
			vb := bvecs.Slice(0, n, start, end)
			var c, res mat.Dense
			c.Mul(vb.T(), ui)
			res.Mul(vb, &c)
			res.Sub(ui, &res)
			s := mat.Norm(&res, 2)
			bound := 4 * math.Sqrt(float64(end-start)) * eigTol * lmax / delta
			if s > bound {
				t.Fatalf("%s: eigenvectors %d..%d: |(I-P)U|_F = %.3g > %.3g (gap %.3g)", ctx, start, end-1, s, bound, delta)
			}
		}
		start = end
	}
}

// centredBatch returns H K H computed directly from the definition.
func centredBatch(k *mat.Dense) *mat.Dense {
	n, _ := k.Dims()
	h := mat.NewDense(n, n, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			v := -1 / float64(n)
			if i == j {
				v++
			}
			h.Set(i, j, v)
		}
	}
	var t1, out mat.Dense
	t1.Mul(h, k)
	out.Mul(&t1, h)
	return &out
}

func kernelMatrix(t testing.TB, k kernels.Kernel, x *mat.Dense) *mat.Dense {
	t.Helper()
	n, d := x.Dims()
	out := mat.NewDense(n, n, nil)
	xi := make([]float64, d)
	xj := make([]float64, d)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			mat.Row(xi, i, x)
			mat.Row(xj, j, x)
			out.Set(i, j, k.Eval(xi, xj))
		}
	}
	return out
}

// TestBorderTerms: diag(M, c) + sum rho v v^T == [M b; b^T kappa] exactly up to
// rounding (entries of size <= 1, a handful of flops each: 1e-14 absolute).
func TestBorderTerms(t *testing.T) {
	rng := newRand(3)
	for _, m := range []int{0, 1, 2, 7, 30} {
		for _, kappa := range []float64{1, 1e-8, 0, -0.5} {
			for _, bscale := range []float64{1, 1e-6, 0} {
				b := make([]float64, m)
				for i := range b {
					b[i] = bscale * rng.NormFloat64()
				}
				c, terms := borderTerms(b, kappa)
				got := mat.NewDense(m+1, m+1, nil)
				got.Set(m, m, c)
				for _, tm := range terms {
					for i := 0; i <= m; i++ {
						for j := 0; j <= m; j++ {
							got.Set(i, j, got.At(i, j)+tm.rho*tm.v[i]*tm.v[j])
						}
					}
				}
				for i := 0; i <= m; i++ {
					for j := 0; j <= m; j++ {
						want := 0.0
						switch {
						case i == m && j == m:
							want = kappa
						case i == m:
							want = b[j]
						case j == m:
							want = b[i]
						}
						if math.Abs(got.At(i, j)-want) > 1e-14 {
							t.Fatalf("m=%d kappa=%g bscale=%g: entry (%d,%d) = %g, want %g", m, kappa, bscale, i, j, got.At(i, j), want)
						}
					}
				}
				if len(terms) != 0 && len(terms) != 2 {
					t.Fatalf("%d terms", len(terms))
				}
			}
		}
	}
}

// TestHelmertTermsReproduceBatch: [K'_m 0; 0 0] + c h h^T plus the two
// rank-one terms of the package documentation give H_{m+1} K_{m+1} H_{m+1}
// computed directly from its definition, and h is a unit vector orthogonal
// to 1 and to [1; 0]'s complement in 1^perp. Kernel entries are <= 1, the
// terms are O(|b| + sqrt(m)); rounding is ~ m eps, so 1e-12 absolute is safe
// and a wrong sign or a missing 1/n factor shows at the 1e-2 level.
func TestHelmertTermsReproduceBatch(t *testing.T) {
	k := gaussian(t, 1.5)
	x := randPoints(5, 25, 3, 1)
	full := kernelMatrix(t, k, x)
	for m := 1; m < 25; m++ {
		km := mat.DenseCopyOf(full.Slice(0, m, 0, m))
		rowSum := make([]float64, m)
		total := 0.0
		for i := 0; i < m; i++ {
			for j := 0; j < m; j++ {
				rowSum[i] += km.At(i, j)
			}
			total += rowSum[i]
		}
		a := make([]float64, m)
		for i := range a {
			a[i] = full.At(i, m)
		}
		c, h, terms := helmertTerms(rowSum, total, a, full.At(m, m))
		if len(terms) != 2 || len(h) != m+1 {
			t.Fatalf("m=%d: %d terms, len(h) %d; want 2 and %d", m, len(terms), len(h), m+1)
		}
		sh, hh := 0.0, 0.0
		for _, v := range h {
			sh += v
			hh += v * v
		}
		if math.Abs(sh) > 1e-14*float64(m) || math.Abs(hh-1) > 1e-14*float64(m) {
			t.Fatalf("m=%d: 1^T h = %g, |h|^2 = %g", m, sh, hh)
		}
		cm := centredBatch(km)
		got := mat.NewDense(m+1, m+1, nil)
		got.Slice(0, m, 0, m).(*mat.Dense).Copy(cm)
		for i := 0; i <= m; i++ {
			for j := 0; j <= m; j++ {
				got.Set(i, j, got.At(i, j)+c*h[i]*h[j])
			}
		}
		for _, tm := range terms {
			for i := 0; i <= m; i++ {
				for j := 0; j <= m; j++ {
					got.Set(i, j, got.At(i, j)+tm.rho*tm.v[i]*tm.v[j])
				}
			}
		}
		want := centredBatch(mat.DenseCopyOf(full.Slice(0, m+1, 0, m+1)))
		var diff mat.Dense
		diff.Sub(got, want)
		if d := mat.Norm(&diff, math.Inf(1)); d > 1e-12 {
			t.Fatalf("m=%d: |assembled - batch centred|_max-row = %g", m, d)
		}
	}
}

type incCase struct {
	name string
	x    *mat.Dense
	k    kernels.Kernel
}

func adversarialCases(t *testing.T) []incCase {
	n := 40
	if testing.Short() {
		n = 24
	}
	cases := []incCase{{"random", randPoints(1, n, 4, 1), gaussian(t, 2)}}
	// Duplicates: every point repeated (exactly singular K, equal eigenvalues).
	base := randPoints(2, n/2, 3, 1)
	dup := mat.NewDense(n, 3, nil)
	for i := 0; i < n; i++ {
		dup.SetRow(i, base.RawRowView(i/2))
	}
	cases = append(cases, incCase{"duplicates", dup, gaussian(t, 1)})
	// Far away: some points 1e3 away from everything (kernel values underflow
	// to 0 or are tiny), and a cluster at moderate distance (tiny values).
	far := randPoints(3, n, 3, 1)
	for i := 0; i < n; i += 3 {
		far.Set(i, 0, far.At(i, 0)+1e3*float64(i+1))
	}
	for i := 1; i < n; i += 5 {
		far.Set(i, 1, far.At(i, 1)+9)
	}
	cases = append(cases, incCase{"far", far, gaussian(t, 1)})
	// Numerically rank deficient: a wide Gaussian on clustered points, the
	// spectrum falls below eps * lambda_max after a few eigenvalues.
	cases = append(cases, incCase{"rankdeficient", randPoints(4, n, 2, 0.05), gaussian(t, 10)})
	// A handful of exactly equal points at the very start (first matrix all ones).
	same := randPoints(6, n, 2, 1)
	for i := 1; i < 4; i++ {
		same.SetRow(i, same.RawRowView(0))
	}
	cases = append(cases, incCase{"equal-start", same, gaussian(t, 1)})
	return cases
}

// rankOf is the number of eigenpairs a full decomposition of m points holds:
// m, or m-1 with mean adjustment (the null vector 1/sqrt(m) is not held).
func rankOf(m int, mean bool) int {
	if mean {
		return m - 1
	}
	return m
}

// TestIncrementalMatchesBatch: after every single Add, with and without mean
// adjustment, the held eigenpairs equal a batch eigendecomposition of the
// same matrix, the reconstruction and orthogonality drift stay at rounding
// level, and no point is skipped.
func TestIncrementalMatchesBatch(t *testing.T) {
	for _, b := range backends(t) {
		for _, tc := range adversarialCases(t) {
			for _, mean := range []bool{false, true} {
				name := fmt.Sprintf("%s/%s/mean=%v", b.Name(), tc.name, mean)
				t.Run(name, func(t *testing.T) {
					n, d := tc.x.Dims()
					inc, err := NewIncremental(tc.k, d, Options{MeanAdjust: mean, Backend: b})
					if err != nil {
						t.Fatal(err)
					}
					full := kernelMatrix(t, tc.k, tc.x)
					for i := 0; i < n; i++ {
						if err := inc.Add(tc.x.RawRowView(i)); err != nil {
							t.Fatalf("point %d: %v", i, err)
						}
						m := i + 1
						want := mat.DenseCopyOf(full.Slice(0, m, 0, m))
						scale := mat.Norm(want, 2)
						if mean {
							want = centredBatch(want)
						}
						// The matrix being decomposed is the batch one.
						var diff mat.Dense
						diff.Sub(inc.Matrix(), want)
						if dd := mat.Norm(&diff, math.Inf(1)); dd > 1e-12 {
							t.Fatalf("point %d: stored matrix differs from batch by %g", i, dd)
						}
						vals, vecs := inc.Eigen()
						if len(vals) != rankOf(m, mean) {
							t.Fatalf("point %d: %d eigenvalues, want %d (point skipped?)", i, len(vals), rankOf(m, mean))
						}
						if mean {
							// The held vectors span 1^perp: |1^T U|/sqrt(m)
							// is rounding (m eps), 1e-12 leaves margin.
							for j := 0; j < len(vals); j++ {
								if sum := mat.Sum(vecs.ColView(j)); math.Abs(sum) > 1e-12*math.Sqrt(float64(m)) {
									t.Fatalf("point %d: eigenvector %d has 1^T u = %g", i, j, sum)
								}
							}
						}
						bv, bvec := batchEig(t, want)
						compareEigen(t, fmt.Sprintf("point %d", i), vals, vecs, bv, bvec, scale)
						// Drift: 1e-12 leaves ~2 orders above the observed
						// rounding (m * eps * number of updates); relative
						// to |K| rather than |K'| for the reason given at
						// compareEigen.
						dr := inc.Drift()
						rel := dr.RelRecon * mat.Norm(want, 2) / math.Max(mat.Norm(want, 2), scale)
						if rel > 1e-12 || dr.Orth > 1e-12 {
							t.Fatalf("point %d: drift %+v", i, dr)
						}
					}
					st := inc.Stats()
					if inc.Len() != n || inc.Rank() != rankOf(n, mean) {
						t.Fatalf("stats %+v, len %d, rank %d", st, inc.Len(), inc.Rank())
					}
					// One bordered update per point, except the first point
					// of a mean-adjusted decomposition (K'_1 = 0, nothing to
					// update).
					if st.Bordered > n || st.Bordered < n-1 {
						t.Fatalf("%d bordered updates for %d points", st.Bordered, n)
					}
				})
			}
		}
	}
}

// backends returns every compiled-in backend.
func backends(t testing.TB) []backend.Backend {
	var out []backend.Backend
	for _, name := range backend.Names() {
		b, err := backend.ByName(name)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	return out
}

// TestInitThenAdd: a batch start of m0 points followed by Adds equals the
// batch decomposition of all points.
func TestInitThenAdd(t *testing.T) {
	x := randPoints(8, 30, 3, 1)
	k := gaussian(t, 1.3)
	for _, mean := range []bool{false, true} {
		inc, _ := NewIncremental(k, 3, Options{MeanAdjust: mean})
		if err := inc.Init(context.Background(), x.Slice(0, 10, 0, 3)); err != nil {
			t.Fatal(err)
		}
		if err := inc.AddRows(context.Background(), x.Slice(10, 30, 0, 3)); err != nil {
			t.Fatal(err)
		}
		want := kernelMatrix(t, k, x)
		if mean {
			want = centredBatch(want)
		}
		vals, vecs := inc.Eigen()
		bv, bvec := batchEig(t, want)
		compareEigen(t, fmt.Sprintf("mean=%v", mean), vals, vecs, bv, bvec, 0)
	}
}

// TestTruncated: with Components = r the held pairs approximate the batch top
// r. With r >= n the result is the exact one; with r < n on a fast-decaying
// spectrum the top eigenvalues agree to within the discarded mass, and the
// drift reported can never beat the batch truncation error.
func TestTruncated(t *testing.T) {
	x := randPoints(9, 40, 2, 0.3)
	k := gaussian(t, 1)
	full := kernelMatrix(t, k, x)
	for _, mean := range []bool{false, true} {
		want := full
		if mean {
			want = centredBatch(full)
		}
		bv, bvec := batchEig(t, want)
		// r >= n: exact.
		inc, _ := NewIncremental(k, 2, Options{MeanAdjust: mean, Components: 40})
		if err := inc.AddRows(context.Background(), x); err != nil {
			t.Fatal(err)
		}
		vals, vecs := inc.Eigen()
		compareEigen(t, "r=n", vals, vecs, bv, bvec, 0)

		const r = 8
		inc, _ = NewIncremental(k, 2, Options{MeanAdjust: mean, Components: r})
		if err := inc.AddRows(context.Background(), x); err != nil {
			t.Fatal(err)
		}
		vals, _ = inc.Eigen()
		if len(vals) != r || inc.Rank() != r || inc.Len() != 40 {
			t.Fatalf("rank %d len %d", inc.Rank(), inc.Len())
		}
		// The documented error: |M - U Lambda U^T|_F <= TruncationBound, and
		// never below the batch truncation error. Weyl: each kept eigenvalue
		// is within the spectral norm of the error of the batch one.
		normM := mat.Norm(want, 2)
		bound := inc.TruncationBound()
		for j := 0; j < r; j++ {
			if d := math.Abs(vals[j] - bv[j]); d > bound+1e-12 {
				t.Fatalf("mean=%v: eigenvalue %d: %g vs %g (bound %g)", mean, j, vals[j], bv[j], bound)
			}
		}
		dr := inc.Drift()
		batchTrunc := 0.0
		for _, v := range bv[r:] {
			batchTrunc += v * v
		}
		batchTrunc = math.Sqrt(batchTrunc) / normM
		if dr.RelRecon < batchTrunc*(1-1e-6) {
			t.Fatalf("truncated drift %g below the batch truncation error %g", dr.RelRecon, batchTrunc)
		}
		if dr.RelRecon > bound/normM*(1+1e-9)+1e-12 || dr.Orth > 1e-12 {
			t.Fatalf("mean=%v: truncated drift %+v above the bound %g (batch truncation %g)", mean, dr, bound/normM, batchTrunc)
		}
		// On this fast-decaying spectrum the accumulated error stays within
		// a small factor of the batch truncation error.
		if dr.RelRecon > 20*batchTrunc {
			t.Fatalf("mean=%v: truncated drift %g vs batch truncation %g", mean, dr.RelRecon, batchTrunc)
		}
		t.Logf("mean=%v: truncated drift %.3g, bound %.3g, batch truncation %.3g", mean, dr.RelRecon, bound/normM, batchTrunc)
	}
}

// TestEstimateDriftAndReorth: the probe estimate is near the exact drift when
// the drift is nonzero, and a Rayleigh-Ritz step on a perturbed basis
// restores orthogonality and the batch eigenpairs.
func TestEstimateDriftAndReorth(t *testing.T) {
	x := randPoints(10, 30, 3, 1)
	k := gaussian(t, 1.5)
	inc, _ := NewIncremental(k, 3, Options{MeanAdjust: true})
	if err := inc.AddRows(context.Background(), x); err != nil {
		t.Fatal(err)
	}
	// Perturb U by 1e-6 noise: drift becomes ~1e-6.
	rng := newRand(11)
	u := inc.eig.u()
	for i := 0; i < u.Rows; i++ {
		for j := 0; j < u.Cols; j++ {
			u.Data[i*u.Stride+j] += 1e-6 * rng.NormFloat64()
		}
	}
	ex := inc.Drift()
	est := inc.EstimateDrift(64, 1)
	if ex.RelRecon < 1e-8 || ex.Orth < 1e-8 {
		t.Fatalf("perturbation not visible: %+v", ex)
	}
	// A 64-probe estimate of a Frobenius norm is within a factor 2 with
	// overwhelming probability (chi-squared with 64 degrees of freedom).
	if est.RelRecon < ex.RelRecon/2 || est.RelRecon > ex.RelRecon*2 {
		t.Fatalf("estimate %g vs exact %g", est.RelRecon, ex.RelRecon)
	}
	// The Frobenius estimate of U^T U - I bounds its max norm (factor 2 slack).
	if est.Orth < ex.Orth/2 {
		t.Fatalf("orth estimate %g below max norm %g", est.Orth, ex.Orth)
	}
	if err := inc.Reorthogonalize(); err != nil {
		t.Fatal(err)
	}
	after := inc.Drift()
	if after.Orth > 1e-12 || after.RelRecon > 1e-10 {
		t.Fatalf("after re-orthogonalisation: %+v", after)
	}
	if inc.Stats().Reorths != 1 {
		t.Fatalf("reorths %d", inc.Stats().Reorths)
	}
	// Adding more points keeps working after the refresh.
	if err := inc.Add([]float64{0.1, 0.2, 0.3}); err != nil {
		t.Fatal(err)
	}
	if dr := inc.Drift(); dr.RelRecon > 1e-10 || dr.Orth > 1e-12 {
		t.Fatalf("after add: %+v", dr)
	}
}

// TestPeriodicReorth: with a threshold below the rounding level every check
// re-orthogonalises, and the result still equals batch.
func TestPeriodicReorth(t *testing.T) {
	x := randPoints(12, 30, 3, 1)
	k := gaussian(t, 1.5)
	inc, _ := NewIncremental(k, 3, Options{MeanAdjust: true, ReorthThreshold: 1e-300, CheckEvery: 10})
	if err := inc.AddRows(context.Background(), x); err != nil {
		t.Fatal(err)
	}
	if got := inc.Stats().Reorths; got != 3 {
		t.Fatalf("reorths %d, want 3", got)
	}
	vals, vecs := inc.Eigen()
	bv, bvec := batchEig(t, centredBatch(kernelMatrix(t, k, x)))
	compareEigen(t, "reorth", vals, vecs, bv, bvec, 0)
}

func TestIncrementalErrors(t *testing.T) {
	k := gaussian(t, 1)
	if _, err := NewIncremental(nil, 2, Options{}); !errors.Is(err, zonal.ErrParam) {
		t.Fatalf("nil kernel: %v", err)
	}
	if _, err := NewIncremental(k, 0, Options{}); !errors.Is(err, zonal.ErrParam) {
		t.Fatalf("dim 0: %v", err)
	}
	if _, err := NewIncremental(k, 2, Options{Components: -1}); !errors.Is(err, zonal.ErrParam) {
		t.Fatalf("components -1: %v", err)
	}
	if _, err := NewIncremental(k, 2, Options{ReorthThreshold: math.NaN()}); !errors.Is(err, zonal.ErrParam) {
		t.Fatalf("NaN threshold: %v", err)
	}
	inc, _ := NewIncremental(k, 2, Options{})
	if _, err := inc.Model(0); !errors.Is(err, zonal.ErrState) {
		t.Fatalf("empty model: %v", err)
	}
	if err := inc.Add([]float64{1}); !errors.Is(err, zonal.ErrShape) {
		t.Fatalf("short point: %v", err)
	}
	if err := inc.Add([]float64{1, math.NaN()}); !errors.Is(err, zonal.ErrNonFinite) {
		t.Fatalf("NaN point: %v", err)
	}
	if err := inc.Add([]float64{math.Inf(1), 0}); !errors.Is(err, zonal.ErrNonFinite) {
		t.Fatalf("Inf point: %v", err)
	}
	if inc.Len() != 0 {
		t.Fatalf("rejected points were added: len %d", inc.Len())
	}
	if err := inc.AddRows(context.Background(), mat.NewDense(2, 3, nil)); !errors.Is(err, zonal.ErrShape) {
		t.Fatalf("AddRows width: %v", err)
	}
	if err := inc.Init(context.Background(), mat.NewDense(2, 3, nil)); !errors.Is(err, zonal.ErrShape) {
		t.Fatalf("Init width: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := inc.AddRows(ctx, mat.NewDense(2, 2, nil)); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
	calls := 0
	pinc, _ := NewIncremental(k, 2, Options{Progress: func(p zonal.Progress) {
		calls++
		if p.Stage != "points" || p.Done != calls || p.Total != 5 {
			t.Fatalf("progress %+v at call %d", p, calls)
		}
	}})
	if err := pinc.AddRows(context.Background(), randPoints(1, 5, 2, 1)); err != nil || calls != 5 {
		t.Fatalf("progress: %v, %d calls", err, calls)
	}
}

// sortedDesc is a helper for tests that need a descending copy.
func sortedDesc(v []float64) []float64 {
	out := append([]float64(nil), v...)
	sort.Sort(sort.Reverse(sort.Float64Slice(out)))
	return out
}

// TestRemove: downdating points (first, middle, last, and down to one point)
// leaves the batch eigendecomposition of the remaining points, with and
// without mean adjustment; adding afterwards still works.
func TestRemove(t *testing.T) {
	k := gaussian(t, 1.5)
	for _, b := range backends(t) {
		for _, mean := range []bool{false, true} {
			x := randPoints(41, 25, 3, 1)
			inc, _ := NewIncremental(k, 3, Options{MeanAdjust: mean, Backend: b})
			if err := inc.AddRows(context.Background(), x); err != nil {
				t.Fatal(err)
			}
			keep := make([]int, 25)
			for i := range keep {
				keep[i] = i
			}
			for _, pos := range []int{0, 11, 22, 5, 5, 0} {
				if err := inc.Remove(pos); err != nil {
					t.Fatal(err)
				}
				keep = append(keep[:pos], keep[pos+1:]...)
				rest := mat.NewDense(len(keep), 3, nil)
				for r, i := range keep {
					rest.SetRow(r, x.RawRowView(i))
				}
				want := kernelMatrix(t, k, rest)
				scale := mat.Norm(want, 2)
				if mean {
					want = centredBatch(want)
				}
				var diff mat.Dense
				diff.Sub(inc.Matrix(), want)
				if dd := mat.Norm(&diff, math.Inf(1)); dd > 1e-12 {
					t.Fatalf("%s mean=%v: stored matrix after removing %d differs by %g", b.Name(), mean, pos, dd)
				}
				vals, vecs := inc.Eigen()
				if len(vals) != rankOf(len(keep), mean) {
					t.Fatalf("%s mean=%v: %d eigenpairs after removal, want %d", b.Name(), mean, len(vals), rankOf(len(keep), mean))
				}
				bv, bvec := batchEig(t, want)
				compareEigen(t, fmt.Sprintf("%s mean=%v remove %d", b.Name(), mean, pos), vals, vecs, bv, bvec, scale)
				if dr := inc.Drift(); dr.Orth > 1e-12 {
					t.Fatalf("orthogonality after removal: %+v", dr)
				}
			}
			if err := inc.Add(x.RawRowView(0)); err != nil {
				t.Fatal(err)
			}
			if dr := inc.Drift(); dr.RelRecon > 1e-12 || dr.Orth > 1e-12 {
				t.Fatalf("after re-adding: %+v", dr)
			}
			for inc.Len() > 0 {
				if err := inc.Remove(inc.Len() - 1); err != nil {
					t.Fatal(err)
				}
			}
			if err := inc.Remove(0); !errors.Is(err, zonal.ErrRange) {
				t.Fatalf("remove from empty: %v", err)
			}
		}
	}
	tr, _ := NewIncremental(k, 3, Options{Components: 2})
	tr.Add([]float64{1, 2, 3})
	if err := tr.Remove(0); !errors.Is(err, zonal.ErrState) {
		t.Fatalf("truncated remove: %v", err)
	}
}
