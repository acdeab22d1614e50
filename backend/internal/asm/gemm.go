package asm

import (
	"math"
	"sync"
	"unsafe"

	"gonum.org/v1/gonum/blas"

	"github.com/zonal-ml/zonal/backend/internal/check"
	"github.com/zonal-ml/zonal/internal/floatpool"
)

// float is the element type of the GEMM machinery: the packing, blocking and
// threading below are written once and instantiated for Dgemm (float64) and
// Sgemm (float32); only the micro-kernels and block sizes differ.
type float interface{ float32 | float64 }

// gemmKernel describes a micro-kernel and the cache blocking used with it.
//
// The micro-kernel fn computes the full mr x nr tile
//
//	C[i*ldc+j] = alpha * sum_p a[p*mr+i]*b[p*nr+j] + beta*C[i*ldc+j]
//
// (with beta == 0 C is not read) from a packed sliver a of op(A) and b of
// op(B), for k >= 1.
//
// Blocking (Goto/BLIS): a kc x nc panel of op(B) is packed once per (jc, pc)
// and stays in L3; an mc x kc block of op(A) is packed per (ic, pc) and stays
// in L2; one kc x nr sliver of B stays in L1 while the kernel sweeps the mr-row
// slivers of the A block.
type gemmKernel[T float] struct {
	name       string
	mr, nr     int
	kc, mc, nc int
	fn         func(k int, a, b, c []T, ldc int, alpha, beta T)
}

// Block sizes, all in one place. A kc x nr sliver of B should stay in L1
// (32 KiB on Zen 4) while the kernel sweeps the mc x kc block of A held in L2
// (1 MiB); a kc x nc panel of B fits comfortably in L3. mc is a multiple of
// mr, nc of nr. The values were tuned on Zen 4 by single-thread CPU time at
// n = 256, 1024, 2048 (for the 8x24 kernel kc = 192 beat 128 by 3-5% although
// its B sliver, 36 KiB, slightly exceeds L1).
const (
	kcAVX2, mcAVX2, ncAVX2       = 256, 240, 4080 // 6x8 kernel
	kcAVX512, mcAVX512, ncAVX512 = 192, 128, 4080 // 8x24 kernel
	kcGeneric, mcGeneric         = 256, 128
	ncGeneric                    = 4096 // 4x4 kernel
)

// gemmMinParallel is the flop count (m*n*k) below which a call runs on one
// goroutine: smaller products finish before a second goroutine pays off.
const gemmMinParallel = 64 * 64 * 64

// epiStrips is the number of nr-wide strips of C the epilogue (GaussianBlock's
// exponentials) is applied to at once.
const epiStrips = 4

// Triangle filters for Syrk.
const (
	fullC  = check.Full  // every element of C
	lowerC = check.Lower // only j <= i
	upperC = check.Upper // only j >= i
)

type gemmProblem[T float] struct {
	kern        *gemmKernel[T]
	tA, tB      bool
	m, n, k     int
	alpha, beta T
	a           []T
	lda         int
	b           []T
	ldb         int
	c           []T
	ldc         int
	tri         check.Part
	epi         func(i0, rows, j0, cols int) // applied to finished strips of C
	pre         *packedB[T]                  // op(B) packed already (blockPacked); nil: pack per block
}

func isTrans(t blas.Transpose) bool {
	switch t {
	case blas.NoTrans:
		return false
	case blas.Trans, blas.ConjTrans:
		return true
	}
	panic("asm: illegal transpose") // callers pass validated arguments
}

// Dgemm computes C = alpha*op(A)*op(B) + beta*C for row-major matrices, where
// op(A) is m x k, op(B) is k x n and C is m x n, with the argument conventions
// of gonum's blas.Float64.Dgemm. With beta == 0, C is overwritten and its old
// contents (even NaN) are ignored; with alpha == 0 or k == 0, A and B are not
// read.
//
// The arguments are not validated here: the callers (backend/purego's
// Backend.Gemm through backend/internal/check, its blas.Float64 with gonum's
// panic messages) have done it once. Slices too short still panic through Go's
// bounds checks before any assembly touches them.
func Dgemm(tA, tB blas.Transpose, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	if m > 0 && m < thinRows && n > 0 && k > 0 && alpha != 0 {
		dgemmThin(isTrans(tA), isTrans(tB), m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}
	gemm(cur().gemm, tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// thinRows is the row count of C below which Dgemm computes C row by row
// with level-1 kernels (dgemmThin) instead of packing. For few rows the
// packed path costs more than its flops: packing op(B) reads it, writes
// the packed copy and reads that again, and the micro-kernel computes mr
// rows whatever m is. dgemmThin reads op(B) once, in tiles that stay in
// L2 while every row of C uses them, and does only the useful flops: a
// one-row request of a model with a 784 x 2048 projection reads its 12.8
// MB once instead of three times.
//
// Its arithmetic for one row of C depends only on that row of op(A), on
// op(B) and on alpha and beta, not on m or on the other rows: a row of
// op(A) gets the same bits alone as in any block of fewer than thinRows
// rows. 33 matches the blocks the solvers predict row by row (direct
// kernel evaluations, up to 32 rows), so the predictions of a block of up
// to 32 rows equal those of its rows alone for feature-map models too (the
// server's dynamic batching does not change an answer).
const thinRows = 33

// thinAxpyCols is the width of C below which dgemmThin with op(B) = B
// transposes B once and takes dot products instead of axpys of n entries.
const thinAxpyCols = 64

// thinTileBytes is the size of the tile of op(B) that dgemmThin keeps in
// L2 (1 MiB on Zen 4) while every row of C uses it.
const thinTileBytes = 256 << 10

// dgemmThin is Dgemm for m < thinRows, alpha != 0, n, k >= 1. With
// op(B) = B^T (B n x k) each C[i, j] is alpha times the dot product
// (ddot) of row i of op(A) with row j of B, plus beta C[i, j]; the rows
// of B are taken in tiles of thinTileBytes. With op(B) = B (k x n) row i
// of C is beta times itself plus the rows of B scaled by alpha op(A)[i, p]
// (Daxpy), over column tiles of B of thinTileBytes. Tiles depend on n and
// k only, so each row's result is independent of m. With beta == 0 C is
// not read. Large products split the tiles between goroutines (the same
// arithmetic per entry).
func dgemmThin(ta, tb bool, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	rows := make([][]float64, m) // the rows of op(A)
	if ta {
		buf := make([]float64, m*k)
		for i := range rows {
			r := buf[i*k : (i+1)*k]
			for p := range r {
				r[p] = a[p*lda+i]
			}
			rows[i] = r
		}
	} else {
		for i := range rows {
			rows[i] = a[i*lda : i*lda+k]
		}
	}
	if !tb && n < thinAxpyCols {
		// A short row of C: an axpy of n entries per entry of op(A) costs
		// more in calls than in flops (a 16 x 5000 block of FALKON's K_nM
		// times 10 outputs made 80000 axpys of length 10 per call, several
		// times slower than the packed product). B is transposed once per
		// call instead and each C[i, j] is a dot product of length k, as
		// with op(B) = B^T. The choice depends on n alone, so a row's bits
		// still do not depend on m.
		bt := floatpool.Get(n * k)
		defer floatpool.Put(bt)
		t := (*bt)[:n*k]
		for p := 0; p < k; p++ {
			bp := b[p*ldb : p*ldb+n]
			for j, v := range bp {
				t[j*k+p] = v
			}
		}
		b, ldb, tb = t, k, true
	}
	// tile: B rows j (tb) or B columns j (!tb) per tile.
	tile := max(1, thinTileBytes/(8*k))
	if !tb {
		tile = max(8, tile-tile%8)
	}
	span := func(j0, j1 int) {
		for t0 := j0; t0 < j1; t0 += tile {
			t1 := min(j1, t0+tile)
			for i, ai := range rows {
				ci := c[i*ldc+t0 : i*ldc+t1]
				if tb {
					for j := range ci {
						v := alpha * ddot(ai, b[(t0+j)*ldb:(t0+j)*ldb+k])
						if beta != 0 {
							v += beta * ci[j]
						}
						ci[j] = v
					}
					continue
				}
				if beta == 0 {
					clear(ci)
				} else if beta != 1 {
					dscal(beta, ci)
				}
				for p, v := range ai {
					Daxpy(alpha*v, b[p*ldb+t0:p*ldb+t1], ci)
				}
			}
		}
	}
	tiles := (n + tile - 1) / tile
	p := min(maxThreads(), tiles)
	if float64(m)*float64(n)*float64(k) < 4*gemmMinParallel || p <= 1 {
		span(0, n)
		return
	}
	var wg sync.WaitGroup
	for w := 0; w < p; w++ {
		j0, j1 := w*tiles/p*tile, min(n, (w+1)*tiles/p*tile)
		wg.Add(1)
		go func() {
			defer wg.Done()
			span(j0, j1)
		}()
	}
	wg.Wait()
}

// gemm is Dgemm and Sgemm with the micro-kernel kern.
func gemm[T float](kern *gemmKernel[T], tA, tB blas.Transpose, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) {
	ta, tb := isTrans(tA), isTrans(tB)
	if m == 0 || n == 0 {
		return
	}
	if alpha == 0 || k == 0 {
		check.Scale(fullC, m, n, beta, c, ldc)
		return
	}
	g := gemmProblem[T]{kern: kern, tA: ta, tB: tb, m: m, n: n, k: k, alpha: alpha, beta: beta,
		a: a, lda: lda, b: b, ldb: ldb, c: c, ldc: ldc}
	g.run()
}

// run splits C between goroutines and computes every piece.
func (g *gemmProblem[T]) run() {
	p := maxThreads()
	if float64(g.m)*float64(g.n)*float64(g.k) < gemmMinParallel {
		p = 1
	}
	mr, nr := g.kern.mr, g.kern.nr
	// Split along rows when C is at least as tall as wide, else along columns;
	// each piece must be at least one tile.
	byRows := g.m >= g.n
	if g.tri == upperC {
		byRows = false
	} else if g.tri == lowerC {
		byRows = true
	}
	if byRows {
		p = min(p, (g.m+mr-1)/mr)
	} else {
		p = min(p, (g.n+nr-1)/nr)
	}
	if p <= 1 {
		g.block(0, g.m, 0, g.n)
		return
	}
	if g.epi == nil && g.k >= splitKRatio*max(g.m, g.n) && g.m*g.n <= splitKMaxC {
		g.runSplitK(p)
		return
	}
	bounds := make([]int, p+1)
	total, unit := g.m, mr
	if !byRows {
		total, unit = g.n, nr
	}
	for t := 1; t < p; t++ {
		f := float64(t) / float64(p)
		if g.tri != fullC {
			// Equal triangle areas: the first x rows (columns) hold x^2/2.
			f = math.Sqrt(f)
		}
		b := int(f*float64(total)+0.5) / unit * unit
		bounds[t] = min(max(b, bounds[t-1]), total)
	}
	bounds[p] = total
	var wg sync.WaitGroup
	for t := 0; t < p; t++ {
		lo, hi := bounds[t], bounds[t+1]
		if lo == hi {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			switch {
			case byRows && g.tri == lowerC:
				g.block(lo, hi, 0, hi)
			case byRows:
				g.block(lo, hi, 0, g.n)
			case g.tri == upperC:
				g.block(0, hi, lo, hi)
			default:
				g.block(0, g.m, lo, hi)
			}
		}()
	}
	wg.Wait()
}

// A product whose inner dimension k dominates (C small, A and B long and
// thin, as in X^T X for tall X) is split along k instead: each goroutine reads
// only its share of A and B, and the partial products are summed at the end.
const (
	splitKRatio = 8
	splitKMaxC  = 1 << 20 // elements of C per extra partial product
)

// runSplitK computes C on p goroutines, goroutine t summing the products
// over its share of k; goroutine 0 accumulates into C itself (with beta), the
// others into pooled scratch copies that are then added to C.
func (g *gemmProblem[T]) runSplitK(p int) {
	p = min(p, g.k/g.kern.kc+1)
	var wg sync.WaitGroup
	parts := make([]*[]T, p)
	for t := 0; t < p; t++ {
		k0, k1 := g.k*t/p, g.k*(t+1)/p
		sub := *g
		sub.k = k1 - k0
		if g.tA {
			sub.a = g.a[k0*g.lda:]
		} else {
			sub.a = g.a[k0:]
		}
		if g.tB {
			sub.b = g.b[k0:]
		} else {
			sub.b = g.b[k0*g.ldb:]
		}
		if t > 0 {
			parts[t] = getBuf[T](g.m * g.n)
			sub.c, sub.ldc, sub.beta = *parts[t], g.n, 0
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			sub.block(0, g.m, 0, g.n)
		}()
	}
	wg.Wait()
	for t := 1; t < p; t++ {
		part := *parts[t]
		for i := 0; i < g.m; i++ {
			j0, j1 := 0, g.n
			switch g.tri {
			case lowerC:
				j1 = min(i+1, g.n)
			case upperC:
				j0 = i
			}
			if j0 >= j1 {
				continue
			}
			addTo(part[i*g.n+j0:i*g.n+j1], g.c[i*g.ldc+j0:i*g.ldc+j1])
		}
		putBuf(parts[t])
	}
}

// bResidentBytes is the largest packed op(B) panel (k x nc elements, 4 MiB)
// that block keeps whole: then the loop over k runs inside the loop over row
// blocks of C, so each mc x nc block of C is finished while it is still in
// cache instead of being streamed from memory once per kc step (this is what
// tall, skinny products such as 1e5x512 times 512x512 need).
const bResidentBytes = 4 << 20

// block computes C[i0:i1, j0:j1].
func (g *gemmProblem[T]) block(i0, i1, j0, j1 int) {
	if g.pre != nil {
		g.blockPacked(i0, i1)
		return
	}
	kr := g.kern
	mr, nr, kc, mc, nc := kr.mr, kr.nr, kr.kc, kr.mc, kr.nc
	kcMax := min(kc, g.k)
	ncMax := min(nc, (j1-j0+nr-1)/nr*nr)
	mcMax := min(mc, (i1-i0+mr-1)/mr*mr)
	var zero T
	resident := g.k*ncMax*int(unsafe.Sizeof(zero)) <= bResidentBytes && i1-i0 > mc
	pa := getBuf[T](mcMax*kcMax + mr*nr)
	defer putBuf(pa)
	ap := (*pa)[:mcMax*kcMax]
	tmp := (*pa)[mcMax*kcMax:]
	if resident {
		pb := getBuf[T](g.k * ncMax)
		defer putBuf(pb)
		bp := *pb
		for jc := j0; jc < j1; jc += nc {
			ncb := min(nc, j1-jc)
			for pc := 0; pc < g.k; pc += kc {
				g.packB(bp[pc*ncMax:], pc, min(kc, g.k-pc), jc, ncb)
			}
			g.panelRows(ap, tmp, bp, ncMax, i0, i1, jc, ncb)
		}
		return
	}
	pb := getBuf[T](kcMax * ncMax)
	defer putBuf(pb)
	bp := *pb
	for jc := j0; jc < j1; jc += nc {
		ncb := min(nc, j1-jc)
		for pc := 0; pc < g.k; pc += kc {
			kcb := min(kc, g.k-pc)
			beta := T(1)
			if pc == 0 {
				beta = g.beta
			}
			last := pc+kcb == g.k
			packed := false
			for ic := i0; ic < i1; ic += mc {
				mcb := min(mc, i1-ic)
				if g.tri == lowerC && jc > ic+mcb-1 || g.tri == upperC && jc+ncb-1 < ic {
					continue // block entirely outside the triangle
				}
				if !packed {
					g.packB(bp, pc, kcb, jc, ncb)
					packed = true
				}
				g.packA(ap, ic, mcb, pc, kcb)
				g.macro(ap, bp, tmp, ic, mcb, jc, ncb, kcb, beta, last)
			}
		}
	}
}

// packedB is the whole of op(B) (k x n) packed for one micro-kernel once,
// for many products against the same B (the centres of Gaussian blocks):
// column block jb (columns jb*nc ...) at data[jb*k*ncMax:], its kc-row
// panels at offsets pc*ncMax, each as packB leaves it (the layout of the
// resident path of block).
type packedB[T float] struct {
	kern  *gemmKernel[T]
	k, n  int
	ncMax int
	data  []T
}

// newPackedB packs op(B) (B^T when tB) for kern.
func newPackedB[T float](kern *gemmKernel[T], tB bool, k, n int, b []T, ldb int) *packedB[T] {
	nc, nr, kc := kern.nc, kern.nr, kern.kc
	ncMax := min(nc, (n+nr-1)/nr*nr)
	p := &packedB[T]{kern: kern, k: k, n: n, ncMax: ncMax, data: make([]T, (n+nc-1)/nc*k*ncMax)}
	g := gemmProblem[T]{kern: kern, tB: tB, k: k, n: n, b: b, ldb: ldb}
	for jc, jb := 0, 0; jc < n; jc, jb = jc+nc, jb+1 {
		ncb := min(nc, n-jc)
		for pc := 0; pc < k; pc += kc {
			g.packB(p.data[jb*k*ncMax+pc*ncMax:], pc, min(kc, k-pc), jc, ncb)
		}
	}
	return p
}

// blockPacked computes C[i0:i1, 0:n] against the packed g.pre: block's
// loops and arithmetic (the same bits) without packing B.
func (g *gemmProblem[T]) blockPacked(i0, i1 int) {
	kr := g.kern
	mr, nr, kc, mc, nc := kr.mr, kr.nr, kr.kc, kr.mc, kr.nc
	kcMax := min(kc, g.k)
	mcMax := min(mc, (i1-i0+mr-1)/mr*mr)
	pa := getBuf[T](mcMax*kcMax + mr*nr)
	defer putBuf(pa)
	ap := (*pa)[:mcMax*kcMax]
	tmp := (*pa)[mcMax*kcMax:]
	ncMax := g.pre.ncMax
	for jc, jb := 0, 0; jc < g.n; jc, jb = jc+nc, jb+1 {
		g.panelRows(ap, tmp, g.pre.data[jb*g.k*ncMax:], ncMax, i0, i1, jc, min(nc, g.n-jc))
	}
}

// panelRows computes C[i0:i1, jc:jc+ncb] from the whole packed column
// panel bp of op(B) (its kc-row panels at offsets pc*ncMax): A packed per
// (ic, pc) block, the micro-kernel over each.
func (g *gemmProblem[T]) panelRows(ap, tmp, bp []T, ncMax, i0, i1, jc, ncb int) {
	kc, mc := g.kern.kc, g.kern.mc
	for ic := i0; ic < i1; ic += mc {
		mcb := min(mc, i1-ic)
		if g.tri == lowerC && jc > ic+mcb-1 || g.tri == upperC && jc+ncb-1 < ic {
			continue // block entirely outside the triangle
		}
		for pc := 0; pc < g.k; pc += kc {
			kcb := min(kc, g.k-pc)
			beta := T(1)
			if pc == 0 {
				beta = g.beta
			}
			g.packA(ap, ic, mcb, pc, kcb)
			g.macro(ap, bp[pc*ncMax:], tmp, ic, mcb, jc, ncb, kcb, beta, pc+kcb == g.k)
		}
	}
}

// macro runs the micro-kernel over an mcb x ncb block of C.
func (g *gemmProblem[T]) macro(ap, bp, tmp []T, ic, mcb, jc, ncb, kcb int, beta T, last bool) {
	kr := g.kern
	mr, nr := kr.mr, kr.nr
	c, ldc, alpha := g.c, g.ldc, g.alpha
	for jr := 0; jr < ncb; jr += nr {
		nrb := min(nr, ncb-jr)
		b := bp[jr*kcb : (jr+nr)*kcb]
		col := jc + jr
		for ir := 0; ir < mcb; ir += mr {
			mrb := min(mr, mcb-ir)
			row := ic + ir
			a := ap[ir*kcb : (ir+mr)*kcb]
			partial := mrb < mr || nrb < nr
			switch g.tri {
			case lowerC:
				if col > row+mrb-1 {
					continue
				}
				if col+nrb-1 > row {
					partial = true
				}
			case upperC:
				if col+nrb-1 < row {
					continue
				}
				if col < row+mrb-1 {
					partial = true
				}
			}
			if !partial {
				kr.fn(kcb, a, b, c[row*ldc+col:], ldc, alpha, beta)
				continue
			}
			// Edge or diagonal tile: compute into tmp, then update only the
			// elements of C that exist and lie in the triangle.
			kr.fn(kcb, a, b, tmp, nr, 1, 0)
			for i := 0; i < mrb; i++ {
				jlo, jhi := 0, nrb
				switch g.tri {
				case lowerC:
					jhi = min(nrb, row+i-col+1)
				case upperC:
					jlo = max(0, row+i-col)
				}
				if jlo >= jhi {
					continue
				}
				cr := c[(row+i)*ldc+col+jlo : (row+i)*ldc+col+jhi]
				tr := tmp[i*nr+jlo : i*nr+jhi]
				if beta == 0 {
					for j := range cr {
						cr[j] = alpha * tr[j]
					}
				} else {
					for j := range cr {
						cr[j] = alpha*tr[j] + beta*cr[j]
					}
				}
			}
		}
		// The epilogue runs on groups of epiStrips finished strips (still
		// in L2), wide enough for the vector epilogue to keep several
		// independent vectors per row in flight.
		if last && g.epi != nil && ((jr/nr+1)%epiStrips == 0 || jr+nr >= ncb) {
			from := jr / nr / epiStrips * epiStrips * nr
			g.epi(ic, mcb, jc+from, jr+nrb-from)
		}
	}
}

// packA packs op(A)[ic:ic+mcb, pc:pc+kcb] into mr-row slivers, k-major,
// zero-padding the last sliver.
func (g *gemmProblem[T]) packA(ap []T, ic, mcb, pc, kcb int) {
	mr := g.kern.mr
	a, lda := g.a, g.lda
	for s := 0; s < mcb; s += mr {
		rows := min(mr, mcb-s)
		dst := ap[s*kcb : (s+mr)*kcb]
		if g.tA {
			// op(A)[i,p] = a[p*lda+i]: rows of A are contiguous in i.
			if rows == mr {
				copyPanel(dst, a[(pc)*lda+ic+s:], lda, kcb, mr)
				continue
			}
			for p := 0; p < kcb; p++ {
				src := a[(pc+p)*lda+ic+s:]
				d := dst[p*mr : p*mr+mr]
				copy(d[:rows], src[:rows])
				clear(d[rows:])
			}
			continue
		}
		// op(A)[i,p] = a[i*lda+p].
		if rows == mr && packRows(dst, a[(ic+s)*lda+pc:], lda, kcb, mr) {
			continue
		}
		for i := 0; i < rows; i++ {
			src := a[(ic+s+i)*lda+pc : (ic+s+i)*lda+pc+kcb]
			for p, v := range src {
				dst[p*mr+i] = v
			}
		}
		for i := rows; i < mr; i++ {
			for p := 0; p < kcb; p++ {
				dst[p*mr+i] = 0
			}
		}
	}
}

// packB packs op(B)[pc:pc+kcb, jc:jc+ncb] into nr-column slivers, k-major,
// zero-padding the last sliver.
func (g *gemmProblem[T]) packB(bp []T, pc, kcb, jc, ncb int) {
	nr := g.kern.nr
	b, ldb := g.b, g.ldb
	for s := 0; s < ncb; s += nr {
		cols := min(nr, ncb-s)
		dst := bp[s*kcb : (s+nr)*kcb]
		if !g.tB {
			// op(B)[p,j] = b[p*ldb+j]: contiguous in j.
			if cols == nr {
				copyPanel(dst, b[pc*ldb+jc+s:], ldb, kcb, nr)
				continue
			}
			for p := 0; p < kcb; p++ {
				src := b[(pc+p)*ldb+jc+s:]
				d := dst[p*nr : p*nr+nr]
				copy(d[:cols], src[:cols])
				clear(d[cols:])
			}
			continue
		}
		// op(B)[p,j] = b[j*ldb+p].
		if cols == nr && packRows(dst, b[(jc+s)*ldb+pc:], ldb, kcb, nr) {
			continue
		}
		for j := 0; j < cols; j++ {
			src := b[(jc+s+j)*ldb+pc : (jc+s+j)*ldb+pc+kcb]
			for p, v := range src {
				dst[p*nr+j] = v
			}
		}
		for j := cols; j < nr; j++ {
			for p := 0; p < kcb; p++ {
				dst[p*nr+j] = 0
			}
		}
	}
}

// copyPanel copies rows of w contiguous elements, src[p*ld : p*ld+w] for
// p < k, into dst[p*w : p*w+w], with fixed-size copies for the tile widths of
// the kernels (a memmove call per short row would dominate).
func copyPanel[T float](dst, src []T, ld, k, w int) {
	switch w {
	case 4:
		for p := 0; p < k; p++ {
			*(*[4]T)(dst[p*4:]) = *(*[4]T)(src[p*ld:])
		}
	case 6:
		for p := 0; p < k; p++ {
			*(*[6]T)(dst[p*6:]) = *(*[6]T)(src[p*ld:])
		}
	case 8:
		for p := 0; p < k; p++ {
			*(*[8]T)(dst[p*8:]) = *(*[8]T)(src[p*ld:])
		}
	case 12:
		for p := 0; p < k; p++ {
			*(*[12]T)(dst[p*12:]) = *(*[12]T)(src[p*ld:])
		}
	case 16:
		for p := 0; p < k; p++ {
			*(*[16]T)(dst[p*16:]) = *(*[16]T)(src[p*ld:])
		}
	case 24:
		for p := 0; p < k; p++ {
			*(*[24]T)(dst[p*24:]) = *(*[24]T)(src[p*ld:])
		}
	case 32:
		for p := 0; p < k; p++ {
			*(*[32]T)(dst[p*32:]) = *(*[32]T)(src[p*ld:])
		}
	case 48:
		for p := 0; p < k; p++ {
			*(*[48]T)(dst[p*48:]) = *(*[48]T)(src[p*ld:])
		}
	default:
		for p := 0; p < k; p++ {
			copy(dst[p*w:p*w+w], src[p*ld:p*ld+w])
		}
	}
}

// packRows interleaves w rows of length k (row i at src[i*ld:]) into
// dst[p*w+i], for the tile heights 4, 6, 8 and 12 and, eight rows at a
// time, for the wider tiles (multiples of 8: the nr of the AVX-512 and
// float32 kernels, which pack the rows of a transposed B); it reports
// false for other w.
func packRows[T float](dst, src []T, ld, k, w int) bool {
	switch w {
	case 4:
		r0, r1, r2, r3 := src[:k], src[ld:ld+k], src[2*ld:2*ld+k], src[3*ld:3*ld+k]
		for p := range r0 {
			d := (*[4]T)(dst[p*4:])
			d[0], d[1], d[2], d[3] = r0[p], r1[p], r2[p], r3[p]
		}
	case 6:
		r0, r1, r2 := src[:k], src[ld:ld+k], src[2*ld:2*ld+k]
		r3, r4, r5 := src[3*ld:3*ld+k], src[4*ld:4*ld+k], src[5*ld:5*ld+k]
		for p := range r0 {
			d := (*[6]T)(dst[p*6:])
			d[0], d[1], d[2], d[3], d[4], d[5] = r0[p], r1[p], r2[p], r3[p], r4[p], r5[p]
		}
	case 8:
		r0, r1, r2, r3 := src[:k], src[ld:ld+k], src[2*ld:2*ld+k], src[3*ld:3*ld+k]
		r4, r5, r6, r7 := src[4*ld:4*ld+k], src[5*ld:5*ld+k], src[6*ld:6*ld+k], src[7*ld:7*ld+k]
		for p := range r0 {
			d := (*[8]T)(dst[p*8:])
			d[0], d[1], d[2], d[3], d[4], d[5], d[6], d[7] = r0[p], r1[p], r2[p], r3[p], r4[p], r5[p], r6[p], r7[p]
		}
	case 12:
		r0, r1, r2, r3 := src[:k], src[ld:ld+k], src[2*ld:2*ld+k], src[3*ld:3*ld+k]
		r4, r5, r6, r7 := src[4*ld:4*ld+k], src[5*ld:5*ld+k], src[6*ld:6*ld+k], src[7*ld:7*ld+k]
		r8, r9, r10, r11 := src[8*ld:8*ld+k], src[9*ld:9*ld+k], src[10*ld:10*ld+k], src[11*ld:11*ld+k]
		for p := range r0 {
			d := (*[12]T)(dst[p*12:])
			d[0], d[1], d[2], d[3], d[4], d[5], d[6], d[7] = r0[p], r1[p], r2[p], r3[p], r4[p], r5[p], r6[p], r7[p]
			d[8], d[9], d[10], d[11] = r8[p], r9[p], r10[p], r11[p]
		}
	default:
		if w%8 != 0 {
			return false
		}
		for i0 := 0; i0 < w; i0 += 8 {
			g := src[i0*ld:]
			r0, r1, r2, r3 := g[:k], g[ld:ld+k], g[2*ld:2*ld+k], g[3*ld:3*ld+k]
			r4, r5, r6, r7 := g[4*ld:4*ld+k], g[5*ld:5*ld+k], g[6*ld:6*ld+k], g[7*ld:7*ld+k]
			for p := range r0 {
				d := (*[8]T)(dst[p*w+i0:])
				d[0], d[1], d[2], d[3], d[4], d[5], d[6], d[7] = r0[p], r1[p], r2[p], r3[p], r4[p], r5[p], r6[p], r7[p]
			}
		}
	}
	return true
}
