package main

import (
	"math"
	"slices"

	"github.com/zonal-ml/zonal/solvers"
)

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
	j := &parkJSON{Strategy: r.Partition.String(), Cap: r.Cap, Overlap: r.Overlap, Budget: r.Budget.String(), Sizes: sizes,
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
