//go:build linux

package main

import (
	"fmt"
	"image/color"
	"io"
	"os"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// predict fills the parent's fields: the predicted cost of one CG iteration
// with K_nM streamed, entries (2d + c) flops with c = c_exp + 4k (the
// exponential in flops-equivalents, and the two products K w and K^T t with
// k outputs), at the measured Gemm rate of the run's precision; and the RSS
// bound data + factors + budget.
func (r *result) predict(cal calibration) {
	r.IterRatio = -1
	if r.Error != "" || r.Rows == 0 {
		return
	}
	r.RSSBoundBytes = r.DataBytes + r.FactorBytes + r.Memory
	cexp, gflops := cal.CExp, cal.GemmGFLOPS
	if r.Method == methodFalkon32 {
		cexp, gflops = cal.CExp32, cal.SgemmGFLOPS
	}
	r.C = cexp + 4*float64(r.Outputs)
	r.PredFlops = r.KnMEntries * (2*float64(r.Cols) + r.C)
	r.PredSeconds = r.PredFlops / (gflops * 1e9)
	if r.IterSeconds > 0 && r.PredSeconds > 0 {
		r.IterRatio = r.IterSeconds / r.PredSeconds
	}
}

func (r result) summary() string {
	if r.Error != "" {
		return "error: " + r.Error
	}
	return fmt.Sprintf("fit %.2f s, %d iterations, peak RSS %.0f MB, %s %.4f", r.FitSeconds, r.CGIters, mb(r.PeakRSS), r.Metric, r.Value)
}

func mb(b int64) float64 { return float64(b) / (1 << 20) }

// columns are the result table's columns, in order.
var columns = []string{"set", "method", "n", "M", "cached", "fit (s)", "CG iters", "s/iter", "predicted s/iter", "ratio",
	"peak RSS (MB)", "data (MB)", "factors (MB)", "budget (MB)", "RSS bound (MB)", "metric", "error"}

func dash(ok bool, format string, v float64) string {
	if !ok {
		return "-"
	}
	return fmt.Sprintf(format, v)
}

func writeTable(w io.Writer, cal calibration, rs []result) {
	fmt.Fprintf(w, "Backend %s: %d^3 Gemm %.1f GFLOP/s, Sgemm %.1f GFLOP/s; exp %.3g/s (c_exp = %.1f flops), float32 exp %.3g/s (c_exp = %.1f)\n",
		cal.Backend, cal.GemmN, cal.GemmGFLOPS, cal.SgemmGFLOPS, cal.ExpPerSec, cal.CExp, cal.Exp32PerSec, cal.CExp32)
	fmt.Fprintf(w, "Predicted s/iter: n M (2d + c) flops at the Gemm rate, c = c_exp + 4k (k outputs); ParK: sum of n_q M_q (2d + c).\n\n")
	fmt.Fprintf(w, "| %s |\n|%s\n", strings.Join(columns, " | "), strings.Repeat("---|", len(columns)))
	for _, r := range rs {
		ok := r.Error == ""
		cached := "-"
		if ok && r.Method != methodParK {
			cached = fmt.Sprint(r.Cached)
		}
		metric := "-"
		if ok {
			metric = fmt.Sprintf("%s %.4f", r.Metric, r.Value)
		}
		cells := []string{r.Set, r.Method, fmt.Sprint(r.Rows), fmt.Sprint(r.Centers), cached,
			dash(ok, "%.2f", r.FitSeconds), dash(ok, "%.0f", float64(r.CGIters)), dash(r.IterSeconds > 0, "%.3g", r.IterSeconds),
			dash(ok, "%.3g", r.PredSeconds), dash(r.IterRatio > 0, "%.2f", r.IterRatio),
			dash(r.PeakRSS > 0, "%.0f", mb(r.PeakRSS)), dash(ok, "%.1f", mb(r.DataBytes)), dash(ok, "%.1f", mb(r.FactorBytes)),
			fmt.Sprintf("%.0f", mb(r.Memory)), dash(ok, "%.0f", mb(r.RSSBoundBytes)), metric, strings.ReplaceAll(r.Error, "|", "/")}
		if !ok {
			cells[2] = fmt.Sprint(r.N) // the requested size
		}
		fmt.Fprintf(w, "| %s |\n", strings.Join(cells, " | "))
	}
	writeChecks(w, rs)
}

// The figures the runs are held to (README.md says why).
const (
	maxIterRatio  = 1.5 // streamed CG iteration over its predicted time
	maxTenfold    = 11  // fit time from 10^6 to 10^7 rows
	tenfoldFromN  = 1000000
	tenfoldToN    = 10 * tenfoldFromN
	verdictOK     = "ok"
	verdictMissed = "MISSED"
)

func verdict(ok bool) string {
	if ok {
		return verdictOK
	}
	return verdictMissed
}

// writeChecks lists, for the runs that bear on them, the three figures:
// streamed FALKON iterations within maxIterRatio of the prediction, fit time
// growth over every tenfold step in n (held to maxTenfold from 10^6 to 10^7),
// and peak RSS under data + factors + budget.
func writeChecks(w io.Writer, rs []result) {
	var iter, growth, rss []string
	for _, a := range rs {
		if a.Error != "" {
			continue
		}
		if a.Method != methodParK && !a.Cached && a.IterRatio > 0 {
			iter = append(iter, fmt.Sprintf("%s %s n = %d: %.2f x predicted, %s", a.Set, a.Method, a.Rows, a.IterRatio, verdict(a.IterRatio <= maxIterRatio)))
		}
		for _, b := range rs {
			if a.Set == b.Set && a.Method == b.Method && b.Error == "" && a.FitSeconds > 0 && b.Rows == 10*a.Rows {
				g := b.FitSeconds / a.FitSeconds
				line := fmt.Sprintf("%s %s: fit time x%.1f from n = %d to %d", a.Set, a.Method, g, a.Rows, b.Rows)
				if a.Rows == tenfoldFromN {
					line += ", " + verdict(g <= maxTenfold)
				}
				growth = append(growth, line)
			}
		}
		if a.PeakRSS > 0 && a.RSSBoundBytes > 0 {
			rss = append(rss, fmt.Sprintf("%s %s n = %d: peak RSS %.2f of the bound, %s", a.Set, a.Method, a.Rows,
				float64(a.PeakRSS)/float64(a.RSSBoundBytes), verdict(a.PeakRSS <= a.RSSBoundBytes)))
		}
	}
	for _, sec := range []struct {
		title string
		lines []string
	}{
		{fmt.Sprintf("CG iteration with K_nM streamed, measured over predicted (held to %.1fx)", maxIterRatio), iter},
		{fmt.Sprintf("Tenfold n (linear is x10; held to x%d from %d to %d rows)", maxTenfold, tenfoldFromN, tenfoldToN), growth},
		{"Peak RSS against data + factors + memory budget", rss},
	} {
		if len(sec.lines) > 0 {
			fmt.Fprintf(w, "\n%s:\n\n- %s\n", sec.title, strings.Join(sec.lines, "\n- "))
		}
	}
}

// logTicks are plot.LogTicks, or plot.DefaultTicks when a range within one
// decade would leave fewer than two labelled ticks.
type logTicks struct{}

func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	t := plot.LogTicks{Prec: -1}.Ticks(lo, hi)
	labelled := 0
	for _, x := range t {
		if x.Label != "" && x.Value >= lo && x.Value <= hi {
			labelled++
		}
	}
	if labelled < 2 {
		return plot.DefaultTicks{}.Ticks(lo, hi)
	}
	return t
}

// writeFigure draws fit time and peak RSS against n, log-log, one line per
// set and method, side by side in one PNG.
func writeFigure(path string, rs []result) error {
	type key struct{ set, method string }
	var keys []key
	tm, rss := map[key]plotter.XYs{}, map[key]plotter.XYs{}
	for _, r := range rs {
		if r.Error != "" || r.Rows == 0 {
			continue
		}
		k := key{r.Set, r.Method}
		if !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
		if r.FitSeconds > 0 {
			tm[k] = append(tm[k], plotter.XY{X: float64(r.Rows), Y: r.FitSeconds})
		}
		if r.PeakRSS > 0 {
			rss[k] = append(rss[k], plotter.XY{X: float64(r.Rows), Y: mb(r.PeakRSS)})
		}
	}
	mk := func(title, ylabel string, pts map[key]plotter.XYs) (*plot.Plot, error) {
		p := plot.New()
		p.Title.Text = title
		p.X.Label.Text = "training rows n"
		p.Y.Label.Text = ylabel
		p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
		p.X.Tick.Marker, p.Y.Tick.Marker = logTicks{}, logTicks{}
		p.Legend.Top, p.Legend.Left = true, true
		for i, k := range keys {
			xy := pts[k]
			if len(xy) == 0 {
				continue
			}
			slices.SortFunc(xy, func(a, b plotter.XY) int {
				if a.X < b.X {
					return -1
				}
				if a.X > b.X {
					return 1
				}
				return 0
			})
			l, s, err := plotter.NewLinePoints(xy)
			if err != nil {
				return nil, err
			}
			l.Color, s.Color = plotutil.Color(i), plotutil.Color(i)
			l.Dashes = plotutil.Dashes(i)
			s.Shape = plotutil.Shape(i)
			p.Add(l, s)
			p.Legend.Add(k.set+" "+k.method, l, s)
		}
		// A slope-1 guide through the first point of the first line: linear growth.
		if len(keys) > 0 && len(pts[keys[0]]) > 1 {
			xy := pts[keys[0]]
			x0, x1, y0 := xy[0].X, xy[len(xy)-1].X, xy[0].Y
			g, err := plotter.NewLine(plotter.XYs{{X: x0, Y: y0}, {X: x1, Y: y0 * x1 / x0}})
			if err != nil {
				return nil, err
			}
			g.Color, g.Dashes = color.Gray{Y: 160}, []vg.Length{vg.Points(2), vg.Points(2)}
			p.Add(g)
			p.Legend.Add("linear in n", g)
		}
		return p, nil
	}
	pt, err := mk("Fit time", "seconds", tm)
	if err != nil {
		return err
	}
	pr, err := mk("Peak RSS of the fit's process", "MB", rss)
	if err != nil {
		return err
	}
	img := vgimg.New(2*5*vg.Inch, 4*vg.Inch)
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: 1, Cols: 2, PadX: vg.Millimeter * 4, PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 2,
		PadTop: vg.Millimeter * 2, PadBottom: vg.Millimeter * 2}
	cv := plot.Align([][]*plot.Plot{{pt, pr}}, tiles, dc)
	pt.Draw(cv[0][0])
	pr.Draw(cv[0][1])
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
