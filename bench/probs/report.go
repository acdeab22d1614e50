package main

import (
	"fmt"
	"io"
	"strings"
)

// tableColumns are the headers of the table on stdout.
var tableColumns = []string{"set", "model", "train rows", "test positives", "AUC", "log-loss", "Brier", "accuracy",
	"recall at 90% precision", "centres", "sigma", "lambda", "calibration", "fit s"}

// writeTable writes the records as a markdown table.
func writeTable(w io.Writer, recs []record) error {
	var b strings.Builder
	fmt.Fprintf(&b, "| %s |\n|%s\n", strings.Join(tableColumns, " | "), strings.Repeat("---|", len(tableColumns)))
	for _, r := range recs {
		if r.Error != "" {
			fmt.Fprintf(&b, "| %s | %s | error: %s |%s\n", r.Set, r.Model, r.Error, strings.Repeat(" |", len(tableColumns)-3))
			continue
		}
		fmt.Fprintf(&b, "| %s | %s | %d | %.2f%% | %.4f | %.4f | %.4f | %.4f | %.4f | %d | %.4g | %.3g | %s | %.2f |\n",
			r.Set, r.Model, r.TrainRows, 100*r.PositiveRate, r.AUC, r.LogLoss, r.Brier, r.Accuracy, r.RecallAtP90,
			r.Centers, r.Sigma, r.Lambda, r.Calibration, r.Seconds)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
