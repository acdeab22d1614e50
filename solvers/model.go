package solvers

import (
	"fmt"
	"slices"
	"sync"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/backend"
)

// Model is a fitted predictor with k outputs. Fitted models are immutable
// and safe for concurrent use.
//
// The models of this package (Ridge, KRR, Falkon, ParK) do their linear
// algebra at prediction time on the backend they were fitted with
// (Options.Backend, resolved when the fit starts) or, after loading, on the
// one Load was given; Predict never looks backend.Default() up itself.
type Model interface {
	// Kind names the model type, e.g. KindFalkon; for a PersistentModel it
	// selects the decoder registered with RegisterModel.
	Kind() string
	// InputDim is the number of input features d.
	InputDim() int
	// Outputs is the number of outputs k.
	Outputs() int
	// Predict writes the k outputs of every row of x (n x d) to the rows of
	// dst (n x k). The models of this package take x as a *mat.Dense or a
	// *dataset.CSR (never densified) and refuse other matrix types.
	Predict(dst *mat.Dense, x mat.Matrix) error
}

// PersistentModel is a Model that can be saved in a model file. Every model
// of this package is one.
type PersistentModel interface {
	Model
	// MarshalBinary encodes everything needed to rebuild the model exactly
	// (not its kind, which the file stores before it).
	MarshalBinary() ([]byte, error)
}

// ModelDecoder rebuilds a model from the bytes its MarshalBinary wrote. be is
// the backend the model is to predict on; it is never nil. A decoder must
// reject data it does not consume entirely.
type ModelDecoder func(data []byte, be backend.Backend) (Model, error)

var (
	modelMu       sync.RWMutex
	modelDecoders = map[string]ModelDecoder{}
)

// RegisterModel registers the decoder of a model kind. Each model type calls
// it from an init function in its own file, so adding a solver touches no
// other file of the model format. Registering a kind twice, an empty kind or
// a nil decoder is a programming error and panics.
func RegisterModel(kind string, decode ModelDecoder) {
	if kind == "" || decode == nil {
		panic("solvers: RegisterModel needs a kind and a decoder")
	}
	modelMu.Lock()
	defer modelMu.Unlock()
	if _, dup := modelDecoders[kind]; dup {
		panic("solvers: RegisterModel called twice for " + kind)
	}
	modelDecoders[kind] = decode
}

// ModelKinds returns the registered model kinds, sorted.
func ModelKinds() []string {
	modelMu.RLock()
	defer modelMu.RUnlock()
	kinds := make([]string, 0, len(modelDecoders))
	for k := range modelDecoders {
		kinds = append(kinds, k)
	}
	slices.Sort(kinds)
	return kinds
}

func modelDecoder(kind string) (ModelDecoder, bool) {
	modelMu.RLock()
	defer modelMu.RUnlock()
	d, ok := modelDecoders[kind]
	return d, ok
}

// UnmarshalModel rebuilds a model of the given kind from the bytes its
// MarshalBinary wrote. The model predicts on opts.Backend, or on
// backend.Default() as it is when UnmarshalModel runs if that is nil;
// opts.MemoryBudget and opts.Progress are not used (the decoders allocate
// about len(data) bytes).
//
// Errors: zonal.ErrUnknown for a kind nobody registered; whatever the kind's
// decoder returns otherwise (for this package's kinds, zonal.ErrFormat for
// malformed data).
func UnmarshalModel(kind string, data []byte, opts Options) (Model, error) {
	dec, ok := modelDecoder(kind)
	if !ok {
		return nil, fmt.Errorf("%w: model kind %q (registered: %v)", zonal.ErrUnknown, kind, ModelKinds())
	}
	return dec(data, opts.backend())
}
