#!/usr/bin/env python3
"""jobs/study.py on made-up reports with known answers (no MPI, no Slurm):
weak and strong efficiencies, the time split, the hidden halo fraction or n/a, the median of
repeats, series with a missing N=1 baseline, planned-but-missing points (with their exit code
from runs.tsv), power-of-two gaps without a plan, one-point series, --strict, and no reports.

    test_study.py HALO3D_BINARY SOURCE_DIR      (the binary is not used)
"""
import csv
import json
import subprocess
import sys
import tempfile
from pathlib import Path

SRC = Path(sys.argv[2]).resolve()
STUDY = SRC / "jobs" / "study.py"
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def report(path, ranks, grid, per_iter, iters=100, compute=0.6, halo=0.25, red=0.1, hidden=None, backend="host",
           overlap=True, asked_overlap=None):
    r = {
        "halo3d_version": "test", "command": "solve", "ranks": ranks, "procs": [ranks, 1, 1], "hosts": 1,
        "device": "test device", "config": {"grid": grid, "problem": "poisson", "solver": "cg", "backend": backend,
                                            "halo": "mpi", "overlap": overlap, "rhs": "random"},
        "options": [] if asked_overlap is None else [{"name": "overlap", "value": asked_overlap,
                                                      "source": "default"}],
        "result": {"iterations": iters, "iterations_this_run": iters},
        "timing": {"per_iteration_s": per_iter, "setup_s": 0.01, "solve_s": per_iter * iters,
                   "compute_s": compute * per_iter * iters,
                   "halo_s": halo * per_iter * iters, "reduction_s": red * per_iter * iters},
        "overlap": None if hidden is None else {"hidden_fraction": hidden},
    }
    path.write_text(json.dumps(r))


def run(*args):
    p = subprocess.run([sys.executable, str(STUDY), *map(str, args)], capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def rows(folder):
    with open(folder / "table.csv") as fh:
        return {int(r["ranks"]): r for r in csv.DictReader(fh)}


with tempfile.TemporaryDirectory() as tmp:
    tmp = Path(tmp)

    # weak, complete, powers of two, with a plan; 2 repeats at N=2 (median = the lower middle)
    d = tmp / "weak"
    d.mkdir()
    (d / "study.json").write_text(json.dumps({"kind": "weak", "counts": [1, 2, 4, 8], "repeats": 1, "local": [32, 32, 32]}))
    for n, t, grid in [(1, 1.0e-3, [32, 32, 32]), (2, 1.25e-3, [64, 32, 32]), (4, 2.0e-3, [64, 64, 32]), (8, 4.0e-3, [64, 64, 64])]:
        report(d / f"report-n{n:04d}-r1.json", n, grid, t, hidden=0.5 if n > 1 else None)
    report(d / "report-n0002-r2.json", 2, [64, 32, 32], 5.0e-3, hidden=0.5)
    rc, out, err = run(d, "--strict")
    check(rc == 0, f"weak complete: exit 0 with --strict (got {rc}: {err.strip()})")
    r = rows(d)
    check(abs(float(r[2]["efficiency"]) - 0.8) < 1e-12, f"weak N=2 efficiency T1/T2 = 0.8 (got {r[2]['efficiency']})")
    check(abs(float(r[8]["efficiency"]) - 0.25) < 1e-12, "weak N=8 efficiency 0.25")
    check(r[2]["runs"] == "2" and abs(float(r[2]["time_per_iter_s"]) - 1.25e-3) < 1e-15, "median of 2 repeats is the lower middle run")
    check(abs(float(r[4]["compute_per_iter_s"]) - 1.2e-3) < 1e-12 and abs(float(r[4]["other_per_iter_s"]) - 0.1e-3) < 1e-12,
          "time split per iteration: compute 60%, other 10%")
    check(r[1]["hidden_halo_fraction"] == "n/a" and float(r[4]["hidden_halo_fraction"]) == 0.5, "hidden halo fraction, or n/a")
    md = (d / "table.md").read_text()
    check(abs(float(rows(d)[1]["time_to_solution_s"]) - (0.01 + 1.0e-3 * 100)) < 1e-12
          and "| time to solution (s) |" in md, "time to solution = set-up + solve, in the table and CSV")
    check("Status: complete series" in md and "| 8 |" in md and "32x32x32 points per rank" in md, "table.md: complete, titled, all rows")
    check("Weak scaling: the problem grows" in md and "falls as 1/N" not in md and "ONE operator application" in md,
          "weak table: its preamble speaks of weak scaling, and says what hidden halo measures")
    check(all((d / f).stat().st_size > 1000 for f in ("efficiency.png", "time_split.png")), "both PNG plots written")

    # strong, missing N=1 baseline, no plan
    d = tmp / "strong"
    d.mkdir()
    for n, t in [(2, 1.0e-3), (4, 0.55e-3), (8, 0.3e-3)]:
        report(d / f"r{n}.json", n, [128, 128, 128], t)
    rc, out, err = run(d, "--strict", "--quiet")
    check(rc == 1, f"strong without N=1: --strict exits 1 (got {rc})")
    r = rows(d)
    check(abs(float(r[4]["efficiency"]) - (2 * 1.0) / (4 * 0.55)) < 1e-12, "strong efficiency relative to N=2: 2*T2/(4*T4)")
    md = (d / "table.md").read_text()
    check("Strong scaling: the problem stays fixed" in md and "grows with the rank count" not in md,
          "strong table: its preamble speaks of strong scaling, not weak")
    md = (d / "table.md").read_text()
    check("INCOMPLETE" in md and "no N=1 baseline" in md and "gaps in the power-of-two series: no report for N=1" in md,
          "strong: says no N=1 baseline")
    check("warning: incomplete series" in err, "warnings on stderr")
    rc, _, _ = run(d, "--quiet", "--no-plots")
    check(rc == 0, "an incomplete series is not an error without --strict")

    # planned point missing, with its exit code from runs.tsv; gap detection from the plan
    d = tmp / "planned"
    d.mkdir()
    (d / "study.json").write_text(json.dumps({"kind": "strong", "counts": [1, 2, 3, 4], "repeats": 1, "grid": [96, 96, 96]}))
    (d / "runs.tsv").write_text("ranks\trepeat\tnodes\tprocs\tgrid\texit_code\tseconds\treport\n"
                                "1\t1\t1\tauto\t96,96,96\t0\t1.0\treport-n0001-r1.json\n"
                                "3\t1\t1\tauto\t96,96,96\t137\t0.5\t-\n")
    for n, t in [(1, 3.0e-3), (2, 1.6e-3), (4, 0.9e-3)]:
        report(d / f"report-n{n:04d}-r1.json", n, [96, 96, 96], t)
    rc, out, err = run(d, "--quiet")
    md = (d / "table.md").read_text()
    check("N=3: no report: exit code 137 (log-n0003-r1.txt)" in md, "planned N=3 missing, with exit code 137 and its log")
    check("N=4: no report" not in md, "present points are not reported missing")
    r = rows(d)
    check(abs(float(r[4]["efficiency"]) - 3.0 / (4 * 0.9)) < 1e-12, "strong T1/(N*TN)")

    # weak gaps without a plan, GPU label from the backend
    d = tmp / "gaps"
    d.mkdir()
    for n in (1, 2, 8):
        report(d / f"r{n}.json", n, [32 * n, 32, 32], 1e-3, backend="cuda")
    rc, out, err = run(d, "--quiet", "--no-plots")
    md = (d / "table.md").read_text()
    check("no report for N=4" in md and "| GPUs |" in md, "weak gap N=4 found; GPUs column label for cuda runs")

    # --overlap auto chooses per run (off on 1 rank, by timing on more): one study, complete;
    # runs that asked for different overlaps are not
    for name, asked, complete in (("auto", ["auto"] * 3, True), ("mixed", ["on", "off", "on"], False)):
        d = tmp / f"overlap-{name}"
        d.mkdir()
        for n, chose, a in zip((1, 2, 4), (False, True, False), asked):
            report(d / f"r{n}.json", n, [32 * n, 32, 32], 1e-3, overlap=chose, asked_overlap=a)
        rc, out, err = run(d, "--quiet", "--no-plots")
        md = (d / "table.md").read_text()
        flagged = "the runs differ in overlap" in md
        check(flagged != complete, f"overlap asked {asked}, chosen False/True/False: "
              f"{'complete' if complete else 'flagged as differing'}")

    # kind guessed from the sizes; a single point works
    d = tmp / "one"
    d.mkdir()
    report(d / "r1.json", 1, [32, 32, 32], 1e-3)
    rc, out, err = run(d, "--quiet")
    check(rc == 0 and (d / "efficiency.png").exists(), f"one point: table and plots (rc {rc}: {err.strip()})")

    # nothing to tabulate
    d = tmp / "empty"
    d.mkdir()
    (d / "other.json").write_text('{"not": "a report"}')
    rc, out, err = run(d)
    check(rc == 2 and "no halo3d solve reports" in err, "no reports: exit 2 with a message")

print(f"{len(failures)} failure(s)")
sys.exit(1 if failures else 0)
