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
	kernelCodecs = &codecs[Kernel]{what: "kernel", hint: ""}
	mapCodecs    = &codecs[FeatureMap]{what: "feature map", hint: " (is its package imported?)"}
)

// codecs is one registry: the decoder of every registered kind.
type codecs[T any] struct {
	what, hint string // for messages
	mu         sync.RWMutex
	dec        map[string]func([]byte) (T, error)
}

func (c *codecs[T]) register(kind string, decode func([]byte) (T, error)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, dup := c.dec[kind]; dup {
		panic("kernels: " + c.what + " kind " + kind + " registered twice")
	}
	if c.dec == nil {
		c.dec = map[string]func([]byte) (T, error){}
	}
	c.dec[kind] = decode
}

func (c *codecs[T]) decode(kind string, data []byte) (T, error) {
	var zero T
	c.mu.RLock()
	dec, ok := c.dec[kind]
	c.mu.RUnlock()
	if !ok {
		return zero, fmt.Errorf("%w: %s %q%s", zonal.ErrUnknown, c.what, kind, c.hint)
	}
	v, err := dec(data)
	if err != nil {
		// A decoder's error wraps zonal.ErrFormat, keeping what it wrapped
		// already (e.g. the zonal.ErrParam of an invalid decoded parameter).
		if errors.Is(err, zonal.ErrFormat) || errors.Is(err, zonal.ErrUnknown) {
			return zero, err
		}
		return zero, fmt.Errorf("%w: %s %q: %w", zonal.ErrFormat, c.what, kind, err)
	}
	return v, nil
}

// has reports whether kind is registered.
func (c *codecs[T]) has(kind string) bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	_, ok := c.dec[kind]
	return ok
}

// kinds returns the registered kinds.
func (c *codecs[T]) kinds() []string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := make([]string, 0, len(c.dec))
	for k := range c.dec {
		out = append(out, k)
	}
	return out
}

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
	mapCodecs.register(kind, decode)
}

// UnmarshalMap rebuilds a map saved with PersistentMap.MarshalBinary.
// Errors: zonal.ErrUnknown when no decoder is registered for kind (the
// package defining it is not imported); zonal.ErrFormat when data is
// malformed (also wrapping zonal.ErrParam when it decodes to invalid
// parameters).
func UnmarshalMap(kind string, data []byte) (FeatureMap, error) {
	return mapCodecs.decode(kind, data)
}

// RegisterKernel registers the decoder for serialized kernels of the given
// kind (the kernel's Kind()); decode receives what its MarshalBinary wrote.
// Registering a kind twice is a programming error and panics.
func RegisterKernel(kind string, decode func([]byte) (Kernel, error)) {
	kernelCodecs.register(kind, decode)
}

// UnmarshalKernel rebuilds a kernel saved with Kernel.MarshalBinary.
// Errors: zonal.ErrUnknown for an unregistered kind; zonal.ErrFormat when
// data is malformed (also wrapping zonal.ErrParam when it decodes to invalid
// parameters).
func UnmarshalKernel(kind string, data []byte) (Kernel, error) {
	return kernelCodecs.decode(kind, data)
}
