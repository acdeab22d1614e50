package main

import (
	"flag"
	"math"
	"slices"
	"strings"

	"github.com/zonal-ml/zonal/solvers"
)

// parkFlags are the partition flags of `zonal fit -method park`.
type parkFlags struct {
	partition  string
	cap        float64
	budget     string
	validation float64
	overlap    float64
}

func (p *parkFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&p.partition, "partition", solvers.DefaultPartition, "ParK centroid strategy: "+strings.Join(solvers.PartitionStrategies, ", "))
	fs.Float64Var(&p.cap, "cell-cap", 0, "ParK: no cell above C n/Q rows, overflow to the next-nearest centroid (0 = no cap, else >= 1)")
	fs.StringVar(&p.budget, "cell-centers", solvers.BudgetSize, "ParK: share of -centers per cell: size (by rows) or effdim (by estimated effective dimension)")
	fs.Float64Var(&p.overlap, "cell-overlap", 0, "ParK: each cell also trains on up to this fraction (0 to 1) of its rows taken from neighbouring cells, nearest the boundary first")
	fs.Float64Var(&p.validation, "cell-validation", 0, "ParK: hold out this fraction of every cell (0 to 0.5) and report its RMSE per cell")
}

func (p *parkFlags) check() error {
	if !slices.Contains(solvers.PartitionStrategies, p.partition) {
		return usagef("unknown -partition %q (%s)", p.partition, strings.Join(solvers.PartitionStrategies, ", "))
	}
	if p.cap != 0 && !(p.cap >= 1 && !math.IsInf(p.cap, 0)) {
		return usagef("-cell-cap must be 0 or a finite factor >= 1, got %g", p.cap)
	}
	if p.budget != solvers.BudgetSize && p.budget != solvers.BudgetEffDim {
		return usagef("-cell-centers %q: want size or effdim", p.budget)
	}
	if !(p.overlap >= 0 && p.overlap <= 1) {
		return usagef("-cell-overlap must be in [0, 1], got %g", p.overlap)
	}
	if !(p.validation >= 0 && p.validation <= 0.5) {
		return usagef("-cell-validation must be in [0, 0.5], got %g", p.validation)
	}
	return nil
}

func (p *parkFlags) options(o solvers.ParKOptions) solvers.ParKOptions {
	o.Partition, o.Cap, o.Budget, o.Validation, o.Overlap = p.partition, p.cap, p.budget, p.validation, p.overlap
	return o
}

// parkJSON is the "partition" object of `zonal fit -json` for ParK.
type parkJSON struct {
	Strategy         string         `json:"strategy"`
	Cap              float64        `json:"cap"`
	Overlap          float64        `json:"overlap"`
	Budget           string         `json:"budget"`
	Sizes            []int          `json:"sizes"`
	Imbalance        float64        `json:"largest_over_mean"`
	PartitionSeconds float64        `json:"partition_seconds"`
	Cells            []parkCellJSON `json:"cells"`
}

type parkCellJSON struct {
	Rows           int      `json:"rows"`
	Halo           int      `json:"halo"`
	Centers        int      `json:"centers"`
	Lambda         float64  `json:"lambda"`
	Iterations     int      `json:"iterations"`
	Converged      bool     `json:"converged"`
	FitSeconds     float64  `json:"fit_seconds"`
	ValidationRows int      `json:"validation_rows"`
	ValidationRMSE *float64 `json:"validation_rmse"`
}

func newParkJSON(r *solvers.ParKReport, sizes []int) *parkJSON {
	if r == nil {
		return nil
	}
	j := &parkJSON{Strategy: r.Partition, Cap: r.Cap, Overlap: r.Overlap, Budget: r.Budget, Sizes: sizes,
		Imbalance: r.Imbalance, PartitionSeconds: r.PartitionSeconds}
	for _, c := range r.Cells {
		v := c.ValidationRMSE
		j.Cells = append(j.Cells, parkCellJSON{Rows: c.Rows, Halo: c.Halo, Centers: c.Centers, Lambda: c.Lambda, Iterations: c.Iterations,
			Converged: c.Converged, FitSeconds: c.FitSeconds, ValidationRows: c.ValidationRows, ValidationRMSE: finite(&v)})
	}
	return j
}

// cellValidation returns the cells' validation RMSEs that exist, sorted.
func cellValidation(r *solvers.ParKReport) []float64 {
	var v []float64
	for _, c := range r.Cells {
		if c.ValidationRows > 0 && !math.IsNaN(c.ValidationRMSE) {
			v = append(v, c.ValidationRMSE)
		}
	}
	slices.Sort(v)
	return v
}
