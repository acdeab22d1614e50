package kernels

import (
	"context"
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/dataset"
)

// Pilot sizes of SelectTruncation: rows of the data sample, directions, and
// the largest degree and order considered.
const (
	pilotRows       = 200
	pilotDirections = 4096
	pilotMaxQ       = 12
	pilotMaxS       = 6
	pilotCheck      = 64 // directions between context checks and reports
)

// SelectOptions configures SelectTruncation.
type SelectOptions struct {
	Options
	// Seed makes the pilot sample and its directions reproducible.
	Seed uint64
}

// SelectTruncation chooses the GZK truncation (q, s) of k for random
// Gegenbauer features with D features on data like x by minimising the
// predicted expected squared relative Frobenius error on a pilot sample P of
// at most 200 rows of x:
//
//	err(q, s) = ( |K_P - K_{q,s,P}|_F^2 + (E_w |Y_w|_F^2 - |K_{q,s,P}|_F^2) / m ) / |K_P|_F^2,
//
// where m = floor(D/s) is the number of directions, Y_w = Phi_w Phi_w^T is
// the estimate of one direction (Phi_w the |P| x s features of w, unscaled),
// so the second term is the variance of the average of m independent
// directions; E_w |Y_w|_F^2 = E_w |Phi_w^T Phi_w|_F^2 is estimated with 4096
// seeded directions (P^l(<x,w>) is tiny except for rare w nearly aligned
// with x, so the second moment of high degrees is heavy-tailed: with 256
// directions it was underestimated enough to pick q = 6 instead of 3 on
// digits and q = 10 instead of 5 on spam at D = 4096). The first term (the truncation bias) is computed
// exactly. Among the (q, s) predicted within 10% of the minimum, the one with
// the smallest q (then s) is returned. q ranges over 0..12 and s over 1..6 (s = 1 for NTK and
// arc-cosine). The radius-and-tolerance rule (ChooseTruncation) controls
// the bias only; at D in the thousands the variance of high degrees
// (alpha_{l,d} grows like l^(d-2)) dominates, which this rule accounts for.
// The returned Bound is TruncationBound at the largest row norm of x. A
// *dataset.CSR x is read in place: the pilot rows stay sparse, their exact
// kernel comes from MatrixInto's sparse path and their cosines with the
// directions from sums over their entries.
//
// ctx is checked, and with opt.Progress set a report of stage "pilot" sent
// (Done of Total = 4096 directions), every 64 directions; ctx is also
// checked per row while the pilot's exact kernel matrix is formed.
//
// Errors: zonal.ErrParam (features < 1, a kernel without a GZK closed form,
// a zero pilot kernel matrix), zonal.ErrEmpty (no rows, or d < 2),
// zonal.ErrNonFinite, the errors of TruncationBound, ctx.Err().
func SelectTruncation(ctx context.Context, k Kernel, x mat.Matrix, features int, opt SelectOptions) (Truncation, error) {
	if features < 1 {
		return Truncation{}, fmt.Errorf("%w: number of features must be >= 1, got %d", zonal.ErrParam, features)
	}
	pt, err := newPilot(ctx, k, x, opt)
	if err != nil {
		return Truncation{}, err
	}
	best := math.Inf(1)
	for q := 0; q <= pt.q; q++ {
		for s := 1; s <= pt.s; s++ {
			best = math.Min(best, pt.predict(q, s, features))
		}
	}
	// The smallest degree (then order) predicted within 10% of the best:
	// one-direction estimates of high degrees are heavy-tailed (P^l(t) is
	// tiny except for rare t near +-1), so the pilot's sample second moment
	// underestimates their variance and the predicted error flattens
	// spuriously in q; preferring the smallest near-optimal truncation
	// avoids picking a high degree on that noise.
	bq, bs := pt.q, pt.s
search:
	for q := 0; q <= pt.q; q++ {
		for s := 1; s <= pt.s; s++ {
			if pt.predict(q, s, features) <= 1.1*best {
				bq, bs = q, s
				break search
			}
		}
	}
	bd, err := TruncationBound(k, pt.d, math.Sqrt(pt.maxR2), bq, bs, opt.Options)
	if err != nil {
		return Truncation{}, err
	}
	return Truncation{Q: bq, S: bs, Bound: bd}, nil
}

// pilot holds the bias and second-moment tables of SelectTruncation.
type pilot struct {
	d, q, s          int
	bias, second, kq []float64
	normK, maxR2     float64
}

// predict is the predicted E|ZZ^T - K|_F^2/|K|_F^2 on the pilot rows with
// floor(features/s) directions (+Inf when that is 0).
func (pt *pilot) predict(q, s, features int) float64 {
	m := features / s
	if m < 1 {
		return math.Inf(1)
	}
	i := q*pt.s + s - 1
	return (pt.bias[i] + math.Max(pt.second[i]-pt.kq[i], 0)/float64(m)) / pt.normK
}

func newPilot(ctx context.Context, k Kernel, x mat.Matrix, opt SelectOptions) (*pilot, error) {
	if x == nil {
		return nil, fmt.Errorf("%w: nil data", zonal.ErrEmpty)
	}
	n, d := x.Dims()
	if n == 0 || d < 2 {
		return nil, fmt.Errorf("%w: pilot data is %dx%d (need d >= 2)", zonal.ErrEmpty, n, d)
	}
	xin, err := asInput(x)
	if err != nil {
		return nil, err
	}
	maxS := pilotMaxS
	switch k.(type) {
	case NTK, ArcCosine:
		maxS = 1
	}
	gz, err := NewGZKFor(k, d, pilotMaxQ, maxS, opt.Options)
	if err != nil {
		return nil, err
	}
	rng := newRand(opt.Seed, 5)
	rows := rng.Perm(n)
	if len(rows) > pilotRows {
		rows = rows[:pilotRows]
	}
	p := len(rows)
	Q, S := pilotMaxQ, maxS
	xs := make([][]float64, p) // unit directions (nil for x = 0); their values when sparse
	xc := make([][]int, p)     // the columns of xs[a] when x is sparse
	h := make([][]float64, p)  // radial tables (Q+1)*S
	kk := make([]float64, p*p) // exact kernel
	// unitDot is <xs[a], xs[c]>, unitDotW <xs[a], w>: over the entries
	// (merging the sorted columns) when sparse, so the sums are those of
	// the dense rows with the zero terms left out.
	unitDot := func(a, c int) float64 { return dot(xs[a], xs[c]) }
	unitDotW := func(a int, w []float64) float64 { return dot(xs[a], w) }
	if xin.sparse {
		unitDot = func(a, c int) float64 { return dataset.SparseDot(xc[a], xs[a], xc[c], xs[c]) }
		unitDotW = func(a int, w []float64) float64 { return sparseRowDot(xc[a], xs[a], w) }
	}
	for a, r := range rows {
		var v []float64
		if xin.sparse {
			cols, vals := xin.sparseRow(r)
			xc[a], v = cols, append([]float64(nil), vals...)
		} else {
			v = append([]float64(nil), xin.g.Data[r*xin.g.Stride:r*xin.g.Stride+d]...)
		}
		nr := math.Sqrt(dot(v, v))
		h[a] = make([]float64, (Q+1)*S)
		gz.rad.eval(nr, h[a])
		if nr > 0 {
			for i := range v {
				v[i] /= nr
			}
			xs[a] = v
		}
	}
	if xin.sparse {
		// The exact kernel of the sample by MatrixInto's sparse path.
		sub, err := x.(*dataset.CSR).Subset(rows)
		if err != nil {
			return nil, err
		}
		in := input{sp: csrView(sub), sparse: true}
		if err := matrixGeneral(ctx, blas64.General{Rows: p, Cols: p, Stride: p, Data: kk}, opt.backend(), k, in, in, true, nil, nil); err != nil {
			return nil, err
		}
	} else {
		xg := xin.g
		for a := 0; a < p; a++ {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			for c := 0; c <= a; c++ {
				ra := xg.Data[rows[a]*xg.Stride : rows[a]*xg.Stride+d]
				rc := xg.Data[rows[c]*xg.Stride : rows[c]*xg.Stride+d]
				v := k.Eval(ra, rc)
				kk[a*p+c], kk[c*p+a] = v, v
			}
		}
	}
	// Bias: |K - K_{q,s}|_F^2 for every (q, s) from per-pair 2-D prefix sums.
	bias := make([]float64, (Q+1)*S)
	kq := make([]float64, (Q+1)*S) // |K_{q,s}|_F^2
	normK := 0.0
	pl := make([]float64, Q+1)
	pre := make([]float64, (Q+1)*S)
	fd := float64(d)
	for a := 0; a < p; a++ {
		for c := 0; c < p; c++ {
			normK += kk[a*p+c] * kk[a*p+c]
			lmax := Q
			t := 0.0
			if xs[a] == nil || xs[c] == nil {
				lmax = 0
			} else {
				t = clamp1(unitDot(a, c))
			}
			gegenbauerAll(pl[:lmax+1], fd, t)
			for l := 0; l <= Q; l++ {
				run := 0.0
				for j := 0; j < S; j++ {
					if l <= lmax {
						run += h[a][l*S+j] * h[c][l*S+j] * pl[l]
					}
					v := run
					if l > 0 {
						v += pre[(l-1)*S+j]
					}
					pre[l*S+j] = v
					e := kk[a*p+c] - v
					bias[l*S+j] += e * e
					kq[l*S+j] += v * v
				}
			}
		}
	}
	if !(normK > 0) {
		return nil, fmt.Errorf("%w: the pilot kernel matrix is zero", zonal.ErrParam)
	}
	// Second moment E_w |Phi_w^T Phi_w|_F^2 for every (q, s).
	second := make([]float64, (Q+1)*S)
	sqa := make([]float64, Q+1)
	for l := range sqa {
		sqa[l] = math.Exp(0.5 * LogAlpha(l, d))
	}
	w := make([]float64, d)
	phi := make([]float64, p*S) // running over q
	g := make([]float64, S*S)
	for it := 0; it < pilotDirections; it++ {
		if it%pilotCheck == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			opt.report("pilot", it, pilotDirections)
		}
		for i := range w {
			w[i] = rng.NormFloat64()
		}
		normalize(w)
		clear(phi)
		ps := make([][]float64, p)
		for a := 0; a < p; a++ {
			ps[a] = make([]float64, Q+1)
			if xs[a] == nil {
				ps[a][0] = 1
			} else {
				gegenbauerAll(ps[a], fd, clamp1(unitDotW(a, w)))
			}
		}
		for l := 0; l <= Q; l++ {
			for a := 0; a < p; a++ {
				c := sqa[l] * ps[a][l]
				for j := 0; j < S; j++ {
					phi[a*S+j] += c * h[a][l*S+j]
				}
			}
			clear(g)
			for a := 0; a < p; a++ {
				row := phi[a*S : (a+1)*S]
				for j := 0; j < S; j++ {
					for jj := 0; jj < S; jj++ {
						g[j*S+jj] += row[j] * row[jj]
					}
				}
			}
			for s := 1; s <= S; s++ {
				f := 0.0
				for j := 0; j < s; j++ {
					for jj := 0; jj < s; jj++ {
						f += g[j*S+jj] * g[j*S+jj]
					}
				}
				second[l*S+s-1] += f / pilotDirections
			}
		}
	}
	opt.report("pilot", pilotDirections, pilotDirections)
	return &pilot{d: d, q: Q, s: S, bias: bias, second: second, kq: kq, normK: normK, maxR2: maxOf(xin.sqNorms())}, nil
}

func maxOf(v []float64) float64 {
	m := 0.0
	for _, x := range v {
		m = math.Max(m, x)
	}
	return m
}
