package tensorsketch

// The descent of one level: draws are split coordinate by coordinate down a
// tree of shared prefixes, each prefix drawing its next coordinate from its
// conditional; completed rows are emitted with their exact probability.

import (
	"math/rand/v2"
	"runtime"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
)

// emission is c draws of the row (l, idx) with probability prob each.
type emission struct {
	l    int
	idx  []int32
	c    int
	prob float64
}

// kid is the state of a prefix chosen by some draws.
type kid struct {
	prefix []int32
	pts    []int32
	U      []float64
	count  int
	prob   float64
}

// dist is the distribution of a node's next coordinate: with probability
// 1-floor coordinate coords[j] with probability p[j], and with probability
// floor a coordinate uniform on [0, width).
type dist struct {
	coords []int32
	p      []float64
	floor  float64
}

// pick is a coordinate chosen by some draws, with its probability.
type pick struct {
	i     int32
	count int
	prob  float64
}

// draw returns how many of c categorical draws from p fall on each index.
func (s *rowSampler) draw(p []float64, c int) []int {
	counts := make([]int, len(p))
	if len(p) == 1 {
		counts[0] = c
		return counts
	}
	cum := make([]float64, len(p))
	acc := 0.0
	for i, v := range p {
		acc += v
		cum[i] = acc
	}
	for ; c > 0; c-- {
		u := s.rng.Float64() * acc
		i := sort.SearchFloat64s(cum, u)
		for i < len(p)-1 && (cum[i] <= u || p[i] == 0) {
			i++
		}
		counts[i]++
	}
	return counts
}

// drawDist draws c coordinates from ds and returns the distinct ones in
// increasing order.
func (s *rowSampler) drawDist(ds dist, c int) []pick {
	width := s.xr.d
	if ds.floor == 0 {
		counts := s.draw(ds.p, c)
		var out []pick
		for j, n := range counts {
			if n > 0 {
				out = append(out, pick{i: ds.coords[j], count: n, prob: ds.p[j]})
			}
		}
		slices.SortFunc(out, func(a, b pick) int { return int(a.i - b.i) })
		return out
	}
	listed := 0
	for j := 0; j < c; j++ {
		if len(ds.coords) > 0 && s.rng.Float64() >= ds.floor {
			listed++
		}
	}
	byI := map[int32]int{}
	if listed > 0 {
		for j, n := range s.draw(ds.p, listed) {
			if n > 0 {
				byI[ds.coords[j]] += n
			}
		}
	}
	// the remaining draws are uniform on [0, width)
	for u := c - listed; u > 0; u-- {
		byI[int32(s.rng.IntN(width))]++
	}
	pl := map[int32]float64{}
	for j, i := range ds.coords {
		pl[i] = ds.p[j]
	}
	out := make([]pick, 0, len(byI))
	for i, n := range byI {
		pr := (1-ds.floor)*pl[i] + ds.floor/float64(width)
		if len(ds.coords) == 0 {
			pr = 1 / float64(width)
		}
		out = append(out, pick{i: i, count: n, prob: pr})
	}
	slices.SortFunc(out, func(a, b pick) int { return int(a.i - b.i) })
	return out
}

// expand draws count next coordinates below a prefix whose state is
// (pts, U) and probability prob. Completed rows are emitted; the others are
// returned. A chosen coordinate that no point of the support contains (only
// possible through the uniform floor) gives a row that is zero on every
// training point; it is dropped (its draws still count in s).
func (s *rowSampler) expand(l int, prefix []int32, pts []int32, U []float64, count int, prob float64, ds dist) []kid {
	picks := s.drawDist(ds, count)
	t := s.t
	last := len(prefix)+1 == l
	for a, k := range pts {
		s.pos[k] = int32(a)
	}
	var kids []kid
	for _, pk := range picks {
		np := append(slices.Clone(prefix), pk.i)
		kd := kid{prefix: np, count: pk.count, prob: prob * pk.prob}
		col := s.colPts[s.colPtr[pk.i]:s.colPtr[pk.i+1]]
		val := s.colVal[s.colPtr[pk.i]:s.colPtr[pk.i+1]]
		// Size the kid's arrays exactly (a counting pass) instead of
		// growing them by appends: this runs for every pick at every level,
		// and the doublings were most of the sampler's allocations.
		small := 8*len(pts) < len(col)
		nk := 0
		if small {
			for _, k := range pts {
				rc, _ := s.xr.row(int(k))
				if _, ok := slices.BinarySearch(rc, int(pk.i)); ok {
					nk++
				}
			}
		} else {
			for _, k := range col {
				if s.pos[k] >= 0 {
					nk++
				}
			}
		}
		if nk == 0 {
			continue
		}
		if last {
			// a completed row needs no state: only that some point holds it
			s.emit(l, np, pk.count, kd.prob)
			continue
		}
		kd.pts = make([]int32, 0, nk)
		kd.U = s.grab(nk * t)
		if small {
			// small support: look the coordinate up in each point's row
			for a, k := range pts {
				rc, rv := s.xr.row(int(k))
				if j, ok := slices.BinarySearch(rc, int(pk.i)); ok {
					kd.pts = append(kd.pts, k)
					for _, uj := range U[a*t : (a+1)*t] {
						kd.U = append(kd.U, uj*rv[j])
					}
				}
			}
		} else {
			for q, k := range col {
				a := s.pos[k]
				if a < 0 {
					continue
				}
				kd.pts = append(kd.pts, k)
				for _, uj := range U[int(a)*t : (int(a)+1)*t] {
					kd.U = append(kd.U, uj*val[q])
				}
			}
		}
		if len(kd.pts) == 0 {
			continue
		}
		kids = append(kids, kd)
	}
	for _, k := range pts {
		s.pos[k] = -1
	}
	return kids
}

// descend draws count rows of degree l below a prefix (see expand),
// depth first.
func (s *rowSampler) descend(l int, prefix []int32, pts []int32, U []float64, count int, prob float64, ds dist) {
	if s.err != nil {
		return
	}
	if err := s.ctx.Err(); err != nil {
		s.err = err
		return
	}
	kids := s.expand(l, prefix, pts, U, count, prob, ds)
	for i := range kids {
		s.runKid(l, &kids[i])
		s.release(kids[i].U)
		kids[i] = kid{}
	}
}

// grab returns an empty slice of capacity >= n, reusing the state of a
// finished kid when one is large enough: the descent is depth first, so a
// kid's state is dead once its subtree is done, and recycling it keeps the
// allocations of a level near its live working set instead of the sum over
// every prefix drawn.
func (s *rowSampler) grab(n int) []float64 {
	for i := len(s.free) - 1; i >= 0; i-- {
		if cap(s.free[i]) >= n {
			u := s.free[i][:0]
			s.free[i] = s.free[len(s.free)-1]
			s.free = s.free[:len(s.free)-1]
			return u
		}
	}
	return make([]float64, 0, n)
}

// release hands the state of a finished kid back to grab.
func (s *rowSampler) release(u []float64) {
	if cap(u) > 0 && len(s.free) < 64 {
		s.free = append(s.free, u)
	}
}

// runKid computes a kid's next-coordinate distribution and descends.
func (s *rowSampler) runKid(l int, k *kid) {
	ds := s.nodeDist(l-len(k.prefix)-1, k.pts, k.U)
	s.descend(l, k.prefix, k.pts, k.U, k.count, k.prob, ds)
}

// runKids processes the kids of one block on GOMAXPROCS workers. Kid j
// draws from its own generator seeded by (level seed, base+j) and its rows
// are appended in kid order, so the result does not depend on scheduling.
func (s *rowSampler) runKids(l int, kids []kid, base int) error {
	out := make([][]emission, len(kids))
	errs := make([]error, len(kids))
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < min(runtime.GOMAXPROCS(0), len(kids)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := s.clone()
			for {
				j := int(next.Add(1) - 1)
				if j >= len(kids) {
					return
				}
				c.rng = rand.New(rand.NewPCG(s.seed, uint64(base+j)))
				c.emits, c.err = nil, nil
				c.runKid(l, &kids[j])
				out[j], errs[j] = c.emits, c.err
				c.release(kids[j].U)
				kids[j] = kid{}
			}
		}()
	}
	wg.Wait()
	for j := range out {
		if errs[j] != nil {
			return errs[j]
		}
		s.emits = append(s.emits, out[j]...)
	}
	return nil
}

// emit records c draws of the row (l, idx) drawn with probability prob.
func (s *rowSampler) emit(l int, idx []int32, c int, prob float64) {
	s.emits = append(s.emits, emission{l: l, idx: idx, c: c, prob: prob})
}
