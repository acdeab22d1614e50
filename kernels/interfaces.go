package kernels

import "gonum.org/v1/gonum/mat"

// Kernel is a positive-definite kernel k(x, y) on R^d.
//
// A Kernel value is immutable and safe for concurrent use. Kind names the
// family ("gaussian", "polynomial", ...) and MarshalBinary its parameters, so
// fitted models can store the kernel: every kind is registered with
// RegisterKernel and rebuilt by UnmarshalKernel (registry.go).
type Kernel interface {
	// Eval returns k(x, y); x and y have the same length.
	Eval(x, y []float64) float64
	// Kind names the kernel family, e.g. "gaussian".
	Kind() string
	// String describes the kernel and its parameters, e.g. "gaussian(sigma=2)".
	String() string
	// MarshalBinary encodes the parameters (not the kind). It fails
	// (zonal.ErrParam) only for kernels that cannot be stored, such as a
	// GZK of user radial functions.
	MarshalBinary() ([]byte, error)
}

// FeatureMap maps points x in R^d to features z(x) in R^D such that
// z(x).z(y) approximates (or equals) a kernel k(x, y).
//
// A constructed map is immutable, deterministic (randomness comes from an
// explicit seed) and safe for concurrent use by many goroutines.
type FeatureMap interface {
	// InputDim is d, the dimension of the input points.
	InputDim() int
	// Dim is D, the number of features.
	Dim() int
	// Transform writes the features of the rows of x (n x d) to the rows of
	// dst (n x D). dst must already have that shape. Errors: zonal.ErrEmpty
	// (nil or empty x or dst), zonal.ErrShape (x without d columns, dst not
	// n x D), zonal.ErrNonFinite (NaN or Inf in x).
	Transform(dst *mat.Dense, x mat.Matrix) error
}

// PersistentMap is a FeatureMap that can be saved in a model file. Its kind
// is registered with RegisterMap and rebuilt by UnmarshalMap (registry.go).
type PersistentMap interface {
	FeatureMap
	// Kind names the map type, e.g. "gegenbauer"; it selects the decoder.
	Kind() string
	// MarshalBinary encodes everything needed to rebuild the map exactly;
	// zonal.ErrParam for maps that cannot be stored (user radial functions).
	MarshalBinary() ([]byte, error)
}
