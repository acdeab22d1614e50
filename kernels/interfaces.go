package kernels

import (
	"fmt"
	"sync"

	"github.com/zonal-ml/zonal"
	"gonum.org/v1/gonum/mat"
)

// Kernel is a positive-definite kernel k(x, y) on R^d.
//
// A Kernel value is immutable and safe for concurrent use. Kind names the
// family ("gaussian", "polynomial", ...) and MarshalBinary its parameters, so
// fitted models can store the kernel (see UnmarshalKernel).
type Kernel interface {
	// Eval returns k(x, y); x and y have the same length.
	Eval(x, y []float64) float64
	// Kind names the kernel family, e.g. "gaussian".
	Kind() string
	// String describes the kernel and its parameters, e.g. "gaussian(sigma=2)".
	String() string
	// MarshalBinary encodes the parameters (not the kind).
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
	// dst (n x D). dst must already have that shape.
	Transform(dst *mat.Dense, x mat.Matrix) error
}

// PersistentMap is a FeatureMap that can be saved in a model file.
type PersistentMap interface {
	FeatureMap
	// Kind names the map type, e.g. "gegenbauer"; it selects the decoder.
	Kind() string
	// MarshalBinary encodes everything needed to rebuild the map exactly.
	MarshalBinary() ([]byte, error)
}

var (
	codecMu        sync.RWMutex
	mapDecoders    = map[string]func([]byte) (FeatureMap, error){}
	kernelDecoders = map[string]func([]byte) (Kernel, error){}
)

// RegisterMap registers the decoder for serialized maps of the given kind.
// Packages that define maps (kernels, tensorsketch, kpca) call it from init.
func RegisterMap(kind string, decode func([]byte) (FeatureMap, error)) {
	codecMu.Lock()
	defer codecMu.Unlock()
	if _, dup := mapDecoders[kind]; dup {
		panic("kernels: RegisterMap called twice for " + kind)
	}
	mapDecoders[kind] = decode
}

// UnmarshalMap rebuilds a map saved with PersistentMap.MarshalBinary.
func UnmarshalMap(kind string, data []byte) (FeatureMap, error) {
	codecMu.RLock()
	dec, ok := mapDecoders[kind]
	codecMu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("%w: feature map %q (is its package imported?)", zonal.ErrUnknown, kind)
	}
	return dec(data)
}

// RegisterKernel registers the decoder for serialized kernels of the given kind.
func RegisterKernel(kind string, decode func([]byte) (Kernel, error)) {
	codecMu.Lock()
	defer codecMu.Unlock()
	if _, dup := kernelDecoders[kind]; dup {
		panic("kernels: RegisterKernel called twice for " + kind)
	}
	kernelDecoders[kind] = decode
}

// UnmarshalKernel rebuilds a kernel saved with Kernel.MarshalBinary.
func UnmarshalKernel(kind string, data []byte) (Kernel, error) {
	codecMu.RLock()
	dec, ok := kernelDecoders[kind]
	codecMu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("%w: kernel %q", zonal.ErrUnknown, kind)
	}
	return dec(data)
}
