package secular_test

import (
	"encoding/binary"
	"math"
	"testing"

	"gonum.org/v1/gonum/blas/blas64"

	"github.com/zonal-ml/zonal/backend/secular"
)

// FuzzUpdate feeds arbitrary shapes and bit patterns (NaN, Inf, subnormals,
// huge values, non-orthonormal U, bad strides) to Update: it must never
// panic, and whenever it succeeds the eigenvalues are finite and ascending
// (and the eigenvectors orthonormal when U is).
func FuzzUpdate(f *testing.F) {
	f.Add([]byte{3, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17})
	f.Add([]byte{5, 2, 1, 0xff, 0xf0, 0, 0, 0, 0, 0, 0, 0x3f, 0xf0, 0, 0, 0, 0, 0, 0})
	f.Add([]byte{2, 0, 0, 0x7f, 0xf0, 0, 0, 0, 0, 0, 0, 0x80, 0, 0, 0, 0, 0, 0, 1})
	f.Add([]byte{1, 1, 2})
	f.Add([]byte{0, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 3 {
			return
		}
		m := int(data[0] % 8)
		n := m + int(data[1]%3)
		mode := data[2]
		data = data[3:]
		next := func() float64 {
			if len(data) >= 8 {
				x := math.Float64frombits(binary.BigEndian.Uint64(data))
				data = data[8:]
				return x
			}
			if len(data) > 0 {
				x := float64(int8(data[0])) / 16
				data = data[1:]
				return x
			}
			return 0.5
		}
		d := make([]float64, m)
		for i := range d {
			d[i] = next()
		}
		if mode&1 == 0 {
			// Mostly-sane inputs: sorted small integers from the bytes.
			for i := range d {
				d[i] = math.Round(math.Mod(d[i], 8))
				if math.IsNaN(d[i]) {
					d[i] = 0
				}
			}
		}
		rho := next()
		v := make([]float64, n)
		for i := range v {
			v[i] = next()
		}
		stride := m
		if mode&2 != 0 {
			stride = m + int(mode>>4)%3 - 1 // may be too small: must be ErrShape
		}
		u := blas64.General{Rows: n, Cols: m, Stride: stride, Data: make([]float64, n*max(stride, 0))}
		for i := 0; i < n && i < m; i++ {
			if i*stride+i < len(u.Data) && i*stride+i >= 0 {
				u.Data[i*stride+i] = 1
			}
		}
		if mode&4 != 0 {
			for i := range u.Data {
				u.Data[i] += next()
			}
		}
		dOut := make([]float64, m)
		uOut := blas64.General{Rows: n, Cols: m, Stride: max(m, 1), Data: make([]float64, n*max(m, 1))}
		if err := secular.Update(nil, nil, d, u, rho, v, dOut, uOut); err != nil {
			return
		}
		for i, x := range dOut {
			if math.IsNaN(x) || (i > 0 && x < dOut[i-1]) {
				t.Fatalf("eigenvalues %v not finite/ascending (d %v rho %v v %v)", dOut, d, rho, v)
			}
		}
		if mode&6 == 0 {
			// U is the identity padded with zero rows: orthonormal, so the
			// output must be too (same c m eps bound as checkUpdate).
			if e := orthErr(uOut); e > 20*float64(max(m, 1))*eps {
				t.Fatalf("||U^T U - I||_max = %g (d %v rho %v v %v)", e, d, rho, v)
			}
		}
	})
}

// FuzzBordered feeds arbitrary shapes and bit patterns to Bordered (the
// same decoding as FuzzUpdate; the corner alpha takes rho's place and a
// border direction w = e_{n+1} or e_m-style unit vectors is used): it must
// never panic, and whenever it succeeds the eigenvalues are finite and
// ascending, and the eigenvectors orthonormal when U is.
func FuzzBordered(f *testing.F) {
	f.Add([]byte{3, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17})
	f.Add([]byte{5, 2, 1, 0xff, 0xf0, 0, 0, 0, 0, 0, 0, 0x3f, 0xf0, 0, 0, 0, 0, 0, 0})
	f.Add([]byte{2, 0, 0, 0x7f, 0xf0, 0, 0, 0, 0, 0, 0, 0x80, 0, 0, 0, 0, 0, 0, 1})
	f.Add([]byte{4, 1, 8, 1, 1, 1, 1, 0x40, 0x20, 0, 0, 0, 0, 0, 0, 3})
	f.Add([]byte{1, 1, 2})
	f.Add([]byte{0, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 3 {
			return
		}
		m := int(data[0] % 8)
		n := m + int(data[1]%3)
		mode := data[2]
		data = data[3:]
		next := func() float64 {
			if len(data) >= 8 {
				x := math.Float64frombits(binary.BigEndian.Uint64(data))
				data = data[8:]
				return x
			}
			if len(data) > 0 {
				x := float64(int8(data[0])) / 16
				data = data[1:]
				return x
			}
			return 0.5
		}
		d := make([]float64, m)
		for i := range d {
			d[i] = next()
			if mode&1 == 0 {
				d[i] = math.Round(math.Mod(d[i], 8))
				if math.IsNaN(d[i]) {
					d[i] = 0
				}
			}
		}
		alpha := next()
		v := make([]float64, n)
		for i := range v {
			v[i] = next()
		}
		u := blas64.General{Rows: n, Cols: m, Stride: max(m, 1), Data: make([]float64, n*max(m, 1))}
		for i := 0; i < m; i++ {
			u.Data[i*u.Stride+i] = 1
		}
		var w []float64
		if mode&8 != 0 && n > m {
			// e_{m+1}: orthogonal to [U; 0] since U is the padded identity.
			w = make([]float64, n+1)
			w[m] = 1
		}
		if mode&4 != 0 {
			for i := range u.Data {
				u.Data[i] += next()
			}
		}
		dOut := make([]float64, m+1)
		uOut := blas64.General{Rows: n + 1, Cols: m + 1, Stride: m + 1, Data: make([]float64, (n+1)*(m+1))}
		if err := secular.Bordered(nil, d, u, v, alpha, w, dOut, uOut); err != nil {
			return
		}
		for i, x := range dOut {
			if math.IsNaN(x) || math.IsInf(x, 0) || (i > 0 && x < dOut[i-1]) {
				t.Fatalf("eigenvalues %v not finite/ascending (d %v alpha %v v %v)", dOut, d, alpha, v)
			}
		}
		if mode&4 == 0 {
			if e := orthErr(uOut); e > 20*float64(m+1)*eps {
				t.Fatalf("||U^T U - I||_max = %g (d %v alpha %v v %v)", e, d, alpha, v)
			}
		}
	})
}
