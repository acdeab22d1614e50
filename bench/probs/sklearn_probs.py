#!/usr/bin/python3
"""scikit-learn's reference for the probabilities measurement (bench/probs).

For every set dumped by `go run ./probs -dump DIR` (NAME.json: the file,
the split's train and test rows, and the sigma, lambda, centre count and
input transform zonal chose for each of its two models), on exactly those
rows, it fits

  logistic:   Pipeline(StandardScaler if zonal's logistic model standardized,
              Nystroem(rbf, gamma=1/(2 sigma^2), n_components=zonal's centres,
              random_state=0), LogisticRegression(C)), sigma and the centres
              those of zonal's logistic FALKON. C is chosen by GridSearchCV
              over C_GRID (3 stratified folds shuffled with the split's seed,
              scoring the log-loss) on the Nystroem features, which are
              computed once on the training rows (the unsupervised map is
              not refitted per fold); the best C is refitted on all of them.
  calibrated: CalibratedClassifierCV(Pipeline(scaler, Nystroem(as above with
              the calibrated model's sigma and centres), RidgeClassifier(
              alpha=lambda n_fold)), cv=5 stratified folds shuffled with the
              split's seed, method='sigmoid'), lambda zonal's chosen lambda of
              its squared-loss model (zonal's objective (1/n)|f(X)-y|^2 +
              lambda |f|^2 is scikit-learn's alpha = lambda n, n a fold's
              training rows).

The centre count is capped at the training rows (Nystroem cannot take more).
A training set above the dump's max_train_rows (50000; Fertility) is replaced
by a seeded subsample of that many rows, drawn as bench/defaults'
script draws it. Reported per model: test ROC AUC, log-loss, Brier score and
accuracy of the positive (larger) label's probability, the fit time
(seconds: everything, the C search included; refit_seconds: the map and
the final fit alone). One JSON line per set goes to --out, the test
probabilities to DIR/NAME.sklearn_proba.json (for `go run ./probs
-reliability DIR`), a markdown table to stdout, and with --go FILE (the Go
program's -out) a table comparing the two.

Needs Debian's python3-sklearn (run with /usr/bin/python3). Not part of CI.

  /usr/bin/python3 probs/sklearn_probs.py DIR [--sets a,b] [--n-jobs 2]
      [--out sklearn_probs.jsonl] [--go probs.jsonl]
"""
import argparse
import json
import os
import sys
import time
import warnings

import numpy as np
from sklearn.calibration import CalibratedClassifierCV
from sklearn.kernel_approximation import Nystroem
from sklearn.linear_model import LogisticRegression, RidgeClassifier
from sklearn.metrics import accuracy_score, brier_score_loss, log_loss, roc_auc_score
from sklearn.model_selection import GridSearchCV, StratifiedKFold
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler

# The shared data readers of bench/defaults' script (same files, same parse).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "defaults"))
from sklearn_defaults import read_set  # noqa: E402

# A fold of CalibratedClassifierCV has fewer rows than the centres when the
# centres cover every training row; Nystroem then uses them all.
os.environ["PYTHONWARNINGS"] = "ignore:n_components > n_samples:UserWarning"
warnings.filterwarnings("ignore", message="n_components > n_samples", category=UserWarning)

# LogisticRegression's inverse regularisation grid and folds.
C_GRID = [1e-2, 1e-1, 1.0, 10.0, 100.0, 1e3]
C_FOLDS = 3
CALIBRATION_FOLDS = 5
MODELS = ("logistic", "calibrated")


def train_test(d, data):
    """The split's rows, the training rows subsampled above max_train_rows."""
    x, y, _, _ = data
    x_tr, y_tr = x[d["train"]], y[d["train"]]
    x_te, y_te = x[d["test"]], y[d["test"]]
    if x_tr.shape[0] > d["max_train_rows"]:
        rng = np.random.default_rng(d["seed"])
        keep = np.sort(rng.choice(x_tr.shape[0], d["max_train_rows"], replace=False))
        x_tr, y_tr = x_tr[keep], y_tr[keep]
    return x_tr, y_tr, x_te, y_te


def features(m, n_rows):
    """Scaler and Nystroem map of zonal's settings m on n_rows rows."""
    scaler = StandardScaler() if m["standardize"] else "passthrough"
    nys = Nystroem(kernel="rbf", gamma=0.5 / m["sigma"] ** 2, n_components=min(m["centers"], n_rows), random_state=0)
    return scaler, nys


def fit_logistic(d, x_tr, y_tr, n_jobs):
    m = d["models"]["logistic"]
    scaler, nys = features(m, x_tr.shape[0])
    t0 = time.perf_counter()
    fmap = Pipeline([("scale", scaler), ("nys", nys)])
    z = fmap.fit_transform(x_tr)
    map_seconds = time.perf_counter() - t0
    cv = StratifiedKFold(n_splits=C_FOLDS, shuffle=True, random_state=d["seed"] % 2 ** 32)
    gs = GridSearchCV(LogisticRegression(max_iter=2000), {"C": C_GRID}, scoring="neg_log_loss", cv=cv,
                      n_jobs=n_jobs, refit=True)
    gs.fit(z, y_tr)
    total = time.perf_counter() - t0

    def proba(x):
        return gs.predict_proba(fmap.transform(x))[:, 1]

    info = {"components": int(nys.n_components), "gamma": nys.gamma, "C": gs.best_params_["C"],
            "cv_log_loss": float(-gs.best_score_), "seconds": total, "refit_seconds": map_seconds + gs.refit_time_}
    return proba, info


def fit_calibrated(d, x_tr, y_tr, n_jobs):
    m = d["models"]["calibrated"]
    n_fold = x_tr.shape[0] * (CALIBRATION_FOLDS - 1) / CALIBRATION_FOLDS
    scaler, nys = features(m, x_tr.shape[0])
    base = Pipeline([("scale", scaler), ("nys", nys), ("ridge", RidgeClassifier(alpha=m["lambda"] * n_fold))])
    cv = StratifiedKFold(n_splits=CALIBRATION_FOLDS, shuffle=True, random_state=d["seed"] % 2 ** 32)
    cal = CalibratedClassifierCV(base, cv=cv, method="sigmoid", n_jobs=n_jobs)
    t0 = time.perf_counter()
    cal.fit(x_tr, y_tr)
    total = time.perf_counter() - t0

    def proba(x):
        return cal.predict_proba(x)[:, 1]

    info = {"components": int(nys.n_components), "gamma": nys.gamma, "alpha": m["lambda"] * n_fold,
            "seconds": total, "refit_seconds": total}
    return proba, info


def scores(y, p):
    pos = y.max()
    t = (y == pos).astype(float)
    return {"auc": float(roc_auc_score(t, p)), "log_loss": float(log_loss(t, p, labels=[0.0, 1.0])),
            "brier": float(brier_score_loss(t, p)), "accuracy": float(accuracy_score(t, p >= 0.5))}


def run_set(d, n_jobs):
    x_tr, y_tr, x_te, y_te = train_test(d, read_set(d))
    rec = {"tool": "sklearn", "set": d["set"], "seed": d["seed"], "train_rows": len(d["train"]),
           "train_rows_used": int(x_tr.shape[0]), "test_rows": int(len(y_te)), "n_jobs": n_jobs, "models": {}}
    probs = {"tool": "sklearn", "set": d["set"], "y": y_te.tolist(), "proba": {}}
    for name, fit in (("logistic", fit_logistic), ("calibrated", fit_calibrated)):
        if name not in d["models"]:
            continue  # the Go run fitted only some models (-models)
        proba, info = fit(d, x_tr, y_tr, n_jobs)
        p = proba(x_te)
        info.update(scores(y_te, p))
        rec["models"][name] = info
        probs["proba"][name] = p.tolist()
    return rec, probs


def read_go(path):
    """The Go program's records by (set, model), errors left out."""
    go = {}
    with open(path) as f:
        for line in f:
            r = json.loads(line)
            if not r.get("error"):
                go[(r["set"], r["model"])] = r
    return go


def compare(sk, go_path):
    """zonal against scikit-learn, model by model, on the sets both ran."""
    go = read_go(go_path)
    print("\n| set | model | zonal AUC | sklearn AUC | zonal log-loss | sklearn log-loss | zonal Brier | "
          "sklearn Brier | zonal fit s | sklearn fit s | sklearn refit s | zonal centres | sklearn components | "
          "zonal at least as good (AUC and log-loss) |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for r in sk:
        for name in MODELS:
            z, s = go.get((r["set"], name)), r["models"].get(name)
            if z is None or s is None:
                continue
            ok = z["auc"] >= s["auc"] and z["log_loss"] <= s["log_loss"]
            print(f"| {r['set']} | {name} | {z['auc']:.4f} | {s['auc']:.4f} | {z['log_loss']:.4f} | "
                  f"{s['log_loss']:.4f} | {z['brier']:.4f} | {s['brier']:.4f} | {z['seconds']:.2f} | "
                  f"{s['seconds']:.2f} | {s['refit_seconds']:.2f} | {z['centers']} | {s['components']} | "
                  f"{'yes' if ok else 'no'} |")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dir", help="the folder written by -dump")
    ap.add_argument("--sets", default="", help="comma-separated sets (default: every NAME.json in dir)")
    ap.add_argument("--n-jobs", type=int, default=2)
    ap.add_argument("--out", default="sklearn_probs.jsonl", help="JSON lines output")
    ap.add_argument("--go", default="", help="the Go program's JSON lines, for the comparison table")
    a = ap.parse_args()
    names = [s for s in a.sets.split(",") if s] or sorted(
        f[:-5] for f in os.listdir(a.dir) if f.endswith(".json") and "_proba" not in f)
    recs = []
    print("| set | model | train rows used | components | AUC | log-loss | Brier | accuracy | fit s | refit s |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    with open(a.out, "w") as out:
        for name in names:
            with open(os.path.join(a.dir, name + ".json")) as f:
                d = json.load(f)
            rec, probs = run_set(d, a.n_jobs)
            recs.append(rec)
            out.write(json.dumps(rec) + "\n")
            out.flush()
            with open(os.path.join(a.dir, name + ".sklearn_proba.json"), "w") as f:
                json.dump(probs, f)
            for m in MODELS:
                if m not in rec["models"]:
                    continue
                s = rec["models"][m]
                print(f"| {name} | {m} | {rec['train_rows_used']} | {s['components']} | {s['auc']:.4f} | "
                      f"{s['log_loss']:.4f} | {s['brier']:.4f} | {s['accuracy']:.4f} | {s['seconds']:.2f} | "
                      f"{s['refit_seconds']:.2f} |", flush=True)
    if a.go:
        compare(recs, a.go)


if __name__ == "__main__":
    sys.exit(main())
