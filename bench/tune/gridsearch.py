#!/usr/bin/python3
"""scikit-learn's GridSearchCV on the plan written by `go run ./bench/tune -plan FILE`.

Same rows (the plan's subsample), same standardization (population standard
deviation on the used rows; constant columns scaled by 1), same folds
(PredefinedSplit on the plan's test_fold), same grid (gamma = 1/(2 sigma^2),
alpha = lambda * mean training-fold rows), same method:

  nystroem: Nystroem(rbf, n_components) + Ridge (regression) or
            RidgeClassifier (classification: one-vs-all +-1 targets, argmax);
  krr:      KernelRidge(rbf) on the +-1 one-vs-all targets (classification,
            argmax) or on the target (regression), targets centred like zonal's.

n_jobs=2. Prints a table and one JSON line. Needs Debian's python3-sklearn
(run with /usr/bin/python3). Not part of CI.

  /usr/bin/python3 bench/tune/gridsearch.py PLAN.json [--n-jobs 2]
"""
import argparse
import gzip
import json
import sys
import time

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.datasets import load_svmlight_file
from sklearn.kernel_approximation import Nystroem
from sklearn.kernel_ridge import KernelRidge
from sklearn.linear_model import Ridge, RidgeClassifier
from sklearn.model_selection import GridSearchCV, PredefinedSplit
from sklearn.pipeline import Pipeline


def read(path):
    if ".libsvm" in path:
        x, y = load_svmlight_file(path)
        return np.asarray(x.todense()), y
    with gzip.open(path, "rt") if path.endswith(".gz") else open(path) as f:
        header = f.readline().strip().split(",")
        a = np.loadtxt(f, delimiter=",", ndmin=2)
    t = header.index("y") if "y" in header else 0
    return np.delete(a, t, axis=1), a[:, t]


class CentredKRR(BaseEstimator, RegressorMixin):
    """KernelRidge on centred targets (zonal's unpenalised mean)."""

    def __init__(self, gamma=1.0, alpha=1.0):
        self.gamma, self.alpha = gamma, alpha

    def fit(self, x, y):
        self.mean_ = y.mean()
        self.krr_ = KernelRidge(kernel="rbf", gamma=self.gamma, alpha=self.alpha).fit(x, y - self.mean_)
        return self

    def predict(self, x):
        return self.krr_.predict(x) + self.mean_


class OvAKRR(BaseEstimator, ClassifierMixin):
    """One-vs-all KernelRidge on centred +-1 targets, prediction by argmax (sign for 2 classes)."""

    def __init__(self, gamma=1.0, alpha=1.0):
        self.gamma, self.alpha = gamma, alpha

    def fit(self, x, y):
        self.classes_ = np.unique(y)
        t = np.where(y[:, None] == self.classes_[None, :], 1.0, -1.0)
        if len(self.classes_) == 2:
            t = t[:, 1:]
        self.mean_ = t.mean(axis=0)
        self.krr_ = KernelRidge(kernel="rbf", gamma=self.gamma, alpha=self.alpha).fit(x, t - self.mean_)
        return self

    def predict(self, x):
        out = self.krr_.predict(x).reshape(len(x), -1) + self.mean_
        if len(self.classes_) == 2:
            return self.classes_[(out[:, 0] > 0).astype(int)]
        return self.classes_[np.argmax(out, axis=1)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("plan")
    ap.add_argument("--n-jobs", type=int, default=2)
    a = ap.parse_args()
    with open(a.plan) as f:
        p = json.load(f)
    x, y = read(p["data"])
    x, y = x[p["rows"]], y[p["rows"]]
    if p["standardize"]:
        sd = x.std(axis=0)
        sd[sd == 0] = 1
        x = (x - x.mean(axis=0)) / sd
    cls = p["task"] == "classification"
    if p["method"] == "krr":
        est = OvAKRR() if cls else CentredKRR()
        grid = {"gamma": p["gammas"], "alpha": p["alphas"]}
    else:
        lin = RidgeClassifier() if cls else Ridge()
        est = Pipeline([("nys", Nystroem(kernel="rbf", n_components=p["components"], random_state=p["seed"] % 2**32)), ("lin", lin)])
        grid = {"nys__gamma": p["gammas"], "lin__alpha": p["alphas"]}
    scoring = "accuracy" if cls else "neg_root_mean_squared_error"
    gs = GridSearchCV(est, grid, scoring=scoring, cv=PredefinedSplit(p["test_fold"]), n_jobs=a.n_jobs, refit=False)
    t0 = time.perf_counter()
    gs.fit(x, y)
    secs = time.perf_counter() - t0
    r = gs.cv_results_
    sign = 1 if cls else -1
    metric = "accuracy" if cls else "rmse"
    print(f"{'gamma':<12} {'alpha':<10} {metric:<10} {'std':<10} {'fit_s':<8}")
    keys = list(grid)
    for i in range(len(r["params"])):
        g, al = r["params"][i][keys[0]], r["params"][i][keys[1]]
        print(f"{g:<12.5g} {al:<10.3g} {sign * r['mean_test_score'][i]:<10.5f} {r['std_test_score'][i]:<10.5f} {r['mean_fit_time'][i]:<8.3f}")
    b = gs.best_params_
    sigma = (0.5 / b[keys[0]]) ** 0.5
    print(json.dumps({
        "tool": "sklearn", "data": p["data"], "rows": len(y), "method": p["method"], "folds": int(max(p["test_fold"]) + 1),
        "metric": metric, "best_sigma": sigma, "best_alpha": b[keys[1]], "best_score": sign * gs.best_score_,
        "settings": len(r["params"]), "n_jobs": a.n_jobs, "seconds": secs,
    }))


if __name__ == "__main__":
    sys.exit(main())
