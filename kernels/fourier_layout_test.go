package kernels

import (
	"encoding/binary"
	"math"
	"sync/atomic"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal/backend"
	"github.com/zonal-ml/zonal/dataset"
)

// oldFourier is FourierMap.Transform as it was before the frequencies were
// kept by input coordinate: one backend Gemm X W^T with W the m x d
// frequencies (here rebuilt from W^T), the reference of the tests below.
func oldFourier(t *testing.T, f *FourierMap, x *mat.Dense) *mat.Dense {
	t.Helper()
	n, _ := x.Dims()
	w := blas64.General{Rows: f.m, Cols: f.d, Stride: f.d, Data: transposed(f.wt, f.d, f.m)}
	ph := blas64.General{Rows: n, Cols: f.m, Stride: f.m, Data: make([]float64, n*f.m)}
	f.b.Gemm(blas.NoTrans, blas.Trans, 1, x.RawMatrix(), w, 0, ph)
	z := mat.NewDense(n, f.Dim(), nil)
	c := 1 / math.Sqrt(float64(f.m))
	for i := 0; i < n; i++ {
		for k := 0; k < f.m; k++ {
			sn, cs := math.Sincos(ph.Data[i*f.m+k])
			z.Set(i, 2*k, c*cs)
			z.Set(i, 2*k+1, c*sn)
		}
	}
	return z
}

// fourierTol is the bound of FourierMap.Transform's doc for two
// evaluations of feature (i, j) whose phases are summed in different
// orders: each phase is within gamma_d sum_l |x_il w_kl| of the exact one
// (any order of a d-term float64 sum, gamma_d = d u/(1-d u), u = 2^-53),
// so the two within twice that; cos and sin are 1-Lipschitz and the
// features carry the factor m^{-1/2}; plus 4 ulps of m^{-1/2} for the
// rounding of the sine or cosine and of the product with m^{-1/2} in each.
func fourierTol(f *FourierMap, x *mat.Dense) func(i, j int) float64 {
	const u = 0x1p-53
	g := float64(f.d) * u / (1 - float64(f.d)*u)
	c := 1 / math.Sqrt(float64(f.m))
	return func(i, j int) float64 {
		k := j / 2
		s := 0.0
		for l := 0; l < f.d; l++ {
			s += math.Abs(x.At(i, l) * f.wt[l*f.m+k])
		}
		return c*2*g*s + 4*u*c
	}
}

// within reports entries of got farther than tol from want; it returns the
// largest difference seen.
func within(t *testing.T, name string, got, want *mat.Dense, tol func(i, j int) float64) float64 {
	t.Helper()
	n, D := want.Dims()
	worst, bad := 0.0, 0
	for i := 0; i < n; i++ {
		for j := 0; j < D; j++ {
			e := math.Abs(got.At(i, j) - want.At(i, j))
			worst = math.Max(worst, e)
			if !(e <= tol(i, j)) {
				if bad++; bad <= 3 {
					t.Errorf("%s: feature (%d,%d) = %v, want %v within %.3g", name, i, j, got.At(i, j), want.At(i, j), tol(i, j))
				}
			}
		}
	}
	return worst
}

// sameBits reports entries of got that are not want's, bit for bit.
func sameBits(t *testing.T, name string, got, want *mat.Dense) {
	t.Helper()
	n, D := want.Dims()
	bad := 0
	for i := 0; i < n; i++ {
		for j := 0; j < D; j++ {
			if math.Float64bits(got.At(i, j)) != math.Float64bits(want.At(i, j)) && got.At(i, j) != want.At(i, j) {
				if bad++; bad <= 3 {
					t.Errorf("%s: feature (%d,%d) = %v, want %v exactly", name, i, j, got.At(i, j), want.At(i, j))
				}
			}
		}
	}
}

// TestFourierLayout: with the frequencies kept as W^T, the features of a
// few dense rows (axpys of the rows of W^T), of many (a GEMM) and of CSR
// rows agree with the old layout's Gemm within fourierTol; a row of a block
// of at most 32 rows is the row transformed alone bit for bit, and so is
// the row as CSR; in a block of more rows it is within fourierTol. The data
// are 60% zeros, with whole zero rows, for the three kernel settings.
func TestFourierLayout(t *testing.T) {
	const n, d = 100, 301
	xs, xd := sparseData(11, n, d, 0.4, 2.5)
	for _, c := range []struct {
		k    Kernel
		orth bool
	}{{Gaussian{Sigma: 1.3}, false}, {Gaussian{Sigma: 0.9}, true}, {Laplacian{Sigma: 2}, false}} {
		f, err := NewFourierMap(c.k, d, FourierOptions{Features: 90, Orthogonal: c.orth, Seed: 4})
		if err != nil {
			t.Fatal(err)
		}
		name := f.String()
		old := oldFourier(t, f, xd)
		tol := fourierTol(f, xd)
		big := transform(t, f, xd) // 100 rows: the GEMM path
		worst := within(t, name+" 100-row block", big, old, tol)
		small := xd.Slice(0, fourierScatterRows, 0, d).(*mat.Dense)
		zsmall := transform(t, f, small) // 32 rows: the axpy path
		worst = math.Max(worst, within(t, name+" 32-row block", zsmall, old.Slice(0, fourierScatterRows, 0, f.Dim()).(*mat.Dense), tol))
		t.Logf("%s: largest difference from the old layout %.3g", name, worst)
		for _, i := range []int{0, 3, 17, 31} {
			one := transform(t, f, xd.Slice(i, i+1, 0, d).(*mat.Dense))
			sameBits(t, name+" row alone vs 32-row block", one, zsmall.Slice(i, i+1, 0, f.Dim()).(*mat.Dense))
			rowTol := func(_, j int) float64 { return tol(i, j) }
			within(t, name+" row alone vs 100-row block", one, big.Slice(i, i+1, 0, f.Dim()).(*mat.Dense), rowTol)
			sp, err := dataset.SelectRows(xs, []int{i})
			if err != nil {
				t.Fatal(err)
			}
			zsp := mat.NewDense(1, f.Dim(), nil)
			if err := f.Transform(zsp, sp); err != nil {
				t.Fatal(err)
			}
			sameBits(t, name+" CSR row vs dense row", zsp, one)
		}
		zs := mat.NewDense(n, f.Dim(), nil)
		if err := f.Transform(zs, xs); err != nil {
			t.Fatal(err)
		}
		within(t, name+" CSR 100 rows", zs, old, tol)
		sameBits(t, name+" CSR 32 rows vs dense 32 rows", zs.Slice(0, fourierScatterRows, 0, f.Dim()).(*mat.Dense), zsmall)
	}
}

// axpyCounter counts the floats of W^T that AxpySlice reads (its x
// argument) and the Gemm calls, to check which rows of W^T a transform
// reads.
type axpyCounter struct {
	backend.Backend
	floats, gemm atomic.Int64
}

func (c *axpyCounter) AxpySlice(alpha float64, x, y []float64) {
	c.floats.Add(int64(len(x)))
	backend.AxpySlice(c.Backend, alpha, x, y)
}

func (c *axpyCounter) Gemm(ta, tb blas.Transpose, alpha float64, a, b blas64.General, beta float64, dst blas64.General) {
	c.gemm.Add(1)
	c.Backend.Gemm(ta, tb, alpha, a, b, beta, dst)
}

// TestFourierReadsNonzeros: one dense row reads nnz(x) m frequencies
// (one row of W^T per nonzero input) and no Gemm; a block of up to 32 rows
// reads the rows of W^T of their nonzeros; a CSR row reads one row of W^T
// per stored entry; more than 32 rows take the Gemm.
func TestFourierReadsNonzeros(t *testing.T) {
	const n, d = 40, 30
	xs, xd := sparseData(5, n, d, 0.25, 1)
	cb := &axpyCounter{Backend: backend.Default()}
	f, err := NewFourierMap(Gaussian{Sigma: 1}, d, FourierOptions{Options: Options{Backend: cb}, Features: 64, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 8; i++ {
		nnz := 0
		for l := 0; l < d; l++ {
			if xd.At(i, l) != 0 {
				nnz++
			}
		}
		cb.floats.Store(0)
		transform(t, f, xd.Slice(i, i+1, 0, d).(*mat.Dense))
		if got, want := cb.floats.Load(), int64(nnz*f.m); got != want {
			t.Errorf("dense row %d (%d nonzeros): %d frequencies read, want %d", i, nnz, got, want)
		}
		sp, err := dataset.SelectRows(xs, []int{i})
		if err != nil {
			t.Fatal(err)
		}
		cb.floats.Store(0)
		if err := f.Transform(mat.NewDense(1, f.Dim(), nil), sp); err != nil {
			t.Fatal(err)
		}
		if got, want := cb.floats.Load(), int64(nnz*f.m); got != want {
			t.Errorf("CSR row %d (%d entries): %d frequencies read, want %d", i, nnz, got, want)
		}
	}
	if cb.gemm.Load() != 0 {
		t.Errorf("single rows took %d Gemm calls, want 0", cb.gemm.Load())
	}
	transform(t, f, xd)
	if cb.gemm.Load() == 0 {
		t.Errorf("a %d-row block did not use the Gemm", n)
	}
}

// TestFourierFileLayout: MarshalBinary writes the frequencies m x d, row k
// being omega_k, whatever the layout in memory: a phase computed from the
// encoding's rows gives the feature Transform gives, within fourierTol; the
// decoded map transforms bit for bit as the original and encodes to the
// same bytes.
func TestFourierFileLayout(t *testing.T) {
	const n, d = 6, 9
	_, xd := sparseData(2, n, d, 0.5, 1)
	f, err := NewFourierMap(Gaussian{Sigma: 0.7}, d, FourierOptions{Features: 20, Seed: 9})
	if err != nil {
		t.Fatal(err)
	}
	enc, err := f.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	wb := enc[len(enc)-8*f.m*d:]
	want := mat.NewDense(n, f.Dim(), nil)
	c := 1 / math.Sqrt(float64(f.m))
	for i := 0; i < n; i++ {
		for k := 0; k < f.m; k++ {
			p := 0.0
			for l := 0; l < d; l++ {
				p += xd.At(i, l) * math.Float64frombits(binary.LittleEndian.Uint64(wb[8*(k*d+l):]))
			}
			want.Set(i, 2*k, c*math.Cos(p))
			want.Set(i, 2*k+1, c*math.Sin(p))
		}
	}
	z := transform(t, f, xd)
	within(t, "features from the encoded m x d rows", z, want, fourierTol(f, xd))
	g, err := decodeFourier(enc)
	if err != nil {
		t.Fatal(err)
	}
	sameBits(t, "decoded map", transform(t, g, xd), z)
	enc2, _ := g.(*FourierMap).MarshalBinary()
	if string(enc2) != string(enc) {
		t.Error("the decoded map encodes to other bytes")
	}
}
