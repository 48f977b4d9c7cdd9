#!/usr/bin/env python3
"""The table of bench/gpu_fmg.sh's reports: for each grid, precision and case (acc, acc5,
rand), without and with --fmg, the median over the repeats of set-up + start + solve (the
time to solution, ms), the iterations and the error against the continuous solution, and
that error over the converged run's (conv_*: --tol 1e-10). Issue 24's targets: discretisation
accuracy at 512^3 in <= 25 ms with --fmg and within 10% of the converged error.

Usage: bench/gpu_fmg_table.py OUT_DIR
"""
import glob
import json
import os
import statistics
import sys


def load(path):
    with open(path) as f:
        j = json.load(f)
    t = j["timing"]
    r = j["result"]
    return {"ms": 1e3 * (t["setup_s"] + t.get("start_s", 0.0) + t["solve_s"]),
            "its": r["iterations"], "err": r["l2_error_continuous"]}


def main(out):
    runs = {}
    for p in glob.glob(os.path.join(out, "*.json")):
        name = os.path.basename(p)[:-5].split("_")
        if name[0] not in ("acc", "acc5", "rand", "conv"):
            continue
        runs.setdefault(tuple(name[:-1]) if name[0] != "conv" else tuple(name), []).append(load(p))
    print(f"{'case':6} {'grid':>5} {'precision':9} {'start':5} {'ms (median)':>11} {'iterations':>10} "
          f"{'l2 error (cont.)':>16} {'/ converged':>11}")
    for key in sorted(k for k in runs if k[0] != "conv"):
        case, n, prec, start = key
        rs = runs[key]
        conv = runs.get(("conv", n, prec))
        err = statistics.median(r["err"] for r in rs if r["err"] is not None) if rs[0]["err"] is not None else None
        ratio = err / conv[0]["err"] if err is not None and conv and conv[0]["err"] else None
        print(f"{case:6} {n:>5} {prec:9} {start:5} {statistics.median(r['ms'] for r in rs):11.2f} "
              f"{statistics.median(r['its'] for r in rs):10.0f} "
              f"{'-' if err is None else format(err, '.4e'):>16} {'-' if ratio is None else format(ratio, '.3f'):>11}")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1]))
