#!/usr/bin/env python3
"""The output write and its benchmark: `halo3d bench --io` on 1 and 2 ranks (sane numbers,
honest byte counts, no file left behind), the output fields of solve's summary and report,
the solution file itself (the same /u bitwise on 1-4 ranks, contiguous) and --compress
(bitwise, smaller, refused on a disk without room for the uncompressed field). Run: io_test.py HALO3D MPIEXEC"""
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

import h5py
import numpy as np

HALO3D, MPIEXEC = os.path.abspath(sys.argv[1]), sys.argv[2]
failures = []
work = tempfile.mkdtemp(prefix="halo3d-io-")


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def halo3d(ranks, *args, expect=0):
    cmd = [MPIEXEC, "-np", str(ranks), "--oversubscribe", HALO3D] + list(args)
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=work)
    check(p.returncode == expect, f"{' '.join(args)} on {ranks} rank(s): exit {p.returncode} (want {expect})"
          + ("" if p.returncode == expect else f"\n{p.stdout}\n{p.stderr}"))
    return p


# 1. bench --io: both rows, positive times, the payload counted (8 bytes a point), the
# ratio consistent with the two rates, the temporaries gone.
for ranks, grid in ((1, (24, 20, 16)), (2, (24, 20, 17))):
    iodir = os.path.join(work, f"io{ranks}")
    os.mkdir(iodir)
    rep = os.path.join(work, f"bench{ranks}.json")
    p = halo3d(ranks, "bench", "--io", "--grid", ",".join(map(str, grid)), "--io-reps", "3",
               "--io-dir", iodir, "--report", rep)
    points = grid[0] * grid[1] * grid[2]
    rows = {m.group(1): m.groups() for m in re.finditer(
        r"^(io_raw|io_hdf5)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)%", p.stdout, re.M)}
    check(set(rows) == {"io_raw", "io_hdf5"}, f"{ranks} rank(s): both rows printed")
    check(os.listdir(iodir) == [], f"{ranks} rank(s): no file left in --io-dir ({os.listdir(iodir)})")
    with open(rep) as f:
        j = json.load(f)
    check(j["command"] == "bench" and j["mode"] == "io" and j["ranks"] == ranks, "report: bench --io")
    check(j["io_reps"] == 3 and j["io_sync"] is True, "report: reps and fsync")
    res = {r["name"]: r for r in j["results"]}
    check(set(res) == {"io_raw", "io_hdf5"}, "report: both results")
    for name, r in res.items():
        check(r["bytes"] == 8 * points, f"{name}: {r['bytes']} bytes = 8 x {points} points")
        check(len(r["all_ms"]) == 3 and all(t > 0 for t in r["all_ms"]), f"{name}: 3 positive times")
        check(r["min_ms"] == min(r["all_ms"]) and r["median_ms"] == sorted(r["all_ms"])[1],
              f"{name}: median and minimum of the times")
        gbs = r["bytes"] / (r["median_ms"] * 1e-3) / 1e9
        check(abs(r["gbytes_per_s"] - gbs) <= 1e-9 * gbs, f"{name}: GB/s = bytes / median")
    check(abs(res["io_hdf5"]["fraction_of_raw"] - res["io_hdf5"]["gbytes_per_s"] / res["io_raw"]["gbytes_per_s"])
          < 1e-12 and res["io_raw"]["fraction_of_raw"] == 1.0, "fraction of raw = ratio of the rates")

p = halo3d(1, "bench", "--io", "--grid", "8,8,8", "--io-reps", "1", "--io-sync", "off", "--io-dir", work,
           "--report", "none")
check("fsync excluded" in p.stdout and "no fsync" in p.stdout, "--io-sync off says so")
check(not glob.glob(os.path.join(work, "halo3d-bench-io*")), "--io-sync off: no file left")
halo3d(1, "bench", "--io", "--grid", "8,8,8", "--io-dir", os.path.join(work, "missing"), expect=2)
halo3d(1, "bench", "--grid", "8,8,8", "--io-reps", "2", expect=2)
halo3d(1, "bench", "--io", "--grid", "8,8,8", "--reps", "2", expect=2)

# 2. solve: the output line and report fields count /u and /residual_history exactly; null
# without --output. The file's /u is the same bitwise on 1, 2 and 3 ranks, and its data
# starts on a file-system block.
grid = (23, 17, 11)
us = []
for ranks, procs in ((1, "0,0,0"), (2, "1,1,2"), (2, "2,1,1"), (3, "0,0,0"), (4, "2,2,1")):
    out, rep = f"s{ranks}_{procs}.h5", f"s{ranks}_{procs}.json"
    p = halo3d(ranks, "solve", "--grid", ",".join(map(str, grid)), "--procs", procs, "--rhs", "random",
               "--iters", "7", "--output", out, "--report", rep)
    with h5py.File(os.path.join(work, out)) as f:
        u = f["u"][...]
        hist = f["residual_history"][...]
        layout = f["u"].id.get_create_plist().get_layout()
        chunks = f["u"].chunks
    us.append(u)
    with open(os.path.join(work, rep)) as f:
        r = json.load(f)
        t, procs = r["timing"], r["procs"]
    want = 8 * (grid[0] * grid[1] * grid[2] + hist.size)
    check(t["output_bytes"] == want, f"{ranks} rank(s): output_bytes {t['output_bytes']} = {want}")
    check(0 < t["output_s"] <= t["io_s"] + 1e-9, f"{ranks} rank(s): output_s {t['output_s']} positive, within io_s")
    check(abs(t["output_gbytes_per_s"] - want / t["output_s"] / 1e9) < 1e-9, "output GB/s = bytes / s")
    m = re.search(r"^output: (\S+) bytes \(/u, /residual_history\) in (\S+) s = (\S+) GB/s$", p.stdout, re.M)
    check(m is not None and float(m.group(1)) == float(f"{want:.4g}"), "summary line: output bytes")
    check(layout == h5py.h5d.CONTIGUOUS and chunks is None, f"procs {procs}: /u contiguous")
check(all(np.array_equal(us[0], x) for x in us[1:]), "/u bitwise the same on 1-4 ranks, split in z, x or y")
us_c = {}

# 3. --compress: deflate in chunks, /u bitwise the uncompressed answer on 1-3 ranks (a grid
# whose chunks straddle the ranks' boxes), the file smaller for a smooth field.
grid = (70, 33, 9)
for ranks in (1, 2, 3):
    for level in (0, 4):
        halo3d(ranks, "solve", "--grid", ",".join(map(str, grid)), "--iters", "5", "--precond", "none",
               "--compress", str(level), "--output", f"c{ranks}_{level}.h5")
    with h5py.File(os.path.join(work, f"c{ranks}_0.h5")) as f0, \
            h5py.File(os.path.join(work, f"c{ranks}_4.h5")) as f4:
        check(f0["u"].compression is None and f4["u"].compression == "gzip" and f4["u"].compression_opts == 4,
              f"{ranks} rank(s): --compress 4 is gzip level 4, 0 is none")
        check(f4["u"].chunks == (9, 33, 64), f"{ranks} rank(s): chunks {f4['u'].chunks}")
        check(np.array_equal(f0["u"][...], f4["u"][...]) and np.array_equal(us_c.setdefault("u", f0["u"][...]),
                                                                           f4["u"][...]),
              f"{ranks} rank(s): compressed /u bitwise the uncompressed one, on every rank count")
    check(os.path.getsize(os.path.join(work, f"c{ranks}_4.h5")) < os.path.getsize(os.path.join(work, f"c{ranks}_0.h5")),
          f"{ranks} rank(s): the compressed file is smaller")
# No room for the uncompressed field: exit 5 before writing (a chunked write failing on a
# full disk hangs HDF5 1.10.8's collective chunk I/O), the previous file kept. Needs root.
full = os.path.join(work, "full")
os.mkdir(full)
if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", full], capture_output=True).returncode:
    print("skip full-disk --compress check: cannot mount a tmpfs here")
else:
    try:
        with open(os.path.join(full, "u.h5"), "w") as f:
            f.write("previous")
        p = subprocess.run([MPIEXEC, "-np", "2", "--oversubscribe", HALO3D, "solve", "--grid", "24,24,24",
                            "--compress", "1", "--output", "u.h5"], capture_output=True, text=True, timeout=120,
                           cwd=full)
        err = [l for l in p.stderr.splitlines() if l.startswith("halo3d: error:")]
        check(p.returncode == 5 and len(err) == 1 and "u.h5" in err[0] and "free" in err[0],
              f"--compress on a full disk: exit {p.returncode}, {err}")
        with open(os.path.join(full, "u.h5")) as f:
            check(f.read() == "previous" and os.listdir(full) == ["u.h5"],
                  f"--compress on a full disk: previous file kept, nothing left ({os.listdir(full)})")
    finally:
        subprocess.run(["umount", full])
halo3d(1, "solve", "--grid", "8,8,8", "--compress", "3", "--output", "none", expect=2)
halo3d(1, "solve", "--grid", "8,8,8", "--compress", "10", expect=2)

p = halo3d(1, "solve", "--grid", "8,8,8", "--output", "none", "--report", "none.json")
with open(os.path.join(work, "none.json")) as f:
    t = json.load(f)["timing"]
check(t["output_s"] is None and t["output_bytes"] is None and t["output_gbytes_per_s"] is None,
      "--output none: output fields null")
check(not re.search(r"^output: ", p.stdout, re.M), "--output none: no output line")

# The multigrid set-up time is one number: the HDF5 attribute every rank writes is the
# report's (it was each rank's own, so the file held some rank's and the report rank 0's).
halo3d(3, "solve", "--grid", "48,40,36", "--output", "setup.h5", "--report", "setup.json", "--quiet")
with open(os.path.join(work, "setup.json")) as f:
    setup_s = json.load(f)["timing"]["setup_s"]
with h5py.File(os.path.join(work, "setup.h5")) as f:
    check(float(f.attrs["mg_setup_s"]) == setup_s,
          f"mg_setup_s {f.attrs['mg_setup_s']} is the report's setup_s {setup_s}")

print(f"{len(failures)} failure(s)")
sys.exit(1 if failures else 0)
