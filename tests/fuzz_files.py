#!/usr/bin/env python3
"""Property test of the files halo3d reads (issue 28, "Also": fuzz inputs and checkpoints).
A valid checkpoint and a valid `--rhs file:` input are damaged at random, each damaged copy
is given to one `halo3d solve` (an MPI singleton, in a fresh folder), and every run must:
- end within the time limit (a hang is a failure);
- exit 0, or 2 (bad input, damaged), 4 (NaN/Inf read) or 5 (I/O), the documented codes (an
  input's odd but finite data may also end in 3, not converged), with exactly one
  `halo3d: error` line on stderr for 2, 4 and 5; never a crash, an abort or another code;
- for a checkpoint, exit 0 only with the uninterrupted run's answer, bitwise (a damaged
  checkpoint is never solved to a different answer and called a success);
- leave the damaged file as it was (inputs are never written).
halo3d writes its files in HDF5 1.10's format, whose metadata carries checksums, so damage
to a checkpoint's metadata is an error; the input here is written by h5py in its default
(older, unchecked) format, as users' files often are. Damage is done two ways: raw bytes of the file overwritten (header, metadata or data), and
HDF5-level changes through h5py (attributes removed, retyped or resized; datasets replaced by
other shapes, types, groups or links).

Run: fuzz_files.py HALO3D [COUNT [SEED]]   (default 40 of each kind, seed 1)"""
import hashlib
import os
import random
import shutil
import subprocess
import sys
import tempfile

import h5py
import numpy as np

HALO3D = os.path.abspath(sys.argv[1])
COUNT = int(sys.argv[2]) if len(sys.argv) > 2 else 40
SEED = int(sys.argv[3]) if len(sys.argv) > 3 else 1
TIMEOUT = 60
OK_CODES = {0, 2, 4, 5}
GRID = ["--grid", "12,10,8"]
failures = []


def run(folder, *args):
    try:
        return subprocess.run([HALO3D, "solve", *GRID, *args], capture_output=True, text=True,
                              errors="backslashreplace", timeout=TIMEOUT, cwd=folder)
    except subprocess.TimeoutExpired:
        return subprocess.CompletedProcess(args, -9, "", f"hung for {TIMEOUT} s")


def digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def check_run(what, p, folder, damaged, ok_codes=OK_CODES):
    # "halo3d: error: ..." (agreed by every rank) or "halo3d: error on rank N: ..." (one rank's).
    errors = [l for l in p.stderr.splitlines() if l.startswith("halo3d: error")]
    if p.returncode not in ok_codes:
        failures.append(f"{what}: exit {p.returncode}: {p.stderr[-600:]}")
    elif p.returncode not in (0, 3) and len(errors) != 1:
        failures.append(f"{what}: exit {p.returncode} with {len(errors)} error lines: {p.stderr[-600:]}")
    if digest(os.path.join(folder, damaged[0])) != damaged[1]:
        failures.append(f"{what}: the input {damaged[0]} was written")


def damage_bytes(rng, path):
    size = os.path.getsize(path)
    with open(path, "r+b") as f:
        for _ in range(rng.randint(1, 8)):
            # Mostly the first 4 KiB (superblock, object headers, attributes), some anywhere.
            at = rng.randrange(min(size, 4096)) if rng.random() < 0.7 else rng.randrange(size)
            f.seek(at)
            f.write(bytes(rng.randrange(256) for _ in range(rng.randint(1, 8))))


def damage_h5(rng, path):
    with h5py.File(path, "r+") as f:
        names = []
        f.visit(names.append)
        objs = [f] + [f[n] for n in names if isinstance(f.get(n, getlink=True), h5py.HardLink)]
        obj = rng.choice(objs)
        op = rng.randrange(6)
        if op <= 1 and len(obj.attrs):
            key = rng.choice(list(obj.attrs))
            if op == 0:
                del obj.attrs[key]
            else:
                obj.attrs[key] = rng.choice([np.bytes_("x"), np.zeros(0), np.array([1e300, -1.0]),
                                             np.int64(-7), np.array([[1, 2], [3, 4]]), "\u00e9t\u00e9"])
        elif op == 2 and names:
            n = rng.choice(names)
            del f[n]
            f[n] = rng.choice([np.zeros((2, 3)), np.arange(5, dtype=np.int32), np.float64(1.0),
                               np.array([b"abc"])])
        elif op == 3 and names:
            n = rng.choice(names)
            del f[n]
            f.create_group(n)
        elif op == 4 and names:
            n = rng.choice(names)
            del f[n]
            f[n] = h5py.SoftLink("/" + rng.choice(names + ["nowhere"]))
        else:
            ds = [n for n in names if isinstance(f[n], h5py.Dataset) and f[n].size > 0]
            if ds:
                d = f[rng.choice(ds)]
                flat = d[...].reshape(-1)
                flat[rng.randrange(flat.size)] = rng.choice([np.nan, np.inf, 0.0, -1e308, 1.0])
                d[...] = flat.reshape(d.shape)


def main():
    rng = random.Random(SEED)
    base = tempfile.mkdtemp(prefix="halo3d-fuzz-files-")
    # The references: a Jacobi run of exactly 20 iterations leaves a checkpoint at iteration
    # 20; the uninterrupted answer at 40 iterations is what a restart from it must give.
    common = ["--solver", "jacobi", "--rhs", "random", "--seed", "5"]
    p = run(base, *common, "--iters", "20", "--checkpoint", "ck.h5", "--checkpoint-every", "20",
            "--output", "none")
    ref = run(base, *common, "--iters", "40", "--output", "ref.h5")
    if p.returncode != 0 or ref.returncode != 0 or not os.path.exists(os.path.join(base, "ck.h5")):
        print(f"FAIL: setting up the references: {p.stderr[-400:]} {ref.stderr[-400:]}")
        return 1
    with h5py.File(os.path.join(base, "ref.h5")) as f:
        ref_u = f["u"][...]
    with h5py.File(os.path.join(base, "in.h5"), "w") as f:
        f["f"] = np.random.default_rng(3).standard_normal((8, 10, 12))

    for i in range(COUNT):
        for kind in ("checkpoint", "input"):
            folder = os.path.join(base, f"{kind}{i}")
            os.mkdir(folder)
            src = "ck.h5" if kind == "checkpoint" else "in.h5"
            path = os.path.join(folder, src)
            shutil.copy(os.path.join(base, src), path)
            how = "bytes" if rng.random() < 0.5 else "h5"
            try:
                (damage_bytes if how == "bytes" else damage_h5)(rng, path)
            except (OSError, KeyError, ValueError, TypeError):
                pass  # h5py refused that change: the copy is then as damaged as it got
            damaged = (src, digest(path))
            what = f"{kind} {i} ({how})"
            if kind == "checkpoint":
                p = run(folder, *common, "--iters", "40", "--restart", src, "--output", "u.h5")
                check_run(what, p, folder, damaged)
                if p.returncode == 0:
                    with h5py.File(os.path.join(folder, "u.h5")) as f:
                        if not np.array_equal(f["u"][...], ref_u):
                            failures.append(f"{what}: exit 0 with an answer other than the reference")
            else:
                p = run(folder, "--rhs", "file:in.h5:/f", "--max-iters", "50", "--output", "none")
                # 3 (not converged) is a legal outcome of odd but finite data.
                check_run(what, p, folder, damaged, OK_CODES | {3})
    for f in failures:
        print("FAIL", f)
    print(f"fuzz_files: {2 * COUNT} damaged files, {len(failures)} failure(s) (seed {SEED})")
    if not failures:
        shutil.rmtree(base, ignore_errors=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
