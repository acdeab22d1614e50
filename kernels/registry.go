package kernels

import (
	"errors"
	"fmt"
	"sync"

	"github.com/zonal-ml/zonal"
)

// The codec registry: decoders of serialized kernels and feature maps by
// kind. Every kind of this package is registered in the init below (one
// list, so a new kernel or map is added here and nowhere else); packages
// that define more maps (tensorsketch, kpca) register theirs from their own
// init. Nothing in the module decodes a kind any other way.

var (
	codecMu        sync.RWMutex
	mapDecoders    = map[string]func([]byte) (FeatureMap, error){}
	kernelDecoders = map[string]func([]byte) (Kernel, error){}
)

func init() {
	for kind, dec := range map[string]func([]byte) (Kernel, error){
		"gaussian":   decodeGaussian,
		"laplacian":  decodeLaplacian,
		"polynomial": decodePolynomial,
		"expdot":     decodeExpDot,
		"arccos":     decodeArcCosine,
		"ntk":        decodeNTK,
		"dotproduct": decodeDotProduct,
		"gzk":        decodeGZK,
	} {
		RegisterKernel(kind, dec)
	}
	for kind, dec := range map[string]func([]byte) (FeatureMap, error){
		"fourier":    decodeFourier,
		"gegenbauer": decodeGegenbauer,
		"nystrom":    decodeNystrom,
	} {
		RegisterMap(kind, dec)
	}
}

// RegisterMap registers the decoder for serialized maps of the given kind
// (the map's Kind()); decode receives what the map's MarshalBinary wrote.
// Packages that define maps call it from init. Registering a kind twice is a
// programming error and panics, as database/sql.Register does.
func RegisterMap(kind string, decode func([]byte) (FeatureMap, error)) {
	codecMu.Lock()
	defer codecMu.Unlock()
	if _, dup := mapDecoders[kind]; dup {
		panic("kernels: RegisterMap called twice for " + kind)
	}
	mapDecoders[kind] = decode
}

// UnmarshalMap rebuilds a map saved with PersistentMap.MarshalBinary.
// Errors: zonal.ErrUnknown when no decoder is registered for kind (the
// package defining it is not imported); zonal.ErrFormat when data is
// malformed (also wrapping zonal.ErrParam when it decodes to invalid
// parameters).
func UnmarshalMap(kind string, data []byte) (FeatureMap, error) {
	codecMu.RLock()
	dec, ok := mapDecoders[kind]
	codecMu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("%w: feature map %q (is its package imported?)", zonal.ErrUnknown, kind)
	}
	m, err := dec(data)
	if err != nil {
		return nil, asFormat("feature map", kind, err)
	}
	return m, nil
}

// RegisterKernel registers the decoder for serialized kernels of the given
// kind (the kernel's Kind()); decode receives what its MarshalBinary wrote.
// Registering a kind twice is a programming error and panics.
func RegisterKernel(kind string, decode func([]byte) (Kernel, error)) {
	codecMu.Lock()
	defer codecMu.Unlock()
	if _, dup := kernelDecoders[kind]; dup {
		panic("kernels: RegisterKernel called twice for " + kind)
	}
	kernelDecoders[kind] = decode
}

// UnmarshalKernel rebuilds a kernel saved with Kernel.MarshalBinary.
// Errors: zonal.ErrUnknown for an unregistered kind; zonal.ErrFormat when
// data is malformed (also wrapping zonal.ErrParam when it decodes to invalid
// parameters).
func UnmarshalKernel(kind string, data []byte) (Kernel, error) {
	codecMu.RLock()
	dec, ok := kernelDecoders[kind]
	codecMu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("%w: kernel %q", zonal.ErrUnknown, kind)
	}
	k, err := dec(data)
	if err != nil {
		return nil, asFormat("kernel", kind, err)
	}
	return k, nil
}

// asFormat makes a decoder's error wrap zonal.ErrFormat (it keeps what it
// wrapped already, e.g. the zonal.ErrParam of an invalid decoded parameter).
func asFormat(what, kind string, err error) error {
	if errors.Is(err, zonal.ErrFormat) || errors.Is(err, zonal.ErrUnknown) {
		return err
	}
	return fmt.Errorf("%w: %s %q: %w", zonal.ErrFormat, what, kind, err)
}
