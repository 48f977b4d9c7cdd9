#!/usr/bin/env python3
"""--config is read as TOML 1.0 (issue 28 class 16, issue 27 item 8): quoting, comments,
escapes and duplicate keys mean what TOML says; errors name file:line:column on one line
with exit 2; every key of inputs/*.toml arrives as written. Run: config_test.py HALO3D MPIEXEC SRC"""
import os
import subprocess
import sys
import tempfile
import tomllib

HALO3D, MPIEXEC, SRC = os.path.abspath(sys.argv[1]), sys.argv[2], sys.argv[3]
failures = []


def run(args, ranks, cwd):
    cmd = [MPIEXEC, "-np", str(ranks), "--oversubscribe", HALO3D] + args
    p = subprocess.run(cmd, capture_output=True, text=True, errors="backslashreplace", timeout=120, cwd=cwd)
    return p.returncode, p.stdout, p.stderr


def with_config(text, args, ranks):
    """Runs `halo3d solve --config c.toml ARGS` in a fresh folder; returns (rc, out, err, files)."""
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, "c.toml"), "w", encoding="utf-8") as f:
            f.write(text)
        rc, out, err = run(["solve", "--config", "c.toml"] + args, ranks, d)
        return rc, out, err, sorted(set(os.listdir(d)) - {"c.toml"})


def refused(name, text, needle, ranks=2):
    rc, _, err, left = with_config(text, ["--grid", "8,8,8", "--quiet"], ranks)
    lines = [l for l in err.splitlines() if l.startswith("halo3d")]
    problems = []
    if rc != 2:
        problems.append(f"exit {rc}, expected 2")
    if len(lines) != 1 or not lines[0].startswith("halo3d: error: --config c.toml:"):
        problems.append(f"stderr is not one 'halo3d: error: --config c.toml:' line: {err!r}")
    elif needle not in lines[0]:
        problems.append(f"message lacks {needle!r}: {lines[0]!r}")
    if left:
        problems.append(f"left files behind: {left}")
    if problems:
        failures.append(f"{name} ({ranks} ranks): " + "; ".join(problems))
    else:
        print(f"ok   {name}: {lines[0]}")


def writes(name, text, expected_file, ranks=2):
    """The solution file (and its .xdmf sidecar) under the name the string means."""
    rc, _, err, left = with_config(text, ["--grid", "8,8,8", "--tol", "1e-6", "--quiet", "--report", "none"], ranks)
    expected = sorted([expected_file, expected_file[:-3] + ".xdmf"])
    if rc != 0 or left != expected:
        failures.append(f"{name} ({ranks} ranks): exit {rc}, files {left}, expected {expected}: {err[-300:]!r}")
    else:
        print(f"ok   {name}: wrote {expected_file!r}")


# Errors with the place: line and column of the fault, the key's line for bad values.
for ranks in (1, 2):
    refused("unclosed bracket", "grid = [8, 8\nmax-iters = 3\n", "c.toml:2:1:", ranks)
    refused("unterminated string", 'tol = 1e-6\noutput = "abc\n', "c.toml:2:", ranks)
refused("duplicate key", 'mode = ["1,1,1"]\nmonitor = 1\nmode = ["2,3,1"]\n', "c.toml:3:")
refused("unknown key names its line", "tol = 1e-6\n\nbogus_key = 3\n", "c.toml:3:1: unknown key 'bogus_key'")
refused("typo names the nearest key", "tl = 1e-6\n", "did you mean --tol?")
refused("a section is not an option", "[solve]\ngrid = [8, 8, 8]\n", "c.toml:1:2: unknown key 'solve'")
refused("bad value names its key's line", "monitor = 1\nsolver = \"gmres\"\n", "c.toml:2:1: key 'solver'")
refused("underflowing tol as written", "tol = 1e-400\n", "would underflow")
refused("leading zero is TOML's error", "grid = [010, 8, 8]\n", "c.toml:1:")
refused("a date is no option value", "seed = 1979-05-27\n", "c.toml:1:")
refused("nested array", "grid = [[8], 8, 8]\n", "c.toml:1:")
refused("unprintable bytes escaped", 'output = "a\x01b"\n', "c.toml:1:")

# Values: '#' inside quotes is not a comment, escapes are decoded, TOML's number forms.
for ranks in (1, 2):
    writes("hash inside a quoted string", 'output = "run#1.h5" # a comment\n', "run#1.h5", ranks)
writes("escapes decoded", 'output = "a\\u0062c\\t.h5"\n', "abc\t.h5")
writes("literal string", "output = 'x\\y.h5'\n", "x\\y.h5")
rc, out, err, _ = with_config("grid = [0x8, 1_0, 0o14]\ntol = 1_0e-7\n", ["--dry-run"], 1)
if rc != 0 or "grid              8,10,12" not in out or "tol               10e-7" not in out:
    failures.append(f"hex/octal/underscore numbers: exit {rc}: {out[:900]!r} {err[-300:]!r}")
else:
    print("ok   TOML integers 0x8, 1_0, 0o14 are 8,10,12; 1_0e-7 is 10e-7")

# Every key of the shipped inputs arrives with the file's value, source "config file".
for name in sorted(os.listdir(os.path.join(SRC, "inputs"))):
    if not name.endswith(".toml"):
        continue
    path = os.path.join(SRC, "inputs", name)
    with open(path, "rb") as f:
        keys = tomllib.load(f)
    with tempfile.TemporaryDirectory() as d:
        rc, out, err = run(["solve", "--config", path, "--dry-run"], 1, d)
    shown = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) >= 3 and line.startswith("  ") and " ".join(parts[-2:]) == "config file":
            shown[parts[0]] = " ".join(parts[1:-2])
    bad = []
    for k, v in keys.items():
        sep = " " if k == "mode" else ","
        want = sep.join(str(x) for x in v) if isinstance(v, list) else str(v)
        got = shown.get(k)
        same = got == want or (got is not None and isinstance(v, float) and float(got) == v)
        if not same:
            bad.append(f"{k}: shown {got!r}, file {want!r}")
    if rc != 0 or bad:
        failures.append(f"inputs/{name}: exit {rc}; " + "; ".join(bad) + f" {err[-300:]!r}")
    else:
        print(f"ok   inputs/{name}: {len(keys)} keys as written")

if failures:
    print("\n".join("FAIL " + f for f in failures))
    sys.exit(1)
print("config_test: all passed")
