#!/usr/bin/env python3
"""Heat time series (--output-every N): the snapshots' count, steps and times; each snapshot
bitwise the final state of a run of that many steps; the same series on 1, 2 and 3 ranks;
the XDMF temporal collection well-formed and naming datasets that exist; a restart in the
middle of a series continues it (bitwise the uninterrupted series); a killed run leaves the
previous file; bad uses refused with one line and exit 2.
Run: series_test.py HALO3D MPIEXEC"""
import glob
import hashlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from report_schema import validate_report  # noqa: E402

HALO3D, MPIEXEC = os.path.abspath(sys.argv[1]), sys.argv[2]
failures = []
work = tempfile.mkdtemp(prefix="halo3d-series-")
GRID = "12,10,9"
HEAT = ["solve", "--problem", "heat", "--grid", GRID, "--quiet"]


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def halo3d(ranks, *args, expect=0):
    cmd = [MPIEXEC, "-np", str(ranks), "--oversubscribe", HALO3D] + list(args)
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=work)
    check(p.returncode == expect, f"np {ranks} {' '.join(args)}: exit {p.returncode} (want {expect})"
          + ("" if p.returncode == expect else f"\n{p.stdout}\n{p.stderr}"))
    return p


def path(name):
    return os.path.join(work, name)


def series(name):
    """{step: (data, t attribute)} of /series, the group's attributes, the root's."""
    with h5py.File(path(name)) as f:
        g = f["series"]
        snaps = {}
        for key in g:
            d = g[key]
            snaps[int(d.attrs["step"])] = (key, d[...], float(d.attrs["t"]))
        return snaps, {k: np.asarray(v) for k, v in g.attrs.items()}, dict(f.attrs), f["u"][...]


def final_u(name):
    with h5py.File(path(name)) as f:
        return f["u"][...], float(f.attrs["dt"])


def same_series(a, b, what):
    sa, ga, _, _ = series(a)
    sb, gb, _, _ = series(b)
    check(sorted(sa) == sorted(sb), f"{what}: the same snapshot steps {sorted(sa)} / {sorted(sb)}")
    check(all(s in sb and sa[s][0] == sb[s][0] and np.array_equal(sa[s][1], sb[s][1])
              and sa[s][2] == sb[s][2] for s in sa),
          f"{what}: every snapshot bitwise equal, same names and t")
    check(all(np.array_equal(ga[k], gb.get(k)) for k in ga) and set(ga) == set(gb),
          f"{what}: the same /series attributes")


def check_xdmf(h5name, snaps):
    """The sidecar is a temporal collection of one uniform grid per snapshot, in order, each
    with its time and an HDF DataItem naming an existing dataset of the right shape."""
    xdmf = path(os.path.splitext(h5name)[0] + ".xdmf")
    try:
        root = ET.parse(xdmf).getroot()
    except ET.ParseError as e:
        check(False, f"{xdmf} is well-formed XML: {e}")
        return
    coll = root.find("Domain/Grid")
    check(root.tag == "Xdmf" and coll is not None and coll.get("GridType") == "Collection"
          and coll.get("CollectionType") == "Temporal", f"{h5name}: XDMF temporal collection")
    if coll is None:
        return
    grids = coll.findall("Grid")
    steps = sorted(snaps)
    check(len(grids) == len(steps), f"{h5name}: {len(grids)} XDMF grids for {len(steps)} snapshots")
    ok = True
    with h5py.File(path(h5name)) as f:
        for g, s in zip(grids, steps):
            t = float(g.find("Time").get("Value"))
            item = g.find("Attribute/DataItem")
            file_part, _, dset = item.text.strip().partition(":")
            dims = tuple(int(x) for x in item.get("Dimensions").split())
            ok = ok and g.get("GridType") == "Uniform" and t == snaps[s][2]
            ok = ok and file_part == h5name and dset in f and f[dset].shape == dims
            ok = ok and dset == "/series/" + snaps[s][0]
            ok = ok and tuple(int(x) for x in g.find("Topology").get("Dimensions").split()) == dims
    check(ok, f"{h5name}: each XDMF grid has the snapshot's time and names its existing dataset")


# 1. Explicit Euler, 23 steps, every 5: snapshots after 0, 5, 10, 15, 20 and the last, 23.
for n in (1, 3):
    halo3d(n, *HEAT, "--steps", "23", "--output-every", "5", "--output", f"e{n}.h5",
           "--report", f"e{n}.json")
snaps, gattrs, rattrs, u = series("e1.h5")
_, dt = final_u("e1.h5")
want = [0, 5, 10, 15, 20, 23]
check(sorted(snaps) == want, f"snapshot steps {sorted(snaps)} == {want}")
check(all(snaps[s][0] == f"{s:06d}" for s in snaps), "datasets named by the step, 6 digits")
check(all(snaps[s][2] == s * dt for s in snaps), "each snapshot's t == step * dt exactly")
check(list(gattrs["steps"]) == want and list(gattrs["t"]) == [s * dt for s in want]
      and int(gattrs["output_every"]) == 5, "/series attributes output_every, steps, t")
check(int(rattrs["output_every"]) == 5 and int(rattrs["snapshots"]) == 6,
      "root attributes output_every 5, snapshots 6")
check(np.array_equal(u, snaps[23][1]), "the final /u is the last snapshot")
for n in (1, 3):
    with open(path(f"e{n}.json")) as f:
        r = json.load(f)
    check(r["config"]["output_every"] == 5 and r["result"]["snapshots"] == 6,
          f"np {n} report: output_every 5, snapshots 6")
    problems = validate_report(r)
    check(not problems, f"np {n} report matches the schema: {problems[:3]}")
same_series("e1.h5", "e3.h5", "1 rank vs 3 ranks")
check_xdmf("e1.h5", snaps)
check_xdmf("e3.h5", series("e3.h5")[0])

p = halo3d(1, *HEAT, "--steps", "23", "--output-every", "5", "--output", "dry.h5", "--dry-run")
check("time series: 6 snapshots of u in dry.h5:/series" in p.stdout
      and not os.path.exists(path("dry.h5")), "--dry-run names the series, writes nothing")

# Each snapshot is bitwise the final state of a run of exactly that many steps.
for s in want:
    halo3d(1, *HEAT, "--steps", str(s), "--output", f"ref{s}.h5")
    check(np.array_equal(final_u(f"ref{s}.h5")[0], snaps[s][1]),
          f"snapshot {s} == /u of a run with --steps {s}")

# Steps a multiple of N: the last snapshot is not repeated. A random initial state.
halo3d(2, *HEAT, "--steps", "10", "--output-every", "5", "--rhs", "random", "--output", "m.h5")
sm = series("m.h5")[0]
check(sorted(sm) == [0, 5, 10], f"--steps 10 --output-every 5: snapshots {sorted(sm)} == [0, 5, 10]")
halo3d(1, *HEAT, "--steps", "5", "--rhs", "random", "--output", "m5.h5")
check(np.array_equal(sm[5][1], final_u("m5.h5")[0]), "random initial state: snapshot 5 == --steps 5")
# N beyond the steps: the initial and the final state only.
halo3d(1, *HEAT, "--steps", "3", "--output-every", "50", "--output", "big.h5")
check(sorted(series("big.h5")[0]) == [0, 3], "--output-every 50 with --steps 3: snapshots [0, 3]")

# 2. Implicit schemes: Crank-Nicolson and backward Euler, on 2 ranks against 1.
for scheme in ("crank-nicolson", "implicit"):
    tag = scheme[:2]
    args = ["--time-scheme", scheme, "--dt", "0.01", "--rhs", "random"]
    halo3d(2, *HEAT, *args, "--steps", "7", "--output-every", "3", "--output", f"{tag}.h5")
    halo3d(1, *HEAT, *args, "--steps", "6", "--output", f"{tag}6.h5")
    si = series(f"{tag}.h5")[0]
    check(sorted(si) == [0, 3, 6, 7], f"{scheme}: snapshots {sorted(si)} == [0, 3, 6, 7]")
    check(np.array_equal(si[6][1], final_u(f"{tag}6.h5")[0]),
          f"{scheme}: snapshot 6 (2 ranks) == /u of --steps 6 (1 rank)")
    check(all(si[s][2] == s * 0.01 for s in si), f"{scheme}: t == step * dt")
    check_xdmf(f"{tag}.h5", si)

# Without --output-every the sidecar is the plain one for /u, and there is no /series.
with h5py.File(path("ref23.h5")) as f:
    check("series" not in f and "output_every" not in f.attrs, "no --output-every: no /series")
grid = ET.parse(path("ref23.xdmf")).getroot().find("Domain/Grid")
check(grid.get("GridType") == "Uniform" and "ref23.h5:/u" in grid.find("Attribute/DataItem").text,
      "no --output-every: the XDMF sidecar shows /u")

# 3. Restart in the middle: checkpoints at step 7 (between snapshots) and at 10 (on one),
# continued on another rank count: the series is the uninterrupted run's.
for at, n_first, n in ((7, 3, 1), (10, 1, 2)):
    halo3d(n_first, *HEAT, "--steps", "12", "--output-every", "5", "--output", f"first{at}.h5",
           "--checkpoint", f"c{at}.h5", "--checkpoint-every", str(at))
    with h5py.File(path(f"c{at}.h5")) as f:
        held = sorted(int(f["series"][k].attrs["step"]) for k in f["series"])
    check(held == [s for s in want if s <= at], f"checkpoint at {at} holds snapshots {held}")
    halo3d(n, *HEAT, "--steps", "23", "--output-every", "5", "--output", f"r{at}.h5",
           "--restart", f"c{at}.h5", "--report", f"r{at}.json")
    same_series("e1.h5", f"r{at}.h5",
                f"checkpoint at step {at} on {n_first} rank(s), restart on {n} vs uninterrupted")
    check(np.array_equal(final_u(f"r{at}.h5")[0], u), f"restart at {at}: the same final /u")
    with open(path(f"r{at}.json")) as f:
        check(json.load(f)["result"]["snapshots"] == 6, f"restart at {at}: report snapshots 6")
    check_xdmf(f"r{at}.h5", series(f"r{at}.h5")[0])

# A restart whose series cannot continue: another spacing, or a checkpoint without a series
# taken after step 0 (the snapshots before it are lost). One line, exit 2, nothing written.
p = halo3d(1, *HEAT, "--steps", "23", "--output-every", "4", "--output", "bad1.h5",
           "--restart", "c7.h5", expect=2)
check("every 5 steps but --output-every is 4" in p.stderr, "restart with another spacing refused")
halo3d(1, *HEAT, "--steps", "12", "--output", "plain.h5", "--checkpoint", "cplain.h5",
       "--checkpoint-every", "7")
p = halo3d(1, *HEAT, "--steps", "23", "--output-every", "5", "--output", "bad2.h5",
           "--restart", "cplain.h5", expect=2)
check("holds no time series" in p.stderr, "restart from a checkpoint without a series refused")
# Without --output-every a checkpoint's series is simply not continued.
halo3d(1, *HEAT, "--steps", "23", "--output", "noseries.h5", "--restart", "c7.h5")
check(np.array_equal(final_u("noseries.h5")[0], u), "restart without --output-every: same /u")
check(not os.path.exists(path("bad1.h5")) and not os.path.exists(path("bad2.h5"))
      and not glob.glob(path("bad*.partial.*")), "refused restarts leave no file")

# 4. Bad values: one line, exit 2.
for args, text in ((["--problem", "heat", "--output-every", "0"], "--output-every"),
                   (["--problem", "heat", "--output-every", "-3"], "--output-every"),
                   (["--problem", "heat", "--output-every", "x"], "--output-every"),
                   (["--output-every", "5"], "applies to --problem heat only"),
                   (["--problem", "heat", "--output-every", "5", "--output", "none"], "'none'")):
    p = subprocess.run([HALO3D, "solve", "--grid", "8,8,8"] + args, capture_output=True, text=True,
                       timeout=60, cwd=work)
    lines = p.stderr.strip().splitlines()
    check(p.returncode == 2 and len(lines) == 1 and lines[0].startswith("halo3d: error: ")
          and text in lines[0], f"{' '.join(args)}: exit 2, one line: {p.stderr.strip()}")

# ParaView's and VisIt's view, where VTK's Python module is installed (not needed
# otherwise): VTK's XDMF reader sees one time step per snapshot, each holding its data.
try:
    import vtk
    from vtk.util.numpy_support import vtk_to_numpy
except ImportError:
    vtk = None
    print("skip VTK's XDMF reader: no vtk module")
if vtk is not None:
    reader = vtk.vtkXdmfReader()
    reader.SetFileName(path("e3.xdmf"))
    reader.UpdateInformation()
    key = vtk.vtkStreamingDemandDrivenPipeline.TIME_STEPS()
    info = reader.GetOutputInformation(0)
    times = [info.Get(key, i) for i in range(info.Length(key))] if info.Has(key) else []
    check(times == [snaps[s][2] for s in want], f"VTK's XDMF reader: time steps {times}")
    seen = []
    for t, s in zip(times, want):
        reader.UpdateTimeStep(t)
        img = reader.GetOutputDataObject(0)
        img = img if img.IsA("vtkImageData") else img.GetBlock(0)
        seen.append(img.GetDimensions() == (12, 10, 9) and np.array_equal(
            vtk_to_numpy(img.GetPointData().GetArray("u")), snaps[s][1].ravel()))
    check(seen and all(seen), "VTK's XDMF reader: each time step is its snapshot, bitwise")

# 5. A killed run leaves the previous complete file, not a half series.
prev = path("crash.h5")
with open(path("e1.h5"), "rb") as src, open(prev, "wb") as dst:
    dst.write(src.read())
digest = hashlib.sha256(open(prev, "rb").read()).hexdigest()
LONG = ["solve", "--problem", "heat", "--grid", "24,24,24", "--steps", "100000000", "--quiet",
        "--output-every", "20", "--output", "crash.h5"]
# SIGKILL: nothing can be cleaned up, the temporary stays; SIGTERM (halo3d's stop signal):
# the run stops with exit 76 (no --checkpoint) and removes its temporary.
for sig, code in ((signal.SIGKILL, -signal.SIGKILL), (signal.SIGTERM, 76)):
    proc = subprocess.Popen([HALO3D] + LONG, cwd=work, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    deadline = time.time() + 120
    while time.time() < deadline and not glob.glob(prev + ".partial.*"):
        time.sleep(0.1)
    time.sleep(2)  # a few snapshots into the temporary
    proc.send_signal(sig)
    rc = proc.wait(timeout=120)
    name = signal.Signals(sig).name
    check(rc == code, f"{name} mid-series: exit {rc} (want {code})")
    check(hashlib.sha256(open(prev, "rb").read()).hexdigest() == digest,
          f"{name} mid-series: the previous file is intact")
    with h5py.File(prev) as f:
        check(sorted(int(f["series"][k].attrs["step"]) for k in f["series"]) == want,
              f"{name} mid-series: the previous file still opens with its series")
    left = glob.glob(prev + ".partial.*")
    if sig == signal.SIGTERM:
        check(not left, f"SIGTERM: no temporary left ({left})")
    for t in left:
        os.remove(t)

# SIGTERM with --checkpoint mid-series (exit 75), then a restart: the series is bitwise the
# uninterrupted run's, wherever the signal fell. The run must outlast the 1.5 s wait below
# by a margin on any machine: 16^3 took 1.6 s in all on a 2-vCPU VM (2026-12-06), so the
# signal found it finished; 24^3 takes about 3.5x as long.
SIG = ["solve", "--problem", "heat", "--grid", "24,24,24", "--steps", "400000", "--dt", "1e-9",
       "--output-every", "40000", "--quiet"]
proc = subprocess.Popen([HALO3D] + SIG + ["--output", "sig.h5", "--checkpoint", "sig.ckpt.h5"],
                        cwd=work, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
deadline = time.time() + 120
while time.time() < deadline and not glob.glob(path("sig.h5.partial.*")):
    time.sleep(0.1)
time.sleep(1.5)
proc.send_signal(signal.SIGTERM)
rc = proc.wait(timeout=300)
check(rc == 75, f"SIGTERM with --checkpoint mid-series: exit {rc} (want 75; 0: ended before it)")
check(not os.path.exists(path("sig.h5")), "SIGTERM with --checkpoint: no output file yet")
with h5py.File(path("sig.ckpt.h5")) as f:
    stopped = int(f.attrs["iteration"][0])
    held = sorted(int(f["series"][k].attrs["step"]) for k in f["series"])
check(held == list(range(0, stopped + 1, 40000)),
      f"the checkpoint at step {stopped} holds the snapshots {held}")
halo3d(2, *SIG, "--output", "sig.h5", "--restart", "sig.ckpt.h5")
halo3d(1, *SIG, "--output", "sigref.h5")
same_series("sigref.h5", "sig.h5", f"stopped at step {stopped} and restarted on 2 ranks vs uninterrupted")

if failures:
    print("\nFAILED:\n" + "\n".join(failures))
    sys.exit(1)
print("all time-series checks passed")
