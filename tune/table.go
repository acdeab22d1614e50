package tune

import (
	"fmt"
	"io"
	"text/tabwriter"
)

// WriteTable writes the rows as an aligned text table (sigma, lambda, size,
// mean and std of the metric, seconds), the best row marked with "*", and a
// last line naming the best setting and the direction it was chosen in.
func (r *Result) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "\tsigma\tlambda\tsize\t%s\tstd\tseconds\n", r.Metric)
	for _, row := range r.Rows {
		mark := ""
		if row.Setting == r.Best.Setting {
			mark = "*"
		}
		fmt.Fprintf(tw, "%s\t%.5g\t%.3g\t%d\t%.5f\t%.5f\t%.3f\n", mark, row.Sigma, row.Lambda, row.Size, row.Mean, row.Std, row.Seconds)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	dir := "lower"
	if r.HigherIsBetter() {
		dir = "higher"
	}
	_, err := fmt.Fprintf(w, "best: sigma %.5g, lambda %.3g, size %d: %s %.5f +- %.5f (%s is better; %s, %d settings, %d groups, %v)\n",
		r.Best.Sigma, r.Best.Lambda, r.Best.Size, r.Metric, r.Best.Mean, r.Best.Std, dir, r.Criterion, len(r.Rows), r.Groups, r.Elapsed.Round(1e6))
	return err
}
