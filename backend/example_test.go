package backend_test

import (
	"errors"
	"fmt"
	"log"
	"slices"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/backend"
)

// Select a backend by name and factor a small SPD matrix in place.
func ExampleByName() {
	b, err := backend.ByName("purego")
	if err != nil {
		log.Fatal(err)
	}
	// A = [4 2; 2 5] = L L^T with L = [2 0; 1 2].
	a := blas64.General{Rows: 2, Cols: 2, Stride: 2, Data: []float64{4, 2, 2, 5}}
	if err := b.Cholesky(a); err != nil {
		log.Fatal(err)
	}
	fmt.Println(b.Name(), a.Data)
	// Output: purego [2 0 1 2]
}

// An unknown name (or "netlib" in a build without -tags netlib) is an error
// that lists the compiled-in backends.
func ExampleByName_unknown() {
	_, err := backend.ByName("cuda")
	fmt.Println(errors.Is(err, zonal.ErrUnknown))
	// Output: true
}

// Names lists the compiled-in backends, the default first; purego is always
// there.
func ExampleNames() {
	fmt.Println(slices.Contains(backend.Names(), "purego"))
	// Output: true
}

// Default honours $ZONAL_BACKEND and otherwise prefers netlib when compiled
// in. Every backend computes the same products.
func ExampleDefault() {
	b := backend.Default()
	x := blas64.General{Rows: 3, Cols: 2, Stride: 2, Data: []float64{1, 2, 3, 4, 5, 6}}
	c := blas64.General{Rows: 2, Cols: 2, Stride: 2, Data: make([]float64, 4)}
	b.Syrk(blas.Trans, 1, x, 0, c) // C = X^T X, full symmetric
	fmt.Println(c.Data)
	// Output: [35 44 44 56]
}

// A Cholesky failure reports the failing pivot.
func ExampleNotPositiveDefiniteError() {
	b := backend.Default()
	a := blas64.General{Rows: 2, Cols: 2, Stride: 2, Data: []float64{1, 2, 2, 1}}
	err := b.Cholesky(a)
	var npd *backend.NotPositiveDefiniteError
	if errors.As(err, &npd) {
		fmt.Println(npd.Pivot, npd.Value)
	}
	// Output: 1 -3
}
