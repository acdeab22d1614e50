package solvers

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
)

// clustered returns n rows in 2 dimensions: five Gaussian blobs of very
// unequal sizes (radius 0.3, centres 2.5 apart) and `outliers` isolated
// points 8 to 16 away from the origin; y is a smooth function of x.
func clustered(n, outliers int, seed uint64) (*mat.Dense, *mat.Dense) {
	rng := rand.New(rand.NewPCG(seed, 7))
	centres := [][2]float64{{0, 0}, {2.5, 0}, {0, 2.5}, {2.5, 2.5}, {5, 0}}
	weights := []float64{0.4, 0.25, 0.15, 0.12, 0.08}
	x := mat.NewDense(n, 2, nil)
	y := mat.NewDense(n, 1, nil)
	for i := 0; i < n; i++ {
		r := rowOf(x, i)
		if i < outliers {
			a, rad := 2*math.Pi*rng.Float64(), 8+8*rng.Float64()
			r[0], r[1] = rad*math.Cos(a), rad*math.Sin(a)
		} else {
			u, c := rng.Float64(), 0
			for acc := weights[0]; u > acc && c < len(weights)-1; acc += weights[c] {
				c++
			}
			r[0] = centres[c][0] + 0.3*rng.NormFloat64()
			r[1] = centres[c][1] + 0.3*rng.NormFloat64()
		}
		y.Set(i, 0, math.Sin(r[0])+math.Cos(r[1])/2)
	}
	return x, y
}

// countsDiff is sum_q |a_q - b_q|.
func countsDiff(a, b []int) int {
	s := 0
	for q := range a {
		s += max(a[q]-b[q], b[q]-a[q])
	}
	return s
}

func cellCounts(p *ParK, x *mat.Dense) []int {
	n, _ := x.Dims()
	c := make([]int, p.Cells())
	for i := 0; i < n; i++ {
		c[p.Cell(rowOf(x, i))]++
	}
	return c
}

// TestPartitionStrategies: for every strategy, with and without a cap,
// (1) two fits with one seed give the same centroids, offsets and sizes,
// (2) every row is in exactly one non-empty cell, (3) caps hold, (4) the
// prediction rule (Cell) puts every training row in the cell it was fitted
// in (same counts per cell; the rows of a cell are not kept), (5) the
// report's sizes and imbalance agree with CellSizes.
func TestPartitionStrategies(t *testing.T) {
	x, y := clustered(1200, 12, 3)
	n := 1200
	k := testGauss{0.5}
	for _, part := range []Partition{PartitionGreedy, PartitionSubsample, PartitionKMeans} {
		for _, capf := range []float64{0, 1.2} {
			opts := ParKOptions{Cells: 8, Centers: 160, Partition: part, Cap: capf, Seed: 5, Iterations: 5}
			p, err := FitParK(bg, k, x, y, 1e-5, opts)
			if err != nil {
				t.Fatalf("%s cap %g: %v", part, capf, err)
			}
			p2, err := FitParK(bg, k, x, y, 1e-5, opts)
			if err != nil {
				t.Fatal(err)
			}
			if !mat.Equal(p.Centroids(), p2.Centroids()) || !slices.Equal(p.CellSizes(), p2.CellSizes()) || !slices.Equal(p.Offsets(), p2.Offsets()) {
				t.Fatalf("%s cap %g: two fits with one seed differ", part, capf)
			}
			total := 0
			for _, s := range p.CellSizes() {
				if s == 0 {
					t.Fatalf("%s cap %g: empty cell in %v", part, capf, p.CellSizes())
				}
				total += s
			}
			if total != n {
				t.Fatalf("%s cap %g: cells hold %d of %d rows", part, capf, total, n)
			}
			if capf > 0 {
				limit := int(math.Ceil(capf * float64(n) / 8))
				if m := slices.Max(p.CellSizes()); m > limit {
					t.Fatalf("%s cap %g: largest cell %d > cap %d (%v)", part, capf, m, limit, p.CellSizes())
				}
				if p.Offsets() == nil {
					t.Fatalf("%s: capped fit without offsets", part)
				}
			} else if p.Offsets() != nil {
				t.Fatalf("%s: uncapped fit has offsets", part)
			}
			// Rows a capped fit placed off the weighted rule (identical
			// distance profiles cannot be split by offsets) are the only
			// ones prediction may put elsewhere.
			if got := cellCounts(p, x); countsDiff(got, p.CellSizes()) > 2*p.Report().OffRule {
				t.Fatalf("%s cap %g: prediction assigns %v, training %v, %d rows off the rule", part, capf, got, p.CellSizes(), p.Report().OffRule)
			}
			if part != PartitionGreedy && p.Report().OffRule > n/100 {
				t.Fatalf("%s cap %g: %d rows off the rule", part, capf, p.Report().OffRule)
			}
			r := p.Report()
			if r == nil || r.Partition != part || len(r.Cells) != 8 {
				t.Fatalf("%s: report %+v", part, r)
			}
			want := float64(slices.Max(p.CellSizes())) * 8 / float64(n)
			if math.Abs(r.Imbalance-want) > 1e-12 {
				t.Fatalf("%s: imbalance %g, want %g", part, r.Imbalance, want)
			}
			for q, c := range r.Cells {
				if c.Rows != p.CellSizes()[q] || c.Centers < 1 || c.Centers > c.Rows || c.Iterations > 5 || !math.IsNaN(c.ValidationRMSE) {
					t.Fatalf("%s: cell %d report %+v", part, q, c)
				}
				if lq := 1e-5 * float64(n) / float64(c.Rows); math.Abs(c.Lambda-lq) > 1e-12*lq {
					t.Fatalf("%s: cell %d lambda %g, want %g", part, q, c.Lambda, lq)
				}
			}
		}
	}
}

// TestKMeansBalancesBetterThanGreedy: on blobs of unequal sizes with
// isolated outliers the farthest-point rule spends centroids on outliers
// and leaves one big cell; k-means++ with Lloyd steps lowers the largest
// cell / (n/Q) by at least a third, and the cap brings it to at most 1.25.
func TestKMeansBalancesBetterThanGreedy(t *testing.T) {
	x, y := clustered(2000, 20, 11)
	k := testGauss{0.5}
	imb := map[Partition]float64{}
	for _, part := range []Partition{PartitionGreedy, PartitionKMeans, PartitionSubsample} {
		p, err := FitParK(bg, k, x, y, 1e-5, ParKOptions{Cells: 8, Centers: 80, Partition: part, Seed: 2, Iterations: 3})
		if err != nil {
			t.Fatal(err)
		}
		imb[part] = p.Report().Imbalance
	}
	t.Logf("largest cell / (n/Q): %v", imb)
	if !(imb[PartitionKMeans] < imb[PartitionGreedy]*2/3) {
		t.Fatalf("k-means imbalance %g, greedy %g: want at least a third lower", imb[PartitionKMeans], imb[PartitionGreedy])
	}
	if !(imb[PartitionSubsample] < imb[PartitionGreedy]) {
		t.Fatalf("subsample imbalance %g not below greedy %g", imb[PartitionSubsample], imb[PartitionGreedy])
	}
	p, err := FitParK(bg, k, x, y, 1e-5, ParKOptions{Cells: 8, Centers: 80, Partition: PartitionGreedy, Cap: 1.25, Seed: 2, Iterations: 3})
	if err != nil {
		t.Fatal(err)
	}
	if r := p.Report().Imbalance; r > math.Ceil(1.25*2000/8)*8/2000 {
		t.Fatalf("greedy with cap 1.25: imbalance %g", r)
	}
}

// TestCappedAssign: the offsets reproduce the assignment (argmin D + w),
// the cap holds, and rows move only away from overfull cells' centroids
// (each row's cell is its nearest or the cell's offset made it cheaper).
func TestCappedAssign(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	n, Q := 500, 5
	D := mat.NewDense(n, Q, nil)
	for i := 0; i < n; i++ {
		for q := 0; q < Q; q++ {
			// Cell 0 is everyone's favourite.
			D.Set(i, q, rng.Float64()+0.5*float64(q))
		}
	}
	for _, capRows := range []int{101, 110, 125, 250} {
		w, assign, off := cappedAssign(D, capRows)
		// With 1% slack the raises shrink geometrically and a few rows
		// may end off the rule; with 10% or more, none.
		if off > 0 && capRows > 101 || off > 5 {
			t.Fatalf("cap %d: %d rows off the rule", capRows, off)
		}
		counts := make([]int, Q)
		for i, a := range assign {
			counts[a]++
			if b := argminOffset(rowOf(D, i), w); b != a && off == 0 {
				t.Fatalf("cap %d: row %d assigned %d, rule says %d", capRows, i, a, b)
			}
		}
		if slices.Max(counts) > capRows {
			t.Fatalf("cap %d: counts %v", capRows, counts)
		}
		for _, v := range w {
			if v < 0 {
				t.Fatalf("negative offset %v", w)
			}
		}
	}
}

// TestParKCappedModelFile: a capped model saves its offsets and loads to
// the same predictions and cells; an uncapped model's bytes carry no
// offsets section; malformed offsets are ErrFormat.
func TestParKCappedModelFile(t *testing.T) {
	x, y := clustered(600, 6, 4)
	xt, _ := clustered(200, 2, 5)
	k := testGauss{0.5}
	p, err := FitParK(bg, k, x, y, 1e-5, ParKOptions{Cells: 6, Centers: 60, Cap: 1.1, Seed: 1, Iterations: 5, Partition: PartitionKMeans})
	if err != nil {
		t.Fatal(err)
	}
	pipe, err := NewPipeline(nil, Encoding{Task: TaskRegression}, p)
	if err != nil {
		t.Fatal(err)
	}
	b, err := MarshalPipeline(pipe)
	if err != nil {
		t.Fatal(err)
	}
	back, err := UnmarshalPipeline(b, Options{})
	if err != nil {
		t.Fatal(err)
	}
	lp := back.Model.(*ParK)
	if !slices.Equal(lp.Offsets(), p.Offsets()) {
		t.Fatalf("offsets %v, saved %v", lp.Offsets(), p.Offsets())
	}
	if d := maxAbsDiff(predictAll(t, p, xt), predictAll(t, lp, xt)); d != 0 {
		t.Fatalf("loaded capped model predicts differently by %g", d)
	}
	if got := cellCounts(lp, x); countsDiff(got, p.CellSizes()) > 2*p.Report().OffRule || p.Report().OffRule > 6 {
		t.Fatalf("loaded model assigns the training rows %v, the fit %v (%d off the rule)", got, p.CellSizes(), p.Report().OffRule)
	}
	body, err := p.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	un := *p
	un.offsets = nil
	plain, err := un.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if len(body) != len(plain)+1+8+8*6 || !bytes.Equal(body[:len(plain)], plain) {
		t.Fatalf("offsets section: %d bytes against %d without", len(body), len(plain))
	}
	badTag := bytes.Clone(body)
	badTag[len(plain)] = 9
	short := append(bytes.Clone(plain), parkOffsetsTag, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
	nan := bytes.Clone(body)
	copy(nan[len(nan)-8:], []byte{0, 0, 0, 0, 0, 0, 0xf8, 0x7f})
	for name, bad := range map[string][]byte{"tag": badTag, "count": short, "nan": nan, "truncated": body[:len(body)-3]} {
		if _, err := decodeParK(bad, nil); !errors.Is(err, zonal.ErrFormat) {
			t.Errorf("%s: err = %v", name, err)
		}
	}
}

// TestParKBudgetsAndValidation: effdim budgets stay within 1..n_q and near
// M in total; Validation holds out floor(f n_q) rows per cell and reports a
// finite RMSE that a sensible fit keeps small; CellIterations is applied.
func TestParKBudgetsAndValidation(t *testing.T) {
	x, y := clustered(1000, 0, 8)
	k := testGauss{0.5}
	p, err := FitParK(bg, k, x, y, 1e-6, ParKOptions{Cells: 5, Centers: 150, Budget: BudgetEffDim, Validation: 0.2, Seed: 3,
		CellIterations: func(q, rows, centers int) int { return 8 + q }})
	if err != nil {
		t.Fatal(err)
	}
	r := p.Report()
	total := 0
	for q, c := range r.Cells {
		total += c.Centers
		fitRows := c.Rows - c.ValidationRows
		if c.Centers < 1 || c.Centers > fitRows {
			t.Fatalf("cell %d: %d centres for %d rows", q, c.Centers, fitRows)
		}
		if c.ValidationRows != int(math.Floor(0.2*float64(c.Rows))) {
			t.Fatalf("cell %d: %d validation rows of %d", q, c.ValidationRows, c.Rows)
		}
		// y = sin(x1) + cos(x2)/2 varies by about 3 over the blobs (standard
		// deviation about 0.8); a fitted cell is far below.
		if !(c.ValidationRMSE < 0.25) {
			t.Fatalf("cell %d: validation RMSE %g", q, c.ValidationRMSE)
		}
		if c.Iterations > 8+q {
			t.Fatalf("cell %d ran %d iterations, bound %d", q, c.Iterations, 8+q)
		}
		if lq := 1e-6 * 1000 / float64(fitRows); math.Abs(c.Lambda-lq) > 1e-12*lq {
			t.Fatalf("cell %d: lambda %g, want %g", q, c.Lambda, lq)
		}
	}
	if total < 140 || total > 160 {
		t.Fatalf("effdim budgets sum to %d, want about 150", total)
	}
	if r.Budget != BudgetEffDim {
		t.Fatalf("report budget %q", r.Budget)
	}
}

func TestParKPartitionOptionErrors(t *testing.T) {
	x, y := synth(50, 2, 1)
	k := testGauss{1}
	for name, o := range map[string]ParKOptions{
		"partition":  {Partition: "best"},
		"budget":     {Budget: "rows"},
		"cap < 1":    {Cap: 0.5},
		"cap inf":    {Cap: math.Inf(1)},
		"cap nan":    {Cap: math.NaN()},
		"validation": {Validation: 0.7},
		"val nan":    {Validation: math.NaN()},
	} {
		o.Cells, o.Centers = 2, 10
		if _, err := FitParK(bg, k, x, y, 1e-3, o); !errors.Is(err, zonal.ErrParam) {
			t.Errorf("%s: err = %v", name, err)
		}
	}
}

// TestParKOverlap: every cell trains on its own rows plus at most
// Overlap n_q halo rows, the assignment (CellSizes, prediction cells) is
// the one without overlap, and both fits stay accurate on the blobs (on
// well separated blobs the halo does not help: test RMSE 0.006 without,
// 0.010 with; on digits it does, see bench/README.md).
func TestParKOverlap(t *testing.T) {
	x, y := clustered(1500, 0, 21)
	xt, yt := clustered(500, 0, 22)
	k := testGauss{0.5}
	base := ParKOptions{Cells: 8, Centers: 240, Seed: 4, Iterations: 30}
	p0, err := FitParK(bg, k, x, y, 1e-6, base)
	if err != nil {
		t.Fatal(err)
	}
	o := base
	o.Overlap = 0.5
	p1, err := FitParK(bg, k, x, y, 1e-6, o)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(p0.CellSizes(), p1.CellSizes()) || !mat.Equal(p0.Centroids(), p1.Centroids()) {
		t.Fatal("overlap changed the partition")
	}
	halo := 0
	for q, c := range p1.Report().Cells {
		if c.Halo < 0 || c.Halo > c.Rows/2 {
			t.Fatalf("cell %d: halo %d for %d rows", q, c.Halo, c.Rows)
		}
		halo += c.Halo
		if p0.Report().Cells[q].Halo != 0 {
			t.Fatal("halo without overlap")
		}
	}
	if halo == 0 {
		t.Fatal("no halo rows")
	}
	e0 := RMSE(predictAll(t, p0, xt).RawMatrix().Data, yt.RawMatrix().Data)
	e1 := RMSE(predictAll(t, p1, xt).RawMatrix().Data, yt.RawMatrix().Data)
	t.Logf("test RMSE without overlap %.4g, with 0.5: %.4g (%d halo rows)", e0, e1, halo)
	// y has standard deviation about 0.8.
	if !(e0 < 0.03 && e1 < 0.03) {
		t.Fatalf("test RMSE %g without overlap, %g with", e0, e1)
	}
	o.Overlap = 1.5
	if _, err := FitParK(bg, k, x, y, 1e-6, o); !errors.Is(err, zonal.ErrParam) {
		t.Fatalf("overlap 1.5: %v", err)
	}
}

// TestSubsampleTrimsOutliers: on blobs with 20 isolated outliers (rows
// 0..19 of clustered) the farthest-point rule takes outliers as centroids
// while its trimmed-subsample variant and k-means never do, for several
// seeds.
func TestSubsampleTrimsOutliers(t *testing.T) {
	x, _ := clustered(2000, 20, 11)
	n, _ := x.Dims()
	diag := make([]float64, n)
	for i := range diag {
		diag[i] = 1 // testGauss: k(x, x) = 1
	}
	k := testGauss{0.5}
	greedyOutliers := 0
	for seed := uint64(1); seed <= 4; seed++ {
		for _, part := range []Partition{PartitionGreedy, PartitionSubsample, PartitionKMeans} {
			p, err := makePartition(bg, nil, k, x, diag, ParKOptions{Cells: 8, Partition: part, Seed: seed})
			if err != nil {
				t.Fatal(err)
			}
			out := 0
			for _, c := range p.cidx {
				if c < 20 {
					out++
				}
			}
			if part == PartitionGreedy {
				greedyOutliers += out
			} else if out > 0 {
				t.Fatalf("%s seed %d: %d outlier centroids %v", part, seed, out, p.cidx)
			}
		}
	}
	if greedyOutliers == 0 {
		t.Fatal("the farthest-point rule took no outlier: the test data do not exercise trimming")
	}
}

// TestEffDimBudget: with a tiny lambda n every ridge leverage score is 1,
// N_q = n_q and the effdim budget equals the size budget (to rounding);
// with a large one the scores fall, and a cell of duplicated rows (one
// point in feature space, effective dimension at most 1) gets fewer centres
// than its share of rows.
func TestEffDimBudget(t *testing.T) {
	x, _ := clustered(900, 0, 5)
	k := testGauss{0.5}
	rows := [][]int{}
	for q := 0; q < 3; q++ {
		var r []int
		for i := q; i < 900; i += 3 {
			r = append(r, i)
		}
		rows = append(rows, r)
	}
	diag, _ := kernelDiag(bg, nil, k, x)
	got, err := effDimBudget(bg, nil, k, x, diag, rows, 90, cellRegs(rows, rowWeights{sum: 900}, 1e-14), 1)
	if err != nil {
		t.Fatal(err)
	}
	want := sizeBudget([]int{300, 300, 300}, 90)
	for q := range got {
		if d := got[q] - want[q]; d < -1 || d > 1 {
			t.Fatalf("tiny lambda: effdim budget %v, size budget %v", got, want)
		}
	}
	// Cell 2 becomes 300 copies of one row.
	xd := mat.DenseCopyOf(x)
	for _, i := range rows[2] {
		copy(rowOf(xd, i), rowOf(x, rows[2][0]))
	}
	diag, _ = kernelDiag(bg, nil, k, xd)
	got, err = effDimBudget(bg, nil, k, xd, diag, rows, 90, cellRegs(rows, rowWeights{sum: 900}, 1e-4), 1)
	if err != nil {
		t.Fatal(err)
	}
	if !(got[2] < got[0]/4 && got[2] < got[1]/4) {
		t.Fatalf("duplicated cell got %v centres", got)
	}
}
