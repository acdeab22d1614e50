package solvers

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/backend"
)

// constModel predicts the same outputs for every row: a solver added from
// outside the model file's code, through RegisterModel alone.
type constModel struct {
	d   int
	out []float64
	be  backend.Backend
}

const constKind = "solvers-test-const"

func (c *constModel) Kind() string  { return constKind }
func (c *constModel) InputDim() int { return c.d }
func (c *constModel) Outputs() int  { return len(c.out) }
func (c *constModel) Predict(dst *mat.Dense, x mat.Matrix) error {
	if err := checkPredict(dst, x, c.d, len(c.out)); err != nil {
		return err
	}
	fillRows(dst, c.out)
	return nil
}
func (c *constModel) MarshalBinary() ([]byte, error) {
	e := &enc{}
	e.u64(uint64(c.d))
	e.floats(c.out)
	return e.b, nil
}

func init() {
	RegisterModel(constKind, func(data []byte, be backend.Backend) (Model, error) {
		d := &dec{b: data}
		dim := d.u64("d")
		out := d.floats("outputs")
		if err := d.end(); err != nil {
			return nil, err
		}
		if dim == 0 || dim > 1<<20 || len(out) == 0 {
			return nil, fmt.Errorf("%w: bad constant model", zonal.ErrFormat)
		}
		return &constModel{d: int(dim), out: out, be: be}, nil
	})
}

// unsavable is a Model that is not a PersistentModel.
type unsavable struct{ constModel }

func (unsavable) MarshalBinary() {}

// unregistered is a PersistentModel whose kind has no decoder.
type unregistered struct{ constModel }

func (unregistered) Kind() string { return "solvers-test-unregistered" }

func TestModelRegistry(t *testing.T) {
	kinds := ModelKinds()
	for _, k := range []string{KindRidge, KindKRR, KindFalkon, KindParK, constKind} {
		if !slices.Contains(kinds, k) {
			t.Errorf("kind %q not registered; have %v", k, kinds)
		}
	}
	if !slices.IsSorted(kinds) {
		t.Errorf("ModelKinds not sorted: %v", kinds)
	}

	// A registered kind round-trips through a model file, and the decoder
	// gets the backend of Load (or the default).
	m := &constModel{d: 2, out: []float64{1.5, -2}}
	p, err := NewPipeline(nil, Encoding{Task: TaskRegression}, &constModel{d: 2, out: []float64{1.5}})
	if err != nil {
		t.Fatal(err)
	}
	b, err := MarshalPipeline(p)
	if err != nil {
		t.Fatal(err)
	}
	cb := newCountingBackend()
	q, err := UnmarshalPipeline(b, Options{Backend: cb})
	if err != nil {
		t.Fatal(err)
	}
	if c, ok := q.Model.(*constModel); !ok || c.d != 2 || !slices.Equal(c.out, []float64{1.5}) || c.be != cb {
		t.Fatalf("reloaded %#v", q.Model)
	}
	q, err = UnmarshalPipeline(b, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if c := q.Model.(*constModel); c.be != backend.Default() {
		t.Fatalf("loaded without a backend: %v, want the default %v", c.be, backend.Default())
	}

	// UnmarshalModel decodes the model bytes alone.
	mb, _ := m.MarshalBinary()
	got, err := UnmarshalModel(constKind, mb, Options{})
	if err != nil || got.Outputs() != 2 {
		t.Fatalf("UnmarshalModel: %v, %v", got, err)
	}
	if _, err := UnmarshalModel("no-such-kind", mb, Options{}); !errors.Is(err, zonal.ErrUnknown) {
		t.Errorf("unknown kind: %v, want zonal.ErrUnknown", err)
	}
	if _, err := UnmarshalModel(constKind, append(mb, 0), Options{}); !errors.Is(err, zonal.ErrFormat) {
		t.Errorf("trailing byte: %v, want zonal.ErrFormat", err)
	}

	// A file naming a kind nobody registered is malformed.
	bad := bytes.Replace(b[:len(b)-4], []byte(constKind), []byte("solvers-test-cnost"), 1)
	if _, err := UnmarshalPipeline(fixCRC(append(bad, 0, 0, 0, 0)), Options{}); !errors.Is(err, zonal.ErrFormat) || !errors.Is(err, zonal.ErrUnknown) {
		t.Errorf("unregistered kind in file: %v, want zonal.ErrFormat and zonal.ErrUnknown", err)
	}

	// Models that could not be loaded again are not saved.
	for _, m := range []Model{&unsavable{constModel{d: 1, out: []float64{0}}}, &unregistered{constModel{d: 1, out: []float64{0}}}} {
		p, err := NewPipeline(nil, Encoding{Task: TaskRegression}, m)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := MarshalPipeline(p); !errors.Is(err, zonal.ErrParam) {
			t.Errorf("%T: %v, want zonal.ErrParam", m, err)
		}
	}

	// Registering a kind twice, or without a decoder, panics.
	for name, f := range map[string]func(){
		"twice":      func() { RegisterModel(KindRidge, decodeRidge) },
		"no decoder": func() { RegisterModel("solvers-test-nil", nil) },
		"no kind":    func() { RegisterModel("", decodeRidge) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("RegisterModel %s did not panic", name)
				}
			}()
			f()
		}()
	}
}
