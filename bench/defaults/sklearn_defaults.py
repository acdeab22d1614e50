#!/usr/bin/python3
"""scikit-learn's reference for the defaults suite (bench/defaults).

For every set dumped by `go run ./defaults -dump-splits DIR`, on exactly
the Go program's splits (the dump holds the train and test rows of each
seed), it runs GridSearchCV over

    Pipeline(StandardScaler, Nystroem(rbf, n_components=min(n_train, 4096),
             random_state=0), Ridge or RidgeClassifier)

with tune's default FALKON grid: gamma = 1/(2 sigma^2) for sigma in the
dump's median-heuristic sigma times 2^-2..2^2, and alpha = lambda * n for
lambda in 1e-10..1e-1 (zonal's lambda multiplies the training rows; n is a
CV fold's training rows). Folds: 5, StratifiedKFold for classification and
KFold for regression, shuffled with the split's seed. Sparse sets
(debian_text) skip the scaler (centring would densify them; zonal keeps
them raw too). A training set above the dump's max_train_rows (50000) is
replaced by a seeded subsample of that many rows for the search and the
refit. n_jobs=2 by default.

Per split it reports the test metric (accuracy or RMSE; ROC AUC of the
decision function for two classes), the fit time of the single best refit
(GridSearchCV.refit_time_) and the total time of the search with its refit.
One JSON line per split goes to --out; a markdown table to stdout. With
--go FILE (the Go program's -out) it also prints the suite's verdict: the
defaults against the best of tune and scikit-learn, within the margins of
bench/defaults/README.md.

Needs Debian's python3-sklearn (run with /usr/bin/python3). Not part of CI.

  /usr/bin/python3 defaults/sklearn_defaults.py DIR [--sets a,b] [--n-jobs 2]
      [--out sklearn_defaults.jsonl] [--go defaults.jsonl] [--seeds 1,2]
      [--single | --exact-fast]

--single skips the grid search and times one fit at the grid's middle
(median-heuristic sigma, lambda 1e-6) per split: the time rule compares the
defaults with a single scikit-learn fit at a known setting, whose cost the
setting does not change; its score is untuned and left out of the verdict.

--exact-fast computes the grid search's result (best parameters, CV score,
test score) without GridSearchCV, as kernel ridge on the centred kernel
(run_split_fast), for splits of at most 4096 training rows, where Nystroem
takes every row as a component; README.md says why it is the same result
and how it was checked. Its records have no times.
"""
import argparse
import gzip
import json
import os
import sys
import time
import warnings

import numpy as np
import scipy.linalg
from sklearn.datasets import load_svmlight_file
from sklearn.kernel_approximation import Nystroem
from sklearn.linear_model import Ridge, RidgeClassifier
from sklearn.metrics import accuracy_score, mean_squared_error, roc_auc_score
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.model_selection import GridSearchCV, KFold, StratifiedKFold
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import LabelBinarizer, StandardScaler
from scipy.stats import rankdata

# Nystroem warns when a CV fold has fewer rows than components and then
# uses all of them, which is what min(n_train, 4096) asks for. The filter
# goes through the environment too, so that joblib's worker processes
# (started at the first fit) inherit it.
os.environ["PYTHONWARNINGS"] = "ignore:n_components > n_samples:UserWarning"
warnings.filterwarnings("ignore", message="n_components > n_samples", category=UserWarning)

MAX_COMPONENTS = 4096
# The margins of README.md: accuracy points (or one test row, whichever
# is larger) and the RMSE fraction; the time rule's range of training rows.
ACCURACY_MARGIN = 0.005
RMSE_MARGIN = 0.03
TIME_RULE_ROWS = (5000, 50000)


def read_csv(path):
    """Rows of a CSV with a header and a target column named y."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        names = f.readline().strip().split(",")
        a = np.loadtxt(f, delimiter=",", ndmin=2)
    t = names.index("y")
    return np.delete(a, t, axis=1), a[:, t]


def read_set(d):
    """Training (and own test) rows of a dump: (x, y, x_test, y_test)."""
    files = d["files"]
    if d["format"] == "libsvm":
        x, y = load_svmlight_file(files[0])
        xt = yt = None
        if len(files) > 1:
            xt, yt = load_svmlight_file(files[1], n_features=x.shape[1])
        return x.tocsr(), y, xt, yt
    x, y = read_csv(files[0])
    xt = yt = None
    if len(files) > 1:
        xt, yt = read_csv(files[1])
    return x, y, xt, yt


def split_rows(d, sp, data):
    """A split's training rows (subsampled above max_train_rows) and test rows."""
    x, y, xt, yt = data
    x_tr, y_tr = x[sp["train"]], y[sp["train"]]
    if sp["own_test"]:
        x_te, y_te = xt[sp["test"]], yt[sp["test"]]
    else:
        x_te, y_te = x[sp["test"]], y[sp["test"]]
    n_train = x_tr.shape[0]
    if n_train > d["max_train_rows"]:
        rng = np.random.default_rng(sp["seed"])
        keep = np.sort(rng.choice(n_train, d["max_train_rows"], replace=False))
        x_tr, y_tr = x_tr[keep], y_tr[keep]
    return x_tr, y_tr, x_te, y_te, n_train


def search_setup(d, sp, n_used):
    """The grid (gammas, alphas, in GridSearchCV's order), the CV splitter
    and the fold size the alphas are scaled by."""
    cls = d["task"] == "classification"
    folds = d["folds"]
    n_fold = n_used * (folds - 1) / folds
    gammas = [0.5 / s ** 2 for s in sp["sigmas"]]
    alphas = [lam * n_fold for lam in d["lambdas"]]
    split_cls = StratifiedKFold if cls else KFold
    cv = split_cls(n_splits=folds, shuffle=True, random_state=sp["seed"] % 2 ** 32)
    return gammas, alphas, cv, n_fold


def base_record(d, sp, n_train, n_used, y_te, comps):
    return {"tool": "sklearn", "set": d["set"], "task": d["task"], "seed": sp["seed"],
            "train_rows": n_train, "train_rows_used": n_used, "test_rows": int(len(y_te)), "components": comps}


def run_split(d, sp, data, n_jobs, single=False):
    cls = d["task"] == "classification"
    x_tr, y_tr, x_te, y_te, n_train = split_rows(d, sp, data)
    n_used = x_tr.shape[0]
    comps = min(n_used, MAX_COMPONENTS)
    gammas, alphas, cv, n_fold = search_setup(d, sp, n_used)
    scaler = StandardScaler() if d["standardize"] else "passthrough"
    lin = RidgeClassifier() if cls else Ridge()
    est = Pipeline([("scale", scaler), ("nys", Nystroem(kernel="rbf", n_components=comps, random_state=0)), ("lin", lin)])
    grid = {"nys__gamma": gammas, "lin__alpha": alphas}
    scoring = "accuracy" if cls else "neg_root_mean_squared_error"
    if single:
        # One fit at the grid's middle (the median-heuristic sigma, lambda
        # 1e-6): what a single fit at a known setting costs, which the
        # setting does not change (Nystroem's kernel blocks and SVD, the
        # ridge solve). Its score is not a tuned one.
        sigma = sp["sigmas"][len(sp["sigmas"]) // 2]
        est.set_params(nys__gamma=0.5 / sigma ** 2, lin__alpha=1e-6 * n_used)
        t0 = time.perf_counter()
        est.fit(x_tr, y_tr)
        total = time.perf_counter() - t0
        gs = est
        gs.best_params_ = {"nys__gamma": 0.5 / sigma ** 2, "lin__alpha": 1e-6 * n_used}
        gs.best_score_, gs.refit_time_ = float("nan"), total
        n_fold = n_used
    else:
        gs = GridSearchCV(est, grid, scoring=scoring, cv=cv, n_jobs=n_jobs, refit=True)
        t0 = time.perf_counter()
        gs.fit(x_tr, y_tr)
        total = time.perf_counter() - t0
    pred = gs.predict(x_te)
    rec = base_record(d, sp, n_train, n_used, y_te, comps)
    if cls:
        rec["metric"], rec["score"] = "accuracy", float(accuracy_score(y_te, pred))
        if len(np.unique(y_te)) == 2:
            rec["auc"] = float(roc_auc_score(y_te, gs.decision_function(x_te)))
    else:
        rec["metric"], rec["score"] = "rmse", float(np.sqrt(mean_squared_error(y_te, pred)))
    b = gs.best_params_
    rec.update({"gamma": b["nys__gamma"], "alpha": b["lin__alpha"], "sigma": float((0.5 / b["nys__gamma"]) ** 0.5),
                "lambda": b["lin__alpha"] / n_fold, "cv_score": float(gs.best_score_ if cls else -gs.best_score_),
                "refit_seconds": gs.refit_time_, "total_seconds": total, "n_jobs": n_jobs, "single": single})
    if not single:
        rec["cv_means"] = [float(v) for v in gs.cv_results_["mean_test_score"]]
    return rec


def ridge_targets(y, cls):
    """Ridge's or RidgeClassifier's target matrix (one column per output)
    and the classes (None for regression): RidgeClassifier fits one
    column of -1/+1 per class, a single column for two classes."""
    if not cls:
        return y.reshape(-1, 1).astype(np.float64), None
    lb = LabelBinarizer(pos_label=1, neg_label=-1)
    t = lb.fit_transform(y).astype(np.float64)
    return t, lb.classes_


def ridge_predict(scores, classes):
    """RidgeClassifier's prediction from its decision values: the sign
    (strictly positive for the second class) with one column, else the
    first largest column; Ridge's prediction is the column itself."""
    if classes is None:
        return scores[:, 0]
    if scores.shape[1] == 1:
        return classes[(scores[:, 0] > 0).astype(int)]
    return classes[np.argmax(scores, axis=1)]


def scaled(d, x_fit, x_other):
    """StandardScaler fitted on x_fit (the pipeline's first step; none on
    sparse sets), applied to both."""
    if not d["standardize"]:
        return x_fit, x_other
    sc = StandardScaler().fit(x_fit)
    return sc.transform(x_fit), sc.transform(x_other)


def centred_kernels(a, b, gamma):
    """The training kernel centred on both sides, C K C, and the held-out
    rows' kernel centred as Ridge centres the Nystroem features,
    (K_b - 1 1^T K / n) C, for the rbf kernel of width gamma."""
    k = rbf_kernel(a, a, gamma=gamma)
    kt = rbf_kernel(b, a, gamma=gamma)
    col = k.mean(axis=0)
    kc = k - col[None, :] - k.mean(axis=1)[:, None] + col.mean()
    kc = 0.5 * (kc + kc.T)
    ktc = kt - col[None, :] - kt.mean(axis=1)[:, None] + col.mean()
    return kc, ktc


def run_split_fast(d, sp, data):
    """GridSearchCV's result (same grid, folds, scoring and refit) computed
    as kernel ridge: valid while every fold and the refit have at most
    MAX_COMPONENTS rows, so that Nystroem takes every row as a component.
    Per (fold, gamma) one eigendecomposition of the centred kernel gives
    the held-out predictions at every alpha."""
    cls = d["task"] == "classification"
    x_tr, y_tr, x_te, y_te, n_train = split_rows(d, sp, data)
    n_used = x_tr.shape[0]
    if n_used > MAX_COMPONENTS:
        raise ValueError(f"--exact-fast: {d['set']} seed {sp['seed']} has {n_used} training rows, "
                         f"above {MAX_COMPONENTS} (Nystroem would not use every row)")
    gammas, alphas, cv, n_fold = search_setup(d, sp, n_used)
    score_fn = accuracy_score if cls else (lambda t, p: -mean_squared_error(t, p, squared=False))
    # GridSearchCV's candidate order: ParameterGrid sorts the keys
    # (lin__alpha, nys__gamma) and varies the last fastest.
    cands = [(a, g) for a in alphas for g in gammas]
    folds = list(cv.split(x_tr, y_tr))
    scores = np.empty((len(cands), len(folds)))
    for j, (tr, va) in enumerate(folds):
        a_tr, a_va = scaled(d, x_tr[tr], x_tr[va])
        t, classes = ridge_targets(y_tr[tr], cls)
        tbar = t.mean(axis=0)
        for gi, g in enumerate(gammas):
            kc, ktc = centred_kernels(a_tr, a_va, g)
            mu, q = np.linalg.eigh(kc)
            proj = ktc @ q
            b = q.T @ (t - tbar)
            for ai, a in enumerate(alphas):
                pred = ridge_predict(proj @ (b / (mu + a)[:, None]) + tbar, classes)
                scores[ai * len(gammas) + gi, j] = score_fn(y_tr[va], pred)
    # GridSearchCV's choice: the mean over folds, ranked with ties at the
    # lowest rank, the first candidate of the best rank.
    means = np.average(scores, axis=1)
    best = int(rankdata(-means, method="min").argmin())
    alpha, gamma = cands[best]
    a_tr, a_te = scaled(d, x_tr, x_te)
    t, classes = ridge_targets(y_tr, cls)
    tbar = t.mean(axis=0)
    kc, ktc = centred_kernels(a_tr, a_te, gamma)
    kc[np.diag_indices_from(kc)] += alpha
    beta = scipy.linalg.solve(kc, t - tbar, assume_a="pos")
    dec = ktc @ beta + tbar
    pred = ridge_predict(dec, classes)
    rec = base_record(d, sp, n_train, n_used, y_te, n_used)
    if cls:
        rec["metric"], rec["score"] = "accuracy", float(accuracy_score(y_te, pred))
        if len(np.unique(y_te)) == 2:
            rec["auc"] = float(roc_auc_score(y_te, dec[:, 0]))
    else:
        rec["metric"], rec["score"] = "rmse", float(np.sqrt(mean_squared_error(y_te, pred)))
    nan = float("nan")
    rec.update({"gamma": gamma, "alpha": alpha, "sigma": float((0.5 / gamma) ** 0.5), "lambda": alpha / n_fold,
                "cv_score": float(means[best] if cls else -means[best]), "refit_seconds": nan, "total_seconds": nan,
                "n_jobs": 1, "single": False, "exact_fast": True, "cv_means": [float(v) for v in means]})
    return rec


def mean(v):
    return sum(v) / len(v) if v else float("nan")


def within(metric, d, ref, test_rows):
    if metric == "accuracy":
        return d >= ref - max(ACCURACY_MARGIN, 1 / test_rows)
    return d <= (1 + RMSE_MARGIN) * ref


def verdict(sk, go_path):
    """The suite's verdict on the seeds both programs ran."""
    go = {}
    with open(go_path) as f:
        for line in f:
            r = json.loads(line)
            if r.get("error") or r["run"] not in ("defaults", "tune"):
                continue
            go[(r["set"], r["run"], r["seed"])] = r
    print("\n| set | metric | defaults | tune best | scikit-learn | within margin of the best | "
          "defaults s | sklearn refit s | sklearn total s | time rule |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for s in dict.fromkeys(r["set"] for r in sk):
        seeds = [r["seed"] for r in sk if r["set"] == s and (s, "defaults", r["seed"]) in go]
        if not seeds:
            continue
        rs = [r for r in sk if r["set"] == s and r["seed"] in seeds]
        ds = [go[(s, "defaults", k)] for k in seeds]
        ts = [go[(s, "tune", k)] for k in seeds if (s, "tune", k) in go]
        metric = rs[0]["metric"]
        dm, sm = mean([r["score"] for r in ds]), mean([r["score"] for r in rs])
        if any(r.get("single") for r in rs):
            sm = None  # an untuned fit, timed only
        tm = mean([r["score"] for r in ts]) if len(ts) == len(seeds) else None
        refs = [v for v in (tm, sm) if v is not None]
        if not refs:
            refs = [dm]
        ref = max(refs) if metric == "accuracy" else min(refs)
        ok = within(metric, dm, ref, mean([r["test_rows"] for r in ds]))
        dsec, rsec, tsec = mean([r["seconds"] for r in ds]), mean([r["refit_seconds"] for r in rs]), mean([r["total_seconds"] for r in rs])
        rows = mean([r["train_rows"] for r in ds])
        rule = "-"
        if TIME_RULE_ROWS[0] <= rows <= TIME_RULE_ROWS[1]:
            rule = "yes" if dsec <= rsec else "no"
        tcell = f"{tm:.4f}" if tm is not None else "-"
        scell = f"{sm:.4f}" if sm is not None else "(timed only)"
        print(f"| {s} | {metric} | {dm:.4f} | {tcell} | {scell} | {'yes' if ok else 'no'} | "
              f"{dsec:.2f} | {rsec:.2f} | {tsec:.2f} | {rule} |")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dir", help="the folder written by -dump-splits")
    ap.add_argument("--sets", default="", help="comma-separated sets (default: every NAME.json in dir)")
    ap.add_argument("--n-jobs", type=int, default=2)
    ap.add_argument("--out", default="sklearn_defaults.jsonl", help="JSON lines output")
    ap.add_argument("--go", default="", help="the Go program's JSON lines, for the verdict table")
    ap.add_argument("--single", action="store_true", help="no grid search: time one fit at the grid's middle (the time rule's reference)")
    ap.add_argument("--seeds", default="", help="comma-separated split seeds to run, in that order (default: every split)")
    ap.add_argument("--exact-fast", action="store_true",
                    help="GridSearchCV's result computed as kernel ridge (at most 4096 training rows; no timings)")
    a = ap.parse_args()
    if a.exact_fast and a.single:
        ap.error("--exact-fast and --single exclude each other")
    seeds = [int(k) for k in a.seeds.split(",") if k]
    names = [s for s in a.sets.split(",") if s] or sorted(f[:-5] for f in os.listdir(a.dir) if f.endswith(".json"))
    recs = []
    print("| set | seed | metric | score | AUC | sigma | lambda | CV score | train rows used | refit s | total s |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    with open(a.out, "w") as out:
        for name in names:
            with open(os.path.join(a.dir, name + ".json")) as f:
                d = json.load(f)
            data = read_set(d)
            splits = d["splits"]
            if seeds:
                splits = [sp for k in seeds for sp in d["splits"] if sp["seed"] == k]
            for sp in splits:
                if a.exact_fast:
                    r = run_split_fast(d, sp, data)
                else:
                    r = run_split(d, sp, data, a.n_jobs, a.single)
                recs.append(r)
                out.write(json.dumps(r) + "\n")
                out.flush()
                auc = f"{r['auc']:.4f}" if "auc" in r else "-"
                print(f"| {name} | {r['seed']} | {r['metric']} | {r['score']:.4f} | {auc} | {r['sigma']:.3g} | "
                      f"{r['lambda']:.3g} | {r['cv_score']:.4f} | {r['train_rows_used']} | {r['refit_seconds']:.2f} | "
                      f"{r['total_seconds']:.2f} |", flush=True)
    if a.go:
        verdict(recs, a.go)


if __name__ == "__main__":
    sys.exit(main())
