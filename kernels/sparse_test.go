package kernels

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/dataset"
	"github.com/zonal-ml/zonal/internal/shareddata"
	"github.com/zonal-ml/zonal/internal/testctx"
)

// sparseData returns an n x d matrix with each entry non-zero with
// probability density (values uniform in [-scale, scale]), every fifth row
// empty, as a CSR and dense.
func sparseData(seed uint64, n, d int, density, scale float64) (*dataset.CSR, *mat.Dense) {
	rng := rand.New(rand.NewPCG(seed, 9))
	x := mat.NewDense(n, d, nil)
	for i := 0; i < n; i++ {
		if i%5 == 3 {
			continue
		}
		for j := 0; j < d; j++ {
			if rng.Float64() < density {
				x.Set(i, j, scale*(2*rng.Float64()-1))
			}
		}
	}
	return dataset.NewCSRFromDense(x), x
}

// inverseQuadratic is a kernel of this package's tests without a sparse
// form: MatrixInto evaluates it on densified rows.
type inverseQuadratic struct{}

func (inverseQuadratic) Eval(x, y []float64) float64 {
	s := 0.0
	for i := range x {
		t := x[i] - y[i]
		s += t * t
	}
	return 1 / (1 + s)
}
func (inverseQuadratic) Kind() string                   { return "invquad" }
func (inverseQuadratic) String() string                 { return "invquad" }
func (inverseQuadratic) MarshalBinary() ([]byte, error) { return nil, nil }

func sparseTestKernels(t *testing.T, d int) []Kernel {
	gz, err := NewGZKFor(Gaussian{Sigma: 1.5}, d, 4, 2, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return []Kernel{
		Gaussian{Sigma: 1.3}, Laplacian{Sigma: 2}, Polynomial{Degree: 3, Gamma: 0.5, Coef0: 1},
		ExpDot{Sigma: 2}, ArcCosine{Order: 0}, ArcCosine{Order: 1}, NTK{Depth: 2},
		DotProduct{Coef: []float64{1, 0.5, 0.25}}, gz, inverseQuadratic{},
	}
}

// mustMatrix is Matrix with default options, failing t on error.
func mustMatrix(t *testing.T, k Kernel, x, y mat.Matrix) *mat.Dense {
	t.Helper()
	m, err := Matrix(context.Background(), k, x, y, Options{})
	if err != nil {
		t.Fatalf("Matrix %v: %v", k, err)
	}
	return m
}

// mustNystrom is NewNystrom, failing t on error.
func mustNystrom(t *testing.T, k Kernel, x mat.Matrix, opt NystromOptions) *Nystrom {
	t.Helper()
	ny, err := NewNystrom(context.Background(), k, x, opt)
	if err != nil {
		t.Fatalf("NewNystrom %v: %v", k, err)
	}
	return ny
}

// closeTo reports |got - want| <= tol (1 + |want|).
func closeTo(got, want, tol float64) bool { return math.Abs(got-want) <= tol*(1+math.Abs(want)) }

// sparseTol is the tolerance of the sparse-against-dense comparisons of
// kernel values, relative to 1 + |value|: the two paths sum the same
// products in another order (the sparse sums skip the zero terms; the
// dense Gaussian expands |x-y|^2 in the backend's Gemm or GaussianBlock,
// the sparse one from the norms), a few hundred u for these O(1) inputs.
const sparseTol = 1e-12

// K(X, Y) is the same, to rounding, for every mix of dense and sparse X and
// Y, X == Y included, with and without progress reports, for every kernel
// of the package (and one evaluated pairwise).
func TestMatrixSparse(t *testing.T) {
	const d = 30
	xs, xd := sparseData(1, 37, d, 0.2, 1)
	ys, yd := sparseData(2, 150, d, 0.3, 1)
	ctx := context.Background()
	for _, k := range sparseTestKernels(t, d) {
		want, wantSame := mustMatrix(t, k, xd, yd), mustMatrix(t, k, xd, xd)
		for _, c := range []struct {
			name string
			x, y mat.Matrix
			want *mat.Dense
			opt  Options
		}{
			{"csr-dense", xs, yd, want, Options{}},
			{"dense-csr", xd, ys, want, Options{}},
			{"csr-csr", xs, ys, want, Options{}},
			{"csr-csr progress", xs, ys, want, Options{Progress: func(zonal.Progress) {}}},
			{"csr-same", xs, xs, wantSame, Options{}},
		} {
			tol := sparseTol
			switch k.(type) {
			case ArcCosine, NTK:
				// theta = arccos(<x,y>/(|x||y|)) moves by sqrt(2 u) when
				// the cosine near 1 moves by u: the dense Gemm's
				// <x,x> differs from |x|^2 in the last bit, the sparse
				// sums agree exactly.
				tol = 1e-7
			}
			got, err := Matrix(ctx, k, c.x, c.y, c.opt)
			if err != nil {
				t.Fatalf("%v %s: %v", k, c.name, err)
			}
			r, cc := got.Dims()
			for i := 0; i < r; i++ {
				for j := 0; j < cc; j++ {
					if g, w := got.At(i, j), c.want.At(i, j); !closeTo(g, w, tol) {
						t.Fatalf("%v %s: K[%d,%d] = %v, dense gives %v", k, c.name, i, j, g, w)
					}
				}
			}
		}
	}
}

// Malformed or non-finite CSR input is an error, not a panic.
func TestMatrixSparseErrors(t *testing.T) {
	xs, _ := sparseData(3, 6, 4, 0.5, 1)
	bad := *xs
	bad.Col = append([]int(nil), xs.Col...)
	bad.Col[0] = 7
	_, err := Matrix(context.Background(), Gaussian{Sigma: 1}, &bad, xs, Options{})
	if !errors.Is(err, zonal.ErrRange) {
		t.Errorf("column out of range: err = %v, want zonal.ErrRange", err)
	}
	nan := *xs
	nan.Val = append([]float64(nil), xs.Val...)
	nan.Val[1] = math.NaN()
	_, err = Matrix(context.Background(), Gaussian{Sigma: 1}, xs, &nan, Options{})
	if !errors.Is(err, zonal.ErrNonFinite) {
		t.Errorf("NaN entry: err = %v, want zonal.ErrNonFinite", err)
	}
	short := *xs
	short.RowPtr = xs.RowPtr[:3]
	ctx := context.Background()
	for name, f := range map[string]func() error{
		"NewNystrom": func() error {
			_, err := NewNystrom(ctx, Gaussian{Sigma: 1}, &short, NystromOptions{Landmarks: 2})
			return err
		},
		"RecursiveRLS": func() error { _, err := RecursiveRLS(ctx, Gaussian{Sigma: 1}, &short, 2, RLSOptions{}); return err },
		"SelectRows":   func() error { _, err := dataset.SelectRows[mat.Matrix](&short, []int{0}); return err },
		"CheckScale":   func() error { return CheckScale(Gaussian{Sigma: 1}, &short) },
		"Transform": func() error {
			f, _ := NewFourierMap(Gaussian{Sigma: 1}, 4, FourierOptions{Features: 2})
			return f.Transform(mat.NewDense(6, 2, nil), &short)
		},
	} {
		if err := f(); !errors.Is(err, zonal.ErrShape) {
			t.Errorf("%s of a CSR with a short RowPtr: err = %v, want zonal.ErrShape", name, err)
		}
	}
	if err := CheckScale(Gaussian{Sigma: 1}, &nan); !errors.Is(err, zonal.ErrNonFinite) {
		t.Errorf("CheckScale NaN entry: err = %v, want zonal.ErrNonFinite", err)
	}
}

// CheckScale gives the dense verdict on sparse input: nil on data at the
// kernel's scale, zonal.ErrParam when a tiny bandwidth makes K the
// identity, zonal.ErrNonFinite for overflowing rows.
func TestCheckScaleSparse(t *testing.T) {
	_, all := sparseData(4, 250, 20, 0.3, 1)
	xd := mat.NewDense(200, 20, nil) // without the empty rows, which coincide
	for i, r := 0, 0; r < 200; i++ {
		if i%5 != 3 {
			xd.SetRow(r, all.RawRowView(i))
			r++
		}
	}
	xs := dataset.NewCSRFromDense(xd)
	huge := mat.DenseCopyOf(xd)
	huge.Set(7, 3, 1e200)
	for _, c := range []struct {
		name string
		k    Kernel
		x    *mat.Dense
		want error
	}{
		{"ok", Gaussian{Sigma: 1}, xd, nil},
		{"ok laplacian", Laplacian{Sigma: 1}, xd, nil},
		{"tiny sigma", Gaussian{Sigma: 1e-3}, xd, zonal.ErrParam},
		{"tiny laplacian", Laplacian{Sigma: 1e-4}, xd, zonal.ErrParam},
		{"overflow", Gaussian{Sigma: 1}, huge, zonal.ErrNonFinite},
	} {
		x := mat.Matrix(xs)
		if c.x != xd {
			x = dataset.NewCSRFromDense(c.x)
		}
		dense, sparse := CheckScale(c.k, c.x), CheckScale(c.k, x)
		if !errors.Is(dense, c.want) || !errors.Is(sparse, c.want) || (c.want == nil) != (sparse == nil) {
			t.Errorf("%s: dense err = %v, sparse err = %v, want %v", c.name, dense, sparse, c.want)
		}
	}
}

// transformBoth returns f's features of x and of its CSR form.
func transformBoth(t *testing.T, f FeatureMap, xd *mat.Dense, xs *dataset.CSR) (*mat.Dense, *mat.Dense) {
	t.Helper()
	n, _ := xd.Dims()
	zd := mat.NewDense(n, f.Dim(), nil)
	zs := mat.NewDense(n, f.Dim(), nil)
	if err := f.Transform(zd, xd); err != nil {
		t.Fatal(err)
	}
	if err := f.Transform(zs, xs); err != nil {
		t.Fatal(err)
	}
	return zd, zs
}

func sameMatrix(t *testing.T, what string, got, want *mat.Dense, tol float64) {
	t.Helper()
	r, c := want.Dims()
	if gr, gc := got.Dims(); gr != r || gc != c {
		t.Fatalf("%s: %dx%d, want %dx%d", what, gr, gc, r, c)
	}
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			if g, w := got.At(i, j), want.At(i, j); !closeTo(g, w, tol) {
				t.Fatalf("%s: [%d,%d] = %v, want %v (tol %g relative to 1+|want|)", what, i, j, g, w, tol)
			}
		}
	}
}

// Fourier and Gegenbauer features of a CSR are those of its dense form to
// rounding (tolerance sparseTol: the projections sum the same products, the
// sparse ones without the zero terms), and NewGegenbauerMap picks the same
// truncation and directions from a CSR sample as from the dense one.
func TestFeatureMapsSparse(t *testing.T) {
	const d = 25
	xs, xd := sparseData(5, 90, d, 0.25, 1)
	for _, k := range []Kernel{Gaussian{Sigma: 1.2}, Laplacian{Sigma: 1.5}} {
		f, err := NewFourierMap(k, d, FourierOptions{Features: 64, Seed: 3})
		if err != nil {
			t.Fatal(err)
		}
		zd, zs := transformBoth(t, f, xd, xs)
		sameMatrix(t, fmt.Sprintf("fourier %v", k), zs, zd, sparseTol)
	}
	ctx := context.Background()
	for _, opt := range []GegenbauerOptions{
		{Features: 120, Q: 4, S: 2, Seed: 1},
		{Features: 120, Seed: 2, Antithetic: true}, // SelectTruncation's pilot on the sample
	} {
		gd, err := NewGegenbauerMap(ctx, Gaussian{Sigma: 1.5}, xd, opt)
		if err != nil {
			t.Fatal(err)
		}
		gs, err := NewGegenbauerMap(ctx, Gaussian{Sigma: 1.5}, xs, opt)
		if err != nil {
			t.Fatal(err)
		}
		if gd.Truncation().Q != gs.Truncation().Q || gd.Truncation().S != gs.Truncation().S || gd.Dim() != gs.Dim() {
			t.Fatalf("gegenbauer %+v: dense sample gives %v, sparse %v", opt, gd, gs)
		}
		zd, zs := transformBoth(t, gd, xd, xs)
		sameMatrix(t, fmt.Sprintf("gegenbauer %+v", opt), zs, zd, sparseTol)
		zd2, _ := transformBoth(t, gs, xd, xs)
		sameMatrix(t, fmt.Sprintf("gegenbauer %+v built on the CSR", opt), zd2, zd, sparseTol)
	}
}

// Nystrom maps built on a CSR (uniform and RLS landmarks) keep the
// landmarks sparse and give the features of the map built on the dense
// form, for dense and sparse x, to 1e-9 relative to 1 + |z| (K_CC^{-1/2}
// is a function of K_CC, whose entries agree to sparseTol; Gaussian
// sigma = 1.5 on these rows keeps K_CC's condition number near 1e3).
// The sparse map survives MarshalBinary (version 2) bit for bit.
func TestNystromSparse(t *testing.T) {
	const d = 30
	xs, xd := sparseData(6, 120, d, 0.3, 1)
	k := Gaussian{Sigma: 1.5}
	for _, sampling := range []string{SamplingUniform, SamplingRLS} {
		opt := NystromOptions{Landmarks: 15, Sampling: sampling, Seed: 4}
		nd, ns := mustNystrom(t, k, xd, opt), mustNystrom(t, k, xs, opt)
		if !ns.Sparse() || nd.Sparse() || nd.LandmarksCSR() != nil {
			t.Fatalf("%s: Sparse() = %v (CSR input), %v (dense input)", sampling, ns.Sparse(), nd.Sparse())
		}
		sameMatrix(t, sampling+" landmarks", ns.Landmarks(), nd.Landmarks(), 0)
		sameMatrix(t, sampling+" LandmarksCSR", ns.LandmarksCSR().ToDense(), nd.Landmarks(), 0)
		zdd, zds := transformBoth(t, nd, xd, xs)
		zsd, zss := transformBoth(t, ns, xd, xs)
		sameMatrix(t, sampling+" dense map, CSR x", zds, zdd, 1e-9)
		sameMatrix(t, sampling+" CSR map, dense x", zsd, zdd, 1e-9)
		sameMatrix(t, sampling+" CSR map, CSR x", zss, zdd, 1e-9)

		data, err := ns.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		if data[0] != 2 {
			t.Fatalf("sparse Nystrom encodes as version %d, want 2", data[0])
		}
		back, err := UnmarshalMap(ns.Kind(), data)
		if err != nil {
			t.Fatal(err)
		}
		if !back.(*Nystrom).Sparse() {
			t.Fatal("decoded map lost its sparse landmarks")
		}
		zb, _ := transformBoth(t, back, xd, xs)
		sameMatrix(t, sampling+" decoded", zb, zsd, 0)
		// Every truncation is zonal.ErrFormat; a corrupted header or index
		// is an error or a valid map, never a panic.
		for l := 0; l < len(data); l++ {
			if _, err := UnmarshalMap(ns.Kind(), data[:l]); !errors.Is(err, zonal.ErrFormat) {
				t.Fatalf("truncated to %d bytes: err = %v, want zonal.ErrFormat", l, err)
			}
		}
		for pos := 0; pos < min(len(data), 400); pos++ {
			bad := append([]byte(nil), data...)
			bad[pos] ^= 0xa5
			_, _ = UnmarshalMap(ns.Kind(), bad)
		}
	}
}

// With d = 10^6 (a CSR of 300 rows, about 50 non-zeros each), nothing
// n x d (2.4 GB) is formed: Matrix, NewNystrom (uniform and RLS),
// and the Fourier, Gegenbauer and Nystrom Transforms run under a
// MemoryBudget of 4 MiB and allocate less than 16 MiB each (0.7% of
// n*d*8; the count includes every goroutine's allocations; the column
// index of a sparse right-hand side is O(nnz), not O(d)). The maps'
// frequency and direction tables (D/2 x d) are built outside the count.
func TestSparseHighDimensionalBudget(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates d = 10^6 direction tables")
	}
	const n, d, per = 300, 1_000_000, 50
	rng := rand.New(rand.NewPCG(7, 8))
	x := &dataset.CSR{Rows: n, Cols: d, RowPtr: make([]int, n+1)}
	for i := 0; i < n; i++ {
		cols := map[int]bool{}
		for len(cols) < per {
			cols[rng.IntN(d)] = true
		}
		sorted := make([]int, 0, per)
		for c := range cols {
			sorted = append(sorted, c)
		}
		for a := 1; a < len(sorted); a++ { // insertion sort: 50 entries
			for b := a; b > 0 && sorted[b] < sorted[b-1]; b-- {
				sorted[b], sorted[b-1] = sorted[b-1], sorted[b]
			}
		}
		for _, c := range sorted {
			x.Col = append(x.Col, c)
			x.Val = append(x.Val, rng.Float64()/math.Sqrt(per))
		}
		x.RowPtr[i+1] = len(x.Col)
	}
	if err := x.Validate(); err != nil {
		t.Fatal(err)
	}
	const budgetBytes, allocLimit = 4 << 20, 16 << 20
	dense := uint64(n) * d * 8
	opt := Options{MemoryBudget: budgetBytes}
	ctx := context.Background()
	k := Gaussian{Sigma: 0.5}
	run := func(what string, f func() error) {
		t.Helper()
		var err error
		got := testctx.Allocated(func() { err = f() })
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if got > allocLimit {
			t.Fatalf("%s allocated %d bytes, limit %d (n*d*8 = %d)", what, got, allocLimit, dense)
		}
		t.Logf("%s: %d bytes allocated (n*d*8 = %d)", what, got, dense)
	}
	run("Matrix gaussian", func() error { _, err := Matrix(ctx, k, x, x, opt); return err })
	run("Matrix polynomial", func() error {
		_, err := Matrix(ctx, Polynomial{Degree: 2, Gamma: 1, Coef0: 1}, x, x, opt)
		return err
	})
	run("Matrix laplacian", func() error { _, err := Matrix(ctx, Laplacian{Sigma: 5}, x, x, opt); return err })
	var ny *Nystrom
	run("NewNystrom uniform", func() error {
		var err error
		ny, err = NewNystrom(ctx, k, x, NystromOptions{Options: opt, Landmarks: 40, Seed: 1})
		return err
	})
	run("NewNystrom rls", func() error {
		_, err := NewNystrom(ctx, k, x, NystromOptions{Options: opt, Landmarks: 40, Sampling: SamplingRLS, Seed: 1})
		return err
	})
	z := mat.NewDense(n, ny.Dim(), nil)
	run("Nystrom Transform", func() error { return ny.Transform(z, x) })

	f, err := NewFourierMap(k, d, FourierOptions{Features: 8, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	zf := mat.NewDense(n, f.Dim(), nil)
	run("Fourier Transform", func() error { return f.Transform(zf, x) })
	g, err := NewGegenbauerMap(ctx, k, x, GegenbauerOptions{Features: 8, Q: 2, S: 1, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	zg := mat.NewDense(n, g.Dim(), nil)
	run("Gegenbauer Transform", func() error { return g.Transform(zg, x) })
	// The features are those of the rows: a direct check of one Fourier
	// feature, cos <omega_0, x_0> / sqrt(m).
	cols, vals := x.Row(0)
	p := 0.0
	for q, c := range cols {
		p += vals[q] * f.wt[c*f.m]
	}
	if want := math.Cos(p) / 2; !closeTo(zf.At(0, 0), want, 1e-12) {
		t.Errorf("Fourier feature (0,0) = %v, want %v", zf.At(0, 0), want)
	}
}

// SelectRows and RowBlock keep CSR rows sparse and equal the dense
// selection; RowSqNorms agrees for both forms; bad indices are
// zonal.ErrRange.
func TestSelectRowsAndNorms(t *testing.T) {
	xs, xd := sparseData(8, 20, 7, 0.4, 1)
	idx := []int{3, 0, 19, 3}
	s, err := dataset.SelectRows[mat.Matrix](xs, idx)
	if err != nil {
		t.Fatal(err)
	}
	sc, ok := s.(*dataset.CSR)
	if !ok {
		t.Fatalf("SelectRows of a CSR returned %T", s)
	}
	d, err := dataset.SelectRows[mat.Matrix](xd, idx)
	if err != nil {
		t.Fatal(err)
	}
	sameMatrix(t, "SelectRows", sc.ToDense(), d.(*mat.Dense), 0)
	ns, nd := RowSqNorms(xs), RowSqNorms(xd)
	for i := range nd {
		// The sparse sum skips the zero terms of the same sequence: equal.
		if ns[i] != nd[i] || !closeTo(nd[i], mat.Dot(xd.RowView(i), xd.RowView(i)), 1e-14) {
			t.Fatalf("RowSqNorms[%d]: sparse %v, dense %v", i, ns[i], nd[i])
		}
	}
	for _, x := range []mat.Matrix{xs, xd, mat.Transpose{Matrix: xd.T()}} {
		blk, err := RowBlock(x, 4, 11)
		if err != nil {
			t.Fatal(err)
		}
		if sc, ok := blk.(*dataset.CSR); ok {
			blk = sc.ToDense()
		}
		if !mat.Equal(blk, xd.Slice(4, 11, 0, 7)) {
			t.Fatalf("RowBlock(%T, 4, 11) differs from the rows", x)
		}
	}
	if _, err := RowBlock(xs, 5, 5); !errors.Is(err, zonal.ErrRange) {
		t.Errorf("empty block: err = %v, want zonal.ErrRange", err)
	}
	if _, err := dataset.SelectRows[mat.Matrix](xs, []int{20}); !errors.Is(err, zonal.ErrRange) {
		t.Errorf("index 20 of 20 rows: err = %v, want zonal.ErrRange", err)
	}
	if _, err := dataset.SelectRows[mat.Matrix](xs, nil); !errors.Is(err, zonal.ErrEmpty) {
		t.Errorf("no indices: err = %v, want zonal.ErrEmpty", err)
	}
}

// On real text rows (the first 300 debian_text descriptions, bag-of-words
// counts over 23959 words, rows scaled to unit norm) the CSR and its dense
// form give the same Gaussian and polynomial kernel matrices (sparseTol)
// and the same Nystrom features for RLS landmarks (1e-9, as in
// TestNystromSparse).
func TestSparseDebianText(t *testing.T) {
	path := shareddata.File(t, "debian_text.libsvm.gz")
	data, err := dataset.ReadFile(path, dataset.Options{MaxRows: 300, NoDense: true})
	if err != nil {
		t.Fatal(err)
	}
	xs := data.Sparse
	for i := 0; i < xs.Rows; i++ {
		if n2 := xs.RowNorm2(i); n2 > 0 {
			_, vals := xs.Row(i)
			for q := range vals {
				vals[q] /= math.Sqrt(n2)
			}
		}
	}
	xd := xs.ToDense()
	for _, k := range []Kernel{Gaussian{Sigma: 0.8}, Polynomial{Degree: 2, Gamma: 1, Coef0: 1}} {
		sameMatrix(t, fmt.Sprintf("debian_text %v", k), mustMatrix(t, k, xs, xs), mustMatrix(t, k, xd, xd), sparseTol)
	}
	opt := NystromOptions{Landmarks: 40, Sampling: SamplingRLS, Seed: 5}
	k := Gaussian{Sigma: 0.8}
	nd, ns := mustNystrom(t, k, xd, opt), mustNystrom(t, k, xs, opt)
	_, zs := transformBoth(t, ns, xd, xs)
	zd, _ := transformBoth(t, nd, xd, xs)
	sameMatrix(t, "debian_text Nystrom", zs, zd, 1e-9)
}
