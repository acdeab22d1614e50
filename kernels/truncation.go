package kernels

import (
	"fmt"
	"math"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/internal/budget"
)

// Truncation is a choice of GZK degree q and order s with Bound, an upper bound
// on |k(x,y) - k_{q,s}(x,y)| over all x, y with |x|, |y| <= the radius it was
// computed for (see TruncationBound).
type Truncation struct {
	Q, S  int
	Bound float64
}

// TruncationBound returns an upper bound on the absolute truncation error
// |k(x,y) - k_{q,s}(x,y)| of NewGZKFor(k, d, q, s, opt) for |x|, |y| <= radius.
// Since |P_d^l| <= 1 on [-1, 1], the error is at most the sum of the dropped
// terms with P = 1:
//
//   - Gaussian: with z = |x||y|/sigma^2 <= R^2/sigma^2 and
//     e^{-(|x|^2+|y|^2)/(2 sigma^2)} <= e^{-z}, the bound is
//     max_{z' <= z} e^{-z'} sum_{l > q or j >= s} alpha_l Gamma(d/2) (z'/2)^(2j+l) / (j! Gamma(j+l+d/2)),
//     the maximum taken over the grid z' = z k/16, k = 1..16 (the dropped mass
//     grows with z', so the maximum is at z' = z in every case we have seen);
//     terms of total degree 2j+l > z + 10 sqrt(z) + 40 are omitted (their
//     e^{-z}-weighted sum is below 1e-20);
//   - dot-product kernels: sum over dropped (l, j) of c_{l+2j} b_{l+2j,l} R^(2(l+2j))
//     (exact for polynomials; for ExpDot the terms of degree above
//     3R^2/sigma^2 + 60 are omitted, their sum being below 1e-20 e^{R^2/sigma^2});
//   - NTK / ArcCosine: (kappa(1) - sum_{l<=q} c_l) R^2 (R^0 for order 0), exact
//     up to quadrature error because every c_l >= 0 and sum_l c_l = kappa(1).
//
// opt is used only for the quadrature of NTK and arc-cosine coefficients.
//
// Errors: zonal.ErrParam for d < 2, a negative or non-finite radius, q or s
// out of range, a kernel without a GZK expansion (a GZK with user radial
// functions has no bound); those of SeriesCoeffs.
func TruncationBound(k Kernel, d int, radius float64, q, s int, opt Options) (float64, error) {
	tb, err := newTailTable(k, d, radius, q, opt)
	if err != nil {
		return 0, err
	}
	if err := checkDQS(d, q, s); err != nil {
		return 0, err
	}
	return tb.bound(q, s), nil
}

// ChooseTruncation returns the truncation with the smallest order s, and for
// that s the smallest degree q, whose bound (TruncationBound) is at most tol,
// searching q <= maxQ and s <= maxS. When no such pair exists it returns
// (maxQ, maxS) and its bound, which is then larger than tol: callers compare
// Bound with tol. NTK and ArcCosine always get s = 1. opt is used as in
// TruncationBound.
//
// Errors: zonal.ErrParam for tol not positive and finite, maxQ < 0,
// maxS < 1, and the errors of TruncationBound.
func ChooseTruncation(k Kernel, d int, radius, tol float64, maxQ, maxS int, opt Options) (Truncation, error) {
	if !(tol > 0) || math.IsInf(tol, 0) {
		return Truncation{}, fmt.Errorf("%w: truncation tolerance must be positive, got %g", zonal.ErrParam, tol)
	}
	if maxQ < 0 || maxS < 1 {
		return Truncation{}, fmt.Errorf("%w: maxQ must be >= 0 and maxS >= 1, got %d, %d", zonal.ErrParam, maxQ, maxS)
	}
	if err := checkDQS(d, maxQ, maxS); err != nil {
		return Truncation{}, err
	}
	switch k.(type) {
	case NTK, ArcCosine:
		maxS = 1
	}
	tb, err := newTailTable(k, d, radius, maxQ, opt)
	if err != nil {
		return Truncation{}, err
	}
	for s := 1; s <= maxS; s++ {
		if tb.bound(maxQ, s) > tol {
			continue
		}
		// The bound does not increase with q: bisect for the smallest q.
		lo, hi := -1, maxQ // bound(hi) <= tol; lo is infeasible or -1
		for hi-lo > 1 {
			mid := (lo + hi) / 2
			if tb.bound(mid, s) <= tol {
				hi = mid
			} else {
				lo = mid
			}
		}
		return Truncation{Q: hi, S: s, Bound: tb.bound(hi, s)}, nil
	}
	return Truncation{Q: maxQ, S: maxS, Bound: tb.bound(maxQ, maxS)}, nil
}

// tailTable holds, for one or more radii z, the non-negative terms t[l][j]
// whose sum over dropped (l, j) bounds the truncation error.
type tailTable struct {
	tables [][][]float64 // per grid point: t[l][j]
	suffix [][][]float64 // per grid point: sum_{j>=s} t[l][j]
	homog  []float64     // NTK/arc-cosine: c_l * R^deg, and total
	total  float64
}

func newTailTable(k Kernel, d int, radius float64, maxQ int, opt Options) (*tailTable, error) {
	if d < 2 {
		return nil, fmt.Errorf("%w: dimension d must be >= 2, got %d", zonal.ErrParam, d)
	}
	if !(radius >= 0) || math.IsInf(radius, 0) {
		return nil, fmt.Errorf("%w: radius must be finite and >= 0, got %g", zonal.ErrParam, radius)
	}
	fd := float64(d)
	switch kk := k.(type) {
	case Gaussian:
		z := radius * radius / (kk.Sigma * kk.Sigma)
		// The tables hold about (n/2)^2 terms per grid point with
		// n ~ z + 10 sqrt(z): they grow like (R/sigma)^4, so check them
		// against the budget before building anything (and before n can
		// overflow an int).
		need := 0.0
		for g := 1; g <= 16; g++ {
			zg := z * float64(g) / 16
			need += tailTableBytes(math.Ceil(zg+10*math.Sqrt(zg)) + 40)
		}
		if err := checkTailTable(need, radius, "sigma", kk.Sigma, opt); err != nil {
			return nil, err
		}
		tb := &tailTable{}
		nmax := int(math.Ceil(z+10*math.Sqrt(z))) + 40
		// log-gamma tables: la[l] = log alpha_l, lf[j] = log j!,
		// lg[i] = log Gamma(i + d/2).
		la, lf, lg := make([]float64, nmax+1), make([]float64, nmax+1), make([]float64, nmax+1)
		for i := range la {
			la[i], lf[i], lg[i] = LogAlpha(i, d), lgamma(float64(i+1)), lgamma(float64(i)+fd/2)
		}
		lg0 := lgamma(fd / 2)
		for g := 1; g <= 16; g++ {
			zg := z * float64(g) / 16
			n := int(math.Ceil(zg+10*math.Sqrt(zg))) + 40
			lz := math.Log(zg / 2)
			t := make([][]float64, n+1)
			for l := 0; l <= n; l++ {
				t[l] = make([]float64, (n-l)/2+1)
				for j := range t[l] {
					lt := la[l] + lg0 - lf[j] - lg[j+l] - zg
					if e := 2*j + l; e > 0 {
						lt += float64(e) * lz
					}
					t[l][j] = math.Exp(lt)
				}
			}
			tb.tables = append(tb.tables, t)
		}
		return tb.finish(), nil
	case taylorKernel:
		z := radius * radius
		n := kk.maxDegree()
		if n < 0 {
			y := z
			if e, ok := kk.(ExpDot); ok {
				y = z / (e.Sigma * e.Sigma)
			}
			sc := 1.0
			if e, ok := kk.(ExpDot); ok {
				sc = e.Sigma
			}
			if err := checkTailTable(tailTableBytes(math.Ceil(3*y)+60), radius, "sigma", sc, opt); err != nil {
				return nil, err
			}
			n = int(math.Ceil(3*y)) + 60
		}
		t := make([][]float64, n+1)
		for l := 0; l <= n; l++ {
			t[l] = make([]float64, (n-l)/2+1)
			for j := range t[l] {
				nn := l + 2*j
				lt := math.Log(kk.Taylor(nn)) + logMonomialCoeff(nn, l, d)
				if nn > 0 {
					lt += float64(nn) * math.Log(z)
				}
				t[l][j] = math.Exp(lt)
			}
		}
		return (&tailTable{tables: [][][]float64{t}}).finish(), nil
	case NTK, ArcCosine:
		c, err := zonalCoeffs(k, d, maxQ, opt)
		if err != nil {
			return nil, err
		}
		scale, total := radius*radius, 1.0
		if nt, ok := kk.(NTK); ok {
			total = float64(nt.Depth + 1)
		} else if kk.(ArcCosine).Order == 0 {
			scale = 1
		}
		tb := &tailTable{homog: make([]float64, len(c)), total: total * scale}
		for l := range c {
			tb.homog[l] = math.Max(c[l], 0) * scale
		}
		return tb, nil
	case *GZK:
		return nil, fmt.Errorf("%w: no truncation bound for a GZK with user radial functions", zonal.ErrParam)
	}
	return nil, fmt.Errorf("%w: no GZK expansion for %v", zonal.ErrParam, k)
}

// tailTableBytes is the memory of one term table and its suffix sums for
// degrees up to n: about (n+1)(n/2+2) float64 values each, plus the row
// headers.
func tailTableBytes(n float64) float64 {
	return 2*8*(n+1)*(n/2+2) + 2*24*(n+1)
}

// checkTailTable refuses truncation tables that do not fit the memory budget,
// saying that the data's radius is too large for the bandwidth.
func checkTailTable(need, radius float64, name string, scale float64, opt Options) error {
	bytes := int64(math.MaxInt64)
	if need < math.MaxInt64 {
		bytes = int64(need)
	}
	what := fmt.Sprintf("the Gegenbauer truncation table for data of radius %.4g = %.4g x %s (it grows like (radius/%s)^4; standardize the data or use a larger %s)",
		radius, radius/scale, name, name, name)
	return budget.Check(what, bytes, opt.MemoryBudget)
}

func (tb *tailTable) bound(q, s int) float64 {
	if tb.homog != nil {
		kept := 0.0
		for l := 0; l <= q && l < len(tb.homog); l++ {
			kept += tb.homog[l]
		}
		return math.Max(tb.total-kept, 0)
	}
	worst := 0.0
	for _, suf := range tb.suffix {
		sum := 0.0
		for l := len(suf) - 1; l >= 0; l-- {
			if l > q {
				sum += suf[l][0]
			} else if s < len(suf[l]) {
				sum += suf[l][s]
			}
		}
		worst = math.Max(worst, sum)
	}
	return worst
}

// finish replaces the term tables by suffix sums suf[l][s] = sum_{j>=s} t[l][j],
// summed from the small end for accuracy.
func (tb *tailTable) finish() *tailTable {
	for _, t := range tb.tables {
		suf := make([][]float64, len(t))
		for l, row := range t {
			suf[l] = make([]float64, len(row)+1)
			for j := len(row) - 1; j >= 0; j-- {
				suf[l][j] = suf[l][j+1] + row[j]
			}
		}
		tb.suffix = append(tb.suffix, suf)
	}
	tb.tables = nil
	return tb
}
