#!/usr/bin/env python3
"""Property test of `halo3d solve` as a process: random and mutated option lists and TOML
config files, each run once (one rank, as an MPI singleton) in a fresh empty folder. Every
run must end within the time limit, with exit 0 (or 3: not converged in the few iterations
allowed), or exit 2 with exactly one `halo3d: error:` line on stderr and no file left
behind (also 5 for the unwritable paths and 6 for `--backend cuda` or a GPU transport on a
CPU build, which the generator asks for: their documented codes, with the same one-line
rule); never a crash, a sanitizer report, a hang or another exit code. Values are kept to tiny grids and few
iterations so that the runs that parse end at once. The bulk of the parser fuzzing is
in process (tests/test_cli_fuzz.cpp); this checks the whole program end to end.

Run: fuzz_cli.py HALO3D [COUNT [SEED]]   (default 120 runs, seed 1; e.g. 5000 by hand)"""
import os
import random
import re
import subprocess
import sys
import tempfile
import time

HALO3D = os.path.abspath(sys.argv[1])
COUNT = int(sys.argv[2]) if len(sys.argv) > 2 else 120
SEED = int(sys.argv[3]) if len(sys.argv) > 3 else 1
TIMEOUT = 60

NUMBERS = ["0", "1", "2", "3", "5", "-1", "+2", "1e-8", "1e-3", "0.5", "nan", "inf", "-inf", "1e300",
           "abc", "", "99999999999999999999", "2147483648", "-9223372036854775809", "1,2", "0x4"]
ITERS = ["1", "2", "5", "20", "0", "-3", "1e3", "x", "99999999999999999999"]  # small, or refused
TRIPLES = ["4,4,4", "3,5,2", "1,1,1", "2,2,2", "0,4,4", "4,4", "4,4,4,4", "-1,4,4", "a,b,c", "4,,4",
           "1,1,1", "1,1,2", "9,4,4", "99999999999999999999,1,1", "2147483648,1,1"]
MODES = ["1,1,1", "2,1,1", "1,1,5", "0,1,1", "1,1", "x", "9,9,9"]
WORDS = ["poisson", "heat", "modes", "random", "cg", "jacobi", "mg", "none", "chebyshev", "auto",
         "double", "mixed",
         "host", "cuda", "mpi", "ipc", "nccl", "on", "off", "explicit", "implicit", "crank-nicolson",
         "", "POISSON", "\u00e9", "x y"]
PATHS = ["out.h5", "none", "", ".", "sub/x.h5", "/nonexistent/dir/x.h5", "ck.h5", "rep.json", "a b.h5",
         "-", "x\n.h5"]
OPTIONS = {
    "--grid": TRIPLES, "--procs": ["0,0,0", "1,1,1", "2,1,1", "0,0", "-1,0,0", "x"], "--mode": MODES,
    "--problem": WORDS, "--rhs": WORDS, "--seed": NUMBERS, "--solver": WORDS, "--precond": WORDS,
    "--mg-levels": ["0", "1", "2", "9", "-1", "x"], "--mg-gather": ["0", "64", "32768", "-1", "x"], "--mg-smooth": ["1", "2", "0", "33", "x"],
    "--mg-smoother": WORDS, "--mg-interp": WORDS, "--precision": WORDS, "--tol": NUMBERS, "--max-iters": ITERS, "--iters": ITERS, "--steps": ITERS,
    "--alpha": NUMBERS, "--time-scheme": WORDS, "--dt": NUMBERS, "--backend": WORDS,
    "--halo": WORDS, "--overlap": WORDS, "--peer-access": WORDS, "--monitor": ITERS, "--quiet": None,
    "--progress": NUMBERS, "--verify": WORDS,
    "--output": PATHS, "--compress": ["0", "1", "9", "10", "-1", "x"], "--report": PATHS,
    "--checkpoint": PATHS, "--checkpoint-every": ITERS, "--restart": PATHS, "--output-every": ITERS,
    "--bogus": NUMBERS,
}
# Iteration counts are bounded by the generator: these always come with a small value.
BOUNDED = {"--max-iters": "5", "--steps": "3"}
# Sizes and counts are never mutated: a mutation could turn a refused value into a huge one.
UNMUTATED = ("--grid", "--max-iters", "--steps", "--iters", "--monitor", "--checkpoint-every")


def mutate(rng, s):
    for _ in range(rng.randint(1, 3)):
        at = rng.randrange(len(s)) if s else 0
        op = rng.randrange(4)
        if op == 0 and s:
            s = s[:at] + rng.choice(",=-\"'[ #.0x\u00ff") + s[at + 1:]
        elif op == 1:
            s = s[:at] + rng.choice(",=-\"'[ #.9") + s[at:]
        elif op == 2 and s:
            s = s[:at] + s[at + 1:]
        else:
            s = s[:at]
    return s


def value(rng, opt):
    v = rng.choice(OPTIONS[opt])
    return mutate(rng, v) if rng.random() < 0.1 and opt not in UNMUTATED else v


def toml(rng):
    lines = []
    for _ in range(rng.randrange(6)):
        opt = rng.choice([o for o in OPTIONS if o != "--quiet"])
        v = value(rng, opt)
        form = rng.randrange(5)
        if form == 0 or not v.lstrip("+-").replace(".", "", 1).replace("e-", "", 1).isdigit():
            v = '"' + v.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'
        elif form == 1:
            v = "[" + v + "]"
        line = f"{opt[2:]} = {v}"
        if rng.random() < 0.1:
            line = mutate(rng, line)
        lines.append(line)
    if rng.random() < 0.1:
        lines.insert(0, rng.choice(["[solve]", "[a.b]", "= 1", "quiet = true", "quiet = 3", "mode = [\"1,1,1\", \"2,1,1\"]"]))
    if rng.random() < 0.15:
        # TOML's own forms and faults (issue 28 class 16): quoting, escapes, duplicates,
        # unclosed strings and brackets, number forms, inline tables, dates.
        lines.insert(rng.randrange(len(lines) + 1), rng.choice([
            'output = "run#1.h5" # c', 'output = "a\\u0062.h5"', "output = 'x\\y.h5'", 'output = """m.h5"""',
            'output = "abc', "grid = [4, 4", "seed = 0x10", "seed = 1_000", "seed = 010", "tol = 1e-400",
            "seed = {a = 1}", "seed = 1979-05-27", "monitor = 1\nmonitor = 2", "solver = cg", "tol = nan",
            "grid = [[4], 4, 4]", "\"quoted key\" = 1", "seed = 1.5"]))
    return "\n".join(lines) + "\n"


def random_case(rng):
    # Tiny and short by default: later options of the same name do not override (CLI11
    # refuses repeats of single-value options), so the bounds go in only when not generated.
    args, config = ["solve"], None
    chosen = [rng.choice(list(OPTIONS)) for _ in range(rng.randrange(7))]
    for opt in chosen:
        if opt == "--quiet":
            args.append(opt)
        elif rng.random() < 0.2:
            args.append(f"{opt}={value(rng, opt)}")
        else:
            args += [opt, value(rng, opt)]
    if rng.random() < 0.3:
        config = toml(rng)
        args += ["--config", "fuzz.toml"]
    if "--grid" not in chosen:
        args += ["--grid", "4,4,4"]
    # --steps is refused for Poisson (an option that does not apply): bound heat runs only.
    heat = any("heat" in a for a in args)
    for opt, v in BOUNDED.items():
        if opt not in chosen and "--iters" not in chosen and (opt != "--steps" or heat):
            args += [opt, v]
    if rng.random() < 0.1 and len(args) > 1:
        i = rng.randrange(1, len(args))
        if not any(args[i].startswith(o) or args[i - 1] == o for o in UNMUTATED):
            args[i] = mutate(rng, args[i])
    return args, config


def bounded(args, config):
    """A run that parses must be short: refuse cases whose config could ask for long runs."""
    text = config or ""
    for key in ("max-iters", "steps", "iters", "grid"):
        if key in text:
            return False
    return True


def main():
    rng = random.Random(SEED)
    failures, codes, t0 = [], {}, time.time()
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    done = 0
    while done < COUNT and len(failures) < 10:
        args, config = random_case(rng)
        if not bounded(args, config):
            continue
        done += 1
        with tempfile.TemporaryDirectory() as d:
            if config is not None:
                with open(os.path.join(d, "fuzz.toml"), "w") as f:
                    f.write(config)
            before = set(os.listdir(d))
            shown = "halo3d " + " ".join(repr(a) for a in args) + (f"\n  fuzz.toml:\n{config}" if config else "")
            try:
                p = subprocess.run([HALO3D] + args, capture_output=True, text=True, errors="backslashreplace",
                                   timeout=TIMEOUT, cwd=d, env=env)
            except subprocess.TimeoutExpired:
                failures.append(f"hung (> {TIMEOUT} s): {shown}")
                continue
            left = sorted(set(os.listdir(d)) - before)
            codes[p.returncode] = codes.get(p.returncode, 0) + 1
            err_lines = [l for l in p.stderr.splitlines() if l.startswith("halo3d")]
            if p.returncode in (2, 5, 6):
                rc = p.returncode
                if len(err_lines) != 1 or not err_lines[0].startswith("halo3d: error: "):
                    failures.append(f"exit {rc} without exactly one 'halo3d: error:' line: {p.stderr!r}: {shown}")
                elif "--config fuzz.toml" in err_lines[0] and not re.search(r"--config fuzz\.toml:\d+:\d+: ",
                                                                           err_lines[0]):
                    failures.append(f"a config error without its line and column: {err_lines[0]!r}: {shown}")
                if left:
                    failures.append(f"exit {rc} left files {left}: {shown}")
            elif p.returncode not in (0, 3):
                failures.append(f"exit {p.returncode}: {p.stderr[-800:]!r}: {shown}")
    dt = time.time() - t0
    print(f"fuzz_cli: {done} runs (seed {SEED}) in {dt:.1f} s: exit codes {dict(sorted(codes.items()))}")
    for f in failures:
        print("FAIL:", f, file=sys.stderr)
    if not failures and (codes.get(2, 0) < done // 5 or codes.get(0, 0) + codes.get(3, 0) < done // 20):
        print("FAIL: the generator reaches too few parsing or failing runs", file=sys.stderr)
        return 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
