package tensorsketch

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal/backend"
	"github.com/zonal-ml/zonal/dataset"
	"github.com/zonal-ml/zonal/kernels"
)

// randCSR returns an n x d CSR matrix whose entries are nonzero with
// probability density, N(0, 1/(d density)) so that E|x|^2 = 1.
func randCSR(n, d int, density float64, seed uint64) *dataset.CSR {
	rng := rand.New(rand.NewPCG(seed, 2))
	c := &dataset.CSR{Rows: n, Cols: d, RowPtr: make([]int, n+1)}
	sc := 1 / math.Sqrt(float64(d)*density)
	for i := 0; i < n; i++ {
		for j := 0; j < d; j++ {
			if density >= 1 || rng.Float64() < density {
				c.Col = append(c.Col, j)
				c.Val = append(c.Val, sc*rng.NormFloat64())
			}
		}
		c.RowPtr[i+1] = len(c.Val)
	}
	return c
}

// BenchmarkRowSamplerDensity times one level of the RowSampler (s = 1024
// draws of rows of Phi (lambda I)^{-1/2}, plus the PolySketches of the
// points it needs) on synthetic CSR data with the same n = 2000 and
// d = 2000 at densities 1%, 5%, 25% and 100%, and reports ns per stored
// nonzero of the augmented input (ns/nnz). Linear-in-nnz cost means a flat
// ns/nnz; d is large enough that even at 1% a row holds 20 nonzeros, more
// than the t = 16 per-point terms of the n poly(s) part of the cost. L is SupportSample: with L = 256 every prefix holding more than
// 256 points is estimated from 256 sampled points (the near-input-sparsity
// configuration); L = 2048 is the default, which computes more prefixes
// exactly and grows faster than nnz on dense data.
func BenchmarkRowSamplerDensity(b *testing.B) {
	const n, d, s = 2000, 2000, 1024
	for _, L := range []int{256, 2048} {
		for _, p := range []int{2, 3} {
			for _, density := range []float64{0.01, 0.05, 0.25, 1} {
				x := randCSR(n, d, density, 1)
				b.Run(fmt.Sprintf("L=%d/degree=%d/density=%g", L, p, density), func(b *testing.B) {
					r, err := toRows(x, -1, 0, "", nil)
					if err != nil {
						b.Fatal(err)
					}
					e, _ := polyExpansion(kernels.Polynomial{Degree: p, Gamma: 1, Coef0: 1})
					xr, om := e.prepare(r)
					o := AdaptiveOptions{Samples: s, Lambda: 1, Seed: 1, SupportSample: L}
					if err := o.defaults(); err != nil {
						b.Fatal(err)
					}
					b.ResetTimer()
					for i := 0; i < b.N; i++ {
						sm, err := newRowSampler(context.Background(), xr, om, e, o)
						if err != nil {
							b.Fatal(err)
						}
						sm.rng = rand.New(rand.NewPCG(1, uint64(i)))
						sm.seed = uint64(i)
						W, _ := ridgeFactor(o.Backend, nil, n, 0, o.Projections, 1, sm.rng)
						if _, _, _, err := sm.sampleLevel(W, func(float64) int { return s }); err != nil {
							b.Fatal(err)
						}
					}
					b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(xr.nnz()), "ns/nnz")
				})
			}
		}
	}
}

// BenchmarkAdaptiveVsRLSNystrom times the whole recursive sampler
// (FitAdaptive) and recursive-ridge-leverage-score Nystrom
// (kernels.NewNystrom with SamplingRLS) on 1000 digits for the kernel (<x,y>/16 + 1)^2
// (pixels scaled to [0,1]) at lambda = 0.1, and reports eps_lambda of each
// map so times can be compared at (about) equal accuracy: D is chosen per
// method so that the two reach similar eps_lambda.
func BenchmarkAdaptiveVsRLSNystrom(b *testing.B) {
	const n, lambda = 1000, 0.1
	x := digitsSample(b, n)
	k := kernels.Polynomial{Degree: 2, Gamma: 1.0 / 16, Coef0: 1}
	kk, err := kernels.NewPolynomial(2, 1.0/16, 1)
	if err != nil {
		b.Fatal(err)
	}
	bk := backend.Default()
	K := mat.NewDense(n, n, nil)
	if err := kernels.MatrixInto(context.Background(), K, kk, x, x, kernels.Options{Backend: bk}); err != nil {
		b.Fatal(err)
	}
	eps := func(z *mat.Dense) float64 {
		v, err := kernels.EpsLambda(context.Background(), K, z, lambda, kernels.Options{Backend: bk})
		if err != nil {
			b.Fatal(err)
		}
		return v
	}
	for _, D := range []int{512, 2048} {
		b.Run(fmt.Sprintf("adaptive/D=%d", D), func(b *testing.B) {
			var z *mat.Dense
			for i := 0; i < b.N; i++ {
				ad, err := FitAdaptive(context.Background(), x, k, AdaptiveOptions{Samples: D, Lambda: lambda, Seed: uint64(i + 1), Options: Options{Backend: bk}})
				if err != nil {
					b.Fatal(err)
				}
				z = mat.NewDense(n, ad.Dim(), nil)
				if err := ad.Transform(z, x); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			_, c := z.Dims()
			b.ReportMetric(eps(z), "eps_lambda")
			b.ReportMetric(float64(c), "features")
		})
	}
	for _, m := range []int{100, 200, 400} {
		b.Run(fmt.Sprintf("rls-nystrom/m=%d", m), func(b *testing.B) {
			var z *mat.Dense
			for i := 0; i < b.N; i++ {
				ny, err := kernels.NewNystrom(context.Background(), kk, x, kernels.NystromOptions{Options: kernels.Options{Backend: bk}, Landmarks: m, Sampling: kernels.SamplingRLS, Lambda: lambda, Seed: uint64(i + 1)})
				if err != nil {
					b.Fatal(err)
				}
				z = mat.NewDense(n, ny.Dim(), nil)
				if err := ny.Transform(z, x); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			b.ReportMetric(eps(z), "eps_lambda")
			b.ReportMetric(float64(m), "features")
		})
	}
}

// BenchmarkTransform times the oblivious sketches per point (CSR input,
// 5% density, d = 1000) for the degree-3 polynomial kernel.
func BenchmarkTransform(b *testing.B) {
	x := randCSR(1000, 1000, 0.05, 3)
	k := kernels.Polynomial{Degree: 3, Gamma: 1, Coef0: 1}
	ts, _ := NewTensorSketch(k, 1000, SketchOptions{Features: 1024, Seed: 1})
	ps, _ := NewPolySketch(k, 1000, SketchOptions{Features: 1024, Seed: 1})
	for _, f := range []featureMap{ts, ps} {
		b.Run(f.Kind(), func(b *testing.B) {
			z := mat.NewDense(1000, f.Dim(), nil)
			for i := 0; i < b.N; i++ {
				if err := f.Transform(z, x); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
