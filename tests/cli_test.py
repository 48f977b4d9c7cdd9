#!/usr/bin/env python3
"""Bad input to `halo3d solve`: a clear one-line error, a distinct non-zero exit code,
no hang and no output file. Run: cli_test.py HALO3D MPIEXEC"""
import json
import os
import subprocess
import sys
import tempfile

import h5py

HALO3D, MPIEXEC = os.path.abspath(sys.argv[1]), sys.argv[2]
failures = []


def run(args, ranks=2, timeout=60, cwd=None, env=None):
    cmd = [MPIEXEC, "-np", str(ranks), "--oversubscribe", HALO3D] + args
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=cwd,
                       env=None if env is None else {**os.environ, **env})
    return p.returncode, p.stdout, p.stderr


def expect_error(name, args, code, needle, ranks=2, files_absent=(), env=None):
    with tempfile.TemporaryDirectory() as d:
        try:
            solve = args[:1] == ["solve"] and "--output" not in args
            rc, out, err = run(args + ["--output", os.path.join(d, "out.h5")] if solve else args,
                               ranks=ranks, cwd=d, env=env)
        except subprocess.TimeoutExpired:
            failures.append(f"{name}: hung")
            return
        # mpirun adds its own banner about the non-zero exit; halo3d's part is one line.
        lines = [l for l in err.splitlines() if l.startswith("halo3d")]
        problems = []
        if rc != code:
            problems.append(f"exit {rc}, expected {code}")
        if len(lines) != 1 or not lines[0].startswith("halo3d: error: "):
            problems.append(f"stderr is not one 'halo3d: error:' line: {err!r}")
        elif needle not in lines[0]:
            problems.append(f"message lacks {needle!r}: {lines[0]!r}")
        left = [f for f in os.listdir(d)]
        if left:
            problems.append(f"left files behind: {left}")
        if problems:
            failures.append(f"{name}: " + "; ".join(problems))
        else:
            print(f"ok   {name}: {lines[0]}")


expect_error("grid with two numbers", ["solve", "--grid", "10,10"], 2, "--grid")
expect_error("grid not a number", ["solve", "--grid", "10,x,10"], 2, "--grid")
expect_error("grid zero", ["solve", "--grid", "10,0,10"], 2, "--grid")
expect_error("procs product wrong", ["solve", "--grid", "8,8,8", "--procs", "2,2,1"], 2, "--procs")
expect_error("procs leave a rank empty", ["solve", "--grid", "1,8,8", "--procs", "2,1,1"], 2, "without points")
expect_error("unknown solver", ["solve", "--solver", "gmres"], 2, "--solver")
expect_error("unknown backend", ["solve", "--backend", "opencl"], 2, "--backend")
expect_error("unknown problem", ["solve", "--problem", "wave"], 2, "--problem")
expect_error("tol negative", ["solve", "--tol", "-1e-8"], 2, "--tol")
expect_error("bad mode", ["solve", "--mode", "1,0,1"], 2, "--mode")
expect_error("--iters with --max-iters", ["solve", "--iters", "5", "--max-iters", "10"], 2, "--iters")
expect_error("--iters zero", ["solve", "--iters", "0"], 2, "--iters")
expect_error("--iters for heat", ["solve", "--problem", "heat", "--iters", "5"], 2, "--iters")
expect_error("unknown option", ["solve", "--gird", "8,8,8"], 2, "gird")
expect_error("unstable dt", ["solve", "--problem", "heat", "--grid", "8,8,8", "--dt", "1.0"], 2, "stability limit")
expect_error("missing config", ["solve", "--config", "/nonexistent/x.toml"], 2, "x.toml")
with tempfile.NamedTemporaryFile("w", suffix=".toml", delete=False) as f:
    f.write('grid = [8, 8, 8]\nbogus_key = 3\n')
expect_error("config unknown key", ["solve", "--config", f.name], 2, "bogus_key")
with tempfile.NamedTemporaryFile("w", suffix=".toml", delete=False) as f:
    f.write('grid = [8, 8\n')
expect_error("config malformed", ["solve", "--config", f.name], 2, "")
expect_error("unwritable output", ["solve", "--grid", "8,8,8", "--output", "/nonexistent/dir/u.h5"], 5, "cannot write")
expect_error("restart missing", ["solve", "--grid", "8,8,8", "--restart", "/nonexistent/c.h5"], 5, "c.h5")
expect_error("cuda not available", ["solve", "--grid", "8,8,8", "--backend", "cuda"], 6, "cuda")
expect_error("transport not available", ["solve", "--grid", "8,8,8", "--halo", "nccl"], 6, "nccl")
# Transports the host backend cannot have (or this build lacks): exit 6, one line, all ranks alike.
for t, ranks in (("nccl", 3), ("ipc", 3), ("mpi-cuda", 3), ("nccl", 1)):
    expect_error(f"--halo {t} on the host backend, {ranks} rank(s)",
                 ["solve", "--grid", "8,8,8", "--backend", "host", "--halo", t], 6, f"--halo {t}:", ranks=ranks)
# (Each failing run costs mpirun ~2 s, so only the paths halo3d itself decides are here.)
expect_error("bad HALO3D_PEER_ACCESS", ["solve", "--grid", "8,8,8"], 2, "HALO3D_PEER_ACCESS",
             env={"HALO3D_PEER_ACCESS": "bogus"})
expect_error("probe size not a multiple of 8", ["probe", "--sizes", "8,12"], 2, "--sizes")

# --halo auto on the host backend is mpi: in the header, the report and the HDF5 attribute.
with tempfile.TemporaryDirectory() as d:
    out, rep = os.path.join(d, "u.h5"), os.path.join(d, "r.json")
    rc, so, se = run(["solve", "--grid", "12,10,8", "--backend", "host", "--halo", "auto", "--output", out,
                      "--report", rep])
    import h5py
    import json
    if rc != 0:
        failures.append(f"auto on host: exit {rc}: {se!r}")
    else:
        with open(rep) as f:
            sel = json.load(f).get("halo_selection", {})
        with h5py.File(out) as h:
            attr = h.attrs["halo"]
            attr = attr.decode() if isinstance(attr, bytes) else str(attr)
        if sel.get("chosen") != "mpi" or sel.get("requested") != "auto" or attr != "mpi" or "halo mpi" not in so:
            failures.append(f"auto on host: chosen {sel.get('chosen')!r}, HDF5 halo {attr!r}")
        else:
            print("ok   auto on the host backend is mpi (header, report, HDF5 attribute)")

# probe on 2 ranks on the host backend: mpi only, a table, and a JSON report with sane numbers.
with tempfile.TemporaryDirectory() as d:
    rep = os.path.join(d, "probe.json")
    sizes = [8, 1024, 65536, 1 << 20]
    rc, so, se = run(["probe", "--backend", "host", "--sizes", "8,1K,64K,1M", "--reps", "5", "--warmup", "2",
                      "--grid", "64,64,64", "--topology", "--report", rep], timeout=120)
    problems = []
    if rc != 0:
        problems.append(f"exit {rc}: {se!r}")
    else:
        with open(rep) as f:
            j = json.load(f)
        pairs = j.get("pairs", [])
        if len(pairs) != 1 or (pairs[0]["a"], pairs[0]["b"]) != (0, 1):
            problems.append(f"pairs {pairs!r}")
        else:
            tr = pairs[0]["transports"]
            if list(tr) != ["mpi"]:
                problems.append(f"transports {list(tr)} on the host backend, expected mpi only")
            rows = tr.get("mpi", [])
            if [r["bytes"] for r in rows] != sizes:
                problems.append(f"sizes {[r['bytes'] for r in rows]}")
            for r in rows:
                if not (0 < r["latency_s"] < 1 and r["bandwidth_gbytes_per_s"] > 0
                        and abs(r["round_trip_s"] - 2 * r["latency_s"]) < 1e-12
                        and abs(r["bandwidth_gbytes_per_s"] - r["bytes"] / r["latency_s"] / 1e9) < 1e-6 * r["bandwidth_gbytes_per_s"]):
                    problems.append(f"row not sane: {r}")
        if j.get("backend") != "host" or "topology" not in j or j["peer_access"][0][1] != "no GPU":
            problems.append("backend/topology/peer_access fields")
        wall = j.get("communication_wall") or {}
        if wall.get("bytes_per_exchange") != 8 * 64 * 64 or "mpi" not in wall.get("seconds_per_iteration", {}):
            problems.append(f"communication wall {wall!r}")
        if "no GPU" not in so or "communication wall" not in so or "ranks 0-1" not in so:
            problems.append("table or notes missing from stdout")
    if problems:
        failures.append("probe on 2 ranks: " + "; ".join(problems))
    else:
        print("ok   probe on 2 ranks (host): JSON and table sane")

# Not converging is not a crash: the file is written with converged = 0, exit code 3.
with tempfile.TemporaryDirectory() as d:
    out = os.path.join(d, "u.h5")
    rc, so, se = run(["solve", "--grid", "16,16,16", "--rhs", "random", "--max-iters", "3", "--output", out])
    import h5py
    if rc != 3:
        failures.append(f"not converged: exit {rc}, expected 3")
    elif not os.path.exists(out):
        failures.append("not converged: no output file")
    else:
        with h5py.File(out) as h:
            if int(h.attrs["converged"][0]) != 0 or int(h.attrs["iterations"][0]) != 3:
                failures.append("not converged: attributes wrong")
            else:
                print("ok   not converged: exit 3, file written with converged=0")
    if "warning" not in se:
        failures.append(f"not converged: no warning on stderr: {se!r}")

# A fixed iteration count (--iters N, or --tol 0 with --max-iters N) is a timing run, not a
# failure: exactly N iterations, exit 0, no warning, the report says "fixed iterations".
for name, extra in (("--iters 5", ["--iters", "5"]), ("--tol 0 --max-iters 5", ["--tol", "0", "--max-iters", "5"])):
    with tempfile.TemporaryDirectory() as d:
        out, rep = os.path.join(d, "u.h5"), os.path.join(d, "r.json")
        rc, so, se = run(["solve", "--grid", "16,16,16", "--rhs", "random"] + extra + ["--output", out, "--report", rep])
        problems = []
        if rc != 0:
            problems.append(f"exit {rc}, expected 0: {se!r}")
        else:
            with open(rep) as f:
                r = json.load(f)["result"]
            with h5py.File(out) as h:
                its, fixed_attr = int(h.attrs["iterations"][0]), int(h.attrs["fixed_iterations"][0])
            if (r["iterations"], r["converged"], r["fixed_iterations"], r["stop_reason"]) != (5, False, True, "fixed iterations"):
                problems.append(f"report result {r!r}")
            if its != 5 or fixed_attr != 1:
                problems.append(f"HDF5 iterations {its}, fixed_iterations {fixed_attr}")
            if "fixed iterations" not in so or "NOT converged" in so or "warning: not converged" in se:
                problems.append(f"summary reads like a failure: {so!r} {se!r}")
        if problems:
            failures.append(f"{name}: " + "; ".join(problems))
        else:
            print(f"ok   {name}: 5 iterations, exit 0, report says fixed iterations")

# 'none' means no file for every path option, as it does for --output.
for name, args in (("solve --report none --output none", ["solve", "--grid", "8,8,8", "--report", "none", "--output", "none"]),
                   ("solve --report none --checkpoint none --output none",
                     ["solve", "--grid", "8,8,8", "--report", "none", "--checkpoint", "none", "--output", "none"]),
                   ("bench --report none", ["bench", "--grid", "8,8,8", "--reps", "1", "--warmup", "0", "--report", "none"]),
                   ("probe --report none", ["probe", "--sizes", "8", "--reps", "1", "--warmup", "0", "--report", "none"])):
    with tempfile.TemporaryDirectory() as d:
        rc, so, se = run(args, cwd=d)
        left = os.listdir(d)
        if rc != 0 or left:
            failures.append(f"{name}: exit {rc}, files written: {left} {se!r}")
        else:
            print(f"ok   {name}: no file written")

# Help and version succeed.
for args in (["--help"], ["solve", "--help"], ["--version"]):
    rc, so, se = run(args, ranks=1)
    if rc != 0 or not so:
        failures.append(f"{args}: exit {rc}")
rc, so, _ = run(["solve", "--help"], ranks=1)
for group in ("Problem", "Solver", "Parallel", "Output", "Checkpoint"):
    if group not in so:
        failures.append(f"solve --help lacks group {group}")

if failures:
    print("FAILED:\n  " + "\n  ".join(failures))
    sys.exit(1)
print("all CLI error checks passed")
