package main

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
)

// Column headers of the two tables (main_test.go checks them).
var (
	summaryColumns = []string{"set", "task", "metric", "train rows", "test rows", "splits",
		"defaults", "tune best", "within margin of tune", "defaults s", "choosing s", "tune s", "defaults AUC", "tune AUC"}
	detailColumns = []string{"set", "seed", "method", "sigma", "lambda", "centres", "standardize", "fit task",
		"CG iters", "CG residual", "converged", "solved", "condition", "tune sigma", "tune lambda", "tune M", "tune inputs", "tune rows", "CV score"}
)

// Margins the defaults are held to (README.md): within this many accuracy
// points or one test row, whichever is larger, or this fraction of RMSE,
// of the reference.
const (
	accuracyMargin = 0.005
	rmseMargin     = 0.03
)

// withinMargin reports whether the defaults' score def is within the
// suite's margin of the reference ref on testRows test rows.
func withinMargin(metric string, def, ref float64, testRows int) bool {
	if metric == "accuracy" {
		m := accuracyMargin
		if testRows > 0 {
			m = math.Max(m, 1/float64(testRows))
		}
		return def >= ref-m
	}
	return def <= (1+rmseMargin)*ref
}

// condCell is a condition estimate's cell ("-" when unknown).
func condCell(c float64) string {
	if c <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.3g", c)
}

// summary is the mean over the successful splits of one run of one set.
type summary struct {
	n, failed                 int
	score, secs, choose, auc  float64
	aucs, trainRows, testRows int
	err                       string
}

func summarize(recs []record, set, run string) summary {
	var s summary
	for _, r := range recs {
		if r.Set != set || r.Run != run {
			continue
		}
		if r.Error != "" {
			s.failed++
			s.err = r.Error
			continue
		}
		s.n++
		s.score += r.Score
		s.secs += r.Seconds
		s.choose += r.ChooseSeconds
		s.trainRows += r.TrainRows
		s.testRows += r.TestRows
		if r.AUC != nil {
			s.auc += *r.AUC
			s.aucs++
		}
	}
	if s.n > 0 {
		k := float64(s.n)
		s.score, s.secs, s.choose = s.score/k, s.secs/k, s.choose/k
		s.trainRows, s.testRows = s.trainRows/s.n, s.testRows/s.n
	}
	if s.aucs > 0 {
		s.auc /= float64(s.aucs)
	}
	return s
}

func (s summary) scoreCell() string {
	switch {
	case s.n == 0 && s.failed == 0:
		return "-"
	case s.n == 0:
		return "error: " + oneLine(s.err)
	case s.failed > 0:
		return fmt.Sprintf("%.4f (%d failed)", s.score, s.failed)
	}
	return fmt.Sprintf("%.4f", s.score)
}

func (s summary) aucCell() string {
	if s.aucs == 0 {
		return "-"
	}
	return fmt.Sprintf("%.4f", s.auc)
}

// writeTables writes the markdown summary (one row per set: means over
// its splits) and the detail table (one row per split: what each run
// chose).
func writeTables(w io.Writer, recs []record) error {
	var sets []string
	seen := map[string]bool{}
	for _, r := range recs {
		if !seen[r.Set] {
			seen[r.Set] = true
			sets = append(sets, r.Set)
		}
	}
	var b strings.Builder
	b.WriteString("Means over each set's splits; times in seconds of wall time.\n\n")
	header(&b, summaryColumns)
	for _, set := range sets {
		d, t := summarize(recs, set, runDefaults), summarize(recs, set, runTune)
		task, metric := "", ""
		for _, r := range recs {
			if r.Set == set {
				task = r.Task
				if r.Run != "load" {
					metric = r.Metric
				}
			}
		}
		splits := len(seedsOf(recs, set))
		if ld := loadError(recs, set); ld != "" {
			row(&b, set, task, "-", "-", "-", "0", "error: "+oneLine(ld), "-", "-", "-", "-", "-", "-", "-")
			continue
		}
		margin := "-"
		if d.n > 0 && t.n > 0 && d.failed == 0 && t.failed == 0 {
			margin = "no"
			if withinMargin(metric, d.score, t.score, d.testRows) {
				margin = "yes"
			}
		}
		rows := d
		if rows.n == 0 {
			rows = t
		}
		row(&b, set, task, metric, fmt.Sprint(rows.trainRows), fmt.Sprint(rows.testRows), fmt.Sprint(splits),
			d.scoreCell(), t.scoreCell(), margin, secsCell(d), choosingCell(d), secsCell(t), d.aucCell(), t.aucCell())
	}
	b.WriteString("\nPer split: what the defaults chose (CG of the fitted FALKON) and the best setting of the tune run.\n\n")
	header(&b, detailColumns)
	for _, set := range sets {
		for _, seed := range seedsOf(recs, set) {
			d, t := find(recs, set, runDefaults, seed), find(recs, set, runTune, seed)
			cells := []string{set, fmt.Sprint(seed)}
			if d != nil && d.Error == "" {
				cells = append(cells, d.Method, g(d.Sigma), g(d.Lambda), fmt.Sprint(d.Centers), fmt.Sprint(d.Standardize), d.FitTask,
					intp(d.CGIterations), floatp(d.CGResidual), boolp(d.CGConverged), boolp(d.CGSolved), condCell(d.CGCondition))
			} else {
				cells = append(cells, "-", "-", "-", "-", "-", "-", "-", "-", "-", "-", "-")
			}
			if t != nil && t.Error == "" {
				inputs := "raw"
				if t.Standardize {
					inputs = "std"
				}
				cells = append(cells, g(t.Sigma), g(t.Lambda), fmt.Sprint(t.Centers), inputs, fmt.Sprint(t.TuneRows), fmt.Sprintf("%s %.4f", t.CVMetric, t.CVScore))
			} else {
				cells = append(cells, "-", "-", "-", "-", "-", "-")
			}
			row(&b, cells...)
		}
	}
	writeVariants(&b, sets, recs)
	writePartitions(&b, sets, recs)
	_, err := io.WriteString(w, b.String())
	return err
}

// writeVariants writes, when the records hold variant runs, one row per
// set: the defaults' mean score, each variant's, and whether the defaults
// are within margin of the best of them (the variants fix one rule of the
// policy; a rule that generalizes leaves the defaults within margin of the
// best fixed choice).
func writeVariants(b *strings.Builder, sets []string, recs []record) {
	var runs []string
	for _, v := range variantRuns() {
		for _, r := range recs {
			if r.Run == v {
				runs = append(runs, v)
				break
			}
		}
	}
	if len(runs) == 0 {
		return
	}
	b.WriteString("\nThe defaults against the defaults with one rule fixed (means over the splits).\n\n")
	header(b, append(append([]string{"set", "metric", "defaults"}, runs...), "best fixed", "defaults within margin of it"))
	for _, set := range sets {
		d := summarize(recs, set, runDefaults)
		metric := ""
		for _, r := range recs {
			if r.Set == set && r.Run != "load" {
				metric = r.Metric
			}
		}
		cells := []string{set, metric, d.scoreCell()}
		best, bestRun := math.NaN(), "-"
		for _, run := range runs {
			v := summarize(recs, set, run)
			cells = append(cells, v.scoreCell())
			if v.n == 0 || v.failed > 0 {
				continue
			}
			better := v.score > best
			if metric == "rmse" {
				better = v.score < best
			}
			if math.IsNaN(best) || better {
				best, bestRun = v.score, run
			}
		}
		margin := "-"
		if d.n > 0 && d.failed == 0 && !math.IsNaN(best) {
			margin = "no"
			if withinMargin(metric, d.score, best, d.testRows) {
				margin = "yes"
			}
		}
		row(b, append(cells, bestRun, margin)...)
	}
}

func secsCell(s summary) string {
	if s.n == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", s.secs)
}

func choosingCell(s summary) string {
	if s.n == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", s.choose)
}

func loadError(recs []record, set string) string {
	for _, r := range recs {
		if r.Set == set && r.Run == "load" {
			return r.Error
		}
	}
	return ""
}

func seedsOf(recs []record, set string) []uint64 {
	var out []uint64
	seen := map[uint64]bool{}
	for _, r := range recs {
		if r.Set == set && r.Run != "load" && !seen[r.Seed] {
			seen[r.Seed] = true
			out = append(out, r.Seed)
		}
	}
	return out
}

func find(recs []record, set, run string, seed uint64) *record {
	for i := range recs {
		if r := &recs[i]; r.Set == set && r.Run == run && r.Seed == seed {
			return r
		}
	}
	return nil
}

func header(b *strings.Builder, cols []string) {
	row(b, cols...)
	sep := make([]string, len(cols))
	for i := range sep {
		sep[i] = "---"
	}
	row(b, sep...)
}

func row(b *strings.Builder, cells ...string) {
	b.WriteString("| " + strings.Join(cells, " | ") + " |\n")
}

func oneLine(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	s = strings.ReplaceAll(s, "|", "/")
	if len(s) > 80 {
		s = s[:77] + "..."
	}
	return s
}

func g(v float64) string { return fmt.Sprintf("%.3g", v) }

func intp(p *int) string {
	if p == nil {
		return "-"
	}
	return fmt.Sprint(*p)
}

func floatp(p *float64) string {
	if p == nil {
		return "-"
	}
	return fmt.Sprintf("%.2g", *p)
}

func boolp(p *bool) string {
	if p == nil {
		return "-"
	}
	return fmt.Sprint(*p)
}

// writePartitions writes, when the records hold both partition runs, one
// row per set: the mean score and fit time of ParK with each partition,
// and which is better, "tie" when each is within margin of the other.
func writePartitions(b *strings.Builder, sets []string, recs []record) {
	runs := partitionRuns()
	for _, run := range runs {
		if !slices.ContainsFunc(recs, func(r record) bool { return r.Run == run }) {
			return
		}
	}
	b.WriteString("\nParK (method park, Q = 4, the rest chosen as the defaults choose it) with each partition (means over the splits).\n\n")
	header(b, []string{"set", "metric", "kmeans", "greedy", "kmeans s", "greedy s", "better"})
	wins := map[string]int{}
	for _, set := range sets {
		km, gr := summarize(recs, set, runs[0]), summarize(recs, set, runs[1])
		metric := ""
		for _, r := range recs {
			if r.Set == set && r.Run != "load" {
				metric = r.Metric
			}
		}
		if km.n == 0 && gr.n == 0 {
			continue
		}
		better := "-"
		if km.n > 0 && gr.n > 0 && km.failed == 0 && gr.failed == 0 {
			kOK, gOK := withinMargin(metric, km.score, gr.score, km.testRows), withinMargin(metric, gr.score, km.score, gr.testRows)
			switch {
			case kOK && gOK:
				better = "tie"
			case kOK:
				better = "kmeans"
			default:
				better = "greedy"
			}
			wins[better]++
		}
		row(b, set, metric, km.scoreCell(), gr.scoreCell(), secsCell(km), secsCell(gr), better)
	}
	fmt.Fprintf(b, "\nkmeans better on %d sets, greedy on %d, tie (each within margin of the other) on %d.\n", wins["kmeans"], wins["greedy"], wins["tie"])
}
