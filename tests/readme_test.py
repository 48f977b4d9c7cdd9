#!/usr/bin/env python3
"""The README's commands, run as written (issue 18): every command of every ```sh block of
README.md, in order, in one empty folder, each through bash; the test fails when one exits
non-zero or runs past its time limit.

Convention (README.md, "Running"): ```sh blocks hold commands that run as written on a
2-core CPU-only machine, as root after `export OMPI_ALLOW_RUN_AS_ROOT=1
OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1`; output is shown in plain ``` blocks, which are not run. A
plain block right after (blank lines only between) a ```sh block of one command is what that
command prints, trimmed: each of its lines must appear in the output, in that order, with
`...` standing for any text (times, paths), or the test fails.
Commands that need more (Slurm, a GPU or nvcc, root with apt-get, minutes of building) are
listed in SKIP below with the reason; an entry that matches no README command fails the test,
so the list follows the README. A line ending in a backslash continues on the next.

What the test changes, and only this: `build/halo3d` (any build*/halo3d) is the build's
halo3d; jobs/*.sh get it as HALO3D_BIN; `python3` is the Python running this test (its folder
first on PATH; /usr/bin/python3 in CI, with h5py and numpy). The folder has links to the
checkout's top-level entries (inputs/, jobs/, ...), so relative paths resolve as in a
checkout. From the environment ctest gives, the settings that would make a command pass that
does not as written are removed (OMPI_MCA_*, which allow oversubscription, and
OMP_NUM_THREADS).
Run: readme_test.py HALO3D SOURCE_DIR"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HALO3D, SRC = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
LIMIT_S = 120  # per command

# (start of the command, why it is not run here)
SKIP = [
    ("./jobs/quickstart.sh", "installs packages with apt-get as root and builds everything (minutes); "
     "CI runs `quickstart.sh test` itself"),
    ("cmake --preset default", "builds build/ (minutes); CI builds and tests its own preset"),
    ("cmake --preset cpu", "builds build-cpu/ (minutes); CI builds and tests its own preset"),
    ("cmake --preset gpu", "needs nvcc (the CUDA toolkit)"),
    ("cmake --preset sanitize", "builds and tests the sanitize preset (minutes); CI runs it after the tests"),
    ("ctest --test-dir build -L production", "the production tests (3.5 minutes, root for Slurm and "
     "network namespaces); CI runs them itself"),
    ("jobs/submit.sh", "needs a Slurm cluster (sbatch)"),
    ("scancel", "needs a Slurm cluster and a job"),
    ("sbatch", "needs a Slurm cluster"),
    ("python3 jobs/study.py results/", "a synopsis: the folder stands for one a study printed, [...] are optional"),
]

failures = []


def blocks(readme):
    """Fenced blocks as [language, first line number, lines, follows_block]: follows_block when
    only blank lines separate it from the block before."""
    out, cur, last_end, gap_blank = [], None, -1, True
    for no, line in enumerate(open(readme, encoding="utf-8"), 1):
        line = line.rstrip("\n")
        if cur is None and line.startswith("```"):
            cur = [line[3:].strip(), no, [], bool(out) and gap_blank and last_end >= 0]
        elif cur is not None and line.startswith("```"):
            out.append(cur)
            cur, last_end, gap_blank = None, no, True
        elif cur is not None:
            cur[2].append(line)
        elif line.strip():
            gap_blank = False
    return out


def commands(readme):
    """(line number, command, expected output lines or None) of every ```sh block's commands,
    continuation lines joined. A plain ``` block right after a ```sh block of one command is
    what that command prints, trimmed."""
    out, bl = [], blocks(readme)
    for n, (lang, first, lines, _) in enumerate(bl):
        if lang != "sh":
            continue
        cmds, pending, start = [], "", 0
        for no, line in enumerate(lines, first + 1):
            if not pending and not line.strip():
                continue
            if not pending:
                start = no
            if line.endswith("\\"):
                pending += line[:-1] + " "
                continue
            cmds.append([start, pending + line, None])
            pending = ""
        after = bl[n + 1] if n + 1 < len(bl) else None
        if len(cmds) == 1 and after and after[0] == "" and after[3]:
            cmds[0][2] = after[2]
        out += [tuple(c) for c in cmds]
    return out


def missing_output(expected, actual):
    """The first expected line that the output lacks (in order; `...` stands for any text)."""
    got = actual.splitlines()
    at = 0
    for want in expected:
        pattern = re.compile(".*".join(re.escape(part.strip()) for part in want.split("...")))
        while at < len(got) and not pattern.search(got[at]):
            at += 1
        if at == len(got):
            return want
        at += 1
    return None


def skip_reason(cmd):
    for prefix, why in SKIP:
        if cmd.startswith(prefix):
            return prefix, why
    return None, None


cmds = commands(os.path.join(SRC, "README.md"))
if len(cmds) < 10:
    failures.append(f"only {len(cmds)} commands found in README.md's sh blocks: is the parser broken?")
used = set()
work = tempfile.mkdtemp(prefix="halo3d-readme-")
for entry in os.listdir(SRC):
    if not entry.startswith((".", "build")) and entry != "results":
        os.symlink(os.path.join(SRC, entry), os.path.join(work, entry))

env = {k: v for k, v in os.environ.items() if not k.startswith("OMPI_MCA_") and k != "OMP_NUM_THREADS"}
env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", HALO3D_BIN=HALO3D)
env["PATH"] = os.path.dirname(os.path.abspath(sys.executable)) + os.pathsep + env.get("PATH", "")
python_ok = subprocess.run(["python3", "-c", "import h5py, numpy"], env=env, capture_output=True).returncode == 0
if not python_ok:
    failures.append(f"{sys.executable} lacks h5py or numpy, which the README's python3 lines need")

binary = re.compile(r"(?<![\w./-])build[\w-]*/halo3d\b")
t0 = time.time()
for line, cmd, expected in cmds:
    prefix, why = skip_reason(cmd)
    if prefix:
        used.add(prefix)
        print(f"skip README.md:{line}: {cmd[:90]}\n       ({why})")
        continue
    run = binary.sub(HALO3D, cmd)
    start = time.time()
    try:
        p = subprocess.run(["bash", "-c", run], cwd=work, env=env, capture_output=True, text=True,
                           timeout=LIMIT_S, stdin=subprocess.DEVNULL)
        rc, out = p.returncode, p.stdout + p.stderr
    except subprocess.TimeoutExpired as e:
        rc = f"timeout after {LIMIT_S} s"
        out = (e.stdout or b"").decode(errors="replace") + (e.stderr or b"").decode(errors="replace")
    took = time.time() - start
    lacks = missing_output(expected, out) if expected and rc == 0 else None
    ok = rc == 0 and lacks is None
    print(f"{'ok  ' if ok else 'FAIL'} README.md:{line} ({took:.1f} s{', output as shown' if expected else ''}): "
          f"{cmd}")
    if not ok:
        tail = "\n".join(out.strip().splitlines()[-15:])
        what = f"exit {rc}" if rc != 0 else f"the output lacks the README's line {lacks!r}"
        failures.append(f"README.md:{line}: {cmd}\n    {what}; last lines:\n{tail}")

for prefix, why in SKIP:
    if prefix not in used:
        failures.append(f"SKIP entry {prefix!r} matches no README command: remove it")
print(f"{len(cmds)} commands, {len(cmds) - sum(1 for _, c, _ in cmds if skip_reason(c)[0])} run, "
      f"in {time.time() - t0:.0f} s")

if failures:
    print("FAILED:\n  " + "\n  ".join(failures) + f"\n(the folder the commands ran in: {work})")
    sys.exit(1)
shutil.rmtree(work, ignore_errors=True)
print("every README command ran as written (or is listed with what it needs)")
