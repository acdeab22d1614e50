package backend_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/backend"
)

// randomCSR returns a rows x cols CSR with each entry present with
// probability density (values in [-1, 1]), every third row left empty,
// placed after pad unused leading entries (so RowPtr[0] = pad), and the
// same matrix dense.
func randomCSR(rng *rand.Rand, rows, cols, pad int, density float64) (backend.CSR, [][]float64) {
	a := backend.CSR{Rows: rows, Cols: cols, RowPtr: make([]int, rows+1)}
	for p := 0; p < pad; p++ {
		a.Col = append(a.Col, -1) // never read
		a.Val = append(a.Val, math.NaN())
	}
	dense := make([][]float64, rows)
	a.RowPtr[0] = pad
	for i := 0; i < rows; i++ {
		dense[i] = make([]float64, cols)
		for j := 0; j < cols && i%3 != 1; j++ {
			if rng.Float64() < density {
				v := 2*rng.Float64() - 1
				a.Col = append(a.Col, j)
				a.Val = append(a.Val, v)
				dense[i][j] = v
			}
		}
		a.RowPtr[i+1] = len(a.Col)
	}
	return a, dense
}

// TestSparseGemm compares backend.SparseGemm, on every backend and its
// generic path, with the dense product of the same matrices summed in
// plain loops, for the four transposes, beta in {0, 1, -0.5} (beta = 0
// with NaN in C, which must be ignored), empty rows, zero nnz, empty
// shapes and row views. Entries of A and B are in [-1, 1], so each entry of
// the product is a sum of at most k terms below 1 in magnitude and the two
// summation orders differ by at most 2 k u |alpha| (k the inner dimension):
// tol = 4 k u (|alpha| + 1) + 4u |beta C|.
func TestSparseGemm(t *testing.T) {
	const u = 0x1p-53
	rng := rand.New(rand.NewPCG(11, 12))
	shapes := [][4]int{ // rows, cols of A, n, pad
		{1, 1, 1, 0}, {5, 7, 3, 2}, {9, 4, 1, 0}, {70, 33, 17, 5}, {130, 40, 70, 0}, {60, 50, 150, 3},
		{0, 5, 3, 0}, {4, 0, 3, 0}, {4, 5, 0, 1},
	}
	for name, b := range fusedBackends(t) {
		for _, sh := range shapes {
			rows, cols, n, pad := sh[0], sh[1], sh[2], sh[3]
			for _, density := range []float64{0, 0.3, 1} {
				a, ad := randomCSR(rng, rows, cols, pad, density)
				for _, tr := range [][2]blas.Transpose{{blas.NoTrans, blas.NoTrans}, {blas.NoTrans, blas.Trans}, {blas.Trans, blas.NoTrans}, {blas.Trans, blas.Trans}} {
					for _, beta := range []float64{0, 1, -0.5} {
						m, k := rows, cols
						if tr[0] == blas.Trans {
							m, k = cols, rows
						}
						br, bc := k, n
						if tr[1] == blas.Trans {
							br, bc = n, k
						}
						bm := stridedGeneral(rng, br, bc, bc+1)
						c := stridedGeneral(rng, m, n, n+2)
						if beta == 0 && m > 0 && n > 0 {
							c.Data[0] = math.NaN()
						}
						c0 := append([]float64(nil), c.Data...)
						alpha := 1.5
						backend.SparseGemm(b, tr[0], tr[1], alpha, a, bm, beta, c)
						what := fmt.Sprintf("%s A %dx%d density %g n %d trans %c%c beta %g", name, rows, cols, density, n, tr[0], tr[1], beta)
						for i := 0; i < m; i++ {
							for j := 0; j < n; j++ {
								s := 0.0
								for q := 0; q < k; q++ {
									av := 0.0
									if tr[0] == blas.NoTrans {
										av = ad[i][q]
									} else {
										av = ad[q][i]
									}
									bv := 0.0
									if tr[1] == blas.NoTrans {
										bv = bm.Data[q*bm.Stride+j]
									} else {
										bv = bm.Data[j*bm.Stride+q]
									}
									s += av * bv
								}
								want := alpha * s
								old := 0.0
								if beta != 0 {
									old = beta * c0[i*c.Stride+j]
									want += old
								}
								tol := 4*float64(k)*u*(math.Abs(alpha)+1) + 4*u*math.Abs(old)
								if got := c.Data[i*c.Stride+j]; !(math.Abs(got-want) <= tol) {
									t.Fatalf("%s: C[%d,%d] = %v, want %v (tol %g)", what, i, j, got, want, tol)
								}
							}
						}
						// The padding between rows of C is not touched.
						for i := 0; i+1 < m; i++ {
							for j := n; j < c.Stride; j++ {
								if p := i*c.Stride + j; c.Data[p] != c0[p] {
									t.Fatalf("%s: padding C.Data[%d] changed", what, p)
								}
							}
						}
					}
				}
			}
		}
	}
}

// A row view gives the rows of the product that the whole matrix gives,
// bit for bit.
func TestSparseGemmRowsView(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	b := backend.Default()
	a, _ := randomCSR(rng, 50, 30, 0, 0.2)
	bm := stridedGeneral(rng, 30, 9, 9)
	full := blas64.General{Rows: 50, Cols: 9, Stride: 9, Data: make([]float64, 50*9)}
	backend.SparseGemm(b, blas.NoTrans, blas.NoTrans, 1, a, bm, 0, full)
	v := a.RowsView(17, 41)
	part := blas64.General{Rows: 24, Cols: 9, Stride: 9, Data: make([]float64, 24*9)}
	backend.SparseGemm(b, blas.NoTrans, blas.NoTrans, 1, v, bm, 0, part)
	for i := range part.Data {
		if part.Data[i] != full.Data[17*9+i] {
			t.Fatalf("view entry %d = %v, whole matrix gives %v", i, part.Data[i], full.Data[17*9+i])
		}
	}
}

// Inconsistent CSR arrays and shape mismatches panic with an error wrapping
// zonal.ErrShape, on every backend.
func TestSparseGemmPanics(t *testing.T) {
	g := func(r, c int) blas64.General {
		return blas64.General{Rows: r, Cols: c, Stride: max(c, 1), Data: make([]float64, r*max(c, 1))}
	}
	ok := backend.CSR{Rows: 2, Cols: 3, RowPtr: []int{0, 1, 2}, Col: []int{0, 2}, Val: []float64{1, 2}}
	cases := map[string]func(b backend.Backend){
		"short RowPtr": func(b backend.Backend) {
			a := ok
			a.RowPtr = []int{0, 1}
			backend.SparseGemm(b, blas.NoTrans, blas.NoTrans, 1, a, g(3, 2), 0, g(2, 2))
		},
		"decreasing RowPtr": func(b backend.Backend) {
			a := ok
			a.RowPtr = []int{0, 2, 1}
			backend.SparseGemm(b, blas.NoTrans, blas.NoTrans, 1, a, g(3, 2), 0, g(2, 2))
		},
		"RowPtr past Val": func(b backend.Backend) {
			a := ok
			a.RowPtr = []int{0, 1, 3}
			backend.SparseGemm(b, blas.NoTrans, blas.NoTrans, 1, a, g(3, 2), 0, g(2, 2))
		},
		"column out of range": func(b backend.Backend) {
			a := ok
			a.Col = []int{0, 3}
			backend.SparseGemm(b, blas.NoTrans, blas.NoTrans, 1, a, g(3, 2), 0, g(2, 2))
		},
		"negative column": func(b backend.Backend) {
			a := ok
			a.Col = []int{-1, 2}
			backend.SparseGemm(b, blas.Trans, blas.NoTrans, 1, a, g(2, 2), 0, g(3, 2))
		},
		"B rows": func(b backend.Backend) {
			backend.SparseGemm(b, blas.NoTrans, blas.NoTrans, 1, ok, g(2, 2), 0, g(2, 2))
		},
		"C shape": func(b backend.Backend) {
			backend.SparseGemm(b, blas.Trans, blas.NoTrans, 1, ok, g(2, 2), 0, g(2, 2))
		},
		"B trans": func(b backend.Backend) {
			backend.SparseGemm(b, blas.NoTrans, blas.Trans, 1, ok, g(3, 2), 0, g(2, 3))
		},
	}
	for name, b := range fusedBackends(t) {
		for what, f := range cases {
			func() {
				defer func() {
					r := recover()
					err, isErr := r.(error)
					if !isErr || !errors.Is(err, zonal.ErrShape) {
						t.Errorf("%s %s: recovered %v, want an error wrapping zonal.ErrShape", name, what, r)
					}
				}()
				f(b)
			}()
		}
	}
}
