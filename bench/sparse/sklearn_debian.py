#!/usr/bin/python3
"""scikit-learn's baselines on the debian_text split written by bench/sparse.

Run with Debian's Python and python3-sklearn (apt-get install python3-sklearn):

    go run ./bench/sparse -split-out /tmp/debian_split.json ...
    /usr/bin/python3 bench/sparse/sklearn_debian.py /tmp/debian_split.json [-json out.jsonl]

The split file names the LIBSVM data, the number of leading rows used, the
column count, alpha, the sketch sizes D and the 0-based train/test row
indices, so both programs score the same rows. Rows printed, in the table
format of bench/sparse:

- RidgeClassifier(alpha) on the raw counts and on tf-idf rows
  (TfidfTransformer, smoothed idf and L2 rows: the transform of zonal's
  -tfidf -normalize), solver "auto" (sparse_cg on this sparse input);
- PolynomialCountSketch(degree 2 and 3, gamma = 1 / mean |x|^2 of the
  training rows, coef0 = 1, n_components = D) followed by
  RidgeClassifier(alpha), for every D of the split file: the polynomial
  kernels bench/sparse sketches with TensorSketch.

Fit time includes the sketch of the training rows (not the tf-idf, which
both programs do before timing).
"""

import argparse
import json
import sys
import time

import numpy as np
import sklearn
from sklearn.datasets import load_svmlight_file
from sklearn.feature_extraction.text import TfidfTransformer
from sklearn.kernel_approximation import PolynomialCountSketch
from sklearn.linear_model import RidgeClassifier


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("split", help="JSON split file written by bench/sparse -split-out")
    ap.add_argument("-json", help="also write one JSON object per result here")
    ap.add_argument("-transforms", default="counts,tfidf")
    ap.add_argument("-degrees", default="2,3")
    args = ap.parse_args()
    with open(args.split) as f:
        sp = json.load(f)
    x, y = load_svmlight_file(sp["data"], dtype=np.float64)
    x = x[: sp["rows"], : sp["n_features"]].tocsr()
    y = y[: sp["rows"]]
    train, test = np.asarray(sp["train"]), np.asarray(sp["test"])
    xtr0, xte0, ytr, yte = x[train], x[test], y[train], y[test]
    alpha = sp["alpha"]
    print(f"# scikit-learn {sklearn.__version__}: {sp['rows']} rows ({len(train)} train, {len(test)} test), "
          f"{sp['n_features']} columns, alpha {alpha}\n")
    print("| input | method | D | accuracy | fit s | predict s | note |")
    print("|---|---|---:|---:|---:|---:|---|")
    out = open(args.json, "w") if args.json else None

    def emit(tf, method, size, acc, fit, pred, note=""):
        print(f"| {tf} | {method} | {size} | {acc:.4f} | {fit:.3f} | {pred:.3f} | {note} |")
        if out:
            out.write(json.dumps({"transform": tf, "method": method, "size": size, "accuracy": acc,
                                  "fit_seconds": fit, "predict_seconds": pred, "note": note}) + "\n")

    for tf in [t for t in args.transforms.split(",") if t]:
        if tf == "tfidf":
            t = TfidfTransformer(norm="l2", use_idf=True, smooth_idf=True, sublinear_tf=False).fit(xtr0)
            xtr, xte = t.transform(xtr0), t.transform(xte0)
        else:
            xtr, xte = xtr0, xte0
        t0 = time.perf_counter()
        clf = RidgeClassifier(alpha=alpha).fit(xtr, ytr)
        fit = time.perf_counter() - t0
        t0 = time.perf_counter()
        acc = float(np.mean(clf.predict(xte) == yte))
        emit(tf, "RidgeClassifier", xtr.shape[1], acc, fit, time.perf_counter() - t0)
        gamma = 1.0 / max(float(np.mean(np.asarray(xtr.multiply(xtr).sum(axis=1)))), 1e-300)
        for deg in [int(d) for d in args.degrees.split(",") if d]:
            for D in sp["features"]:
                t0 = time.perf_counter()
                pcs = PolynomialCountSketch(degree=deg, gamma=gamma, coef0=1, n_components=D,
                                            random_state=sp["seed"] % (2**32))
                ztr = pcs.fit_transform(xtr)
                clf = RidgeClassifier(alpha=alpha).fit(ztr, ytr)
                fit = time.perf_counter() - t0
                t0 = time.perf_counter()
                acc = float(np.mean(clf.predict(pcs.transform(xte)) == yte))
                emit(tf, f"PolynomialCountSketch-{deg} + RidgeClassifier", D, acc, fit, time.perf_counter() - t0)
    if out:
        out.close()


if __name__ == "__main__":
    sys.exit(main())
