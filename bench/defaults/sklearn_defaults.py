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
      [--single | --exact-fast | --fast-grid | --validate-fast-grid]
      [--components 4096] [--max-train-rows N]

--single skips the grid search and times one fit at the grid's middle
(median-heuristic sigma, lambda 1e-6) per split: the time rule compares the
defaults with a single scikit-learn fit at a known setting, whose cost the
setting does not change; its score is untuned and left out of the verdict.

--exact-fast computes the grid search's result (best parameters, CV score,
test score) without GridSearchCV, as kernel ridge on the centred kernel
(run_split_fast), for splits of at most 4096 training rows, where Nystroem
takes every row as a component; README.md says why it is the same result
and how it was checked. Its records have no times.

--fast-grid computes the same grid search's result for any size
(run_split_fast_grid): per (fold, gamma) one Nystroem fit and transform,
then Ridge's own arithmetic at every alpha from one X^T X; the refit is
the real pipeline. It runs in one process (--n-jobs does not apply; the
BLAS threads are the environment's, e.g. OPENBLAS_NUM_THREADS) and logs
each (fold, gamma) to stderr. --validate-fast-grid runs both GridSearchCV and
--fast-grid on the given sets (default PSID7682,spam,digits, the first
split, --components 512) and compares them; it exits 1 on a difference.

--components caps Nystroem's components (default 4096); --max-train-rows
replaces the dump's subsample size (the search and refit rows).
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
from sklearn.linear_model._base import _preprocess_data, _rescale_data
from sklearn.linear_model._ridge import _solve_svd
from sklearn.metrics.pairwise import euclidean_distances, rbf_kernel
from sklearn.utils.extmath import safe_sparse_dot
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


def pipeline(d, comps):
    """The searched pipeline: scaler (none on sparse sets), Nystroem, ridge."""
    scaler = StandardScaler() if d["standardize"] else "passthrough"
    lin = RidgeClassifier() if d["task"] == "classification" else Ridge()
    return Pipeline([("scale", scaler), ("nys", Nystroem(kernel="rbf", n_components=comps, random_state=0)), ("lin", lin)])


def run_split(d, sp, data, n_jobs, single=False, components=MAX_COMPONENTS):
    cls = d["task"] == "classification"
    x_tr, y_tr, x_te, y_te, n_train = split_rows(d, sp, data)
    n_used = x_tr.shape[0]
    comps = min(n_used, components)
    gammas, alphas, cv, n_fold = search_setup(d, sp, n_used)
    est = pipeline(d, comps)
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


def run_split_fast(d, sp, data, components=MAX_COMPONENTS):
    """GridSearchCV's result (same grid, folds, scoring and refit) computed
    as kernel ridge: valid while every fold and the refit have at most
    MAX_COMPONENTS rows, so that Nystroem takes every row as a component.
    Per (fold, gamma) one eigendecomposition of the centred kernel gives
    the held-out predictions at every alpha."""
    cls = d["task"] == "classification"
    x_tr, y_tr, x_te, y_te, n_train = split_rows(d, sp, data)
    n_used = x_tr.shape[0]
    if n_used > components:
        raise ValueError(f"--exact-fast: {d['set']} seed {sp['seed']} has {n_used} training rows, "
                         f"above {components} components (Nystroem would not use every row)")
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


def rbf_from_sq(dist, gamma, out=None):
    """rbf_kernel's arithmetic on squared distances as euclidean_distances
    (squared=True) returns them: times -gamma, then exp, in that order."""
    k = np.multiply(dist, -gamma, out=out)
    np.exp(k, k)
    return k


def ridge_decisions(phi, t, phi_va, alphas, cls):
    """Ridge(fit_intercept=True) (RidgeClassifier for cls, fitted on the
    -1/+1 target matrix t) fitted on phi at every alpha, as scikit-learn
    1.2.1 fits it on dense rows, and its decision values on phi_va.

    The steps are Ridge's own: RidgeClassifier passes unit sample weights,
    so the means are weighted and the rows rescaled by their square root
    (_rescale_data; the values do not change); _preprocess_data centres
    phi and t by the training means; solver "auto" is "cholesky", which
    with at most as many features as rows solves (X^T X + alpha I) w = X^T y
    (_solve_cholesky) and falls back to the SVD solver on a LinAlgError.
    X^T X and X^T y are computed once for all alphas; only the diagonal
    shift and the solve are per alpha. phi is centred in place."""
    n, p = phi.shape
    if p > n:
        raise ValueError(f"ridge_decisions: {p} features above {n} rows (Ridge would solve the dual)")
    sw = np.ones(n, dtype=phi.dtype) if cls else None
    x, y, x_off, y_off, x_scale = _preprocess_data(phi, t, True, copy=False, sample_weight=sw)
    if sw is not None:
        x, y, _ = _rescale_data(x, y, sw)
    ravel = y.ndim == 1
    if ravel:
        y = y.reshape(-1, 1)
    a = safe_sparse_dot(x.T, x, dense_output=True)
    xy = safe_sparse_dot(x.T, y, dense_output=True)
    out = []
    for alpha in alphas:
        al = np.asarray(alpha, dtype=x.dtype).ravel()
        if al.size == 1 and y.shape[1] > 1:
            al = np.repeat(al, y.shape[1])
        m = a.copy()
        m.flat[:: p + 1] += al[0]
        try:
            coef = scipy.linalg.solve(m, xy, assume_a="pos", overwrite_a=True).T
        except scipy.linalg.LinAlgError:
            coef = _solve_svd(x, y, al)
        if ravel:
            coef = coef.ravel()
        coef = np.divide(coef, x_scale, dtype=x_scale.dtype)
        intercept = y_off - np.dot(x_off, coef.T)
        out.append(safe_sparse_dot(phi_va, coef.T, dense_output=True) + intercept)
    return out


def fold_features(a_tr, a_va, gamma, comps, cache):
    """Nystroem(rbf, gamma, comps, random_state=0) fitted on a_tr, and its
    transform of a_tr and a_va, as the pipeline computes them. The fit is
    Nystroem's own (the components are the first comps of
    RandomState(0).permutation(n): the same rows for every gamma of a
    fold; the normalization the SVD of their kernel). The transform
    rbf_kernel(x, components) . normalization^T is computed from squared
    distances kept in cache across the fold's gammas, with rbf_kernel's
    arithmetic, so the values are the same."""
    nys = Nystroem(kernel="rbf", gamma=gamma, n_components=comps, random_state=0).fit(a_tr)
    if "idx" not in cache:
        cache["idx"] = nys.component_indices_
        cache["d_tr"] = euclidean_distances(a_tr, nys.components_, squared=True)
        cache["d_va"] = euclidean_distances(a_va, nys.components_, squared=True)
        cache["buf"] = np.empty_like(cache["d_tr"])
    elif not np.array_equal(cache["idx"], nys.component_indices_):
        raise RuntimeError("Nystroem chose other components for another gamma of the same fold")
    norm_t = nys.normalization_.T
    phi = np.dot(rbf_from_sq(cache["d_tr"], gamma, out=cache["buf"]), norm_t)
    phi_va = np.dot(rbf_from_sq(cache["d_va"], gamma), norm_t)
    return phi, phi_va


def log(msg):
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def run_split_fast_grid(d, sp, data, components=MAX_COMPONENTS, verbose=False):
    """GridSearchCV(pipeline(d, comps), grid, cv)'s result with one
    Nystroem fit and transform per (fold, gamma) instead of one per
    (fold, gamma, alpha): a fold's Nystroem features do not depend on
    alpha, and Ridge's X^T X neither (ridge_decisions). Same folds,
    scoring, mean over folds, tie rule (GridSearchCV's rank, the first
    best in ParameterGrid's order) and refit: the real pipeline at the
    best parameters on all training rows, scored on the test rows."""
    cls = d["task"] == "classification"
    x_tr, y_tr, x_te, y_te, n_train = split_rows(d, sp, data)
    n_used = x_tr.shape[0]
    comps = min(n_used, components)
    gammas, alphas, cv, n_fold = search_setup(d, sp, n_used)
    score_fn = accuracy_score if cls else (lambda t, p: -mean_squared_error(t, p, squared=False))
    cands = [(a, g) for a in alphas for g in gammas]
    folds = list(cv.split(x_tr, y_tr))
    scores = np.empty((len(cands), len(folds)))
    t0 = time.perf_counter()
    for j, (tr, va) in enumerate(folds):
        a_tr, a_va = scaled(d, x_tr[tr], x_tr[va])
        if cls:
            t, classes = ridge_targets(y_tr[tr], cls)
        else:
            t, classes = y_tr[tr], None
        cache = {}
        for gi, g in enumerate(gammas):
            phi, phi_va = fold_features(a_tr, a_va, g, comps, cache)
            for ai, dec in enumerate(ridge_decisions(phi, t, phi_va, alphas, cls)):
                pred = ridge_predict(dec.reshape(len(va), -1), classes)
                scores[ai * len(gammas) + gi, j] = score_fn(y_tr[va], pred)
            del phi, phi_va
            if verbose:
                log(f"{d['set']} seed {sp['seed']}: fold {j + 1}/{len(folds)} gamma {gi + 1}/{len(gammas)} done")
        del cache
    means = np.average(scores, axis=1)
    best = int(rankdata(-means, method="min").argmin())
    alpha, gamma = cands[best]
    search = time.perf_counter() - t0
    est = pipeline(d, comps).set_params(nys__gamma=gamma, lin__alpha=alpha)
    t1 = time.perf_counter()
    est.fit(x_tr, y_tr)
    refit = time.perf_counter() - t1
    pred = est.predict(x_te)
    rec = base_record(d, sp, n_train, n_used, y_te, comps)
    if cls:
        rec["metric"], rec["score"] = "accuracy", float(accuracy_score(y_te, pred))
        if len(np.unique(y_te)) == 2:
            rec["auc"] = float(roc_auc_score(y_te, est.decision_function(x_te)))
    else:
        rec["metric"], rec["score"] = "rmse", float(np.sqrt(mean_squared_error(y_te, pred)))
    rec.update({"gamma": gamma, "alpha": alpha, "sigma": float((0.5 / gamma) ** 0.5), "lambda": alpha / n_fold,
                "cv_score": float(means[best] if cls else -means[best]), "refit_seconds": refit,
                "total_seconds": search + refit, "n_jobs": 1, "single": False, "fast_grid": True,
                "cv_means": [float(v) for v in means]})
    if verbose:
        log(f"{d['set']} seed {sp['seed']}: refit done, {rec['metric']} {rec['score']:.6g}")
    return rec


def rel(a, b):
    """|a - b| relative to |b| (absolute where b is 0)."""
    return abs(a - b) / abs(b) if b != 0 else abs(a - b)


def validate_fast_grid(d, sp, data, n_jobs, components, tol=1e-6):
    """GridSearchCV and --fast-grid on one split: (ok, row of the table,
    the two records). Also checks, on the first fold and gamma, that
    fold_features gives Nystroem's own transform."""
    x_tr, y_tr, _, _, _ = split_rows(d, sp, data)
    gammas, _, cv, _ = search_setup(d, sp, x_tr.shape[0])
    comps = min(x_tr.shape[0], components)
    tr, va = next(cv.split(x_tr, y_tr))
    a_tr, a_va = scaled(d, x_tr[tr], x_tr[va])
    phi, phi_va = fold_features(a_tr, a_va, gammas[0], comps, {})
    nys = Nystroem(kernel="rbf", gamma=gammas[0], n_components=comps, random_state=0).fit(a_tr)
    phi_diff = max(float(np.max(np.abs(phi - nys.transform(a_tr)))), float(np.max(np.abs(phi_va - nys.transform(a_va)))))
    real = run_split(d, sp, data, n_jobs, components=components)
    fast = run_split_fast_grid(d, sp, data, components=components)
    same_best = real["gamma"] == fast["gamma"] and real["alpha"] == fast["alpha"]
    d_score = rel(fast["score"], real["score"])
    d_auc = rel(fast["auc"], real["auc"]) if "auc" in real else 0.0
    d_cv = max(rel(f, r) for f, r in zip(fast["cv_means"], real["cv_means"]))
    ok = same_best and d_score <= tol and d_auc <= tol and phi_diff == 0
    auc = f"{real['auc']:.6f} / {fast['auc']:.6f}" if "auc" in real else "-"
    row = (f"| {d['set']} | {sp['seed']} | {real['train_rows_used']} | {comps} | {real['metric']} | "
           f"{real['sigma']:.4g}, {real['lambda']:.0e} | {fast['sigma']:.4g}, {fast['lambda']:.0e} | "
           f"{real['score']:.6f} / {fast['score']:.6f} | {d_score:.1e} | {auc} | {d_cv:.1e} | {phi_diff:.1e} | "
           f"{'yes' if ok else '**no**'} |")
    return ok, row, real, fast


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
    ap.add_argument("--fast-grid", action="store_true",
                    help="GridSearchCV's result with one Nystroem fit per (fold, gamma), any size")
    ap.add_argument("--validate-fast-grid", action="store_true",
                    help="run GridSearchCV and --fast-grid and compare them (default sets PSID7682,spam,digits, "
                         "the first split, --components 512)")
    ap.add_argument("--components", type=int, default=0,
                    help=f"Nystroem components at most (default {MAX_COMPONENTS}; 512 with --validate-fast-grid)")
    ap.add_argument("--max-train-rows", type=int, default=0,
                    help="search and refit on a seeded subsample of this many training rows (default: the dump's)")
    a = ap.parse_args()
    modes = [m for m in ("single", "exact_fast", "fast_grid", "validate_fast_grid") if getattr(a, m)]
    if len(modes) > 1:
        ap.error("--single, --exact-fast, --fast-grid and --validate-fast-grid exclude each other")
    validate = a.validate_fast_grid
    components = a.components or (512 if validate else MAX_COMPONENTS)
    if components < 1 or a.max_train_rows < 0:
        ap.error("--components must be at least 1 and --max-train-rows at least 0")
    seeds = [int(k) for k in a.seeds.split(",") if k]
    sets = a.sets or ("PSID7682,spam,digits" if validate else "")
    names = [s for s in sets.split(",") if s] or sorted(f[:-5] for f in os.listdir(a.dir) if f.endswith(".json"))
    recs, failed = [], 0
    if validate:
        print("| set | seed | train rows | components | metric | GridSearchCV sigma, lambda | --fast-grid sigma, lambda | "
              "test score GridSearchCV / --fast-grid | rel. diff | AUC GridSearchCV / --fast-grid | "
              "max rel. diff of the 50 mean CV scores | max abs diff of the features | same |")
        print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    else:
        print("| set | seed | metric | score | AUC | sigma | lambda | CV score | train rows used | refit s | total s |")
        print("|---|---|---|---|---|---|---|---|---|---|---|")
    with open(a.out, "w") as out:
        for name in names:
            with open(os.path.join(a.dir, name + ".json")) as f:
                d = json.load(f)
            if a.max_train_rows:
                d["max_train_rows"] = a.max_train_rows
            data = read_set(d)
            splits = d["splits"]
            if seeds:
                splits = [sp for k in seeds for sp in d["splits"] if sp["seed"] == k]
            elif validate:
                splits = splits[:1]
            for sp in splits:
                if validate:
                    ok, row, real, fast = validate_fast_grid(d, sp, data, a.n_jobs, components)
                    failed += not ok
                    for r, tag in ((real, "GridSearchCV"), (fast, "fast_grid")):
                        r["validation"] = tag
                        out.write(json.dumps(r) + "\n")
                    out.flush()
                    print(row, flush=True)
                    continue
                if a.exact_fast:
                    r = run_split_fast(d, sp, data, components)
                elif a.fast_grid:
                    r = run_split_fast_grid(d, sp, data, components, verbose=True)
                else:
                    r = run_split(d, sp, data, a.n_jobs, a.single, components)
                recs.append(r)
                out.write(json.dumps(r) + "\n")
                out.flush()
                auc = f"{r['auc']:.4f}" if "auc" in r else "-"
                print(f"| {name} | {r['seed']} | {r['metric']} | {r['score']:.4f} | {auc} | {r['sigma']:.3g} | "
                      f"{r['lambda']:.3g} | {r['cv_score']:.4f} | {r['train_rows_used']} | {r['refit_seconds']:.2f} | "
                      f"{r['total_seconds']:.2f} |", flush=True)
    if a.go and recs:
        verdict(recs, a.go)
    if failed:
        print(f"--validate-fast-grid: {failed} split(s) differ", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
