package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zonal-ml/zonal/dataset"
	"github.com/zonal-ml/zonal/estimator"
	"github.com/zonal-ml/zonal/solvers"
)

// The README's library call and `zonal fit` with only -train, -seed 1 and
// -model make the same model file, byte for byte, and choose the same
// settings: the command holds no fitting decision of its own. Checked on
// the embedded digits (dense CSV) and on a sparse LIBSVM set.
func TestLibraryFitMatchesCLI(t *testing.T) {
	if testing.Short() {
		t.Skip("fits digits twice (a few seconds); skipped with -short")
	}
	dir := t.TempDir()
	for _, c := range []struct {
		name, path string
	}{
		{"digits csv", filepath.Join("..", "..", "dataset", "embed", "digits.csv.gz")},
		{"sparse libsvm", writeCountsLIBSVM(t, dir, 400)},
	} {
		t.Run(c.name, func(t *testing.T) {
			model := filepath.Join(t.TempDir(), "cli.zonal")
			out, errs, code := runCmd("fit", "-train", c.path, "-seed", "1", "-model", model, "-json")
			if code != 0 {
				t.Fatalf("zonal fit: exit %d: %s", code, errs)
			}
			var res struct {
				Chosen estimator.Chosen `json:"chosen"`
				Lambda float64          `json:"lambda"`
				Sigma  float64          `json:"sigma"`
				Sparse bool             `json:"sparse"`
			}
			if err := json.Unmarshal([]byte(out), &res); err != nil {
				t.Fatal(err)
			}
			cliFile, err := os.ReadFile(model)
			if err != nil {
				t.Fatal(err)
			}

			// The library, as a Go program would call it on the same
			// training rows (the command's default 80/20 split, seed 1).
			data, err := dataset.ReadFile(c.path, dataset.Options{})
			if err != nil {
				t.Fatal(err)
			}
			n, _ := data.Dims()
			tr, _ := dataset.Split(n, 0.8, 1)
			train, err := data.Subset(tr)
			if err != nil {
				t.Fatal(err)
			}
			pipe, rep, err := estimator.Fit(context.Background(), train.Matrix(), train.Y, estimator.Options{Seed: 1})
			if err != nil {
				t.Fatal(err)
			}
			libFile, err := solvers.MarshalPipeline(pipe)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(cliFile, libFile) {
				t.Errorf("model files differ (%d and %d bytes)", len(cliFile), len(libFile))
			}
			// The chosen settings are the same, timings aside.
			got := rep.Chosen
			got.TuneSeconds, res.Chosen.TuneSeconds = 0, 0
			if got != res.Chosen || rep.Lambda != res.Lambda || rep.Kernel.Sigma != res.Sigma || rep.Sparse != res.Sparse {
				t.Errorf("chosen differ:\nlibrary %+v lambda %g sigma %g sparse %v\ncommand %+v lambda %g sigma %g sparse %v",
					got, rep.Lambda, rep.Kernel.Sigma, rep.Sparse, res.Chosen, res.Lambda, res.Sigma, res.Sparse)
			}
		})
	}
}

// -dry-run prints the plan without fitting: the same plan NewPlan makes.
func TestFitDryRun(t *testing.T) {
	dir := t.TempDir()
	train := writeRegressionCSV(t, dir, "train.csv", 150, 3)
	model := filepath.Join(dir, "m.zonal")
	out, errs, code := runCmd("fit", "-train", train, "-dry-run", "-model", model)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	plan, err := estimator.NewPlan(estimator.Shape{Rows: 120, Cols: 3}, estimator.Options{Seed: 1, Coef0: 1, Gamma: 1, Degree: 2, Features: estimator.DefaultFeatures, Cells: estimator.DefaultCells, Scale: 1, Partition: solvers.DefaultPartition, CellBudget: solvers.BudgetSize})
	if err != nil {
		t.Fatal(err)
	}
	if out != plan.String() {
		t.Errorf("dry run printed\n%s\nwant\n%s", out, plan.String())
	}
	if _, err := os.Stat(model); err == nil {
		t.Error("-dry-run wrote a model file")
	}
}

// The long explanations are in `zonal help fit`, not in the flag help.
func TestHelpFit(t *testing.T) {
	out, _, code := runCmd("help", "fit")
	if code != 0 || !strings.Contains(out, "golden-section") || !strings.Contains(out, "-dry-run") {
		t.Errorf("help fit: exit %d\n%s", code, out)
	}
	if _, _, code := runCmd("help", "nope"); code != exitUsage {
		t.Errorf("help nope: exit %d, want %d", code, exitUsage)
	}
}

// A deliberately tiny iteration cap is said on stderr and in -json: the
// solve is never reported as a normal result.
func TestFitUnconvergedWarns(t *testing.T) {
	dir := t.TempDir()
	train := writeRegressionCSV(t, dir, "train.csv", 300, 3)
	out, errs, code := runCmd("fit", "-train", train, "-sigma", "1", "-lambda", "1e-9", "-centers", "100", "-iterations", "2", "-json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.Contains(errs, "warning: the solve did not converge") || !strings.Contains(errs, "-iterations") {
		t.Errorf("stderr has no warning: %q", errs)
	}
	var res struct {
		Solve *struct {
			Iterations int  `json:"iterations"`
			Converged  bool `json:"converged"`
			Solved     bool `json:"solved"`
		} `json:"solve"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	if res.Solve == nil || res.Solve.Converged || res.Solve.Solved || res.Solve.Iterations != 2 {
		t.Errorf("-json solve: %+v", res.Solve)
	}
	// Without the cap the same fit is solved and nothing is said.
	_, errs, code = runCmd("fit", "-train", train, "-sigma", "1", "-lambda", "1e-3", "-centers", "100", "-json")
	if code != 0 || strings.Contains(errs, "warning") {
		t.Errorf("automatic cap: exit %d, stderr %q", code, errs)
	}
}
