package kpca

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/kernels"
)

// The kpca files (Model, NystromMap) start alike: a little-endian uint32
// format version, then the kernel as its kind and its parameters, each a
// uint32 length and the bytes.

// writeKernelHeader writes the version and the kernel k to buf.
func writeKernelHeader(buf *bytes.Buffer, version uint32, k kernels.Kernel) error {
	kb, err := k.MarshalBinary()
	if err != nil {
		return err
	}
	w := func(v any) { binary.Write(buf, binary.LittleEndian, v) }
	w(version)
	w(uint32(len(k.Kind())))
	buf.WriteString(k.Kind())
	w(uint32(len(kb)))
	buf.Write(kb)
	return nil
}

// readKernelHeader reads what writeKernelHeader wrote, for a file of the
// given version; what names the file in errors ("model", "inc-nystrom
// map"). Errors: zonal.ErrVersion, zonal.ErrFormat, and those of
// kernels.UnmarshalKernel.
func readKernelHeader(r *bytes.Reader, version uint32, what string) (kernels.Kernel, error) {
	var ver uint32
	if binary.Read(r, binary.LittleEndian, &ver) != nil {
		return nil, malformed(what, "version")
	}
	if ver != version {
		return nil, fmt.Errorf("kpca: %s: version %d, want %d: %w", what, ver, version, zonal.ErrVersion)
	}
	readBytes := func() ([]byte, bool) {
		var ln uint32
		if binary.Read(r, binary.LittleEndian, &ln) != nil || int64(ln) > int64(r.Len()) {
			return nil, false
		}
		b := make([]byte, ln)
		_, err := r.Read(b)
		return b, err == nil || ln == 0
	}
	kind, ok := readBytes()
	if !ok {
		return nil, malformed(what, "kernel kind")
	}
	kb, ok := readBytes()
	if !ok {
		return nil, malformed(what, "kernel")
	}
	k, err := kernels.UnmarshalKernel(string(kind), kb)
	if err != nil {
		return nil, fmt.Errorf("kpca: %s: %w", what, err)
	}
	return k, nil
}

// malformed is the ErrFormat error for a bad part of a kpca file.
func malformed(what, part string) error {
	return fmt.Errorf("kpca: %s: malformed %s: %w", what, part, zonal.ErrFormat)
}
