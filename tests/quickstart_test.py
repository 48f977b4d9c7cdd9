#!/usr/bin/env python3
"""jobs/quickstart.sh with stand-ins for dpkg-query, apt-get, python3 (pip, lizard), cmake,
ctest, mpirun and tests/style_check.sh: `run` installs and builds only what running needs,
stays quiet (noise to a log named on error), and its last line names every file written;
`test` still installs everything (lizard from PyPI), runs the style check before the build
(a failing one stops it), then the CI and sanitize builds and their ctest runs in parallel;
it is quiet as well and ends with exactly one line `N passed, M failed` over the style check
and both ctest runs, exiting non-zero when M > 0. Run: quickstart_test.py SOURCE_DIR"""
import os
import shutil
import stat
import subprocess
import sys
import tempfile

SRC = os.path.abspath(sys.argv[1])
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


# Every stand-in appends its arguments to calls.txt and prints 100 lines of noise, as apt and
# cmake do. FAIL_CMAKE=1 makes cmake fail, FAIL_STYLE=1 the style check, FAIL_CTEST=PRESET
# one test of that preset's ctest run. ctest prints result lines as ctest does: 3 passed and
# 1 skipped for --preset ci, 2 passed for --preset sanitize.
STUB = """#!/bin/bash
echo "$(basename "$0") $*" >> "$CALLS"
for i in $(seq 100); do echo "noise from $(basename "$0") $i"; done
case "$(basename "$0")" in
  dpkg-query) exit 1 ;;  # nothing is installed
  python3) [[ $* == "-m lizard"* ]] && exit 1 ;;  # nor is lizard; pip succeeds
  apt-get) [[ ${FAIL_APT:-0} == 1 ]] && { echo "E: stand-in apt failure" >&2; exit 100; } ;;
  cmake) [[ ${FAIL_CMAKE:-0} == 1 ]] && { echo "CMake Error: stand-in failure" >&2; exit 1; } ;;
  style_check.sh) [[ ${FAIL_STYLE:-0} == 1 ]] && { echo "style: FAIL: stand-in" >&2; exit 1; } ;;
  mpirun) printf x > solution.h5; printf x > solution.xdmf; printf x > report.json ;;
  ctest)
    n=2; [[ $* == *"--preset ci"* ]] && n=3
    for i in $(seq $n); do echo "$i/$n Test #$i: t$i .........   Passed    0.10 sec"; done
    [[ $* == *"--preset ci"* ]] && echo "4/4 Test #4: style .........***Skipped   0.00 sec"
    if [[ -n ${FAIL_CTEST:-} && $* == *"--preset $FAIL_CTEST"* ]]; then
      echo "5/5 Test #5: bad .........***Failed    0.10 sec"; exit 8
    fi ;;
esac
exit 0
"""


def quickstart(mode, **env):
    d = tempfile.mkdtemp(prefix="halo3d-qs-")
    os.makedirs(os.path.join(d, "jobs"))
    os.makedirs(os.path.join(d, "inputs"))
    os.makedirs(os.path.join(d, "bin"))
    os.makedirs(os.path.join(d, "tests"))
    shutil.copy(os.path.join(SRC, "jobs", "quickstart.sh"), os.path.join(d, "jobs"))
    shutil.copy(os.path.join(SRC, "inputs", "default.toml"), os.path.join(d, "inputs"))
    with open(os.path.join(d, "tests", "style_check.sh"), "w") as f:
        f.write(STUB)
    for tool in ("dpkg-query", "apt-get", "python3", "cmake", "ctest", "mpirun", "sudo", "nvcc"):
        p = os.path.join(d, "bin", tool)
        with open(p, "w") as f:
            f.write(STUB if tool not in ("sudo", "nvcc") else '#!/bin/bash\nexec "$@"\n')
        os.chmod(p, os.stat(p).st_mode | stat.S_IXUSR)
    os.remove(os.path.join(d, "bin", "nvcc"))
    calls = os.path.join(d, "calls.txt")
    e = {**os.environ, "PATH": os.path.join(d, "bin") + ":" + os.environ["PATH"], "CALLS": calls, **env}
    p = subprocess.run(["bash", os.path.join(d, "jobs", "quickstart.sh"), mode], cwd=d, env=e,
                       capture_output=True, text=True, timeout=60)
    lines = open(calls).read().splitlines() if os.path.exists(calls) else []
    return p, lines, d


test_only = ("slurm-wlm", "munge", "python3-matplotlib", "libgtest-dev", "python3-h5py",
             "clang-format-14", "python3-pip")

p, calls, d = quickstart("run")
install = [c for c in calls if c.startswith("apt-get") and " install " in c]
check(p.returncode == 0, f"run: exit {p.returncode} {p.stderr!r}")
check(len(install) == 1 and not any(t in install[0].split() for t in test_only),
      f"run installs no test-only package: {install}")
check(len(install) == 1 and all(t in install[0].split() for t in ("libhdf5-openmpi-dev", "openmpi-bin", "cmake", "libmuparser-dev")),
      "run installs what building and running need")
configure = [c for c in calls if c.startswith("cmake --preset")]
build = [c for c in calls if c.startswith("cmake --build")]
check(len(configure) == 1 and "-DHALO3D_BUILD_TESTS=OFF" in configure[0], f"run configures without tests: {configure}")
check(len(build) == 1 and "--target halo3d" in build[0], f"run builds only halo3d: {build}")
noise = [l for l in (p.stdout + p.stderr).splitlines() if "noise from" in l and "mpirun" not in l]
check(not noise, f"run keeps apt/cmake output out of the terminal ({len(noise)} lines shown)")
log = os.path.join(d, "build", "quickstart.log")
check(os.path.exists(log) and "noise from apt-get" in open(log).read(), "apt/cmake output is in build/quickstart.log")
last = p.stdout.strip().splitlines()[-1] if p.stdout.strip() else ""
check(all(f in last for f in ("solution.h5", "solution.xdmf", "report.json")),
      f"run's last line names every file written: {last!r}")

p, calls, d = quickstart("run", FAIL_CMAKE="1")
check(p.returncode != 0 and "build/quickstart.log" in p.stderr and "stand-in failure" in p.stderr,
      f"a failing step names the log and shows its end: exit {p.returncode}, {p.stderr[-300:]!r}")

p, calls, d = quickstart("test")
install = [c for c in calls if c.startswith("apt-get") and " install " in c]
check(p.returncode == 0 and len(install) == 1 and all(t in install[0].split() for t in test_only),
      f"test installs the test tools too: {install}")
check(any(c.startswith("cmake --preset ci") for c in calls) and any(c.startswith("ctest --preset ci") for c in calls),
      "test builds with the ci preset and runs ctest --preset ci")
pip = [c for c in calls if c.startswith("python3 -m pip install")]
check(len(pip) == 1 and "lizard==" in pip[0], f"test installs lizard from PyPI when it is missing: {pip}")
style = [i for i, c in enumerate(calls) if c.startswith("style_check.sh")]
first_cmake = next((i for i, c in enumerate(calls) if c.startswith("cmake")), len(calls))
check(len(style) == 1 and style[0] < first_cmake, "test runs tests/style_check.sh before the build")

last = p.stdout.strip().splitlines()[-1] if p.stdout.strip() else ""
check(last == "6 passed, 0 failed", f"test's last line counts the style check and both ctest runs: {last!r}")
noise = [l for l in (p.stdout + p.stderr).splitlines() if "noise from" in l and "style_check" not in l]
check(not noise, f"test keeps apt/cmake/ctest output out of the terminal ({len(noise)} lines shown)")
log = os.path.join(d, "build-ci", "quickstart.log")
check(os.path.exists(log) and "noise from apt-get" in open(log).read() and "noise from cmake" in open(log).read(),
      "test's apt/cmake output is in build-ci/quickstart.log")
check(sum(1 for l in p.stdout.splitlines() if "Test #" in l) == 6, "test shows one line per test as it ends")
ctests = [c for c in calls if c.startswith("ctest")]
check(len(ctests) == 2 and all(" -j" in c for c in ctests), f"test runs ctest in parallel: {ctests}")
check(any(c.startswith("cmake --preset sanitize") for c in calls), "test builds the sanitize preset")

p, calls, d = quickstart("test", FAIL_CTEST="sanitize")
last = p.stdout.strip().splitlines()[-1] if p.stdout.strip() else ""
check(p.returncode != 0 and last == "6 passed, 1 failed",
      f"a failing test: exit non-zero and the last line counts it: exit {p.returncode}, {last!r}")

p, calls, d = quickstart("test", FAIL_CMAKE="1")
last = p.stdout.strip().splitlines()[-1] if p.stdout.strip() else ""
check(p.returncode != 0 and last == "1 passed, 2 failed" and "build-ci/quickstart.log" in p.stderr
      and "stand-in failure" in p.stderr and not any(c.startswith("ctest") for c in calls),
      f"failing builds: each counts as a failure, names the log, runs no ctest: exit {p.returncode}, {last!r}")

p, calls, d = quickstart("test", FAIL_APT="1")
last = p.stdout.strip().splitlines()[-1] if p.stdout.strip() else ""
check(p.returncode != 0 and last == "0 passed, 1 failed" and "build-ci/quickstart.log" in p.stderr,
      f"a failing install ends test with the summary line too: exit {p.returncode}, {last!r}")

p, calls, d = quickstart("run")
check(not any(c.startswith(("style_check.sh", "python3")) for c in calls),
      "run neither installs lizard nor runs the style check")

p, calls, d = quickstart("test", FAIL_STYLE="1")
last = p.stdout.strip().splitlines()[-1] if p.stdout.strip() else ""
check(p.returncode != 0 and "style: FAIL" in p.stderr and not any(c.startswith("cmake") for c in calls)
      and last == "0 passed, 1 failed",
      f"a failing style check stops test before the build, counted: exit {p.returncode}, {last!r}")

if failures:
    print("\nFAILED:\n" + "\n".join(failures))
    sys.exit(1)
print("all quickstart checks passed")
