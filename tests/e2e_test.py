#!/usr/bin/env python3
"""End-to-end checks of the halo3d program against exact answers, across rank counts
and process grids. Run: e2e_test.py HALO3D MPIEXEC SOURCE_DIR"""
import json
import os
import re
import subprocess
import sys
import tempfile

import h5py
import numpy as np

HALO3D, MPIEXEC, SRC = os.path.abspath(sys.argv[1]), sys.argv[2], os.path.abspath(sys.argv[3])
failures = []
work = tempfile.mkdtemp(prefix="halo3d-e2e-")


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def halo3d(ranks, *args, expect=0):
    cmd = [MPIEXEC, "-np", str(ranks), "--oversubscribe", HALO3D] + list(args)
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=work)
    if p.returncode != expect:
        failures.append(f"{' '.join(args)}: exit {p.returncode}\n{p.stdout}\n{p.stderr}")
    return p


def read_u(path):
    with h5py.File(os.path.join(work, path)) as f:
        return f["u"][...], dict(f.attrs), f["residual_history"][...]


def modes_exact(grid, modes, heat=None):
    nx, ny, nz = grid
    h = [1.0 / (n + 1) for n in grid]
    x = (np.arange(nx) + 1) * h[0]
    y = (np.arange(ny) + 1) * h[1]
    z = (np.arange(nz) + 1) * h[2]
    u = np.zeros((nz, ny, nx))
    for k in modes:
        s = np.einsum("k,j,i->kji", np.sin(k[2] * np.pi * z), np.sin(k[1] * np.pi * y), np.sin(k[0] * np.pi * x))
        lam = sum(4 / h[d] ** 2 * np.sin(k[d] * np.pi * h[d] / 2) ** 2 for d in range(3))
        if heat is None:
            u += np.pi ** 2 * sum(kk * kk for kk in k) / lam * s
        else:
            steps, alpha, dt = heat
            u += (1 - alpha * dt * lam) ** steps * s
    return u


# 1. The acceptance run: 4 ranks, uneven grid, two modes.
p = halo3d(4, "solve", "--grid", "65,33,47", "--procs", "2,1,2", "--mode", "2,3,1", "--mode", "1,1,1",
           "--output", "acc.h5", "--report", "acc.json")
u, attrs, hist = read_u("acc.h5")
exact = modes_exact((65, 33, 47), [(2, 3, 1), (1, 1, 1)])
rel = np.abs(u - exact).max() / np.abs(exact).max()
check(u.shape == (47, 33, 65), f"/u has shape [NZ][NY][NX] = {u.shape}")
# Multigrid-preconditioned CG (the default): a bounded number of iterations.
check(int(attrs["converged"]) == 1 and int(attrs["iterations"]) <= 12,
      f"converged in {int(attrs['iterations'])} iterations")
check(rel < 1e-8, f"/u matches the exact discrete solution: max rel error {rel:.2e}")
for key in ("grid", "procs", "spacing", "mode", "problem", "solver", "precond", "iterations", "relative_residual", "converged",
            "l2_error", "max_error", "backend", "halo", "version"):
    check(key in attrs, f"attribute {key} present")
check(list(attrs["procs"]) == [2, 1, 2], "procs attribute 2,1,2")
# What h5py users get: numbers for scalars (not 1-element arrays), str for text (not bytes).
for key in ("iterations", "converged", "fixed_iterations", "compress", "relative_residual",
            "true_relative_residual", "l2_error", "mg_setup_s"):
    check(np.ndim(attrs[key]) == 0, f"attribute {key} is a scalar: {attrs[key]!r}")
for key in ("problem", "solver", "precond", "precision", "rhs", "boundary", "backend", "halo", "version"):
    check(isinstance(attrs[key], str), f"attribute {key} reads as str: {attrs[key]!r}")
check(attrs["solver"] == "cg" and attrs["precond"] == "mg" and attrs["problem"] == "poisson",
      f"solver/precond/problem attributes: {attrs['solver']!r} {attrs['precond']!r} {attrs['problem']!r}")
check(os.path.exists(os.path.join(work, "acc.xdmf")), "XDMF sidecar written")
rep = json.load(open(os.path.join(work, "acc.json")))
for key in ("config", "ranks", "procs", "result", "timing", "throughput"):
    check(key in rep, f"report has {key}")
check(all(k in rep["timing"] for k in ("compute_s", "halo_s", "reduction_s", "io_s")), "report timing split")
# The solve's split is disjoint and adds up to the solve time; the phases add up to the total.
tm = rep["timing"]
parts = ("compute_s", "halo_s", "reduction_s", "checkpoint_s", "monitor_s", "other_s")
check(all(k in tm for k in parts) and abs(sum(tm[k] for k in parts) - tm["solve_s"]) < 1e-9
      and all(tm[k] >= -1e-9 for k in parts), f"solve split adds up to solve_s: {[tm.get(k) for k in parts]} vs {tm['solve_s']}")
names = [ph["name"] for ph in tm.get("phases", [])]
check(names == ["start-up", "set-up", "right-hand side", "solver start", "solve", "verification", "output"]
      and abs(sum(ph["seconds"] for ph in tm["phases"]) - tm["total_s"]) < 1e-9
      and all(ph["seconds"] >= 0 for ph in tm["phases"]), f"report phases add up to total_s: {names}")
lines = p.stdout.splitlines()
phase_lines = [l for l in lines if l.startswith("phase ")]
check(len(phase_lines) == 7 and phase_lines[0].startswith("phase start-up:") and phase_lines[-1].startswith("phase output:"),
      f"rank 0 prints a line as each phase ends: {phase_lines}")
tl = [l for l in lines if l.startswith("time: solve")]
if tl:
    nums = [float(x) for x in re.findall(r"(?:compute|halo|reductions|checkpoints|monitor|other) ([0-9.]+)", tl[0])]
    whole = float(re.search(r"time: solve ([0-9.]+) s", tl[0]).group(1))
    check(len(nums) == 6 and abs(sum(nums) - whole) < 1e-3, f"printed split adds up to the solve time: {tl[0]}")
else:
    check(False, "no 'time: solve' line")
# What the run prints, in order (issue 27): the header first, each phase once.
check(lines[0].startswith("halo3d ") and ": poisson/cg on grid 65,33,47, 4 ranks as 2,1,2, backend " in lines[0],
      f"the header is the first line: {lines[:1]}")
check(not any(l.startswith("phases (rank 0)") for l in lines)
      and all(sum(l.startswith(f"phase {n}:") for l in lines) == 1 for n in names),
      "each phase is printed once (no summary repeating the phase lines)")
check(rep["config"]["backend"] != "host" or not any(l.startswith("overlap:") for l in lines),
      "no overlap line on the host backend")
check(lines[-1] == "wrote acc.h5, acc.xdmf, acc.json", "the last line names every file written")
p = halo3d(2, "solve", "--grid", "16,16,16", "--quiet", "--output", "none")
ql = p.stdout.splitlines()
check(p.returncode == 0 and len(ql) == 3 and ql[0].startswith("converged after ")
      and ql[1].startswith("error vs exact discrete: l2") and ql[2].startswith("time: solve ") and "total" in ql[2],
      f"--quiet: the result, the error and the time only: {ql}")

# The time-based progress lines change nothing: rank 0 alone decides them on its clock.
p = halo3d(1, "solve", "--grid", "24,20,16", "--rhs", "random", "--output", "v1.h5", "--report", "v1.json",
           "--progress", "0")
r1 = json.load(open(os.path.join(work, "v1.json")))
check(r1["config"]["progress_s"] == 0 and "progress:" not in p.stdout, "--progress 0: no line, progress_s 0")
check(r1["result"]["verified"] is True and r1["config"]["verify"] is True, "report: verified, verify")
# One rank, no exact answer: no halo in the time split (nothing is exchanged), and no line
# that reads like a failure.
check(r1["timing"]["halo_s"] == 0 and " + halo 0.0000 + " in p.stdout, "one rank: halo 0 s in the split")
check("error vs exact: none (no exact answer for --rhs random)" in p.stdout.splitlines()
      and not any(l.startswith("error:") for l in p.stdout.splitlines()),
      "no exact answer: 'error vs exact: none (...)', no line starting 'error:'")
# --verify off: the errors and the overlap not measured, the true residual still recomputed.
p = halo3d(2, "solve", "--grid", "24,20,16", "--output", "voff.h5", "--report", "voff.json", "--verify", "off")
rv = json.load(open(os.path.join(work, "voff.json")))
check(rv["result"]["verified"] is False and rv["result"]["l2_error"] is None and rv["overlap"] is None
      and rv["result"]["true_relative_residual"] is not None and rv["result"]["converged"] is True
      and "error vs exact: not measured (--verify off)" in p.stdout,
      f"--verify off: errors and overlap not measured, true residual still recomputed: {rv['result']}")
# --mg-gather auto: 262144 points with CUDA, 4096 on the host (every CPU rank's copy of a
# gathered level draws on the node's memory bandwidth). 64^3 on 2 ranks: 31^3 runs on the
# process grid on the host, gathered with CUDA or an explicit 262144; the iterates do not
# change.
gathers = {}
for name, extra in (("auto", []), ("262144", ["--mg-gather", "262144"])):
    halo3d(2, "solve", "--grid", "64,64,64", "--rhs", "random", "--output", f"g{name}.h5",
           "--report", f"g{name}.json", *extra)
    rep = json.load(open(os.path.join(work, f"g{name}.json")))
    gathers[name] = (rep["config"]["backend"], rep["config"]["mg_gather"],
                     [lv["distributed"] for lv in rep["multigrid"]["levels"]])
backend = gathers["auto"][0]
want = 4096 if backend == "host" else 262144
check(gathers["auto"][1:] == (want, [True, want == 4096, False, False, False])
      and gathers["262144"][1:] == (262144, [True, False, False, False, False]),
      f"--mg-gather auto on {backend}: {want}, 31^3 distributed only below it: {gathers}")
check(np.array_equal(read_u("gauto.h5")[0], read_u("g262144.h5")[0]),
      "--mg-gather auto and 262144: /u bitwise the same")
p = halo3d(1, "solve", "--grid", "24,20,16", "--rhs", "random", "--output", "v2.h5", "--progress", "1e-9")
prog = [l for l in p.stdout.splitlines() if l.startswith("progress: iteration ")]
a, aa, ah = read_u("v1.h5")
b, ba, bh = read_u("v2.h5")
check(len(prog) == int(ba["iterations"]) and np.array_equal(a, b) and np.array_equal(ah, bh),
      f"--progress: a line per iteration at 1e-9 s, same iterates as --progress 0 ({len(prog)} lines)")
check(all(re.match(r"progress: iteration \d+, relative residual \S+, [0-9.]+ s into the solve", l) for l in prog),
      f"progress lines: iteration, residual, time: {prog[:2]}")

# 2. Random right-hand side: same iterations and answer on 1, 3, 4 ranks in any grid.
ref = None
for ranks, procs in ((1, "1,1,1"), (3, "3,1,1"), (3, "1,3,1"), (3, "1,1,3"), (4, "2,2,1"), (4, "1,4,1"),
                     (4, "1,2,2"), (4, "4,1,1")):
    out = f"rand_{ranks}_{procs.replace(',', '')}.h5"
    halo3d(ranks, "solve", "--grid", "29,23,19", "--rhs", "random", "--seed", "5", "--procs", procs,
           "--output", out)
    u, attrs, hist = read_u(out)
    its = int(attrs["iterations"])
    if ref is None:
        ref = (u, its)
        check(int(attrs["converged"]) == 1 and 3 < its <= 12,
              f"random rhs converged in {its} iterations on 1 rank (multigrid: at most 12)")
        check(attrs["true_relative_residual"] < 1e-8 * 1.01, "true residual recomputed below tol")
        continue
    d = np.abs(u - ref[0]).max() / np.abs(ref[0]).max()
    check(its == ref[1], f"{ranks} ranks as {procs}: {its} iterations (1 rank: {ref[1]})")
    check(d < 1e-13, f"{ranks} ranks as {procs}: answer equal to rounding (max rel diff {d:.1e}, bitwise {d == 0})")

# 3. Heat from the shipped config, grid overridden on the command line.
p = halo3d(2, "solve", "--config", os.path.join(SRC, "inputs", "heat.toml"), "--grid", "24,20,18", "--steps", "50",
           "--monitor", "25", "--output", "heat.h5", "--report", "heat.json")
u, attrs, _ = read_u("heat.h5")
t, dt, alpha = attrs["t"], attrs["dt"], attrs["alpha"]
check(abs(t - 50 * dt) < 1e-15 and alpha == 1.0 and list(attrs["time"]) == [t, dt, alpha],
      f"heat: named HDF5 attributes t = 50 dt, dt, alpha (and time = [t, dt, alpha]): {t}, {dt}, {alpha}")
# Heat summaries speak of steps, physical time and the error, not of convergence.
lines = p.stdout.splitlines()
check(any(l.startswith(f"heat: 50 steps done, t = {t:.6e}") for l in lines) and "converged" not in p.stdout
      and "relative residual" not in p.stdout, "heat summary: steps and physical time, no residual")
check(any(l.startswith("error at t vs exact discrete: l2") for l in lines), "heat summary: error against the exact answer")
prog = [l for l in lines if l.startswith("step ")]
check(len(prog) == 2 and all(" t " in l and "max error" in l and "wall" in l for l in prog)
      and f"t {25 * dt:.6e}" in prog[0] and all(float(l.split("max error")[1].split()[0]) < 1e-12 for l in prog),
      f"heat progress lines: step, t, max error against the exact answer at that step, wall: {prog}")
hr = json.load(open(os.path.join(work, "heat.json")))["result"]
check(hr.get("steps") == 50 and abs(hr.get("t", 0) - t) < 1e-15 and hr.get("converged", 0) is None
      and hr.get("stop_reason") == "steps done", f"heat report: steps, t, no convergence: {hr}")
exact = modes_exact((24, 20, 18), [(1, 1, 1), (3, 2, 1)], heat=(50, alpha, dt))
rel = np.abs(u - exact).max() / np.abs(exact).max()
check(u.shape == (18, 20, 24), "heat grid from the command line overrides the config")
check(rel < 1e-12, f"heat matches the exact discrete solution after 50 steps: {rel:.1e}")

# 4. Jacobi, overlap on and off: identical iterates.
for ov in ("on", "off"):
    halo3d(2, "solve", "--grid", "12,9,10", "--solver", "jacobi", "--tol", "1e-6", "--overlap", ov,
           "--output", f"jac_{ov}.h5")
a, aa, _ = read_u("jac_on.h5")
b, ba, _ = read_u("jac_off.h5")
check(np.array_equal(a, b) and aa["iterations"] == ba["iterations"], "Jacobi overlap on/off bitwise equal")
exact = modes_exact((12, 9, 10), [(1, 1, 1)])
check(np.abs(a - exact).max() / np.abs(exact).max() < 1e-5, "Jacobi near the exact discrete solution")

# 5. info and bench run and say what they should.
p = halo3d(2, "info")
check("rank 0: host" in p.stdout and "rank 1: host" in p.stdout and "HDF5" in p.stdout, "info prints versions and map")
p = halo3d(1, "bench", "--grid", "48,48,48", "--reps", "3", "--report", "bench.json")
b = json.load(open(os.path.join(work, "bench.json")))
names = [r["name"] for r in b["results"]]
check(names[0] == "copy" and "apply" in names and "cg_iteration" in names, "bench measures copy, apply, CG")
check(all(r["gbytes_per_s"] > 0 for r in b["results"]), "bench bandwidths positive")

# 6. Files written atomically under names unique to the run (issue 17, classes 1, 3 and 5).
def halo3d_in(folder, ranks, *args, timeout=300):
    cmd = [MPIEXEC, "-np", str(ranks), "--oversubscribe", HALO3D] + list(args)
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=folder)
    except subprocess.TimeoutExpired:  # a hang is a failed check, not the end of the script
        return subprocess.CompletedProcess(cmd, -9, "", f"hung for {timeout} s")


def error_lines(p):
    return [l for l in p.stderr.splitlines() if l.startswith("halo3d")]


def partials(folder):
    return sorted(f for f in os.listdir(folder) if ".partial" in f)


# Another run's temporary files (the old fixed names FILE.partial) are never touched.
d6 = os.path.join(work, "atomic")
os.mkdir(d6)
others = ["u.h5.partial", "u.xdmf.partial", "r.json.partial", "c.h5.partial", "b.json.partial"]
for f in others:
    with open(os.path.join(d6, f), "w") as fh:
        fh.write("another run's " + f)
p = halo3d_in(d6, 2, "solve", "--grid", "12,10,8", "--rhs", "random", "--output", "u.h5", "--report", "r.json",
              "--checkpoint", "c.h5", "--checkpoint-every", "1")
p2 = halo3d_in(d6, 1, "bench", "--grid", "8,8,8", "--reps", "1", "--warmup", "0", "--report", "b.json")
check(p.returncode == 0 and p2.returncode == 0, f"runs beside another run's .partial files succeed ({p.returncode}, {p2.returncode}: "
      f"{error_lines(p) + error_lines(p2)})")
def content(path):
    try:
        with open(path) as f:
            return f.read()
    except (OSError, UnicodeDecodeError):
        return None


check(all(content(os.path.join(d6, f)) == "another run's " + f for f in others),
      "another run's .partial files are left untouched")
check(partials(d6) == sorted(others), f"no .partial of this run left: {partials(d6)}")
if p.returncode == 0:
    with h5py.File(os.path.join(d6, "c.h5")) as f:
        check(int(f.attrs["iteration"][0]) > 0, "checkpoint written beside another run's c.h5.partial")

# Concurrent runs writing the same --output and --report: the files are always exactly one
# run's complete data (each run's answer known from a run of its own).
d7 = os.path.join(work, "race")
os.mkdir(d7)
seeds = (11, 12, 13)
refs = {}
for sd in seeds:
    halo3d_in(d7, 1, "solve", "--grid", "20,20,20", "--rhs", "random", "--seed", str(sd), "--output", f"ref{sd}.h5")
    with h5py.File(os.path.join(d7, f"ref{sd}.h5")) as f:
        refs[sd] = (f["u"][...], f["residual_history"][...])
ok_race = True
for rnd in range(3):
    procs = [subprocess.Popen([MPIEXEC, "-np", "1", "--oversubscribe", HALO3D, "solve", "--grid", "20,20,20", "--rhs",
                               "random", "--seed", str(sd), "--output", "same.h5", "--report", "same.json"],
                              cwd=d7, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for sd in seeds]
    outs = [pr.communicate(timeout=300) for pr in procs]
    codes = [pr.returncode for pr in procs]
    try:
        with h5py.File(os.path.join(d7, "same.h5")) as f:
            u, hist = f["u"][...], f["residual_history"][...]
        which = [sd for sd in seeds if np.array_equal(u, refs[sd][0]) and np.array_equal(hist, refs[sd][1])]
        rep = json.load(open(os.path.join(d7, "same.json")))
        good = codes == [0, 0, 0] and len(which) == 1 and rep["config"]["seed"] in seeds and not partials(d7)
    except Exception as e:  # a damaged file
        good, which = False, repr(e)
    if not good:
        ok_race = False
        failures.append(f"concurrent runs, round {rnd}: exits {codes}, output is run {which}, left {partials(d7)}, "
                        f"stderr {[o[1][-300:] for o in outs]}")
check(ok_race, "3 concurrent runs on one --output/--report: always one run's complete file, all exit 0")

# A symbolic link to a regular file is written through: the link stays, its target gets the data.
d8 = os.path.join(work, "links")
os.mkdir(d8)
os.mkdir(os.path.join(d8, "store"))
with open(os.path.join(d8, "store", "real.h5"), "w") as f:
    f.write("old")
os.symlink("store/real.h5", os.path.join(d8, "link.h5"))
p = halo3d_in(d8, 2, "solve", "--grid", "8,8,8", "--output", "link.h5")
check(p.returncode == 0 and os.path.islink(os.path.join(d8, "link.h5"))
      and h5py.is_hdf5(os.path.join(d8, "store", "real.h5")) and not partials(d8) and not partials(os.path.join(d8, "store")),
      "--output through a symlink: link kept, target replaced, no .partial left")

# A full disk (a 64 KiB tmpfs, when this machine lets us mount one): exit 5, one line naming the
# file, the previous file kept, no .partial left; the XDMF sidecar's write is checked too.
d9 = os.path.join(work, "full")
os.mkdir(d9)
mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", d9], capture_output=True).returncode == 0
if not mounted:
    print("skip full-disk checks: cannot mount a tmpfs here (needs root)")
else:
    try:
        with open(os.path.join(d9, "u.h5"), "w") as f:
            f.write("previous")
        p = halo3d_in(d9, 2, "solve", "--grid", "24,24,24", "--output", "u.h5", timeout=60)
        lines = error_lines(p)
        check(p.returncode == 5 and len(lines) == 1 and "u.h5" in lines[0], f"full disk: exit {p.returncode}, {lines}")
        check(content(os.path.join(d9, "u.h5")) == "previous" and not partials(d9),
              f"full disk: previous u.h5 kept, no .partial left ({os.listdir(d9)})")
        # Room for the solution but not for its sidecar.
        os.remove(os.path.join(d9, "u.h5"))
        p = halo3d_in(d9, 2, "solve", "--grid", "8,8,8", "--output", "u.h5")
        used = os.stat(os.path.join(d9, "u.h5")).st_blocks * 512
        for f in os.listdir(d9):
            os.remove(os.path.join(d9, f))
        fd = os.open(os.path.join(d9, "filler"), os.O_WRONLY | os.O_CREAT)
        try:
            while os.write(fd, b"\0" * 4096) > 0:
                pass
        except OSError:
            pass
        os.close(fd)
        size = os.stat(os.path.join(d9, "filler")).st_size
        os.truncate(os.path.join(d9, "filler"), size - used)
        p = halo3d_in(d9, 2, "solve", "--grid", "8,8,8", "--output", "u.h5", timeout=60)
        lines = error_lines(p)
        # The output set is committed together (the .h5 reserves its blocks and metadata
        # first, so the failure may come there): neither file, no temporary.
        check(p.returncode == 5 and len(lines) == 1 and ("u.xdmf" in lines[0] or "u.h5" in lines[0]),
              f"full disk at the XDMF sidecar: exit {p.returncode}, {lines}")
        check(not os.path.exists(os.path.join(d9, "u.xdmf")) and not os.path.exists(os.path.join(d9, "u.h5"))
              and not partials(d9), f"full disk at the sidecar: no sidecar, no lone u.h5, no .partial ({os.listdir(d9)})")
    finally:
        subprocess.run(["umount", d9])

# 7. NaN is never success; checkpoints that do not match or are damaged are refused (classes 4, 6).
d10 = os.path.join(work, "restart")
os.mkdir(d10)


def restart_case(name, make, *args, code, needles=(), ranks=2):
    """Restart from ck.h5 (after make(path) changes it); expect `code`, one line with each needle."""
    src = os.path.join(d10, "ck.h5")
    dst = os.path.join(d10, f"ck_{len(os.listdir(d10))}.h5")
    with open(src, "rb") as a, open(dst, "wb") as b:
        b.write(a.read())
    if make:
        with h5py.File(dst, "r+") as f:
            make(f)
    out = os.path.join(d10, "after.h5")
    if os.path.exists(out):
        os.remove(out)
    p = halo3d_in(d10, ranks, "solve", "--restart", dst, "--output", out, *args)
    lines = error_lines(p)
    good = (p.returncode == code and len(lines) == 1 and all(n in lines[0] for n in needles)
            and "HDF5-DIAG" not in p.stderr and not os.path.exists(out))
    check(good, f"restart, {name}: exit {p.returncode} (want {code}), {lines}"
                + (" + HDF5 error stack" if "HDF5-DIAG" in p.stderr else "")
                + (" + output written" if os.path.exists(out) else ""))


base = ["--grid", "12,10,8", "--rhs", "random", "--seed", "5"]
os.mkfifo(os.path.join(d10, "fifo"))  # an external link to it must not be opened (hang)
p = halo3d_in(d10, 2, "solve", *base, "--max-iters", "3", "--checkpoint", "ck.h5", "--checkpoint-every", "1",
              "--output", "none")
check(p.returncode == 3, "checkpoint for the restart checks written (exit 3)")
restart_case("seed differs (both values)", None, *base[:4], "--seed", "6", code=2, needles=("seed", "'5'", "'6'"))
p = halo3d_in(d10, 2, "solve", *base[:4], "--seed", "6", "--restart", "ck.h5", "--dry-run")
check(p.returncode == 2 and len(error_lines(p)) == 1 and "seed" in error_lines(p)[0],
      f"--dry-run with a mismatched --restart fails as the run would: exit {p.returncode}, {error_lines(p)}")
p = halo3d_in(d10, 2, "solve", *base, "--restart", "ck.h5", "--dry-run")
check(p.returncode == 0, f"--dry-run with a matching --restart: exit {p.returncode}, {error_lines(p)}")
restart_case("grid differs (both values)", None, "--grid", "12,10,9", *base[2:], code=2, needles=("grid", "12,10,8", "12,10,9"))
restart_case("solver differs", None, *base, "--solver", "jacobi", code=2, needles=("solver",))
restart_case("iteration attribute missing", lambda f: f.attrs.__delitem__("iteration"), *base, code=2,
             needles=("iteration", "missing"))
restart_case("grid attribute a string", lambda f: f.attrs.__setitem__("grid", np.bytes_("12,10,8")), *base, code=2,
             needles=("grid",))
restart_case("seed attribute empty", lambda f: f.attrs.__setitem__("seed", np.zeros(0, dtype=np.int64)), *base, code=2,
             needles=("seed",))
restart_case("dataset /r missing", lambda f: f.__delitem__("r"), *base, code=2, needles=("/r",))


def poison_x(f):
    x = f["x"][...]
    x[3, 4, 5] = np.nan
    f["x"][...] = x


restart_case("NaN in the saved x", poison_x, *base, code=4, needles=("NaN",))
restart_case("Inf in the solver scalars", lambda f: f.attrs.__setitem__("scalars", np.array([np.inf])), *base, code=4,
             needles=("NaN or Inf",))
# The solver scalars (CG's rho) are what was written, as many as the solver has: a changed one
# was taken as is and ended in a false "breakdown" (exit 4), extra ones were ignored (class 11).
restart_case("solver scalar changed (checksum)", lambda f: f.attrs.__setitem__("scalars", f.attrs["scalars"] * 3.0),
             *base, code=2, needles=("damaged checkpoint", "scalars", "checksum"))
restart_case("solver scalars of another count", lambda f: f.attrs.__setitem__(
    "scalars", np.append(f.attrs["scalars"], [1.0, 2.0])), *base, code=2, needles=("damaged checkpoint", "scalars", "3"))
restart_case("solver scalars' checksum missing", lambda f: f.attrs.__delitem__("scalars_checksum"), *base, code=2,
             needles=("scalars_checksum", "missing"))


# Damaged datasets are "damaged checkpoint", exit 2, one line, never a crash or a raw HDF5
# message (issue 28, class 11); NaN in the residual history is a breakdown (class 3).
def replace_dataset(name, make):
    def change(f):
        del f[name]
        make(f)
    return change


restart_case("residual_history 2-D", replace_dataset("residual_history", lambda f: f.create_dataset(
    "residual_history", data=np.zeros((3, 2)))), *base, code=2, needles=("damaged checkpoint", "/residual_history"))
restart_case("x of rank 5", replace_dataset("x", lambda f: f.create_dataset("x", data=np.zeros((8, 10, 12, 1, 1)))),
             *base, code=2, needles=("damaged checkpoint", "/x", "shape"))
restart_case("x of another shape", replace_dataset("x", lambda f: f.create_dataset("x", data=np.zeros((8, 10, 11)))),
             *base, code=2, needles=("damaged checkpoint", "/x", "[8][10][11]"))
restart_case("x a scalar", replace_dataset("x", lambda f: f.create_dataset("x", data=1.0)), *base, code=2,
             needles=("damaged checkpoint", "/x", "has shape [] (a scalar"))
restart_case("x a group", replace_dataset("x", lambda f: f.create_group("x")), *base, code=2,
             needles=("damaged checkpoint", "/x", "not a dataset"))
restart_case("x of strings", replace_dataset("x", lambda f: f.create_dataset("x", shape=(8, 10, 12), dtype="S4")),
             *base, code=2, needles=("damaged checkpoint", "/x", "floating-point"))
restart_case("x a hard link to r (checksum bound to the name)", replace_dataset("x", lambda f: f.__setitem__("x", f["r"])),
             *base, code=2, needles=("damaged checkpoint", "/x", "checksum"))
restart_case("x a soft link to r", replace_dataset("x", lambda f: f.__setitem__("x", h5py.SoftLink("/r"))), *base,
             code=2, needles=("damaged checkpoint", "/x", "link"))
restart_case("x an external link to a FIFO", replace_dataset("x", lambda f: f.__setitem__(
    "x", h5py.ExternalLink(os.path.join(d10, "fifo"), "/x"))), *base, code=2,
    needles=("damaged checkpoint", "/x", "external link"))


def flip_x(f):  # 8 bytes of /x changed: a checkpoint whose data are not what was written
    x = f["x"][...]
    x[3, 4, 5] = -2.5 * x[3, 4, 5] + 1.0
    f["x"][...] = x


restart_case("8 bytes of /x changed (checksum)", flip_x, *base, code=2,
             needles=("damaged checkpoint", "/x", "checksum"))
restart_case("residual history changed (checksum)", lambda f: f["residual_history"].__setitem__(0, 0.5), *base,
             code=2, needles=("damaged checkpoint", "/residual_history", "checksum"))


def huge_history(f):  # 10^12 iterations, their history declared (chunked, never written)
    del f["residual_history"]
    f.create_dataset("residual_history", shape=(10 ** 12,), dtype="f8", chunks=(1024,))
    f.attrs["iteration"] = np.array([10 ** 12], dtype=np.int64)


restart_case("a huge declared history", huge_history, *base, code=2, needles=("damaged checkpoint", "iterations"))
restart_case("NaN in the residual history",
             lambda f: f["residual_history"].__setitem__(1, np.nan), *base, code=4, needles=("residual_history", "NaN"))
p = halo3d_in(d10, 1, "solve", *base, "--restart", "ck.h5", "--procs", "1,1,1", "--output", "procs.h5")
check(p.returncode == 0, f"restart on another process grid (2 ranks -> 1) is accepted: exit {p.returncode} {error_lines(p)}")

# A --rhs file: regenerated under the same name after the checkpoint: refused, not a
# "converged" run with a true residual of 1 (issue 28, class 1).
with h5py.File(os.path.join(d10, "in.h5"), "w") as h:
    h["f"] = np.random.default_rng(3).standard_normal((8, 10, 12))
fb = ["--grid", "12,10,8", "--rhs", "file:in.h5:/f"]
p = halo3d_in(d10, 2, "solve", *fb, "--max-iters", "3", "--checkpoint", "ckf.h5", "--checkpoint-every", "1",
              "--output", "none")
with h5py.File(os.path.join(d10, "in.h5"), "w") as h:
    h["f"] = np.random.default_rng(4).standard_normal((8, 10, 12))
p2 = halo3d_in(d10, 2, "solve", *fb, "--restart", "ckf.h5", "--output", "none")
check(p.returncode == 3 and p2.returncode == 2 and len(error_lines(p2)) == 1
      and "a file: input changed" in error_lines(p2)[0],
      f"restart after the --rhs file changed is refused: exit {p.returncode}/{p2.returncode}, {error_lines(p2)}")

# Heat: a checkpoint whose state is finite but overflows to Inf/NaN: the final check says so.
hb = ["--problem", "heat", "--grid", "8,8,8", "--steps", "4"]
p = halo3d_in(d10, 2, "solve", *hb[:-1], "2", "--checkpoint", "heat.h5", "--output", "none", "--checkpoint-every", "1")
check(p.returncode == 0, f"heat checkpoint written ({p.returncode}, {error_lines(p)})")
os.replace(os.path.join(d10, "heat.h5"), os.path.join(d10, "ck.h5"))
def checksum(values, name):
    """halo3d's field_checksum (checkpoint.cpp) of a [NZ][NY][NX] array, bound to dataset `name`
    (named()), as the attribute holds it."""
    def mix(x):
        x = x ^ (x >> np.uint64(30))
        x = x * np.uint64(0xbf58476d1ce4e5b9)
        x = x ^ (x >> np.uint64(27))
        x = x * np.uint64(0x94d049bb133111eb)
        return x ^ (x >> np.uint64(31))
    with np.errstate(over="ignore"):
        index = np.arange(values.size, dtype=np.uint64) + np.uint64(0x9e3779b97f4a7c15)
        bits = np.ascontiguousarray(values, dtype=np.float64).ravel().view(np.uint64)
        total = mix(mix(index) ^ bits).sum(dtype=np.uint64)
        h = 0xcbf29ce484222325
        for ch in name.encode():
            h = ((h ^ ch) * 0x100000001b3) & 0xffffffffffffffff
        total = int(mix(np.uint64(int(total) ^ h)))
    return np.array([total - (1 << 64) if total >= 1 << 63 else total], dtype=np.int64)


def set_u(value):  # a state written as it is (its checksum made to match): finite, but huge
    def change(f):
        f["u"][...] = value
        f["u"].attrs["checksum"] = checksum(f["u"][...], "u")
    return change


restart_case("heat state of 1e308 overflows: NaN answer is exit 4, no file", set_u(1e308),
             *hb, code=4, needles=("NaN or Inf",))
# NaN in a checkpoint's series snapshot is a breakdown, never copied into the output (class 3).
p = halo3d_in(d10, 2, "solve", *hb[:-1], "2", "--output-every", "1", "--checkpoint", "heats.h5", "--checkpoint-every",
              "1", "--output", "series.h5")
with h5py.File(os.path.join(d10, "heats.h5"), "r+") as f:
    snap = f["series/000001"][...]
    snap[1, 2, 3] = np.nan
    f["series/000001"][...] = snap
p2 = halo3d_in(d10, 2, "solve", *hb, "--output-every", "1", "--restart", "heats.h5", "--output", "series2.h5")
check(p.returncode == 0 and p2.returncode == 4 and len(error_lines(p2)) == 1 and "/series/000001" in error_lines(p2)[0]
      and not os.path.exists(os.path.join(d10, "series2.h5")),
      f"NaN in a checkpoint's series snapshot: exit {p.returncode}/{p2.returncode} (want 0/4), {error_lines(p2)}")
# A /series that is an external link (here to a FIFO) is a damaged checkpoint, not a hang or
# a raw HDF5 message (class 5).
p = halo3d_in(d10, 2, "solve", *hb[:-1], "2", "--output-every", "1", "--checkpoint", "heatl.h5", "--checkpoint-every",
              "1", "--output", "seriesl.h5")
with h5py.File(os.path.join(d10, "heatl.h5"), "r+") as f:
    del f["series"]
    f["series"] = h5py.ExternalLink(os.path.join(d10, "fifo"), "/")
p2 = halo3d_in(d10, 2, "solve", *hb, "--output-every", "1", "--restart", "heatl.h5", "--output", "series3.h5", timeout=60)
check(p.returncode == 0 and p2.returncode == 2 and len(error_lines(p2)) == 1
      and "damaged checkpoint: its series" in error_lines(p2)[0] and "HDF5" not in p2.stderr,
      f"a checkpoint's /series an external link: exit {p.returncode}/{p2.returncode} (want 0/2), {error_lines(p2)}")
restart_case("heat alpha differs (both values)", None, *hb, "--alpha", "0.5", "--dt", "1e-4", code=2,
             needles=("alpha", "0.5"))
restart_case("heat checkpoint beyond --steps", None, *hb[:-1], "1", code=2, needles=("--steps",))

# 8. Threads per rank. Without OMP_NUM_THREADS each rank gets the CPUs of its host / ranks on it
# (at least 1), reported in the header and the report; ranks x threads above the host's CPUs
# (also with OMP_NUM_THREADS set) is one warning on rank 0 with the numbers and the fix.
cpus = len(os.sched_getaffinity(0))


def threads_run(ranks, env_threads, tag):
    env = {k: v for k, v in os.environ.items() if k != "OMP_NUM_THREADS"}
    if env_threads:
        env["OMP_NUM_THREADS"] = str(env_threads)
    cmd = [MPIEXEC, "-np", str(ranks), "--oversubscribe", "--bind-to", "none", HALO3D, "solve", "--grid", "12,12,12",
           "--output", "none", "--report", f"threads_{tag}.json"]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=work, env=env)
    rep = json.load(open(os.path.join(work, f"threads_{tag}.json"))) if p.returncode == 0 else {}
    return p, rep.get("threads", {})


for ranks in (1, 2):
    p, th = threads_run(ranks, None, f"auto{ranks}")
    want = max(1, cpus // ranks)
    check(p.returncode == 0 and th.get("per_rank") == want and th.get("source") == "auto"
          and f"{want} thread(s)/rank (auto)" in p.stdout and ("oversubscribed" in p.stderr) == (ranks > cpus),
          f"{ranks} rank(s), OMP_NUM_THREADS unset: {th.get('per_rank')} thread(s)/rank (want {want} of {cpus} CPUs)")
p, th = threads_run(2, cpus, "env")
warn = [l for l in p.stderr.splitlines() if "oversubscribed" in l]
check(p.returncode == 0 and th.get("per_rank") == cpus and th.get("source") == "OMP_NUM_THREADS"
      and th.get("oversubscribed") is True and len(warn) == 1
      and f"2 rank(s) x {cpus} OpenMP thread(s) = {2 * cpus} threads on a host with {cpus} CPU(s)" in warn[0]
      and "OMP_NUM_THREADS=" in warn[0],
      f"2 ranks x OMP_NUM_THREADS={cpus} on {cpus} CPUs: one warning with the numbers and the fix: {warn}")
if cpus <= 7:  # more ranks than CPUs; not on big machines (too many processes)
    p, th = threads_run(cpus + 1, None, "ranks")
    warn = [l for l in p.stderr.splitlines() if "oversubscribed" in l]
    check(p.returncode == 0 and th.get("per_rank") == 1 and len(warn) == 1 and f"at most {cpus} rank(s)" in warn[0],
          f"{cpus + 1} ranks on {cpus} CPUs: 1 thread each and one warning: {warn}")

# 9. Success only when the true residual says so; problems of any representable magnitude are
# solved, not taken for b = 0; fixed iteration counts run past the recurrence's underflow
# (issue 28, classes 1, 2 and 19).
d11 = os.path.join(work, "trust")
os.mkdir(d11)


def result_of(name):
    with open(os.path.join(d11, name)) as f:
        return json.load(f)["result"]


def u_of(name):
    with h5py.File(os.path.join(d11, name)) as f:
        return f["u"][...], dict(f.attrs)


p = halo3d_in(d11, 2, "solve", "--grid", "32,32,32", "--tol", "1e-17", "--output", "tol.h5", "--report", "tol.json")
try:
    r, (_, a) = result_of("tol.json"), u_of("tol.h5")
    check(p.returncode == 3 and r["converged"] is False and r["stop_reason"] == "true residual above tol"
          and r["true_relative_residual"] > 2e-17 and int(a["converged"]) == 0
          and any("true residual" in l and "warning" in l for l in error_lines(p)) and "NOT converged" in p.stdout,
          f"--tol 1e-17 on 32^3 (true residual ~4e-14): exit {p.returncode} (want 3), report {r['converged']} "
          f"{r['stop_reason']!r}, {error_lines(p)}")
except (OSError, KeyError, ValueError) as e:
    check(False, f"--tol 1e-17: exit {p.returncode}, {e!r}, {error_lines(p)}")

p = halo3d_in(d11, 2, "solve", "--problem", "heat", "--time-scheme", "implicit", "--grid", "16,16,16", "--tol", "1e-17",
              "--steps", "2", "--output", "heat.h5")
check(p.returncode == 3 and len(error_lines(p)) == 1 and "implicit step 1" in error_lines(p)[0]
      and "true residual" in error_lines(p)[0] and not os.path.exists(os.path.join(d11, "heat.h5")),
      f"implicit heat --tol 1e-17: a step whose true residual misses --tol is exit 3, nothing written: "
      f"exit {p.returncode}, {error_lines(p)}")

# b = 2^-600 (||b||^2 underflows) is 2^-600 times b = 1, bit for bit, on another process grid.
g16 = ["--grid", "16,16,16"]
p1 = halo3d_in(d11, 2, "solve", *g16, "--rhs", "expr:1", "--output", "one.h5", "--report", "one.json")
p2 = halo3d_in(d11, 3, "solve", *g16, "--rhs", "expr:2^-600", "--output", "tiny.h5", "--report", "tiny.json")
p3 = halo3d_in(d11, 2, "solve", *g16, "--rhs", "expr:1e-170", "--output", "e170.h5")
try:
    (u1, a1), (ut, at), (u170, a170) = u_of("one.h5"), u_of("tiny.h5"), u_of("e170.h5")
    check(p1.returncode == 0 and p2.returncode == 0 and int(at["converged"]) == 1
          and int(at["iterations"]) == int(a1["iterations"]) > 0 and np.array_equal(ut * 2.0 ** 600, u1),
          f"--rhs expr:2^-600 on 3 ranks is expr:1's answer times 2^-600 bitwise ({int(at['iterations'])} "
          f"iterations, exit {p2.returncode})")
    check(p3.returncode == 0 and int(a170["converged"]) == 1
          and np.abs(u170 / 1e-170 - u1).max() < 1e-7 * np.abs(u1).max(),
          f"--rhs expr:1e-170 solved, not taken for b = 0 (exit {p3.returncode}, {int(a170['iterations'])} iterations)")
except (OSError, KeyError, ValueError) as e:
    check(False, f"tiny right-hand sides: {e!r} {error_lines(p2)} {error_lines(p3)}")

# Jacobi with boundary values 1e300 (||b||^2 overflows): u = the constant; 2^1000 is 2^1000 x 1.
g12 = ["--grid", "12,12,12", "--rhs", "expr:0", "--solver", "jacobi"]
p1 = halo3d_in(d11, 2, "solve", *g12, "--boundary", "1", "--output", "j1.h5")
p2 = halo3d_in(d11, 2, "solve", *g12, "--boundary", repr(2.0 ** 1000), "--output", "jbig.h5")
p3 = halo3d_in(d11, 2, "solve", *g12, "--boundary", "1e300", "--output", "j300.h5")
p4 = halo3d_in(d11, 3, "solve", "--grid", "12,12,12", "--rhs", "expr:0", "--boundary", "1e300", "--tol", "1e-10",
               "--output", "c300.h5")  # an error below 1e-8 needs a residual below it
try:
    (j1, _), (jb, ab), (j3, a3), (c3, ac) = u_of("j1.h5"), u_of("jbig.h5"), u_of("j300.h5"), u_of("c300.h5")
    check(p2.returncode == 0 and int(ab["converged"]) == 1 and np.array_equal(jb, j1 * 2.0 ** 1000),
          f"jacobi --boundary 2^1000 is 2^1000 x --boundary 1 bitwise (exit {p2.returncode})")
    check(p3.returncode == 0 and int(a3["iterations"]) > 0 and np.abs(j3 / 1e300 - 1).max() < 1e-6,
          f"jacobi --boundary 1e300: u = 1e300 (exit {p3.returncode}, {int(a3['iterations'])} iterations)")
    check(p4.returncode == 0 and np.abs(c3 / 1e300 - 1).max() < 1e-8,
          f"cg --boundary 1e300 on 3 ranks: u = 1e300 (exit {p4.returncode})")
except (OSError, KeyError, ValueError) as e:
    check(False, f"boundary 1e300: {e!r} {error_lines(p2)} {error_lines(p3)} {error_lines(p4)}")

# --iters 400 on 32^3: the recurrence underflows long before; 400 iterations, exit 0.
p = halo3d_in(d11, 2, "solve", "--grid", "32,32,32", "--iters", "400", "--output", "none", "--report", "it.json")
try:
    r = result_of("it.json")
    check(p.returncode == 0 and r["iterations"] == 400 and r["stop_reason"] == "fixed iterations"
          and r["true_relative_residual"] < 1e-12,
          f"--iters 400 on 32^3: exit {p.returncode}, {r['iterations']} iterations, true {r['true_relative_residual']}")
except (OSError, KeyError, ValueError) as e:
    check(False, f"--iters 400: exit {p.returncode}, {e!r}, {error_lines(p)}")
# Tiny problems that used to end in "PCG breakdown": double and mixed precision.
for args in (["--rhs", "expr:1e-155"], ["--rhs", "expr:1e-40", "--precision", "mixed"],
             ["--rhs", "expr:1e-300", "--iters", "200", "--precision", "mixed"]):
    p = halo3d_in(d11, 2, "solve", *g16, *args, "--output", "none")
    check(p.returncode == 0 and ("converged after" in p.stdout or "fixed iterations done" in p.stdout),
          f"{' '.join(args)}: exit {p.returncode} (want 0), {error_lines(p)}")

# A 4.6 KB formula: its checkpoint restarts (the reader capped strings at 4096: "damaged").
formula = "expr:" + "+".join(["x*y"] * 1150)
p = halo3d_in(d11, 2, "solve", *g16, "--rhs", formula, "--max-iters", "2", "--checkpoint", "long.h5",
              "--checkpoint-every", "1", "--output", "none")
p2 = halo3d_in(d11, 2, "solve", *g16, "--rhs", formula, "--restart", "long.h5", "--output", "none")
check(p.returncode == 3 and p2.returncode == 0 and "restarted from" in p2.stdout,
      f"a {len(formula)}-character --rhs formula checkpoints and restarts: exit {p.returncode}/{p2.returncode} "
      f"{error_lines(p2)}")
# Names the sidecar holds are XML-escaped; './sol' names './sol.xdmf' as written (class 20).
import xml.etree.ElementTree as ET  # noqa: E402
p = halo3d_in(d11, 2, "solve", "--grid", "8,8,8", "--output", "a&b<c>.h5")
try:
    items = [e.text for e in ET.parse(os.path.join(d11, "a&b<c>.xdmf")).iter("DataItem")]
    check(p.returncode == 0 and items[-1] == "a&b<c>.h5:/u", f"XDMF of a&b<c>.h5 is valid XML naming it: {items[-1:]}")
except (OSError, ET.ParseError) as e:
    check(False, f"XDMF of a&b<c>.h5: exit {p.returncode}, {e!r}")
p = halo3d_in(d11, 1, "solve", "--grid", "8,8,8", "--output", "./sol")
check(p.returncode == 0 and "wrote ./sol, ./sol.xdmf" in p.stdout and os.path.exists(os.path.join(d11, "sol.xdmf")),
      f"--output ./sol: the last line names ./sol.xdmf: {p.stdout.splitlines()[-1:]}")

# A file-size limit (ulimit -f) the output would pass: exit 5 before writing, one line, no
# .partial left; SIGXFSZ killed a rank mid-write (issue 28, class 14).
import resource  # noqa: E402
d12 = os.path.join(d11, "fsize")
os.mkdir(d12)
cmd = [MPIEXEC, "-np", "2", "--oversubscribe", HALO3D, "solve", "--grid", "96,96,96", "--precond", "none",
       "--max-iters", "2", "--output", "u.h5"]
try:
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=d12,
                       preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (4 << 20, 4 << 20)))
    check(p.returncode == 5 and len(error_lines(p)) == 1 and "ulimit -f" in error_lines(p)[0] and not os.listdir(d12),
          f"output past ulimit -f: exit {p.returncode} (want 5), {error_lines(p)}, left {os.listdir(d12)}")
except subprocess.TimeoutExpired:
    check(False, "output past ulimit -f: hung")

# An address-space limit (ulimit -v) too small for the fields: refused before allocating,
# exit 2 on every rank, instead of std::bad_alloc and MPI_Abort (issue 28, class 12).
try:
    p = subprocess.run([MPIEXEC, "-np", "2", "--oversubscribe", HALO3D, "solve", "--grid", "360,360,360", "--max-iters",
                        "1", "--output", "none"], capture_output=True, text=True, timeout=200, cwd=d12,
                       preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS, (1500 << 20, 1500 << 20)))
    check(p.returncode == 2 and len(error_lines(p)) == 1 and "ulimit -v" in error_lines(p)[0],
          f"fields beyond ulimit -v: exit {p.returncode} (want 2), {error_lines(p)}")
except subprocess.TimeoutExpired:
    check(False, "fields beyond ulimit -v: hung")

# Every solve report these runs wrote matches docs/report.schema.json (checked by the small
# validator of tests/report_schema.py: no jsonschema package needed).
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from report_schema import validate_report  # noqa: E402

n_reports = 0
for dirpath, _, names in os.walk(work):
    for name in sorted(names):
        if not name.endswith(".json"):
            continue
        try:
            with open(os.path.join(dirpath, name)) as f:
                r = json.load(f)
        except ValueError:
            continue
        if r.get("command") != "solve":
            continue
        n_reports += 1
        problems = validate_report(r)
        check(not problems, f"report {os.path.relpath(os.path.join(dirpath, name), work)} matches the schema: {problems[:3]}")
check(n_reports >= 3, f"{n_reports} solve reports checked against docs/report.schema.json")

if failures:
    print("\nFAILED:\n" + "\n".join(failures))
    sys.exit(1)
print("all end-to-end checks passed")
