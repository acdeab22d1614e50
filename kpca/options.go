package kpca

import "github.com/zonal-ml/zonal/backend"

// Options configure batch and incremental kernel PCA.
type Options struct {
	// MeanAdjust centres the data in feature space (K' = H K H). Without it
	// the eigendecomposition is of K itself.
	MeanAdjust bool
	// Components keeps the top r eigenpairs; 0 keeps all of them. For
	// Incremental a positive value truncates after every update (see the
	// package documentation for the error this introduces).
	Components int
	// Backend runs the linear algebra; nil means backend.Default().
	Backend backend.Backend

	// ReorthThreshold > 0 turns on periodic re-orthogonalisation
	// (Incremental only): every CheckEvery points the drift is estimated with
	// Probes random probes (seeded by Seed) and, if the relative
	// reconstruction error or the orthogonality estimate exceeds the
	// threshold, the basis is refreshed by a Rayleigh-Ritz step.
	ReorthThreshold float64
	// CheckEvery is the check period in points; 0 means 50.
	CheckEvery int
	// Probes is the number of random probe vectors; 0 means 4.
	Probes int
	// Seed seeds the probe vectors.
	Seed uint64
}

func (o *Options) backend() backend.Backend {
	if o.Backend != nil {
		return o.Backend
	}
	return backend.Default()
}
