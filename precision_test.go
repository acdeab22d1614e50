package zonal

import (
	"encoding/json"
	"errors"
	"testing"
)

func TestPrecision(t *testing.T) {
	var zero Precision
	if zero != Float64 || zero.String() != "float64" || zero.Bytes() != 8 {
		t.Fatalf("zero Precision is %v (%d bytes), want float64 (8)", zero, zero.Bytes())
	}
	if Float32.String() != "float32" || Float32.Bytes() != 4 {
		t.Fatalf("Float32 is %v (%d bytes)", Float32, Float32.Bytes())
	}
	for _, s := range []string{"float64", "float32"} {
		p, err := ParsePrecision(s)
		if err != nil || p.String() != s {
			t.Fatalf("ParsePrecision(%q) = %v, %v", s, p, err)
		}
	}
	for _, s := range []string{"float16", "Float32", "64", "half"} {
		if _, err := ParsePrecision(s); !errors.Is(err, ErrParam) {
			t.Fatalf("ParsePrecision(%q): %v, want ErrParam", s, err)
		}
	}
	if err := Precision(7).Check(); !errors.Is(err, ErrParam) {
		t.Fatalf("Precision(7).Check() = %v, want ErrParam", err)
	}
	if _, err := Precision(7).MarshalText(); !errors.Is(err, ErrParam) {
		t.Fatalf("MarshalText of Precision(7): %v, want ErrParam", err)
	}
	b, err := json.Marshal(struct{ P Precision }{Float32})
	if err != nil || string(b) != `{"P":"float32"}` {
		t.Fatalf("JSON %s, %v", b, err)
	}
	var v struct{ P Precision }
	if err := json.Unmarshal([]byte(`{"P":"float32"}`), &v); err != nil || v.P != Float32 {
		t.Fatalf("JSON decode: %v, %v", v.P, err)
	}
	if err := json.Unmarshal([]byte(`{"P":"float8"}`), &v); !errors.Is(err, ErrParam) {
		t.Fatalf("JSON decode of float8: %v, want ErrParam", err)
	}
}
