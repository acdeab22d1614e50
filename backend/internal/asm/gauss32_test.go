package asm

import (
	"math"
	"math/rand/v2"
	"testing"
)

// gauss32Case is a block c = -2 X Y^T of float32 points with their squared
// norms, the product and norms computed in float64 and rounded once.
type gauss32Case struct {
	m, n, d, ldc int
	x, y         []float32 // m x d, n x d, row-major
	xn, yn       []float32
	c            []float32 // (m-1)*ldc + n
}

func newGauss32Case(rng *rand.Rand, m, n, d, ldc int, scale float64) gauss32Case {
	g := gauss32Case{m: m, n: n, d: d, ldc: ldc}
	pts := func(k int) ([]float32, []float32) {
		p := make([]float32, k*d)
		for i := range p {
			p[i] = float32(rng.NormFloat64() * scale)
		}
		nn := make([]float32, k)
		for i := range nn {
			var s float64
			for _, v := range p[i*d : i*d+d] {
				s += float64(v) * float64(v)
			}
			nn[i] = float32(s)
		}
		return p, nn
	}
	g.x, g.xn = pts(m)
	g.y, g.yn = pts(n)
	g.c = make([]float32, max(0, (m-1)*ldc+n))
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			var s float64
			for p := 0; p < d; p++ {
				s += float64(g.x[i*d+p]) * float64(g.y[j*d+p])
			}
			g.c[i*ldc+j] = float32(-2 * s)
		}
	}
	return g
}

// TestGaussianFromProduct32 checks every path against the float64 formula
// on the same float32 inputs. The argument -gamma*((xn+yn)+c) is formed
// with three float32 roundings, each at most 2^-24 of the largest term, so
// the kernel value is within gamma*3*2^-24*(xn+yn+|c|) relative from the
// argument, plus Exp32's 1 ulp (2^-23 relative).
func TestGaussianFromProduct32(t *testing.T) {
	forEachPath(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(71, 72))
		shapes := [][3]int{{1, 1, 1}, {3, 7, 2}, {5, 8, 3}, {2, 15, 4}, {4, 16, 5}, {7, 17, 3}, {9, 33, 8}, {13, 47, 16}, {40, 100, 30}, {3, 1000, 6}}
		for _, sh := range shapes {
			m, n, d := sh[0], sh[1], sh[2]
			ldc := n + rng.IntN(4)
			gamma := float32(0.05 + rng.Float64())
			g := newGauss32Case(rng, m, n, d, ldc, 1)
			c, check := guarded32(rng, len(g.c))
			copy(c, g.c)
			// The gaps between rows must stay untouched too.
			for i := 0; i+1 < m; i++ {
				for j := n; j < ldc; j++ {
					c[i*ldc+j] = 12345
				}
			}
			GaussianFromProduct32(c, ldc, m, n, g.xn, g.yn, gamma)
			check(t)
			for i := 0; i < m; i++ {
				for j := 0; j < ldc && i*ldc+j < len(c); j++ {
					got := c[i*ldc+j]
					if j >= n {
						if got != 12345 {
							t.Fatalf("%v: gap c[%d,%d] written", sh, i, j)
						}
						continue
					}
					s := float64(g.xn[i]) + float64(g.yn[j]) + float64(g.c[i*ldc+j])
					want := math.Exp(-float64(gamma) * max(0, s))
					scale := float64(g.xn[i]) + float64(g.yn[j]) + math.Abs(float64(g.c[i*ldc+j]))
					tol := want*(float64(gamma)*3*0x1p-24*scale+0x1p-23) + 0x1p-149
					if math.Abs(float64(got)-want) > tol {
						t.Fatalf("%v: K[%d,%d] = %v, want %v (tol %g)", sh, i, j, got, want, tol)
					}
				}
			}
		}
	})
}

// TestGaussianFromProduct32PathsAgree: the vector paths give the Go
// fallback's bits at every column count 1..40 (whole vectors and tails of
// the 8- and 16-lane kernels), with NaN, infinite, clamped and underflowing
// entries mixed in, and write nothing outside the block.
func TestGaussianFromProduct32PathsAgree(t *testing.T) {
	rng := rand.New(rand.NewPCG(73, 74))
	type tc struct {
		g     gauss32Case
		gamma float32
		want  []float32
	}
	var cases []tc
	for n := 1; n <= 40; n++ {
		m := 1 + rng.IntN(5)
		g := newGauss32Case(rng, m, n, 4, n+rng.IntN(3), 3)
		for k := range g.c {
			switch rng.IntN(12) {
			case 0:
				g.c[k] = float32(math.NaN())
			case 1:
				g.c[k] = float32(math.Inf(1 - 2*rng.IntN(2)))
			case 2:
				g.c[k] = -1e6 // clamped: distance below 0
			}
		}
		gamma := float32(0.01 + 20*rng.Float64()) // large gamma: underflow to 0 and subnormals
		want := append([]float32(nil), g.c...)
		gauss32Generic(want, g.m, g.n, g.ldc, g.xn, g.yn, gamma)
		cases = append(cases, tc{g, gamma, want})
	}
	forEachPath(t, func(t *testing.T) {
		for _, k := range cases {
			c, check := guarded32(rng, len(k.g.c))
			copy(c, k.g.c)
			GaussianFromProduct32(c, k.g.ldc, k.g.m, k.g.n, k.g.xn, k.g.yn, k.gamma)
			check(t)
			for i := range c {
				if math.Float32bits(c[i]) != math.Float32bits(k.want[i]) && !(c[i] != c[i] && k.want[i] != k.want[i]) {
					t.Fatalf("m=%d n=%d ldc=%d: c[%d] = %v, Go fallback %v", k.g.m, k.g.n, k.g.ldc, i, c[i], k.want[i])
				}
			}
		}
	})
}

// TestGaussianFromProduct32ClampAndNaN: identical points give exactly 1
// when rounding makes the squared distance negative; NaN stays in its
// entry; m or n = 0 writes nothing.
func TestGaussianFromProduct32ClampAndNaN(t *testing.T) {
	forEachPath(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(75, 76))
		const m, d = 21, 5
		g := newGauss32Case(rng, m, m, d, m, 10)
		// Self block with the norms shrunk by 1e-5 relative, far more than
		// float32 rounding, so xn + xn - 2 x.x < 0 on the diagonal.
		y := make([]float32, len(g.c))
		copy(y, g.c)
		for i := 0; i < m; i++ {
			var s float64
			for p := 0; p < d; p++ {
				s += float64(g.x[i*d+p]) * float64(g.x[i*d+p])
			}
			y[i*m+i] = float32(-2 * s)
			g.xn[i] = float32(s * (1 - 1e-5))
		}
		y[3*m+7] = float32(math.NaN())
		GaussianFromProduct32(y, m, m, m, g.xn, g.xn, 0.01)
		for i := 0; i < m; i++ {
			if y[i*m+i] != 1 {
				t.Fatalf("K[%d,%d] = %v, want exactly 1", i, i, y[i*m+i])
			}
			for j := 0; j < m; j++ {
				v := y[i*m+j]
				if nan := v != v; nan != (i == 3 && j == 7) {
					t.Fatalf("K[%d,%d] = %v", i, j, v)
				}
				if v == v && !(v >= 0 && v <= 1) {
					t.Fatalf("K[%d,%d] = %v out of [0,1]", i, j, v)
				}
			}
		}
		z := []float32{5}
		GaussianFromProduct32(z, 1, 0, 1, nil, []float32{1}, 1)
		GaussianFromProduct32(z, 1, 1, 0, []float32{1}, nil, 1)
		if z[0] != 5 {
			t.Fatalf("empty block wrote %v", z[0])
		}
	})
}

// TestGaussianCentres32 checks that blocks against prepared (packed once)
// centres have GaussianBlock32's bits on every path, for shapes with edge
// tiles, more columns than one column block (nc), more coordinates than
// one k block (kc), more rows than one row block (mc), and a leading
// dimension wider than the rows.
func TestGaussianCentres32(t *testing.T) {
	forEachPath(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(73, 74))
		shapes := [][3]int{{1, 1, 1}, {3, 7, 2}, {12, 33, 28}, {13, 100, 5}, {7, 4100, 6}, {5, 40, 300}, {500, 50, 3}}
		for _, sh := range shapes {
			m, n, d := sh[0], sh[1], sh[2]
			ldc := n + 3
			g := newGauss32Case(rng, m, n, d, ldc, 0.5)
			c := PrepareGaussian32(g.y, d, n, d, g.yn, 0.7)
			if c.PackedBytes() < int64(n*d*4) {
				t.Fatalf("%v: packed %d bytes, want at least %d", sh, c.PackedBytes(), n*d*4)
			}
			want := make([]float32, len(g.c))
			got := make([]float32, len(g.c))
			for i := range got {
				got[i] = float32(math.NaN()) // dst is not read
			}
			GaussianBlock32(want, ldc, g.x, d, g.y, d, m, n, d, g.xn, g.yn, 0.7)
			c.Block(got, ldc, g.x, d, m, g.xn)
			for i := 0; i < m; i++ {
				for j := 0; j < n; j++ {
					if a, b := got[i*ldc+j], want[i*ldc+j]; math.Float32bits(a) != math.Float32bits(b) {
						t.Fatalf("%v: (%d,%d) = %v, GaussianBlock32 %v", sh, i, j, a, b)
					}
				}
			}
		}
	})
}
