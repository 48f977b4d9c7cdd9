#!/usr/bin/env python3
"""HDF5 checks for the production tests (h5py + numpy).

  h5tool.py same A.h5 B.h5 [--close RTOL]   /u (and iterations) equal: bitwise, or with --close
                                            to RTOL * max|u| (says whether it was bitwise anyway)
  h5tool.py checkpoint FILE.h5              a complete, readable halo3d checkpoint: prints its iteration
  h5tool.py attr FILE.h5 NAME               prints an attribute
  h5tool.py set-attr FILE.h5 NAME VALUE     rewrites a string attribute (to forge a mismatch)
Exit code 0 when the check holds, 1 when it does not, 2 on bad use.
"""
import sys

import h5py
import numpy as np


def same(a, b, close=None):
    with h5py.File(a, "r") as fa, h5py.File(b, "r") as fb:
        ua, ub = fa["u"][...], fb["u"][...]
        if ua.shape != ub.shape:
            print(f"shapes differ: {ua.shape} vs {ub.shape}")
            return 1
        ia, ib = fa.attrs.get("iterations"), fb.attrs.get("iterations")
        ha = fa["residual_history"][...] if "residual_history" in fa else None
        hb = fb["residual_history"][...] if "residual_history" in fb else None
    bitwise = ua.tobytes() == ub.tobytes()
    diff = float(np.max(np.abs(ua - ub))) if ua.size else 0.0
    scale = float(np.max(np.abs(ua))) if ua.size else 0.0
    hist = ha is not None and hb is not None and ha.shape == hb.shape and ha.tobytes() == hb.tobytes()
    print(f"/u {'bitwise identical' if bitwise else 'differs'}: max |diff| {diff:.3e} (max |u| {scale:.3e}); "
          f"iterations {ia} vs {ib}; residual history {'identical' if hist else 'differs'}")
    if ia is not None and ib is not None and np.ravel(ia).tolist() != np.ravel(ib).tolist():
        print("iteration counts differ")
        return 1
    if close is None:
        return 0 if bitwise else 1
    return 0 if diff <= close * max(scale, np.finfo(float).tiny) else 1


def checkpoint(path):
    with h5py.File(path, "r") as f:
        fmt = f.attrs.get("format")
        fmt = fmt.decode() if isinstance(fmt, bytes) else fmt
        if fmt not in ("halo3d-checkpoint-1", "halo3d-checkpoint-2", "halo3d-checkpoint-3"):
            print(f"{path}: format {fmt!r}, not a halo3d checkpoint")
            return 1
        it = int(f.attrs["iteration"][0])
        grid = [int(v) for v in f.attrs["grid"]]
        for name, ds in f.items():
            data = ds[...]  # reads every byte: a torn file fails here
            if data.ndim == 3 and (list(data.shape[::-1]) != grid or not np.all(np.isfinite(data))):
                print(f"{path}: /{name} has shape {data.shape} or non-finite values")
                return 1
    print(it)
    return 0


def attr(path, name):
    with h5py.File(path, "r") as f:
        v = f.attrs[name]
        print(v.decode() if isinstance(v, bytes) else v)
    return 0


def set_attr(path, name, value):
    with h5py.File(path, "r+") as f:
        del f.attrs[name]
        f.attrs.create(name, np.bytes_(value))  # fixed-length string, as halo3d writes them
    return 0


def main(argv):
    if len(argv) >= 3 and argv[0] == "same":
        close = float(argv[argv.index("--close") + 1]) if "--close" in argv else None
        return same(argv[1], argv[2], close)
    if len(argv) == 2 and argv[0] == "checkpoint":
        return checkpoint(argv[1])
    if len(argv) == 3 and argv[0] == "attr":
        return attr(argv[1], argv[2])
    if len(argv) == 4 and argv[0] == "set-attr":
        return set_attr(argv[1], argv[2], argv[3])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
