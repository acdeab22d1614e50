#!/usr/bin/python3
"""zonal against scikit-learn over several splits (bench/probs).

The single-split table of `go run ./probs` and sklearn_probs.py compares
the two tools on one seeded 80/20 split, where a difference of a few
thousandths of log-loss on a few hundred test rows is within the split's
noise. This script reads the records of several runs, one per seed (each
Go -out with the sklearn_probs.py --out of its dump), pairs them by (seed,
set, model), and prints per set and model the mean over the splits of each
tool's test ROC AUC and log-loss, the mean paired difference (zonal minus
scikit-learn) with its standard error over the splits, and on how many
splits zonal was at least as good.

  /usr/bin/python3 probs/splits.py --go /tmp/pz1.jsonl /tmp/pz2.jsonl ...
      --sklearn /tmp/ps1.jsonl /tmp/ps2.jsonl ...

Only the Python standard library. Not part of CI.
"""
import argparse
import json
import math
import sys


def read(paths, tool):
    """(seed, set, model) -> {"auc", "log_loss"} from the records in paths."""
    out = {}
    for path in paths:
        with open(path) as f:
            for line in f:
                r = json.loads(line)
                if tool == "go":
                    if r.get("error"):
                        continue
                    out[(r["seed"], r["set"], r["model"])] = r
                else:
                    for m, v in r["models"].items():
                        out[(r["seed"], r["set"], m)] = v
    return out


def mean_se(xs):
    m = sum(xs) / len(xs)
    if len(xs) < 2:
        return m, float("nan")
    var = sum((x - m) ** 2 for x in xs) / (len(xs) - 1)
    return m, math.sqrt(var / len(xs))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--go", nargs="+", required=True, help="the Go program's -out files")
    ap.add_argument("--sklearn", nargs="+", required=True, help="sklearn_probs.py's --out files")
    a = ap.parse_args()
    go, sk = read(a.go, "go"), read(a.sklearn, "sklearn")
    keys = sorted({(s, m) for (_, s, m) in go} & {(s, m) for (_, s, m) in sk})
    print("| set | model | splits | zonal AUC | sklearn AUC | AUC difference | zonal log-loss | sklearn log-loss | "
          "log-loss difference | zonal at least as good: AUC / log-loss / both |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---|")
    for s, m in keys:
        seeds = sorted(seed for (seed, s2, m2) in go if (s2, m2) == (s, m) and (seed, s, m) in sk)
        za = [go[(e, s, m)]["auc"] for e in seeds]
        sa = [sk[(e, s, m)]["auc"] for e in seeds]
        zl = [go[(e, s, m)]["log_loss"] for e in seeds]
        sl = [sk[(e, s, m)]["log_loss"] for e in seeds]
        da, se_a = mean_se([x - y for x, y in zip(za, sa)])
        dl, se_l = mean_se([x - y for x, y in zip(zl, sl)])
        auc_ok = sum(x >= y for x, y in zip(za, sa))
        ll_ok = sum(x <= y for x, y in zip(zl, sl))
        both = sum(x >= y and u <= v for x, y, u, v in zip(za, sa, zl, sl))
        n = len(seeds)
        print(f"| {s} | {m} | {n} | {sum(za) / n:.4f} | {sum(sa) / n:.4f} | {da:+.4f} ± {se_a:.4f} | "
              f"{sum(zl) / n:.4f} | {sum(sl) / n:.4f} | {dl:+.4f} ± {se_l:.4f} | {auc_ok} / {ll_ok} / {both} of {n} |")


if __name__ == "__main__":
    sys.exit(main())
