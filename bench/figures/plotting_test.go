package main

import (
	"math"
	"os"
	"path/filepath"
	"testing"
)

func TestLogTicksCoverRange(t *testing.T) {
	for _, r := range [][2]float64{{1e-15, 3e-14}, {0.5, 20}, {1e-12, 1}, {128, 2048}} {
		ts := logTicks{}.Ticks(r[0], r[1])
		labelled := 0
		for _, tk := range ts {
			if tk.Value < r[0] || tk.Value > r[1] {
				t.Errorf("range %v: tick %g outside", r, tk.Value)
			}
			if tk.Label != "" {
				labelled++
			}
		}
		// At least two labels on any range wider than a factor 2.5, so a
		// reader can read the scale off the axis.
		if labelled < 2 {
			t.Errorf("range %v: %d labelled ticks, want >= 2", r, labelled)
		}
	}
	if ts := (logTicks{}).Ticks(0, 1); ts != nil {
		t.Errorf("non-positive range gave ticks %v", ts)
	}
}

// TestChartSavesPNG: save writes name.png and no other file.
func TestChartSavesPNG(t *testing.T) {
	dir := t.TempDir()
	var ss []series
	for i := 1; i <= 5; i++ {
		ss = add(ss, "a", float64(i*100), math.Pow(10, -float64(i)))
		ss = add(ss, "b", float64(i*100), math.Pow(10, -float64(i))*2)
	}
	ss = add(ss, "b", 600, math.NaN()) // dropped, not drawn
	if len(ss) != 2 || len(ss[0].xy) != 5 || len(ss[1].xy) != 6 {
		t.Fatalf("add grouped wrongly: %+v", ss)
	}
	if err := (chart{title: "t", xlabel: "x", ylabel: "y", logY: true}).save(dir, "c", ss); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(filepath.Join(dir, "c.png"))
	if err != nil || st.Size() < 1000 {
		t.Errorf("c.png: %v, size %v", err, st)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("save wrote %d files, want only c.png", len(ents))
	}
}
