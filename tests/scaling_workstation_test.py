#!/usr/bin/env python3
"""jobs/scaling-workstation.sh: a weak and a strong series on this machine with mpirun (no
Slurm), tiny grids on 1 and 2 ranks: the study folder, runs.tsv, one report per point, and
jobs/study.py's table and plots, as jobs/slurm/scaling.sbatch makes them; and jobs/submit.sh
without sbatch points there. Run: scaling_workstation_test.py HALO3D SOURCE_DIR"""
import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile

HALO3D, SRC = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
failures = []
env = {**os.environ, "HALO3D_BIN": HALO3D, "HALO3D_NGPUS": "0", "OMP_NUM_THREADS": "1",
       "HALO3D_MPIRUN_FLAGS": "--oversubscribe", "HALO3D_PYTHON": sys.executable, "HALO3D_SITE_ENV": "/dev/null"}


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


for kind, size in (("weak", ["--local", "8,8,8"]), ("strong", ["--grid", "12,10,8"])):
    with tempfile.TemporaryDirectory() as d:
        study = os.path.join(d, "study")
        p = subprocess.run([os.path.join(SRC, "jobs", "scaling-workstation.sh"), kind, *size, "--counts", "1,2",
                            "--study-dir", study, "--", "--rhs", "random", "--seed", "1", "--tol", "1e-12",
                            "--max-iters", "5"], capture_output=True, text=True, env=env, cwd=d, timeout=300)
        check(p.returncode == 0, f"{kind}: exit {p.returncode}: {p.stderr[-800:]}")
        with open(os.path.join(study, "runs.tsv")) as f:
            rows = list(csv.DictReader(f, delimiter="\t"))
        check([(r["ranks"], r["exit_code"]) for r in rows] == [("1", "3"), ("2", "3")],
              f"{kind}: runs.tsv points 1 and 2, exit 3 (fixed iterations): {rows}")
        reports = sorted(f for f in os.listdir(study) if f.startswith("report-"))
        check(reports == ["report-n0001-r1.json", "report-n0002-r1.json"], f"{kind}: reports {reports}")
        if len(reports) == 2:
            r2 = json.load(open(os.path.join(study, reports[1])))
            want = [16, 8, 8] if kind == "weak" else [12, 10, 8]
            check(r2["ranks"] == 2 and r2["config"]["grid"] == want, f"{kind}: 2-rank point grid {r2['config']['grid']}")
        for f in ("study.json", "table.md", "table.csv", "efficiency.png", "time_split.png"):
            check(os.path.isfile(os.path.join(study, f)), f"{kind}: {f} made")
        table = open(os.path.join(study, "table.md")).read() if os.path.isfile(os.path.join(study, "table.md")) else ""
        check("INCOMPLETE" not in table, f"{kind}: table complete")

# A Python without numpy/matplotlib first on PATH (as a pyenv python3 can be), issue 27 item 5.
bare = tempfile.mkdtemp(prefix="halo3d-bare-python-")
with open(os.path.join(bare, "python3"), "w") as f:
    f.write(f'#!/bin/sh\nexec "{sys.executable}" -S "$@"\n')  # -S: no site-packages, so no numpy
os.chmod(os.path.join(bare, "python3"), 0o755)
bare_env = {k: v for k, v in env.items() if k != "HALO3D_PYTHON"}
bare_env["PATH"] = bare + os.pathsep + env["PATH"]
args = ["weak", "--local", "8,8,8", "--counts", "1", "--", "--rhs", "random", "--max-iters", "3"]
system_ok = subprocess.run(["/usr/bin/python3", "-c", "import numpy, matplotlib"], capture_output=True).returncode == 0 \
    if os.path.exists("/usr/bin/python3") else False
if system_ok:  # the script looks past the bare python3 and finds /usr/bin/python3
    with tempfile.TemporaryDirectory() as d:
        study = os.path.join(d, "study")
        p = subprocess.run([os.path.join(SRC, "jobs", "scaling-workstation.sh"), *args[:5], "--study-dir", study,
                            *args[5:]], capture_output=True, text=True, env=bare_env, cwd=d, timeout=300)
        check(p.returncode == 0 and os.path.isfile(os.path.join(study, "efficiency.png")),
              f"a python3 without numpy first on PATH: /usr/bin/python3 makes the plots: exit {p.returncode}, "
              f"{p.stderr[-400:]!r}")
# Only the bare one (HALO3D_PYTHON names it): plots cannot be made, so exit 1 at once, one clear line.
with tempfile.TemporaryDirectory() as d:
    study = os.path.join(d, "study")
    p = subprocess.run([os.path.join(SRC, "jobs", "scaling-workstation.sh"), *args[:5], "--study-dir", study,
                        *args[5:]], capture_output=True, text=True,
                       env={**bare_env, "HALO3D_PYTHON": os.path.join(bare, "python3")}, cwd=d, timeout=120)
    check(p.returncode == 1 and "no Python with numpy matplotlib" in p.stderr and "--no-plots" in p.stderr
          and not os.path.exists(os.path.join(study, "runs.tsv")),
          f"no Python with matplotlib: exit 1 before any point, naming the fix: exit {p.returncode}, {p.stderr!r}")
    # --no-plots: the table alone, with that same bare Python.
    p = subprocess.run([os.path.join(SRC, "jobs", "scaling-workstation.sh"), *args[:5], "--no-plots", "--study-dir",
                        study, *args[5:]], capture_output=True, text=True,
                       env={**bare_env, "HALO3D_PYTHON": os.path.join(bare, "python3")}, cwd=d, timeout=300)
    check(p.returncode == 0 and os.path.isfile(os.path.join(study, "table.md"))
          and not os.path.exists(os.path.join(study, "efficiency.png")),
          f"--no-plots makes the table without numpy: exit {p.returncode}, {p.stderr[-400:]!r}")
shutil.rmtree(bare, ignore_errors=True)


def no_slurm():
    if not shutil.which("sbatch"):
        return True
    try:
        return subprocess.run(["scontrol", "ping"], capture_output=True, timeout=30).returncode != 0
    except (OSError, subprocess.TimeoutExpired):
        return True


if no_slurm():  # never submits a real job
    p = subprocess.run([os.path.join(SRC, "jobs", "submit.sh"), "weak", "-N", "1", "-g", "1", "--local", "8,8,8"],
                       capture_output=True, text=True, env={**env, "HALO3D_RESULTS": tempfile.mkdtemp()}, timeout=60)
    last = (p.stderr.strip().splitlines() or [""])[-1]
    check(p.returncode == 1 and last.startswith("halo3d-jobs: error: ") and "jobs/scaling-workstation.sh weak" in last,
          f"submit.sh weak without Slurm points to scaling-workstation.sh: exit {p.returncode}, {p.stderr.strip()!r}")

if failures:
    print("FAILED:\n  " + "\n  ".join(failures))
    sys.exit(1)
print("all workstation scaling checks passed")
