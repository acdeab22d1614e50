package kpca

import (
	"bytes"
	"encoding/binary"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal/backend"
	"github.com/zonal-ml/zonal/kernels"
)

// ModelKind is the kind under which Model is registered with
// kernels.RegisterMap: kernels.UnmarshalMap(kpca.ModelKind, data) (or
// UnmarshalModel) decodes what Model.MarshalBinary wrote.
const ModelKind = "kpca"

func init() {
	kernels.RegisterMap(ModelKind, func(data []byte) (kernels.FeatureMap, error) {
		return UnmarshalModel(data)
	})
}

// Kind returns "kpca" (Model is a kernels.PersistentMap).
func (m *Model) Kind() string { return ModelKind }

// Scores returns the scores of the n training points on the k components
// (n x k): score_j(x_i) = sqrt(lambda_j) U_ij, what Transform gives for a
// training point (K' U = U Lambda), without recomputing kernel rows;
// numerically zero components (see Transform) score 0.
func (m *Model) Scores() *mat.Dense {
	n, _ := m.x.Dims()
	k := len(m.vals)
	out := mat.NewDense(max(n, 1), max(k, 1), nil)
	if k == 0 {
		return out
	}
	for j := 0; j < k; j++ {
		if m.vals[j] <= m.nullTol {
			continue
		}
		s := math.Sqrt(m.vals[j])
		for i := 0; i < n; i++ {
			out.Set(i, j, m.vecs.At(i, j)*s)
		}
	}
	return out
}

const modelVersion = 1

// MarshalBinary encodes the model: the kernel (kind and parameters), the
// training points, the centring (row means, grand mean), the trace, the
// null tolerance and the k eigenpairs, all float64 values bit for bit, so
// UnmarshalModel rebuilds a model whose Transform gives the same bits (on
// the same backend). Errors: those of the kernel's MarshalBinary
// (zonal.ErrParam for kernels that cannot be stored).
func (m *Model) MarshalBinary() ([]byte, error) {
	var buf bytes.Buffer
	if err := writeKernelHeader(&buf, modelVersion, m.kernel); err != nil {
		return nil, err
	}
	w := func(v any) { binary.Write(&buf, binary.LittleEndian, v) }
	n, d := m.x.Dims()
	k := len(m.vals)
	centred := uint32(0)
	if m.centred {
		centred = 1
	}
	w([4]uint32{centred, uint32(n), uint32(d), uint32(k)})
	w([3]float64{m.mean2, m.trace, m.nullTol})
	for i := 0; i < n; i++ {
		w(m.x.RawRowView(i))
	}
	w(m.rowMean)
	w(m.vals)
	if k > 0 {
		for i := 0; i < n; i++ {
			w(m.vecs.RawRowView(i))
		}
	}
	return buf.Bytes(), nil
}

// UnmarshalModel decodes a model written by Model.MarshalBinary; the
// kernel's kind must be registered (kernels.RegisterKernel). The backend is
// backend.Default(). Errors: zonal.ErrVersion (another format version),
// zonal.ErrFormat (truncated, inconsistent or non-finite data), and those
// of kernels.UnmarshalKernel.
func UnmarshalModel(data []byte) (*Model, error) {
	r := bytes.NewReader(data)
	bad := func(part string) error { return malformed("model", part) }
	kern, err := readKernelHeader(r, modelVersion, "model")
	if err != nil {
		return nil, err
	}
	var hdr [4]uint32
	var sc [3]float64
	if binary.Read(r, binary.LittleEndian, &hdr) != nil || binary.Read(r, binary.LittleEndian, &sc) != nil {
		return nil, bad("header")
	}
	// The rest is n*d + n + k + n*k floats exactly; checked by division so
	// that no product of header values can overflow.
	centred, n, d, k := hdr[0], int(hdr[1]), int(hdr[2]), int(hdr[3])
	rest := r.Len()
	if centred > 1 || n == 0 || d == 0 || k > n || rest%8 != 0 {
		return nil, bad("dimensions")
	}
	floats := rest / 8
	if (floats-k)%n != 0 || (floats-k)/n != d+1+k {
		return nil, bad("dimensions")
	}
	x := mat.NewDense(n, d, nil)
	rowMean := make([]float64, n)
	vals := make([]float64, k)
	vecs := mat.NewDense(n, max(k, 1), nil)
	if binary.Read(r, binary.LittleEndian, x.RawMatrix().Data) != nil ||
		binary.Read(r, binary.LittleEndian, rowMean) != nil ||
		binary.Read(r, binary.LittleEndian, vals) != nil {
		return nil, bad("data")
	}
	if k > 0 {
		if binary.Read(r, binary.LittleEndian, vecs.RawMatrix().Data) != nil {
			return nil, bad("data")
		}
	} else {
		vecs = &mat.Dense{}
	}
	for _, v := range append(append(append([]float64(nil), sc[:]...), rowMean...), vals...) {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, bad("values")
		}
	}
	if checkFinite(x) != nil || (k > 0 && checkFinite(vecs) != nil) {
		return nil, bad("values")
	}
	m := &Model{kernel: kern, b: backend.Default(), x: x, centred: centred == 1, rowMean: rowMean,
		mean2: sc[0], trace: sc[1], nullTol: sc[2], vals: vals, vecs: vecs}
	m.setProjection()
	return m, nil
}

// setProjection fills proj = U_j / sqrt(lambda_j) for the components above
// nullTol (zero columns for the others) and counts them.
func (m *Model) setProjection() {
	n, _ := m.x.Dims()
	kk := len(m.vals)
	m.proj = mat.NewDense(n, max(kk, 1), nil)
	if kk == 0 {
		m.proj = &mat.Dense{}
	}
	m.nonzeros = 0
	for j := 0; j < kk; j++ {
		if m.vals[j] <= m.nullTol {
			continue
		}
		m.nonzeros++
		sc := 1 / math.Sqrt(m.vals[j])
		for i := 0; i < n; i++ {
			m.proj.Set(i, j, m.vecs.At(i, j)*sc)
		}
	}
}
