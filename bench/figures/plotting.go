package main

import (
	"fmt"
	"math"
	"path/filepath"
	"sort"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// series is one named line (or set of points) of a chart.
type series struct {
	name string
	xy   plotter.XYs
}

// chart describes one figure file.
type chart struct {
	title, xlabel, ylabel string
	logX, logY            bool
	points                bool      // scatter with labels instead of lines
	xticks                []float64 // explicit x tick marks (log axes show only powers of ten otherwise)
}

// add appends (x, y) to the series called name, creating it in order.
func add(ss []series, name string, x, y float64) []series {
	for i := range ss {
		if ss[i].name == name {
			ss[i].xy = append(ss[i].xy, plotter.XY{X: x, Y: y})
			return ss
		}
	}
	return append(ss, series{name: name, xy: plotter.XYs{{X: x, Y: y}}})
}

// save draws the chart to out/name.png (the READMEs show the PNGs; no other
// format is written).
func (c chart) save(out, name string, ss []series) error {
	p := plot.New()
	p.Title.Text = c.title
	p.X.Label.Text = c.xlabel
	p.Y.Label.Text = c.ylabel
	if c.logX {
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = logTicks{}
	}
	if len(c.xticks) > 0 {
		var ts []plot.Tick
		for _, t := range c.xticks {
			ts = append(ts, plot.Tick{Value: t, Label: strconv.FormatFloat(t, 'g', -1, 64)})
		}
		p.X.Tick.Marker = plot.ConstantTicks(ts)
	}
	if c.logY {
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = logTicks{}
	}
	p.Add(plotter.NewGrid())
	p.Legend.Top = true
	for i, s := range ss {
		xy := clean(s.xy, c.logX, c.logY)
		if len(xy) == 0 {
			continue
		}
		col := plotutil.Color(i)
		if c.points {
			sc, err := plotter.NewScatter(xy)
			if err != nil {
				return err
			}
			sc.GlyphStyle.Color = col
			sc.GlyphStyle.Shape = plotutil.Shape(i)
			sc.GlyphStyle.Radius = vg.Points(4)
			p.Add(sc)
			p.Legend.Add(s.name, sc)
			continue
		}
		sort.Slice(xy, func(a, b int) bool { return xy[a].X < xy[b].X })
		l, pts, err := plotter.NewLinePoints(xy)
		if err != nil {
			return err
		}
		l.Color, pts.Color = col, col
		l.Dashes = plotutil.Dashes(i % 4)
		pts.Shape = plotutil.Shape(i)
		p.Add(l, pts)
		p.Legend.Add(s.name, l, pts)
	}
	headroom(p, c.logX, c.logY)
	if err := p.Save(7*vg.Inch, 4.5*vg.Inch, filepath.Join(out, name+".png")); err != nil {
		return fmt.Errorf("saving %s: %w", name, err)
	}
	return nil
}

// clean drops points that a log axis cannot show and non-finite values.
func clean(xy plotter.XYs, logX, logY bool) plotter.XYs {
	var out plotter.XYs
	for _, p := range xy {
		if math.IsNaN(p.X) || math.IsNaN(p.Y) || math.IsInf(p.X, 0) || math.IsInf(p.Y, 0) {
			continue
		}
		if (logX && p.X <= 0) || (logY && p.Y <= 0) {
			continue
		}
		out = append(out, p)
	}
	return out
}

// headroom widens the axes so the legend (top right) and the outermost points
// stay clear of each other and of the frame.
func headroom(p *plot.Plot, logX, logY bool) {
	if logY {
		p.Y.Min /= 1.5
		p.Y.Max *= math.Min(math.Pow(p.Y.Max/p.Y.Min, 0.45), 1e3)
	} else {
		r := p.Y.Max - p.Y.Min
		p.Y.Min -= 0.05 * r
		p.Y.Max += 0.45 * r
	}
	if logX {
		p.X.Min /= 1.2
		p.X.Max *= 1.2
	} else {
		r := p.X.Max - p.X.Min
		p.X.Min -= 0.03 * r
		p.X.Max += 0.03 * r
	}
}

// logTicks labels 1, 2 and 5 times the powers of ten when the axis spans few
// decades, and the powers of ten alone otherwise.
type logTicks struct{}

func (logTicks) Ticks(min, max float64) []plot.Tick {
	if !(min > 0) || !(max > min) {
		return nil
	}
	lo, hi := math.Floor(math.Log10(min)), math.Ceil(math.Log10(max))
	for _, mults := range [][]float64{{1}, {1, 2, 5}, {1, 2, 3, 4, 5, 6, 7, 8, 9}} {
		if len(mults) == 1 && hi-lo <= 4 {
			continue // few decades: label more than the powers of ten
		}
		var ts []plot.Tick
		labelled := 0
		for e := lo; e <= hi; e++ {
			for m := 1.0; m < 10; m++ {
				v := m * math.Pow(10, e)
				if v < min || v > max {
					continue
				}
				t := plot.Tick{Value: v} // minor unless m is in mults
				for _, k := range mults {
					if k == m {
						t.Label = strconv.FormatFloat(v, 'g', 3, 64)
						labelled++
					}
				}
				ts = append(ts, t)
			}
		}
		if labelled >= 2 {
			return ts
		}
	}
	return nil
}
