package budget

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/zonal-ml/zonal"
)

func TestBytesSaturates(t *testing.T) {
	if got := Floats(3, 4); got != 96 {
		t.Errorf("Floats(3, 4) = %d, want 96", got)
	}
	if got := Floats(1<<40, 1<<40); got != math.MaxInt64 {
		t.Errorf("Floats(2^40, 2^40) = %d, want MaxInt64 (saturated, not wrapped)", got)
	}
	if got := Floats(-5, 10); got != 0 {
		t.Errorf("a negative factor counts as zero, got %d", got)
	}
	if got := Bytes(4, 1000); got != 4000 {
		t.Errorf("Bytes(4, 1000) = %d", got)
	}
}

func TestCheck(t *testing.T) {
	if err := Check("x", 100, 100); err != nil {
		t.Errorf("need == limit: %v", err)
	}
	if err := Check("x", zonal.DefaultMemoryBudget, 0); err != nil {
		t.Errorf("limit 0 means the default budget: %v", err)
	}
	err := Check("the widget", 3<<30, 1<<30)
	if !errors.Is(err, zonal.ErrTooLarge) {
		t.Fatalf("want ErrTooLarge, got %v", err)
	}
	for _, s := range []string{"the widget", "3.0 GiB", "1.0 GiB", "MemoryBudget"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("message %q lacks %q", err, s)
		}
	}
	// The structured form carries what a caller needs to name its own knob.
	var tl *zonal.TooLargeError
	if !errors.As(err, &tl) || tl.Need != 3<<30 || tl.Budget != 1<<30 || tl.Setting != "MemoryBudget" || tl.What != "the widget" {
		t.Errorf("errors.As TooLargeError: %+v", tl)
	}
	if Or(-1) != zonal.DefaultMemoryBudget || Or(7) != 7 {
		t.Error("Or")
	}
}

func TestFormat(t *testing.T) {
	for b, want := range map[int64]string{512: "512 B", 1536: "1.5 KiB (1536 bytes)", 1 << 30: "1.0 GiB (1073741824 bytes)"} {
		if got := Format(b); got != want {
			t.Errorf("Format(%d) = %q, want %q", b, got, want)
		}
	}
}
