#!/usr/bin/env python3
"""A run's output set (--output, its .xdmf, --report) is committed together (issue 28,
classes 8, 10 and 4): on a nearly full disk (a small tmpfs, swept across the fill levels
where the set stops fitting) a run either writes the whole new set or keeps every previous
file, exits 5 without hanging, leaves no temporary, and its report says it failed (or is
gone) instead of an older run's "converged"; concurrent runs never mix their files.
Run: outputs_test.py HALO3D MPIEXEC"""
import json
import os
import re
import subprocess
import sys
import tempfile
import threading

import h5py

HALO3D, MPIEXEC = os.path.abspath(sys.argv[1]), sys.argv[2]
failures = []
OLD = ["--grid", "16,16,16"]  # the previous run's set
NEW = ["--grid", "16,16,12"]  # this run's: /u, the sidecar and the report all say 12,16,16


def run(args, ranks, cwd, timeout=90, files=("out.h5", "r.json")):
    cmd = [MPIEXEC, "-np", str(ranks), "--oversubscribe", HALO3D, "solve", "--tol", "1e-6", "--quiet",
           "--output", files[0], "--report", files[1]] + args
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, errors="backslashreplace", timeout=timeout, cwd=cwd)
    except subprocess.TimeoutExpired:
        return None, "", ""
    return p.returncode, p.stdout, p.stderr


def read(path):
    with open(path, "rb") as f:
        return f.read()


def set_shape(d):
    """The grid (nz, ny, nx) that out.h5, out.xdmf and r.json each describe."""
    with h5py.File(os.path.join(d, "out.h5"), "r") as f:
        h5 = tuple(f["u"].shape)
    dims = re.search(r'Topology[^>]*Dimensions="(\d+) (\d+) (\d+)"', read(os.path.join(d, "out.xdmf")).decode())
    xdmf = tuple(int(x) for x in dims.groups())
    g = json.loads(read(os.path.join(d, "r.json")))["config"]["grid"]
    return h5, xdmf, (g[2], g[1], g[0])


def full_disk(ranks):
    """Sweeps the free space of a 1 MiB tmpfs across the new set's size, page by page."""
    with tempfile.TemporaryDirectory() as top:
        d = os.path.join(top, "small")
        os.mkdir(d)
        if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", d], capture_output=True).returncode:
            print("skip full-disk cases: cannot mount a tmpfs (not root?)")
            return
        try:
            sweep(d, ranks)
        finally:
            subprocess.run(["umount", d])


def too_small(d, ranks):
    """A disk that cannot hold the planned output is refused before solving: exit 5, no work."""
    rc, out, err = run(["--grid", "64,64,64"], ranks, d, files=("big.h5", "big.json"))
    lines = [l for l in err.splitlines() if l.startswith("halo3d")]
    rep = os.path.join(d, "big.json")  # the failure's own report, and nothing else
    status = json.loads(read(rep)).get("status") if os.path.exists(rep) else None
    if os.path.exists(rep):
        os.remove(rep)
    left = sorted(set(os.listdir(d)) - {"out.h5", "out.xdmf", "r.json"})
    if rc != 5 or len(lines) != 1 or "not enough free space" not in lines[0] or "converged" in out or left \
            or status != "failed":
        failures.append(f"{ranks} ranks, 2 MB output on a 1 MB disk: exit {rc}, left {left}, {out[-200:]!r} {err[-300:]!r}")
    else:
        print(f"ok   {ranks} ranks, output larger than the disk: {lines[0]}")


def sweep(d, ranks):
    too_small(d, ranks)
    rc, _, err = run(OLD, 1, d)
    old = {f: read(os.path.join(d, f)) for f in ("out.h5", "out.xdmf", "r.json")}
    if rc != 0:
        failures.append(f"first run: exit {rc} {err!r}")
        return
    outcomes, before = set(), len(failures)
    for pages in range(0, 40, 2):
        for f, data in old.items():
            with open(os.path.join(d, f), "wb") as fh:
                fh.write(data)
        st = os.statvfs(d)
        filler = st.f_bavail * st.f_frsize - pages * 4096
        with open(os.path.join(d, "filler"), "wb") as fh:
            fh.write(b"\0" * max(filler, 0))
        rc, _, err = run(NEW, ranks, d)
        os.remove(os.path.join(d, "filler"))
        name = f"{ranks} ranks, {pages} free pages"
        left = sorted(set(os.listdir(d)) - {"out.h5", "out.xdmf", "r.json"})
        lines = [l for l in err.splitlines() if l.startswith("halo3d")]
        if rc is None:
            failures.append(f"{name}: hung")
            continue
        if left:
            failures.append(f"{name}: left {left}")
        if rc == 0:
            outcomes.add("written")
            shapes = set_shape(d)
            if set(shapes) != {(12, 16, 16)}:
                failures.append(f"{name}: exit 0 but the set is mixed: h5, xdmf, report = {shapes}")
            continue
        outcomes.add("refused")
        if rc != 5 or len(lines) != 1 or not lines[0].startswith("halo3d: error"):
            failures.append(f"{name}: exit {rc}, expected 5 and one error line: {err[-400:]!r}")
        for f in ("out.h5", "out.xdmf"):
            if not os.path.exists(os.path.join(d, f)) or read(os.path.join(d, f)) != old[f]:
                failures.append(f"{name}: exit {rc} but {f} is not the previous file")
        if os.path.exists(os.path.join(d, "r.json")):
            rep = json.loads(read(os.path.join(d, "r.json")))
            if rep.get("status") != "failed" or rep.get("exit_code") != rc:
                failures.append(f"{name}: exit {rc} but r.json does not say so: status {rep.get('status')!r}")
    if outcomes != {"written", "refused"}:
        failures.append(f"{ranks} ranks: the sweep did not cross the set's size: {outcomes}")
    elif len(failures) == before:
        print(f"ok   full disk, {ranks} ranks: every fill level wrote the whole set or kept the previous one")


def races(rounds=12):
    """Two runs of different grids write the same three names at once; each set is one run's."""
    mixed = []
    with tempfile.TemporaryDirectory() as d:
        for i in range(rounds):
            results = []
            ts = [threading.Thread(target=lambda a=a: results.append(run(a, 1, d))) for a in (OLD, NEW)]
            for t in ts:
                t.start()
            for t in ts:
                t.join()
            if any(r[0] != 0 for r in results):
                failures.append(f"race {i}: exits {[r[0] for r in results]}")
                continue
            shapes = set_shape(d)
            if len(set(shapes)) != 1:
                mixed.append(shapes)
    if mixed:
        failures.append(f"concurrent runs mixed their files in {len(mixed)} of {rounds} rounds: {mixed[0]}")
    else:
        print(f"ok   {rounds} races of two runs: each set from one run")


def failed_run_report():
    """A run that fails after solving (a file-size limit) replaces the old report with its failure."""
    with tempfile.TemporaryDirectory() as d:
        run(OLD, 2, d)
        old = {f: read(os.path.join(d, f)) for f in ("out.h5", "out.xdmf")}
        # The limit on the ranks only (24 KiB: the report fits, /u of 32^3 does not), not on mpirun.
        p = subprocess.run([MPIEXEC, "-np", "2", "--oversubscribe", "bash", "-c", 'ulimit -f 24; exec "$@"', "x",
                            HALO3D, "solve", "--tol", "1e-6", "--quiet", "--output", "out.h5", "--report", "r.json",
                            "--grid", "32,32,32"], capture_output=True, text=True, cwd=d, timeout=90)
        rep = json.loads(read(os.path.join(d, "r.json"))) if os.path.exists(os.path.join(d, "r.json")) else {}
        kept = all(read(os.path.join(d, f)) == old[f] for f in old)
        if p.returncode != 5 or rep.get("status") != "failed" or rep.get("exit_code") != 5 or not kept \
                or "cannot write" not in rep.get("error", ""):
            failures.append(f"failed run's report: exit {p.returncode}, report {rep.get('status')!r} "
                            f"{rep.get('error', '')[:100]!r}, previous h5/xdmf kept: {kept}: {p.stderr[-300:]!r}")
        else:
            print(f"ok   a failed run's report says failed, exit 5: {rep['error'][:80]}")


failed_run_report()
races()
for ranks in (1, 2):
    full_disk(ranks)
if failures:
    print("\n".join("FAIL " + f for f in failures))
    sys.exit(1)
print("outputs_test: all passed")
