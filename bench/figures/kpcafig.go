package main

import (
	"path/filepath"
	"strconv"
)

// figKPCA: incremental KPCA drift (relative reconstruction error and
// orthogonality) against points on digits and MNIST, with and without mean
// adjustment; and incremental Nystrom errors against landmarks.
func figKPCA(zonal, data, out string, quick bool) error {
	digitsPoints, mnistPoints := "1797", "2000"
	if quick {
		digitsPoints, mnistPoints = "600", "600"
	}
	type set struct {
		name, key string
		args      []string
	}
	sets := []set{
		{"digits", "digits", []string{"-data", filepath.Join(data, "digits.csv.gz"), "-standardize", "-points", digitsPoints}},
		{"MNIST", "mnist", []string{"-data", filepath.Join(data, "mnist_train.csv.gz"), "-scale", "0.00392156862745098", "-points", mnistPoints}},
	}
	var recon, orth []series
	for _, s := range sets {
		for _, mean := range []bool{false, true} {
			args := append([]string{"kpca", "-incremental", "-start", "20", "-every", "100", "-no-batch", "-json"}, s.args...)
			name, key := s.name, "kpca_"+s.key
			if mean {
				args = append(args, "-mean-adjust")
				name += ", mean adjusted"
				key += "_mean"
			}
			rows, err := runJSON(zonal, key, args...)
			if err != nil {
				return err
			}
			for _, r := range rows {
				p, _ := num(r, "points")
				rr, _ := num(r, "rel_recon")
				o, _ := num(r, "orth")
				recon = add(recon, name, p, rr)
				orth = add(orth, name, p, o)
			}
		}
	}
	if err := (chart{title: "Incremental KPCA drift, Gaussian kernel (median sigma)", xlabel: "points", ylabel: "|K - U L U^T|_F / |K|_F", logY: true}).save(out, "kpca_drift", recon); err != nil {
		return err
	}
	if err := (chart{title: "Incremental KPCA orthogonality", xlabel: "points", ylabel: "max |U^T U - I|", logY: true}).save(out, "kpca_orth", orth); err != nil {
		return err
	}

	to := 500
	if quick {
		to = 200
	}
	rows, err := runJSON(zonal, "nystrom_errors_mnist", "kpca", "-data", filepath.Join(data, "mnist_train.csv.gz"), "-scale", "0.00392156862745098",
		"-points", "1000", "-start", "20", "-nystrom", strconv.Itoa(to), "-every", "20", "-json")
	if err != nil {
		return err
	}
	var ss []series
	for _, r := range rows {
		l, _ := num(r, "landmarks")
		for _, k := range []struct{ key, name string }{{"rel_frobenius", "Frobenius"}, {"rel_spectral", "spectral"}, {"rel_trace", "trace norm"}} {
			v, _ := num(r, k.key)
			ss = add(ss, k.name, l, v)
		}
	}
	return (chart{title: "Incremental Nystrom on the first 1000 MNIST points", xlabel: "landmarks", ylabel: "relative error |K - K_nys| / |K|", logY: true}).save(out, "nystrom_errors", ss)
}
