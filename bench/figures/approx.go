package main

import (
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"
)

// dataSet is a shared data set and its feature count d.
type dataSet struct {
	name string
	file string
	d    int
}

// figApprox: relative spectral error and eps_lambda (lambda = 0.01 and 1)
// against D for every Gaussian-kernel map, sigma = sqrt(d/2) on standardized
// data (scikit-learn's gamma = 'scale').
func figApprox(zonal, data, out string, quick bool) error {
	sets := []dataSet{
		{"diabetes", "diabetes.csv.gz", 10},
		{"BostonHousing", "BostonHousing.csv.gz", 13},
		{"spam", "spam.csv.gz", 57},
		{"digits", "digits.csv.gz", 64},
	}
	features := "128,256,512,1024,2048"
	n := "1000"
	if quick {
		features, n = "128,512,1024", "500"
	}
	methods := "gegenbauer,gegenbauer-anti,fourier,fourier-orth,nystrom,rls-nystrom,adaptive"
	for _, s := range sets {
		sigma := math.Sqrt(float64(s.d) / 2)
		rows, err := runJSON(zonal, "approx_"+strings.ToLower(s.name), "approx", "-data", filepath.Join(data, s.file), "-standardize",
			"-kernel", "gaussian", "-sigma", strconv.FormatFloat(sigma, 'g', 8, 64),
			"-methods", methods, "-features", features, "-n", n, "-lambda", "0.01,1", "-seed", "1", "-json")
		if err != nil {
			return err
		}
		var spec, eps001, eps1 []series
		for _, r := range rows {
			m := str(r, "method")
			D, _ := num(r, "features")
			if rows, _ := num(r, "n"); strings.Contains(m, "nystrom") && D >= rows {
				continue // Nystrom on every point is exact, not an approximation
			}
			lam, _ := num(r, "lambda")
			e, _ := num(r, "eps_lambda")
			if lam == 0.01 {
				rs, _ := num(r, "rel_spec")
				spec = add(spec, m, D, rs)
				eps001 = add(eps001, m, D, e)
			} else {
				eps1 = add(eps1, m, D, e)
			}
		}
		used := n
		if len(rows) > 0 {
			if v, ok := num(rows[0], "n"); ok {
				used = strconv.Itoa(int(v)) // sets smaller than -n use every row
			}
		}
		title := fmt.Sprintf("%s (d = %d, n = %s), Gaussian sigma = %.3g", s.name, s.d, used, sigma)
		base := "approx_" + strings.ToLower(s.name)
		if err := (chart{title: title, xlabel: "features D", ylabel: "relative spectral error", logX: true, logY: true, xticks: dTicks(features)}).save(out, base+"_relspec", spec); err != nil {
			return err
		}
		if err := (chart{title: title, xlabel: "features D", ylabel: "eps_lambda, lambda = 0.01", logX: true, logY: true, xticks: dTicks(features)}).save(out, base+"_eps0.01", eps001); err != nil {
			return err
		}
		if err := (chart{title: title, xlabel: "features D", ylabel: "eps_lambda, lambda = 1", logX: true, logY: true, xticks: dTicks(features)}).save(out, base+"_eps1", eps1); err != nil {
			return err
		}
	}
	return nil
}

// dTicks parses a comma list of feature counts into tick values.
func dTicks(list string) []float64 {
	var out []float64
	for _, f := range strings.Split(list, ",") {
		if v, err := strconv.ParseFloat(f, 64); err == nil {
			out = append(out, v)
		}
	}
	return out
}
