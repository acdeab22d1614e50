package solvers

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/backend"
	"github.com/zonal-ml/zonal/dataset"
	"github.com/zonal-ml/zonal/internal/shareddata"
	"github.com/zonal-ml/zonal/kernels"
)

// labelAgreement returns the fraction of rows on which two predictions
// have the same argmax, and the accuracy of each against labels.
func labelAgreement(p64, p32 *mat.Dense, labels []int) (agree, acc64, acc32 float64) {
	l64, l32 := argmaxRows(p64), argmaxRows(p32)
	var a, c64, c32 int
	for i := range l64 {
		if l64[i] == l32[i] {
			a++
		}
		if l64[i] == labels[i] {
			c64++
		}
		if l32[i] == labels[i] {
			c32++
		}
	}
	n := float64(len(l64))
	return float64(a) / n, float64(c64) / n, float64(c32) / n
}

// TestRidgeFloat32MNIST: on the MNIST test set split 8000 / 2000 (pixels
// scaled to [0, 1]), ridge on 1000 random Fourier features of a Gaussian
// kernel (sigma 5, lambda 1e-5) fitted in float32 predicts the float64
// fit's label on at least 99.9% of the 2000 held-out rows (at most 2 rows
// differ), so the accuracies differ by at most 0.1 points; and the same
// for a Nystrom map of 500 landmarks (float32 kernel blocks).
func TestRidgeFloat32MNIST(t *testing.T) {
	path := shareddata.File(t, "mnist_test.csv.gz")
	data, err := dataset.ReadFile(path, dataset.Options{})
	if err != nil {
		t.Fatal(err)
	}
	const ntr, nte = 8000, 2000
	d := data.X.RawMatrix().Cols
	x := mat.DenseCopyOf(data.X.Slice(0, ntr+nte, 0, d))
	x.Scale(1.0/255, x)
	enc, err := NewEncoding(data.Y[:ntr], TaskClassification)
	if err != nil {
		t.Fatal(err)
	}
	y, err := enc.Targets(data.Y[:ntr])
	if err != nil {
		t.Fatal(err)
	}
	labels := make([]int, nte)
	for i := range labels {
		labels[i] = int(data.Y[ntr+i])
	}
	xtr := x.Slice(0, ntr, 0, d).(*mat.Dense)
	xte := x.Slice(ntr, ntr+nte, 0, d).(*mat.Dense)
	k := kernels.Gaussian{Sigma: 5}
	fm, err := kernels.NewFourierMap(k, d, kernels.FourierOptions{Features: 1000, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ny, err := kernels.NewNystrom(ctx, k, xtr, kernels.NystromOptions{Landmarks: 500, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []kernels.FeatureMap{fm, ny} {
		r64, err := FitRidge(ctx, m, xtr, y, 1e-5, RidgeOptions{})
		if err != nil {
			t.Fatal(err)
		}
		r32, err := FitRidge(ctx, m, xtr, y, 1e-5, RidgeOptions{Precision: zonal.Float32})
		if err != nil {
			t.Fatal(err)
		}
		if r32.Precision() != zonal.Float32 || r64.Precision() != zonal.Float64 {
			t.Fatalf("precisions %v, %v", r32.Precision(), r64.Precision())
		}
		p64, p32 := predictAll(t, r64, xte), predictAll(t, r32, xte)
		agree, a64, a32 := labelAgreement(p64, p32, labels)
		t.Logf("%v: labels agree on %.4f of %d test rows; accuracy float64 %.4f, float32 %.4f; relative RMS difference of outputs %.3g",
			m, agree, nte, a64, a32, relRMSDiff(p32, p64))
		if agree < 0.999 {
			t.Errorf("%v: float32 and float64 ridge agree on %.4f of the labels, want >= 0.999", m, agree)
		}
		if math.Abs(a64-a32) > 0.001 {
			t.Errorf("%v: accuracy %.4f in float32, %.4f in float64: want within 0.001", m, a32, a64)
		}
		if relRMSDiff(p32, p64) == 0 {
			t.Errorf("%v: float32 ridge predicts exactly as float64: no float32 arithmetic?", m)
		}
	}
}

// synthMap32 is a feature map with float32-exact features (integers up
// to 2^12 in magnitude times 2^-10), so that their products (integers up
// to 2^24 times 2^-20) are exact in float32 and the only error of the
// float32 Gram is the accumulation's.
type synthMap32 struct{ d, D int }

func (s synthMap32) InputDim() int { return s.d }
func (s synthMap32) Dim() int      { return s.D }
func (s synthMap32) Transform(dst *mat.Dense, x mat.Matrix) error {
	n, _ := x.Dims()
	for i := 0; i < n; i++ {
		for j := 0; j < s.D; j++ {
			v := math.Sin(float64(j+1)*x.At(i, 0) + x.At(i, j%s.d))
			dst.Set(i, j, math.Round(v*4*1024)/1024)
		}
	}
	return nil
}

// TestRidgeFloat32Gram: the float32 block step of FitRidge accumulates
// Z^T Z and Z^T y within the bound RidgeOptions documents: on n = 5000
// rows in blocks of bs = 1024, each entry of Z^T Z is within
// (gamma_bs + u) S_ij + nblocks 2^-53 S_ij of the exact sum, where S_ij =
// sum_r |z_ri z_rj|, gamma_bs = bs u / (1 - bs u) (the float32 block sum,
// worst case) and u the rounding of the block's result; the features are
// exact in float32 (synthMap32), so the exact sum is the float64 one
// (exact too: sums of 5000 such products stay below 2^53 units of 2^-20).
// Z^T y (y rounded to float32) has the same bound with S the sum of
// |z_ri y_r|. The measured error is logged; it must not be zero (that
// would mean no float32 accumulation ran).
func TestRidgeFloat32Gram(t *testing.T) {
	const n, d, D, bs = 5000, 3, 40, ridgeBlock32
	x, y := synth(n, d, 81)
	fm := synthMap32{d, D}
	z := mat.NewDense(n, D, nil)
	if err := fm.Transform(z, x); err != nil {
		t.Fatal(err)
	}
	var want mat.Dense
	want.Mul(z.T(), z)
	// y's rounding to float32 is part of the float32 path: use a float32 y.
	for i := 0; i < n; i++ {
		y.Set(i, 0, float64(float32(y.At(i, 0))))
	}
	var wantY mat.Dense
	wantY.Mul(z.T(), y)
	for _, be := range backendsUnderTest(t) {
		ztz, zty := mat.NewDense(D, D, nil), mat.NewDense(D, 1, nil)
		step := ridgeBlockFloat32(be, fm, y, nil, ztz, zty, bs)
		blocks := 0
		for i0 := 0; i0 < n; i0 += bs {
			if err := step(x, i0, min(i0+bs, n)); err != nil {
				t.Fatal(err)
			}
			blocks++
		}
		const u = 0x1p-24
		gamma := bs * u / (1 - bs*u)
		worst, typical := 0.0, 0.0
		for i := 0; i < D; i++ {
			for j := 0; j < D; j++ {
				s := 0.0
				for r := 0; r < n; r++ {
					s += math.Abs(z.At(r, i) * z.At(r, j))
				}
				e := math.Abs(ztz.At(i, j) - want.At(i, j))
				if bound := (gamma+u)*s + float64(blocks)*0x1p-53*s; e > bound {
					t.Fatalf("%s: Z^T Z [%d,%d] error %.3g > bound %.3g", be.Name(), i, j, e, bound)
				}
				worst = max(worst, e/s)
				typical += e / s / (D * D)
			}
			sy := 0.0
			for r := 0; r < n; r++ {
				sy += math.Abs(z.At(r, i) * y.At(r, 0))
			}
			if e := math.Abs(zty.At(i, 0) - wantY.At(i, 0)); e > (gamma+u)*sy+float64(blocks)*0x1p-53*sy {
				t.Fatalf("%s: Z^T y [%d] error %.3g, bound %.3g", be.Name(), i, e, (gamma+u)*sy)
			}
		}
		t.Logf("%s: Z^T Z error relative to sum |z_ri z_rj|: largest %.3g, mean %.3g (worst-case bound %.3g)", be.Name(), worst, typical, gamma+u)
		if worst == 0 {
			t.Errorf("%s: float32 Gram exact to the last bit: no float32 accumulation?", be.Name())
		}
	}
}

// backendsUnderTest returns every compiled backend.
func backendsUnderTest(t *testing.T) []backend.Backend {
	t.Helper()
	var out []backend.Backend
	for _, name := range backend.Names() {
		be, err := backend.ByName(name)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, be)
	}
	return out
}

// TestRidgeFloat32Budget: the float32 block entries count 4 bytes, so a
// budget that leaves float64 ridge blocks of 256 rows gives float32 blocks
// of more rows (fewer "features" reports); a budget below the float32
// sums' 12 D (D + k) bytes is refused with ErrTooLarge; an unknown
// precision is ErrParam.
func TestRidgeFloat32Budget(t *testing.T) {
	const n, d, D = 3000, 4, 64
	x, y := synth(n, d, 91)
	fm, err := kernels.NewFourierMap(kernels.Gaussian{Sigma: 1}, d, kernels.FourierOptions{Features: D, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	limit := int64(8*D*(D+1) + 8*D*256)
	blocks := func(p zonal.Precision) int {
		total := 0
		opts := RidgeOptions{Options: Options{MemoryBudget: limit, Progress: func(pr zonal.Progress) {
			if pr.Stage == "features" {
				total = pr.Total
			}
		}}, Precision: p}
		if _, err := FitRidge(ctx, fm, x, y, 1e-3, opts); err != nil {
			t.Fatalf("%v: %v", p, err)
		}
		return total
	}
	b64, b32 := blocks(zonal.Float64), blocks(zonal.Float32)
	// float64: 256-row blocks, 12 of them. float32: the sums take 4 D (D+1)
	// more and a row 4 (D+1) bytes: (8 D 256 - 4 D (D+1)) / (4 (D+1)) = 440
	// rows, 7 blocks.
	if b64 != (n+255)/256 || b32 >= b64 {
		t.Errorf("blocks: %d in float64 (want %d), %d in float32 (want fewer)", b64, (n+255)/256, b32)
	}
	t.Logf("same budget: %d float64 blocks, %d float32 blocks", b64, b32)
	if _, err := FitRidge(ctx, fm, x, y, 1e-3, RidgeOptions{Options: Options{MemoryBudget: 12 * D * (D + 1)}, Precision: zonal.Float32}); !errors.Is(err, zonal.ErrTooLarge) {
		t.Errorf("tiny budget: %v, want ErrTooLarge", err)
	}
	if _, err := FitRidge(ctx, fm, x, y, 1e-3, RidgeOptions{Precision: 5}); !errors.Is(err, zonal.ErrParam) {
		t.Errorf("precision 5: %v, want ErrParam", err)
	}
}

// TestRidgeFloat32SparseAndSmallBatches: a float32 ridge model fitted on a
// CSR gives the model fitted on the same rows dense to float32 rounding of
// the features (relative RMS 1e-5), predicts CSR rows as their dense form,
// and its small batches (<= 32 rows, the no-allocation path) agree with a
// large batch bit for bit (both widen the same float32 features; only the
// float64 product's order can differ, within 1e-12).
func TestRidgeFloat32SparseAndSmallBatches(t *testing.T) {
	const n, d = 700, 30
	rng := rand.New(rand.NewPCG(5, 5))
	xd := mat.NewDense(n, d, nil)
	y := mat.NewDense(n, 1, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < d; j++ {
			if rng.Float64() < 0.2 {
				xd.Set(i, j, rng.NormFloat64())
			}
		}
		y.Set(i, 0, math.Sin(xd.At(i, 0))+xd.At(i, 1))
	}
	xs := dataset.NewCSRFromDense(xd)
	fm, err := kernels.NewFourierMap(kernels.Gaussian{Sigma: 2}, d, kernels.FourierOptions{Features: 200, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	o := RidgeOptions{Precision: zonal.Float32}
	rd, err := FitRidge(ctx, fm, xd, y, 1e-4, o)
	if err != nil {
		t.Fatal(err)
	}
	rs, err := FitRidge(ctx, fm, xs, y, 1e-4, o)
	if err != nil {
		t.Fatal(err)
	}
	pd, ps := predictAll(t, rd, xd), predictAll(t, rs, xs)
	if r := relRMSDiff(ps, pd); r > 1e-5 {
		t.Errorf("CSR fit vs dense fit: relative RMS %.3g > 1e-5", r)
	}
	if d := maxAbsDiff(predictAll(t, rs, xd), ps); d > 1e-5 {
		t.Errorf("CSR vs dense rows on one model: max difference %.3g", d)
	}
	// On purego the float32 features of a row are the same bits in any
	// batch (one kernel, one summation order), so only the float64 product
	// with the weights may differ: 1e-12. OpenBLAS's sgemm picks its kernel
	// by the shape (a 1-row product sums in another order than a large
	// one), so the float32 features differ by float32 rounding (6e-8
	// relative), which the weights carry into the prediction: 1e-5, as for
	// CSR against dense above.
	tol := 1e-12
	if backend.Default().Name() == "netlib" {
		tol = 1e-5
	}
	for _, bsz := range []int{1, 7, 32} {
		for i0 := 0; i0+bsz <= 100; i0 += bsz {
			small := predictAll(t, rd, xd.Slice(i0, i0+bsz, 0, d))
			for i := 0; i < bsz; i++ {
				if e := math.Abs(small.At(i, 0) - pd.At(i0+i, 0)); e > tol*(1+math.Abs(pd.At(i0+i, 0))) {
					t.Fatalf("batch of %d at row %d: %v, large batch %v", bsz, i0+i, small.At(i, 0), pd.At(i0+i, 0))
				}
			}
		}
	}
}

// TestRidgeFloat32SaveLoad: a float32 ridge model (Fourier and Nystrom
// maps) survives a model file with its precision, and the loaded model
// predicts bit for bit as the fitted one, on dense and CSR rows; a float64
// model loads as float64. (TestFloat32ModelFile checks the format versions
// and refuses corrupt precision sections, for ridge too.)
func TestRidgeFloat32SaveLoad(t *testing.T) {
	x, y := synth(500, 3, 95)
	xt, _ := synth(120, 3, 96)
	xs := dataset.NewCSRFromDense(xt)
	ctx := context.Background()
	fm, err := kernels.NewFourierMap(kernels.Gaussian{Sigma: 1.2}, 3, kernels.FourierOptions{Features: 100, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	ny, err := kernels.NewNystrom(ctx, kernels.Gaussian{Sigma: 1.2}, x, kernels.NystromOptions{Landmarks: 50, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []kernels.FeatureMap{fm, ny} {
		r, err := FitRidge(ctx, m, x, y, 1e-4, RidgeOptions{Precision: zonal.Float32})
		if err != nil {
			t.Fatal(err)
		}
		loaded := roundTrip(t, r)
		lr, ok := loaded.(*Ridge)
		if !ok || lr.Precision() != zonal.Float32 {
			t.Fatalf("%v: loaded %T, not a float32 *Ridge", m, loaded)
		}
		for _, in := range []mat.Matrix{xt, xs} {
			if d := maxAbsDiff(predictAll(t, lr, in), predictAll(t, r, in)); d != 0 {
				t.Errorf("%v %T: loaded float32 model predicts differently (max %g)", m, in, d)
			}
		}
		r64, err := FitRidge(ctx, m, x, y, 1e-4, RidgeOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if q := roundTrip(t, r64).(*Ridge); q.Precision() != zonal.Float64 {
			t.Errorf("%v: float64 model loads as %v", m, q.Precision())
		}
	}
}
