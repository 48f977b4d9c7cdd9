"""The memory check counts exactly what a run allocates (issue 24): on the host backend, for
each configuration on 1-4 ranks and several process grids, rank 0's count
(memory.planned_device_bytes) equals the most backend memory the kernels allocated at once
(memory.counted_bytes_peak) and what they hold once solved (counted_bytes_held), to the
byte; --dry-run prints the same count. tests/gpu/memory_count_test.py holds the count
against the GPU's own (cudaMemGetInfo).

    memory_count_test.py HALO3D MPIEXEC
"""
import sys

from h3test import Harness

T = Harness("memcount", "--backend", "host", "--grid", "37,30,33", "--rhs", "random", "--output", "none")
CASES = [
    ("MG-PCG double", []),
    ("MG-PCG mixed", ["--precision", "mixed"]),
    ("MG-PCG --fmg", ["--fmg"]),
    ("MG-PCG --fmg, mixed", ["--fmg", "--precision", "mixed"]),
    ("all Neumann, mixed", ["--bc", "x=neumann,y=neumann,z=neumann", "--precision", "mixed"]),
    ("implicit heat, mixed", ["--problem", "heat", "--time-scheme", "implicit", "--steps", "2",
                              "--precision", "mixed"]),
    ("CG", ["--precond", "none", "--iters", "5"]),
    ("Jacobi", ["--solver", "jacobi", "--iters", "5"]),
    ("variable k", ["--coefficient", "expr:1+x*y"]),
    ("variable k, mixed", ["--coefficient", "expr:1+x*y", "--precision", "mixed"]),
    ("variable k, --mg-interp operator", ["--coefficient", "expr:1+x*y", "--mg-interp", "operator"]),
    ("variable shift", ["--shift", "expr:1+z"]),
    ("implicit heat", ["--problem", "heat", "--time-scheme", "implicit", "--steps", "2"]),
    ("variable k heat", ["--problem", "heat", "--coefficient", "expr:1+x", "--steps", "2"]),
    ("periodic x, mixed", ["--bc", "x=periodic", "--precision", "mixed"]),
    ("neumann y", ["--bc", "y=neumann"]),
    ("no gather", ["--mg-gather", "0"]),
]
GRIDS = [(1, "1,1,1"), (2, "1,1,2"), (3, "3,1,1"), (4, "2,2,1")]
MIB = 1024.0 * 1024.0
run = 0
for ranks, procs in GRIDS:
    for name, args in CASES:
        run += 1
        what = f"{name} on {ranks} rank(s) ({procs})"
        report = f"m{run}.json"
        T.solve(ranks, "--procs", procs, *args, "--report", report)
        mem = T.memory(report)
        if mem is None:
            continue
        planned, peak, held = mem["planned_device_bytes"], mem["counted_bytes_peak"], mem["counted_bytes_held"]
        T.check(planned == peak == held, f"{what}: counted {planned:.0f} B, peak {peak} B, held {held} B")
        if ranks in (1, 4):
            dry = T.dry_run_mib(ranks, "--procs", procs, *args)
            T.check(dry is not None and abs(dry - planned / MIB) <= 0.05 + 1e-9,
                    f"{what}: --dry-run prints {dry} MiB, counted {planned / MIB:.2f} MiB")
sys.exit(T.finish("the memory count is what every configuration allocates, to the byte"))
