#!/usr/bin/env python3
"""The documentation's commands, run as written (issue 18, issue 27): every command of every
```sh block of the pages given (default README.md; the user-guide pages in docs/ are the test
`readme_docs`), in order, in one empty folder, each through bash; the test fails when one
exits non-zero or runs past its time limit.

Convention (README.md, "A first solve"): ```sh blocks hold commands that run as written on
a 2-core CPU-only machine, as root after `export OMPI_ALLOW_RUN_AS_ROOT=1
OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1`; output is shown in plain ``` blocks, which are not run. A
plain block right after (blank lines only between) a ```sh block of one command is what that
command prints, trimmed: each of its lines must appear in the output, in that order, with
`...` standing for any text (times, paths), or the test fails.
Commands that need more (Slurm, a GPU or nvcc, root with apt-get, minutes of building) are
listed in SKIP below with the reason; an entry that matches no command of any page (README.md
and PAGES below) fails the test, so the list follows the documentation. A line ending in a
backslash continues on the next.

What the test changes, and only this: `build/halo3d` (any build*/halo3d) is the build's
halo3d; jobs/*.sh get it as HALO3D_BIN. The folder has links to the checkout's top-level
entries (inputs/, jobs/, ...), so relative paths resolve as in a checkout. From the
environment ctest gives, the settings that would make a command pass that does not as
written are removed (OMPI_MCA_*, which allow oversubscription, OMP_NUM_THREADS, and
HALO3D_PYTHON). Python lines go through jobs/python, which finds a Python with h5py and numpy
(issue 27, item 5): where /usr/bin/python3 has them, a python3 without them (as a pyenv one
can be) is put first on PATH, so that the commands are checked to work there too.
Run: readme_test.py HALO3D SOURCE_DIR [PAGE...]"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HALO3D, SRC = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
RUN_PAGES = sys.argv[3:] or ["README.md"]
# Every page whose sh blocks are run (by this test or by `readme_docs`).
PAGES = ["README.md", "docs/OPTIONS.md", "docs/OUTPUTS.md", "docs/CLUSTERS.md", "docs/TESTING.md"]
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
    ("jobs/python jobs/study.py results/", "a synopsis: the folder stands for one a study printed, [...] are optional"),
    ("nvidia-cuda-mps-control -d", "needs a GPU (CUDA MPS)"),
    ("mpirun -np 4 build/halo3d solve --backend cuda", "needs a GPU"),
    ("echo quit | nvidia-cuda-mps-control", "needs a GPU (CUDA MPS)"),
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


for page in RUN_PAGES:
    if page not in PAGES:
        failures.append(f"{page} is not in PAGES: add it there, so that SKIP is checked against it")
all_cmds = {page: commands(os.path.join(SRC, page)) for page in PAGES}
cmds = [(page, line, cmd, expected) for page in RUN_PAGES for line, cmd, expected in all_cmds.get(page, [])]
for page in RUN_PAGES:
    if not all_cmds.get(page):
        failures.append(f"no command found in {page}'s sh blocks: is the parser broken?")
used = set()
work = tempfile.mkdtemp(prefix="halo3d-readme-")
for entry in os.listdir(SRC):
    if not entry.startswith((".", "build")) and entry != "results":
        os.symlink(os.path.join(SRC, entry), os.path.join(work, entry))

env = {k: v for k, v in os.environ.items()
       if not k.startswith("OMPI_MCA_") and k not in ("OMP_NUM_THREADS", "HALO3D_PYTHON")}
env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", HALO3D_BIN=HALO3D)
system_ok = os.path.exists("/usr/bin/python3") and subprocess.run(
    ["/usr/bin/python3", "-c", "import h5py, numpy, matplotlib"], capture_output=True).returncode == 0
if system_ok:  # a python3 without site-packages (so without h5py and numpy) first on PATH
    bare = os.path.join(work, ".bare-python")
    os.mkdir(bare)
    with open(os.path.join(bare, "python3"), "w") as f:
        f.write(f'#!/bin/sh\nexec "{sys.executable}" -S "$@"\n')
    os.chmod(os.path.join(bare, "python3"), 0o755)
    env["PATH"] = bare + os.pathsep + env.get("PATH", "")
found = subprocess.run([os.path.join(SRC, "jobs", "python"), "-c", "import h5py, numpy"], env=env, cwd=work,
                       capture_output=True, text=True)
if found.returncode != 0:
    failures.append(f"jobs/python finds no Python with h5py and numpy, which the Python lines need: "
                    f"{found.stderr.strip()}")

binary = re.compile(r"(?<![\w./-])build[\w-]*/halo3d\b")
t0 = time.time()
for page, line, cmd, expected in cmds:
    prefix, why = skip_reason(cmd)
    if prefix:
        print(f"skip {page}:{line}: {cmd[:90]}\n       ({why})")
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
    print(f"{'ok  ' if ok else 'FAIL'} {page}:{line} ({took:.1f} s{', output as shown' if expected else ''}): "
          f"{cmd}")
    if not ok:
        tail = "\n".join(out.strip().splitlines()[-15:])
        what = f"exit {rc}" if rc != 0 else f"the output lacks the page's line {lacks!r}"
        failures.append(f"{page}:{line}: {cmd}\n    {what}; last lines:\n{tail}")

for page_cmds in all_cmds.values():
    for _, cmd, _ in page_cmds:
        prefix, _ = skip_reason(cmd)
        if prefix:
            used.add(prefix)
for prefix, why in SKIP:
    if prefix not in used:
        failures.append(f"SKIP entry {prefix!r} matches no command of {', '.join(PAGES)}: remove it")
print(f"{len(cmds)} commands in {', '.join(RUN_PAGES)}, "
      f"{len(cmds) - sum(1 for _, _, c, _ in cmds if skip_reason(c)[0])} run, in {time.time() - t0:.0f} s")

if failures:
    print("FAILED:\n  " + "\n  ".join(failures) + f"\n(the folder the commands ran in: {work})")
    sys.exit(1)
shutil.rmtree(work, ignore_errors=True)
print(f"every command of {', '.join(RUN_PAGES)} ran as written (or is listed with what it needs)")
