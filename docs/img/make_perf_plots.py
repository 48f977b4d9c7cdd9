#!/usr/bin/env python3
"""The pictures of docs/PERFORMANCE.md, from numbers measured and written down in
docs/performance-log.md. Every number below is copied from the log section named beside it
(nothing is computed from them but the plots' own scales); to add a measurement, add it to
the log first, then here, then re-run:
    /usr/bin/python3 docs/img/make_perf_plots.py [OUT_DIR]     (default: docs/img)"""
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
DPI = 80

# One H200, 512^3, --rhs random --tol 1e-8, set-up + solve from the report (ms).
# Log "Version 10" (2026-12-04), three rounds, "prev" (the code kept: the transfer experiment
# was reverted); plain CG from log "8b" (2026-12-03), same script.
TTS_512 = [
    ("plain CG\n(--precond none)\n1651 it", 5014, 5014, "8b, 2026-12-03"),
    ("MG-PCG double\n7 it", 92.2, 93.2, "Version 10, 2026-12-04"),
    ("MG-PCG mixed\n7 it", 78.2, 78.6, "Version 10, 2026-12-04"),
]

# One H200, 512^3, halo3d bench: % of the device-to-device copy measured in the same run.
KERNELS = [
    ("axpby", 100.6, "Version 7, 2026-12-03"),
    ("cg_update", 93.0, "Version 7, 2026-12-03"),
    ("apply", 92.0, "Version 10, 2026-12-04 (92.0 / 92.3)"),
    ("operator (1 rank, halo)", 91.3, "Version 10, 2026-12-04 (91.6 / 91.3)"),
    ("cg_iteration", 88.5, "Version 7, 2026-12-03"),
    ("apply+dot", 81.8, "Version 7, 2026-12-03"),
    ("mg_smooth", 79.5, "Version 9, 2026-12-03"),
    ("mg_smooth_f32", 66.8, "Version 9, 2026-12-03"),
    ("mg_vcycle", 65.0, "Version 9, 2026-12-03"),
    ("mg_pcg_iter_mixed", 60.3, "Version 10, 2026-12-04"),
    ("mg_vcycle_mixed", 50.6, "Version 9, 2026-12-03"),
]

# One V-cycle at 512^3, own share of each level (ms, busiest rank), 1 rank and 8 ranks
# (2,2,2) under MPS. Log "Multigrid across ranks (issue 23, 2026-12-04)", bench of 416ef07
# with --mg-gather 32768.
LEVELS = ["0\n512^3", "1\n341^3", "2\n170^3", "3\n113^3", "4\n56^3", "5\n37^3"]
LEVEL_MS_1 = [7.55, 2.10, 0.22, 0.09, 0.03, 0.05]
LEVEL_MS_8 = [10.88, 4.57, 2.98, 2.73, 2.54, 1.95]

# Solve phase (ms) on one H200 shared by 1-8 ranks under MPS, --halo ipc.
# Log "Multigrid across ranks (issue 23, 2026-12-04)".
RANKS = [1, 2, 4, 8]
MPS_512_BEFORE = [86.2, 104.7, 132.1, 202.7]  # 25f737c
MPS_512_NOW = [85.9, 104.7, 113.6, 160.7]  # --mg-gather 262144 (e57a10d's default)
MPS_256_BEFORE = [12.6, 25.0, 39.9]  # 1, 2, 4 ranks
MPS_256_NOW = [12.6, 22.1, 31.0, 63.0]
# Log "Multigrid across ranks, second round (issue 23, 2026-12-04 afternoon)", d9de56a, the
# mean of two interleaved runs: the gather over CUDA IPC, one face per round, --overlap auto.
MPS_512_LATEST = [86.25, 92.1, 95.7, 119.0]
MPS_256_LATEST = [12.65, 23.8]  # 1 and 4 ranks

# CPU against peers, set-up + solve (s), --rhs random --tol 1e-8.
PEERS = [
    # (group, [(solver, seconds)], source)
    ("16 cores, 256^3", [("halo3d", 0.629), ("hypre", 2.142)],
     "issue 23 second round, 2026-12-04, medians of 3"),
    ("16 cores, 512^3", [("halo3d", 4.32), ("hypre", 15.62)], "issue 23 second round, one run"),
    ("2 vCPUs, 256^3", [("halo3d", 4.20), ("hypre", 11.71)], "8f, medians of 6"),
    ("2 vCPUs, 256^3", [("halo3d", 7.32), ("hypre", 9.06), ("PETSc", 109.5)],
     "8c, 2026-12-03, medians of 3"),
]

# Host backend, 16 cores of the GPU machine, 256^3, one rank per core, --mg-gather 32768 (s).
# Log "Multigrid across ranks (issue 23, 2026-12-04)", "Host backend, 16 cores".
HOST_RANKS = [1, 2, 4, 8, 16]
HOST_S = [4.47, 3.17, 1.73, 1.11, 0.72]

# HDF5 /u write against a raw pwrite of the same bytes, 512^3, 2 ranks, median ms.
# Log "ROMIO, and no collective buffering on one host (2026-12-04)".
IO_GRIDS = ["1,1,2", "2,1,1", "1,2,1"]
IO_RAW_NOSYNC, IO_H5_NOSYNC = [498, 726, 1130], [242, 507, 503]
IO_RAW_SYNC, IO_H5_SYNC = [1512, 1683, 1689], [614, 807, 834]


def save(fig, name):
    fig.tight_layout()
    path = os.path.join(OUT, name)
    fig.savefig(path, dpi=DPI)
    plt.close(fig)
    print(f"{path}: {os.path.getsize(path)} bytes")


def plot_tts():
    fig, ax = plt.subplots(figsize=(6.4, 2.6))
    names = [t[0] for t in TTS_512]
    lo = [t[1] for t in TTS_512]
    hi = [t[2] for t in TTS_512]
    bars = ax.barh(names, hi, color=["0.6", "tab:blue", "tab:green"])
    for b, a, z, t in zip(bars, lo, hi, TTS_512):
        label = f"{a:g} ms" if a == z else f"{a:g}-{z:g} ms"
        ax.text(z * 1.08, b.get_y() + b.get_height() / 2, f"{label}  ({t[3]})", va="center",
                fontsize=8)
    ax.set_xscale("log")
    ax.set_xlim(10, 2e5)
    ax.invert_yaxis()
    ax.set_xlabel("time to solution, set-up + solve (ms, log scale)")
    ax.set_title("512^3 Poisson to 1e-8 on one H200", fontsize=10)
    ax.tick_params(axis="y", labelsize=8)
    save(fig, "perf_tts_h200.png")


def plot_kernels():
    fig, ax = plt.subplots(figsize=(6.4, 3.6))
    names = [k[0] for k in KERNELS]
    vals = [k[1] for k in KERNELS]
    ax.barh(names, vals, color="tab:blue")
    for i, k in enumerate(KERNELS):
        ax.text(103, i, f"{k[1]:.1f}%  {k[2]}", va="center", fontsize=7)
    ax.axvline(100, color="k", lw=0.8)
    ax.set_xlim(0, 190)
    ax.set_xticks([0, 20, 40, 60, 80, 100])
    ax.invert_yaxis()
    ax.set_xlabel("% of the device copy measured in the same run")
    ax.set_title("halo3d bench, one H200, 512^3", fontsize=10)
    ax.tick_params(axis="y", labelsize=8)
    save(fig, "perf_kernels_h200.png")


def plot_levels():
    fig, ax = plt.subplots(figsize=(6.4, 2.8))
    x = range(len(LEVELS))
    ax.bar([i - 0.2 for i in x], LEVEL_MS_1, 0.4, label="1 rank", color="tab:blue")
    ax.bar([i + 0.2 for i in x], LEVEL_MS_8, 0.4, label="8 ranks (2,2,2), MPS",
           color="tab:orange")
    ax.set_xticks(list(x), LEVELS, fontsize=8)
    ax.set_yscale("log")
    ax.set_ylabel("ms per V-cycle (log)")
    ax.set_xlabel("level")
    ax.set_title("One V-cycle at 512^3 by level, one H200 (2026-12-04)", fontsize=10)
    ax.legend(fontsize=8)
    ax.grid(axis="y", alpha=0.3)
    save(fig, "perf_vcycle_levels.png")


def plot_mps():
    fig, ax = plt.subplots(figsize=(6.4, 3.0))
    ax.plot(RANKS, MPS_512_BEFORE, "o--", color="0.5", label="512^3 before (25f737c)")
    ax.plot(RANKS, MPS_512_NOW, "o-", color="tab:blue", label="512^3 e57a10d")
    ax.plot(RANKS[:3], MPS_256_BEFORE, "s--", color="0.7", label="256^3 before")
    ax.plot(RANKS, MPS_256_NOW, "s-", color="tab:green", label="256^3 e57a10d")
    ax.plot(RANKS, MPS_512_LATEST, "o-", color="tab:red", label="512^3 latest (d9de56a)")
    ax.plot([1, 4], MPS_256_LATEST, "s-", color="tab:orange", label="256^3 latest")
    ax.set_xscale("log", base=2)
    ax.set_xticks(RANKS, [str(r) for r in RANKS])
    ax.set_yscale("log")
    ax.set_yticks([10, 20, 50, 100, 200], ["10", "20", "50", "100", "200"])
    ax.set_xlabel("ranks sharing one H200 under MPS")
    ax.set_ylabel("solve ms (log)")
    ax.set_title("MG-PCG to 1e-8, same problem on 1-8 ranks (2026-12-04)", fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, ncol=2)
    save(fig, "perf_mps_ranks.png")


def plot_peers():
    fig, ax = plt.subplots(figsize=(6.4, 3.0))
    colors = {"halo3d": "tab:blue", "hypre": "tab:orange", "PETSc": "tab:red"}
    x, ticks, seen = 0, [], set()
    for group, rows, source in PEERS:
        start = x
        for solver, s in rows:
            ax.bar(x, s, 0.8, color=colors[solver], label=None if solver in seen else solver)
            ax.text(x, s * 1.1, f"{s:g}", ha="center", fontsize=7)
            seen.add(solver)
            x += 1
        ticks.append(((start + x - 1) / 2, f"{group}\n{source}"))
        x += 0.8
    ax.set_xticks([t[0] for t in ticks], [t[1] for t in ticks], fontsize=7)
    ax.set_yscale("log")
    ax.set_ylim(0.3, 400)
    ax.set_ylabel("set-up + solve, s (log)")
    ax.set_title("CPU: halo3d MG-PCG against hypre PFMG-PCG and PETSc CG+PCMG", fontsize=10)
    ax.legend(fontsize=8, loc="upper left")
    save(fig, "perf_cpu_peers.png")


def plot_host_scaling():
    fig, ax = plt.subplots(figsize=(5.0, 3.0))
    ax.plot(HOST_RANKS, HOST_S, "o-", color="tab:blue", label="measured")
    ax.plot(HOST_RANKS, [HOST_S[0] / r for r in HOST_RANKS], ":", color="0.5",
            label="1-rank time / ranks")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xticks(HOST_RANKS, [str(r) for r in HOST_RANKS])
    ax.set_yticks([0.5, 1, 2, 5], ["0.5", "1", "2", "5"])
    ax.set_xlabel("ranks (one per core)")
    ax.set_ylabel("solve phase, s (log)")
    ax.set_title("Host backend, 256^3, 16 cores of the H200 machine (2026-12-04)", fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    save(fig, "perf_host_scaling.png")


def plot_io():
    fig, axes = plt.subplots(1, 2, figsize=(6.4, 2.8), sharey=True)
    for ax, raw, h5, title in ((axes[0], IO_RAW_NOSYNC, IO_H5_NOSYNC, "no fsync"),
                               (axes[1], IO_RAW_SYNC, IO_H5_SYNC, "with fsync")):
        x = range(len(IO_GRIDS))
        ax.bar([i - 0.2 for i in x], raw, 0.4, label="raw pwrite", color="0.6")
        ax.bar([i + 0.2 for i in x], h5, 0.4, label="HDF5 /u", color="tab:blue")
        ax.set_xticks(list(x), IO_GRIDS)
        ax.set_xlabel("process grid")
        ax.set_title(title, fontsize=9)
        ax.grid(axis="y", alpha=0.3)
    axes[0].set_ylabel("median ms, 1 GiB")
    axes[0].legend(fontsize=7)
    fig.suptitle("Writing 512^3 on 2 ranks, 2-vCPU VM, ext4 (2026-12-04)", fontsize=10)
    save(fig, "perf_io_512.png")


if __name__ == "__main__":
    plot_tts()
    plot_kernels()
    plot_levels()
    plot_mps()
    plot_peers()
    plot_host_scaling()
    plot_io()
