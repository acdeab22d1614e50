package main

import (
	"errors"
	"fmt"
	"image/color"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/zonal-ml/zonal"
)

// defaultBins is the reliability diagrams' number of bins.
const defaultBins = 10

// bin is one bin of a reliability diagram: its rows, their mean predicted
// probability and the observed share of positives among them.
type bin struct {
	Rows     int
	MeanProb float64
	Observed float64
}

// reliabilityBins puts the probabilities p of the positive class into k
// equal-width bins of [0, 1] (bin j holds j/k <= p < (j+1)/k, the last one
// also p = 1) and returns every bin with its rows (empty bins have Rows 0
// and NaN means). pos is the positive label of y.
func reliabilityBins(p, y []float64, pos float64, k int) ([]bin, error) {
	if k < 1 {
		return nil, fmt.Errorf("%w: %d bins, want at least 1", zonal.ErrParam, k)
	}
	if len(p) != len(y) {
		return nil, fmt.Errorf("%w: %d probabilities for %d labels", zonal.ErrShape, len(p), len(y))
	}
	bins := make([]bin, k)
	for i, v := range p {
		if !(v >= 0 && v <= 1) {
			return nil, fmt.Errorf("%w: probability %d is %g, outside [0, 1]", zonal.ErrParam, i, v)
		}
		j := min(int(v*float64(k)), k-1)
		bins[j].Rows++
		bins[j].MeanProb += v
		if y[i] == pos {
			bins[j].Observed++
		}
	}
	for j := range bins {
		c := float64(bins[j].Rows)
		bins[j].MeanProb /= c
		bins[j].Observed /= c
	}
	return bins, nil
}

// calibrationError is the expected calibration error of the bins: the
// row-weighted mean of |mean probability - observed frequency|.
func calibrationError(bins []bin) float64 {
	s, n := 0.0, 0
	for _, b := range bins {
		if b.Rows > 0 {
			s += float64(b.Rows) * math.Abs(b.MeanProb-b.Observed)
			n += b.Rows
		}
	}
	return s / float64(n)
}

// curve is one line of a reliability diagram.
type curve struct {
	Name string
	Bins []bin
}

// The lines of a diagram: tool, model and legend, in drawing order.
var diagramLines = []struct{ Tool, Model, Legend string }{
	{"zonal", modelLogistic, "zonal logistic FALKON"},
	{"zonal", modelCalibrated, "zonal squared loss, calibrated"},
	{"sklearn", modelLogistic, "sklearn LogisticRegression on Nystroem"},
	{"sklearn", modelCalibrated, "sklearn CalibratedClassifierCV(RidgeClassifier)"},
}

// drawReliability draws img/reliability_SET.png for each set from the
// probabilities dumped in dir (NAME.zonal_proba.json and, when
// sklearn_probs.py has run, NAME.sklearn_proba.json), and writes each
// line's expected calibration error to w.
func drawReliability(dir string, sets []string, img string, k int, w io.Writer) error {
	if len(sets) == 0 {
		return fmt.Errorf("%w: -plot-sets is empty", zonal.ErrParam)
	}
	if err := os.MkdirAll(img, 0o755); err != nil {
		return err
	}
	fmt.Fprintln(w, "| set | model | test rows | expected calibration error |")
	fmt.Fprintln(w, "|---|---|---:|---:|")
	for _, set := range sets {
		files := map[string]probaFile{}
		for _, tool := range []string{"zonal", "sklearn"} {
			p, err := readProba(filepath.Join(dir, set+"."+tool+"_proba.json"))
			switch {
			case err == nil:
				files[tool] = p
			case tool == "sklearn" && errors.Is(err, fs.ErrNotExist):
				fmt.Fprintf(os.Stderr, "probs: %s: no scikit-learn probabilities (run sklearn_probs.py first); drawing zonal's only\n", set)
			default:
				return err
			}
		}
		var cs []curve
		for _, l := range diagramLines {
			f, ok := files[l.Tool]
			p := f.Proba[l.Model]
			if !ok || p == nil {
				continue
			}
			bins, err := reliabilityBins(p, f.Y, slices.Max(f.Y), k)
			if err != nil {
				return fmt.Errorf("%s %s %s: %w", set, l.Tool, l.Model, err)
			}
			cs = append(cs, curve{l.Legend, bins})
			fmt.Fprintf(w, "| %s | %s | %d | %.4f |\n", set, l.Legend, len(p), calibrationError(bins))
		}
		out := filepath.Join(img, "reliability_"+set+".png")
		if err := plotReliability(out, "Reliability, "+set+" test rows", cs); err != nil {
			return err
		}
		fmt.Fprintln(os.Stderr, "probs: wrote", out)
	}
	return nil
}

// plotReliability draws the curves (mean predicted probability against
// observed frequency, non-empty bins only) with the diagonal of perfect
// calibration into the PNG file out.
func plotReliability(out, title string, cs []curve) error {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "mean predicted probability (bin)"
	p.Y.Label.Text = "observed frequency of positives"
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = 0, 1, 0, 1
	p.Add(plotter.NewGrid())
	p.Legend.Top, p.Legend.Left = false, false // bottom right: the curves run from bottom left to top right
	diag, err := plotter.NewLine(plotter.XYs{{X: 0, Y: 0}, {X: 1, Y: 1}})
	if err != nil {
		return err
	}
	diag.Color = color.Gray{Y: 128}
	diag.Dashes = []vg.Length{vg.Points(2), vg.Points(2)}
	p.Add(diag)
	p.Legend.Add("perfectly calibrated", diag)
	for i, c := range cs {
		var xy plotter.XYs
		for _, b := range c.Bins {
			if b.Rows > 0 {
				xy = append(xy, plotter.XY{X: b.MeanProb, Y: b.Observed})
			}
		}
		if len(xy) == 0 {
			continue
		}
		l, pts, err := plotter.NewLinePoints(xy)
		if err != nil {
			return err
		}
		l.Color, pts.Color = plotutil.Color(i), plotutil.Color(i)
		pts.Shape = plotutil.Shape(i)
		p.Add(l, pts)
		p.Legend.Add(c.Name, l, pts)
	}
	if err := p.Save(6*vg.Inch, 6*vg.Inch, out); err != nil {
		return fmt.Errorf("saving %s: %w", out, err)
	}
	return nil
}
