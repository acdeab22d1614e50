package main

import (
	"fmt"
	"path/filepath"
	"strconv"
)

// figTradeoff: test error against fit time for every solver, on MNIST
// (classification error) and BostonHousing (test RMSE).
func figTradeoff(zonal, data, out string, quick bool) error {
	// MNIST: pixels / 255, sigma 8.63 (baselines.md), lambda 1e-6.
	train, test := filepath.Join(data, "mnist_train.csv.gz"), filepath.Join(data, "mnist_test.csv.gz")
	sub, exactN := "0", "5000"
	ds := []int{1024, 4096}
	ms := []int{2000, 5000}
	if quick {
		sub, exactN, ds, ms = "10000", "2000", []int{1024}, []int{2000}
	}
	common := []string{"-train", train, "-test", test, "-scale", "0.00392156862745098", "-sigma", "8.63", "-json"}
	// Each run has a legend name and a raw-file key (method and size).
	type run struct {
		name, key string
		args      []string
	}
	var runs []run
	runs = append(runs, run{"exact KRR (n=" + exactN + ")", "exact", []string{"-method", "exact", "-subsample", exactN, "-lambda", "1e-7"}})
	for _, m := range []string{"gegenbauer", "fourier", "nystrom"} {
		for _, d := range ds {
			runs = append(runs, run{fmt.Sprintf("ridge %s", m), fmt.Sprintf("ridge-%s-%d", m, d), []string{"-method", "ridge", "-map", m, "-features", strconv.Itoa(d), "-subsample", sub, "-lambda", "1e-7"}})
		}
	}
	for _, m := range ms {
		runs = append(runs, run{"FALKON", fmt.Sprintf("falkon-%d", m), []string{"-method", "falkon", "-centers", strconv.Itoa(m), "-subsample", sub, "-lambda", "1e-8"}})
		runs = append(runs, run{"ParK Q=4", fmt.Sprintf("park4-%d", m), []string{"-method", "park", "-cells", "4", "-centers", strconv.Itoa(m), "-subsample", sub, "-lambda", "1e-8"}})
	}
	var ss []series
	for _, r := range runs {
		rows, err := runJSON(zonal, "tradeoff_mnist_"+r.key, append(append([]string{"fit"}, common...), r.args...)...)
		if err != nil {
			return err
		}
		for _, row := range rows {
			acc, _ := num(row, "accuracy")
			t, _ := num(row, "fit_seconds")
			ss = add(ss, r.name, t, 1-acc)
		}
	}
	rows := "60000"
	if sub != "0" {
		rows = sub
	}
	if err := (chart{title: "MNIST (" + rows + " training rows unless noted, 10000 test), Gaussian sigma = 8.63", xlabel: "fit time (s)", ylabel: "test classification error", logX: true, logY: true, points: true}).save(out, "tradeoff_mnist", ss); err != nil {
		return err
	}

	// BostonHousing: standardized, 80/20 split, sigma = sqrt(d/2).
	ss = nil
	bh := []string{"-train", filepath.Join(data, "BostonHousing.csv.gz"), "-split", "0.8", "-standardize", "-sigma", "2.55", "-lambda", "1e-4", "-json"}
	bruns := []run{{"exact KRR", "exact", []string{"-method", "exact"}}}
	for _, m := range []string{"gegenbauer", "fourier", "nystrom"} {
		for _, d := range []int{64, 256} {
			bruns = append(bruns, run{"ridge " + m, fmt.Sprintf("ridge-%s-%d", m, d), []string{"-method", "ridge", "-map", m, "-features", strconv.Itoa(d)}})
		}
	}
	for _, m := range []int{50, 200} {
		bruns = append(bruns, run{"FALKON", fmt.Sprintf("falkon-%d", m), []string{"-method", "falkon", "-centers", strconv.Itoa(m)}})
		bruns = append(bruns, run{"ParK Q=4", fmt.Sprintf("park4-%d", m), []string{"-method", "park", "-cells", "4", "-centers", strconv.Itoa(m)}})
	}
	for _, r := range bruns {
		rows, err := runJSON(zonal, "tradeoff_bostonhousing_"+r.key, append(append([]string{"fit"}, bh...), r.args...)...)
		if err != nil {
			return err
		}
		for _, row := range rows {
			rmse, _ := num(row, "rmse")
			t, _ := num(row, "fit_seconds")
			ss = add(ss, r.name, t, rmse)
		}
	}
	return (chart{title: "BostonHousing (standardized, 80/20 split), Gaussian sigma = 2.55", xlabel: "fit time (s)", ylabel: "test RMSE", logX: true, points: true}).save(out, "tradeoff_bostonhousing", ss)
}
