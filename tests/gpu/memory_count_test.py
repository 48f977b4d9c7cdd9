"""The memory check's count against the GPU (issue 24): for each configuration, one rank on
the CUDA backend, the count (memory.planned_device_bytes) is what the kernels allocated at
their peak and hold once solved (memory.counted_bytes_peak, counted_bytes_held) to the byte,
and what the GPU says the run holds after solving beyond what was free at the start-up check
(memory.device_bytes_used, from cudaMemGetInfo) is that up to the allocator's rounding and the
driver's own (code loaded on first launch); --dry-run prints the same count. Needs the GPU
to itself (the test runs serially: other processes' allocations would show in
cudaMemGetInfo).

    memory_count_test.py HALO3D MPIEXEC
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from h3test import Harness  # noqa: E402

T = Harness("memory", "--backend", "cuda", "--grid", "160,144,128", "--rhs", "random", "--output", "none")
MIB = 1024.0 * 1024.0
CASES = [
    ("MG-PCG double", []),
    ("MG-PCG mixed", ["--precision", "mixed"]),
    ("MG-PCG --fmg", ["--fmg"]),
    ("MG-PCG --fmg, mixed", ["--fmg", "--precision", "mixed"]),
    ("all Neumann, mixed", ["--bc", "x=neumann,y=neumann,z=neumann", "--precision", "mixed"]),
    ("CG", ["--precond", "none", "--iters", "20"]),
    ("Jacobi", ["--solver", "jacobi", "--iters", "20"]),
    ("variable k", ["--coefficient", "expr:1+x*y"]),
    ("variable k, mixed", ["--coefficient", "expr:1+x*y", "--precision", "mixed"]),
    ("variable shift", ["--shift", "expr:1+z"]),
    ("implicit heat", ["--problem", "heat", "--time-scheme", "implicit", "--steps", "3"]),
    ("periodic x", ["--bc", "x=periodic"]),
]
for i, (name, args) in enumerate(CASES):
    T.solve(0, *args, "--report", f"m{i}.json")
    mem = T.memory(f"m{i}.json")
    if mem is None:
        continue
    planned, used, peak, held = (mem[k] for k in ("planned_device_bytes", "device_bytes_used",
                                                   "counted_bytes_peak", "counted_bytes_held"))
    if used is None:
        T.check(False, f"{name}: no device_bytes_used (not on the CUDA backend?)")
        continue
    T.check(planned == peak == held, f"{name}: counted {planned:.0f} B, peak {peak} B, held {held} B")
    # cudaMalloc hands out whole pages (2 MiB): up to one page of rounding per allocation
    # (an H100 showed 5-19 MiB over the 160x144x128 runs' few dozen buffers), never less.
    buffers = mem["counted_buffers_held"]
    T.check(held - MIB <= used <= held + 2 * MIB * buffers,
            f"{name}: the GPU says {used / MIB:.1f} MiB used, the kernels hold {held / MIB:.1f} MiB "
            f"in {buffers} allocations")
    dry = T.dry_run_mib(0, *args)
    T.check(dry is not None and abs(dry - planned / MIB) <= 0.05,
            f"{name}: --dry-run prints {dry} MiB, counted {planned / MIB:.1f} MiB")
sys.exit(T.finish("the memory count matches the GPU's in every configuration"))
