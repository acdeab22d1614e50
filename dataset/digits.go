package dataset

import (
	"bytes"
	_ "embed"
	"fmt"
	"slices"
	"sync"

	"github.com/zonal-ml/zonal"
	"gonum.org/v1/gonum/mat"
)

// digitsCSV is scikit-learn 1.2.1's digits set (the UCI optical
// recognition of handwritten digits test set, BSD-3-Clause) exported as
// gzip CSV by the project's tools/export_data: header "y,pixel_0_0,...",
// 1797 rows, 64 pixel counts 0..16 of an 8x8 image, label 0..9.
//
//go:embed embed/digits.csv.gz
var digitsCSV []byte

// DigitsSHA256 is the SHA-256 of the embedded digits.csv.gz, the same file
// as ../shared/data/digits.csv.gz (listed in its SHA256SUMS).
const DigitsSHA256 = "d8e82ad13aafef5acd6fe9d30428010152a81356bd7a76876571d4f6adcd7d31"

var (
	digitsOnce sync.Once
	digitsData *Data
	digitsErr  error
)

// Digits returns the embedded default data set: 1797 handwritten digits,
// X 1797 x 64 (pixel counts 0..16, row-major 8x8 images, Names
// "pixel_R_C"), Y the digit 0..9, in the source order. Each call returns a
// fresh copy the caller may modify.
func Digits() (*Data, error) {
	digitsOnce.Do(func() {
		digitsData, digitsErr = ReadCSV(bytes.NewReader(digitsCSV), Options{})
		if digitsErr == nil {
			if n, d := digitsData.Dims(); n != 1797 || d != 64 {
				digitsErr = fmt.Errorf("%w: embedded digits are %d x %d, want 1797 x 64", zonal.ErrFormat, n, d)
			}
		}
	})
	if digitsErr != nil {
		return nil, fmt.Errorf("dataset: embedded digits: %w", digitsErr)
	}
	return digitsData.Clone(), nil
}

// Clone returns a deep copy of d (Names are copied too).
func (d *Data) Clone() *Data {
	out := &Data{TargetName: d.TargetName}
	if d.X != nil {
		out.X = mat.DenseCopyOf(d.X)
	}
	if d.Y != nil {
		out.Y = slices.Clone(d.Y)
	}
	if d.Names != nil {
		out.Names = slices.Clone(d.Names)
	}
	if s := d.Sparse; s != nil {
		out.Sparse = &CSR{Rows: s.Rows, Cols: s.Cols, RowPtr: slices.Clone(s.RowPtr),
			Col: slices.Clone(s.Col), Val: slices.Clone(s.Val)}
	}
	return out
}
