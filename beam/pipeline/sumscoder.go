package pipeline

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/zonal-ml/zonal"
)

// The coder of Sums. A group's sum is one element of M^2 + O(M) floats (200
// MB at M = 5000), and with the in-process prism runner every copy of it
// that the runner and the SDK make is in the job's one process: the SDK's
// default for a struct (a schema row, length-prefixed through a buffer the
// encoder keeps and grows by doubling), the runner's copies of the element
// bytes (received, re-read per element, grouped for the combine) and the
// decoded value. encodeSums writes G's lower triangle only when G is exactly
// symmetric (as Syrk writes it: both triangles equal), which halves every
// encoded copy, into one []byte of the exact size; decodeSums mirrors it back,
// so the decoded Sums is bit for bit the encoded one. A G that is not exactly
// symmetric is written whole.
//
// Layout (little endian): version byte (1: G packed lower, 2: G whole), then
// uvarints M, K, N, then the floats of G (packed or whole), B, S, Ysum.
const (
	sumsPacked byte = 1
	sumsWhole  byte = 2
)

func encodeSums(s Sums) ([]byte, error) {
	empty := s.N == 0 && len(s.G)+len(s.B)+len(s.S)+len(s.Ysum) == 0
	if !empty && (s.M < 0 || s.K < 0 || len(s.G) != s.M*s.M || len(s.B) != s.M*s.K || len(s.S) != s.M || len(s.Ysum) != s.K) {
		return nil, fmt.Errorf("%w: sums of %d features and %d outputs with %d, %d, %d and %d entries",
			zonal.ErrShape, s.M, s.K, len(s.G), len(s.B), len(s.S), len(s.Ysum))
	}
	m := s.M
	version, ng := sumsPacked, m*(m+1)/2
	if empty {
		ng = 0
	} else if !symmetric(s.G, m) {
		version, ng = sumsWhole, m*m
	}
	floats := ng + len(s.B) + len(s.S) + len(s.Ysum)
	b := make([]byte, 1, 1+3*binary.MaxVarintLen64+8*floats)
	b[0] = version
	b = binary.AppendUvarint(b, uint64(s.M))
	b = binary.AppendUvarint(b, uint64(s.K))
	b = binary.AppendUvarint(b, uint64(s.N))
	if empty {
		return b, nil
	}
	if version == sumsPacked {
		for i := 0; i < m; i++ {
			b = appendFloats(b, s.G[i*m:i*m+i+1])
		}
	} else {
		b = appendFloats(b, s.G)
	}
	b = appendFloats(b, s.B)
	b = appendFloats(b, s.S)
	b = appendFloats(b, s.Ysum)
	return b, nil
}

// symmetric reports whether the m x m row-major g equals its transpose.
func symmetric(g []float64, m int) bool {
	for i := 0; i < m; i++ {
		for j := 0; j < i; j++ {
			if math.Float64bits(g[i*m+j]) != math.Float64bits(g[j*m+i]) {
				return false
			}
		}
	}
	return true
}

func appendFloats(b []byte, v []float64) []byte {
	for _, x := range v {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x))
	}
	return b
}

func decodeSums(b []byte) (Sums, error) {
	bad := func(what string) (Sums, error) {
		return Sums{}, fmt.Errorf("%w: encoded sums: %s", zonal.ErrFormat, what)
	}
	if len(b) == 0 || (b[0] != sumsPacked && b[0] != sumsWhole) {
		return bad("unknown version")
	}
	version := b[0]
	b = b[1:]
	var dims [3]uint64
	for i := range dims {
		v, n := binary.Uvarint(b)
		if n <= 0 || v > math.MaxInt32 {
			return bad("bad header")
		}
		dims[i], b = v, b[n:]
	}
	s := Sums{M: int(dims[0]), K: int(dims[1]), N: int(dims[2])}
	m, k := s.M, s.K
	ng := m * m
	if version == sumsPacked {
		ng = m * (m + 1) / 2
	}
	if len(b) == 0 && s.N == 0 {
		return s, nil // an empty Sums
	}
	if uint64(len(b)) != 8*(uint64(ng)+uint64(m)*uint64(k)+uint64(m)+uint64(k)) {
		return bad(fmt.Sprintf("%d bytes for %d features and %d outputs", len(b), m, k))
	}
	s.G = make([]float64, m*m)
	if version == sumsPacked {
		for i := 0; i < m; i++ {
			b = readFloats(s.G[i*m:i*m+i+1], b)
		}
		for i := 0; i < m; i++ {
			for j := 0; j < i; j++ {
				s.G[j*m+i] = s.G[i*m+j]
			}
		}
	} else {
		b = readFloats(s.G, b)
	}
	s.B, s.S, s.Ysum = make([]float64, m*k), make([]float64, m), make([]float64, k)
	b = readFloats(s.B, b)
	b = readFloats(s.S, b)
	readFloats(s.Ysum, b)
	return s, nil
}

// readFloats fills dst from b and returns the rest of b.
func readFloats(dst []float64, b []byte) []byte {
	for i := range dst {
		dst[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
	}
	return b[8*len(dst):]
}
