#!/usr/bin/env python3
"""Scaling-study table and plots from the JSON reports (halo3d solve --report) of a series.

    jobs/study.py RESULTS_DIR [MORE_DIRS_OR_REPORTS...] [--kind weak|strong] [--out DIR]

Writes into --out (default: the first folder given):
    table.md        Markdown table, with the series' status (complete, or what is missing)
    table.csv       the same numbers, unrounded, in seconds
    efficiency.png  parallel efficiency against the rank (GPU) count, with the ideal line
    time_split.png  time per iteration split into compute / halo / reduction / other

Per rank count the run with the median time per iteration is used (--repeats). Efficiency:
weak T1/TN, strong T1/(N*TN), with T the time per iteration and N the rank count; without
a 1-rank run the smallest count is the baseline and the table says so. The series' plan
comes from study.json (written by jobs/slurm/scaling.sbatch): counts that are planned but
have no report are listed as missing, with their exit code from runs.tsv. Without a
study.json, missing N=1 and gaps in a power-of-two series are reported.

Needs Python 3.9+ with numpy and matplotlib (Debian: python3-numpy python3-matplotlib);
--no-plots needs neither. Exit code 0 (also for an incomplete series, unless --strict:
then 1), 2 when there is nothing to tabulate or the input is unusable.
"""
from __future__ import annotations

import argparse
import csv
import json
import math
import sys
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Run:
    path: Path
    ranks: int
    procs: list
    grid: list
    hosts: int | None
    iterations: int
    solution: float | None  # time to solution: preconditioner set-up + solve (s)
    per_iter: float
    compute: float
    halo: float
    reduction: float
    hidden: float | None
    device: str
    backend: str
    config: dict
    asked: dict  # the report's options as given ({name: value}); empty for older reports

    @property
    def points(self) -> int:
        return self.grid[0] * self.grid[1] * self.grid[2]

    @property
    def other(self) -> float:
        return max(0.0, self.per_iter - self.compute - self.halo - self.reduction)


@dataclass
class Point:
    ranks: int
    runs: list
    chosen: Run
    efficiency: float = math.nan


@dataclass
class Study:
    kind: str
    points: list
    baseline: Point | None
    issues: list = field(default_factory=list)   # make the series incomplete
    notes: list = field(default_factory=list)    # worth knowing, not a gap
    manifest: dict | None = None


def hidden_fraction(r: dict):
    """The hidden halo fraction, wherever this report version keeps it (else None)."""
    for holder, key in ((r.get("overlap"), "hidden_fraction"), (r.get("timing"), "hidden_halo_fraction"),
                        (r, "hidden_halo_fraction"), (r.get("overlap"), "hidden_halo_fraction")):
        if isinstance(holder, dict) and isinstance(holder.get(key), (int, float)):
            return float(holder[key])
    return None


def load_report(path: Path):
    """A Run from one report, or None (with the reason) when it is not a usable solve report."""
    try:
        r = json.loads(path.read_text())
    except (OSError, ValueError) as e:
        return None, f"{path}: not readable JSON ({e})"
    if not isinstance(r, dict) or r.get("command") != "solve" or not isinstance(r.get("timing"), dict):
        return None, None  # some other JSON (study.json, bench output): silently not a report
    try:
        t, res, cfg = r["timing"], r.get("result", {}), r.get("config", {})
        iters = int(res.get("iterations_this_run", res.get("iterations", 0)) or 0)
        if iters <= 0 or not (t.get("per_iteration_s") or 0) > 0:
            return None, f"{path}: no timed iterations (iterations_this_run = {iters})"
        return Run(path=path, ranks=int(r["ranks"]), procs=list(r.get("procs", [0, 0, 0])),
                   grid=[int(v) for v in cfg["grid"]], hosts=r.get("hosts"), iterations=iters,
                   solution=(float(t.get("setup_s", 0) or 0) + float(t["solve_s"])) if "solve_s" in t else None,
                   per_iter=float(t["per_iteration_s"]), compute=float(t.get("compute_s", 0)) / iters,
                   halo=float(t.get("halo_s", 0)) / iters, reduction=float(t.get("reduction_s", 0)) / iters,
                   hidden=hidden_fraction(r), device=str(r.get("device", "")),
                   backend=str(cfg.get("backend", "")), config=cfg,
                   asked={str(o.get("name")): str(o.get("value")) for o in r.get("options", [])
                          if isinstance(o, dict)}), None
    except (KeyError, TypeError, ValueError) as e:
        return None, f"{path}: not a halo3d solve report ({e!r})"


def read_runs_tsv(folder: Path) -> dict:
    """ranks -> list of (repeat, exit code, report) from runs.tsv, when there is one."""
    out: dict = {}
    f = folder / "runs.tsv"
    if not f.is_file():
        return out
    with f.open() as fh:
        for row in csv.DictReader(fh, delimiter="\t"):
            try:
                out.setdefault(int(row["ranks"]), []).append((row.get("repeat"), row.get("exit_code"), row.get("report")))
            except (KeyError, ValueError):
                continue
    return out


def die(message: str):
    """Unusable input: the message on stderr, exit code 2."""
    print(message if message.startswith("study.py:") else f"study.py: error: {message}", file=sys.stderr)
    sys.exit(2)


def is_pow2(n: int) -> bool:
    return n > 0 and n & (n - 1) == 0


def build(inputs: list, kind_arg: str | None) -> Study:
    files, folders = [], []
    for p in inputs:
        p = Path(p)
        if p.is_dir():
            folders.append(p)
            files += sorted(q for q in p.rglob("*.json") if q.name != "study.json")
        elif p.is_file():
            files.append(p)
        else:
            die(f"study.py: error: {p}: no such file or folder")
    manifest = None
    for d in folders:
        if (d / "study.json").is_file():
            try:
                manifest = json.loads((d / "study.json").read_text())
            except ValueError as e:
                die(f"study.py: error: {d / 'study.json'}: {e}")
            break
    tsv: dict = {}
    for d in folders:
        for k, v in read_runs_tsv(d).items():
            tsv.setdefault(k, []).extend(v)

    runs, notes = [], []
    for f in files:
        run, why = load_report(f)
        if run:
            runs.append(run)
        elif why:
            notes.append(why)
    if not runs:
        die("study.py: error: no halo3d solve reports (JSON from --report) in " + ", ".join(map(str, inputs)))

    by_n: dict = {}
    for r in runs:
        by_n.setdefault(r.ranks, []).append(r)
    points = []
    for n in sorted(by_n):
        rs = sorted(by_n[n], key=lambda r: r.per_iter)
        points.append(Point(ranks=n, runs=rs, chosen=rs[(len(rs) - 1) // 2]))

    # weak or strong: --kind, else the study's plan, else what the sizes say
    kind = kind_arg or (manifest or {}).get("kind")
    if kind not in ("weak", "strong"):
        grids = {tuple(p.chosen.grid) for p in points}
        per_rank = [p.chosen.points / p.ranks for p in points]
        if len(points) == 1:
            kind = "weak"
            notes.append("one point only, and no --kind or study.json: shown as weak scaling")
        elif len(grids) == 1:
            kind = "strong"
        elif max(per_rank) <= 1.05 * min(per_rank):
            kind = "weak"
        else:
            die("study.py: error: the grid neither stays fixed (strong) nor grows with the rank "
                             "count (weak); say which with --kind weak|strong")
    st = Study(kind=kind, points=points, baseline=points[0], notes=notes, manifest=manifest)

    found = {p.ranks for p in points}
    if manifest and isinstance(manifest.get("counts"), list):
        planned = [int(n) for n in manifest["counts"]]
        for n in planned:
            if n not in found:
                why = ", ".join(f"exit code {rc}" + (f" (log-n{n:04d}-r{rep}.txt)" if rep not in (None, "-") else "")
                                for rep, rc, _ in tsv.get(n, [])) or "not run (yet)"
                st.issues.append(f"N={n}: no report: {why}")
        extra = sorted(found - set(planned))
        if extra:
            st.notes.append(f"reports for counts not in the plan: {extra}")
        want = int(manifest.get("repeats", 1) or 1)
        for p in points:
            if p.ranks in planned and len(p.runs) < want:
                st.issues.append(f"N={p.ranks}: {len(p.runs)} of {want} repeats")
    else:
        ns = sorted(found)
        if all(is_pow2(n) for n in ns):
            gaps = [1 << k for k in range(ns[-1].bit_length()) if (1 << k) not in found]
            if gaps:
                st.issues.append(f"gaps in the power-of-two series: no report for N={', '.join(map(str, gaps))}")
        else:
            st.notes.append("no study.json and not a power-of-two series: gaps cannot be checked")
    if 1 not in found:
        st.issues.append(f"no N=1 baseline: efficiencies are relative to N={points[0].ranks}")

    # consistency: what must not change along the series
    if kind == "strong":
        grids = {tuple(p.chosen.grid) for p in points}
        if len(grids) > 1:
            st.issues.append(f"strong scaling with different grids: {sorted(grids)}")
    else:
        per_rank = {p.ranks: p.chosen.points / p.ranks for p in points}
        if max(per_rank.values()) > 1.05 * min(per_rank.values()):
            st.issues.append("weak scaling with different points per rank: " +
                             ", ".join(f"N={n}: {v:.0f}" for n, v in per_rank.items()))
    # --halo and --overlap `auto` are settled by a measurement in each run (on 1 rank overlap
    # is always off): runs that asked the same are alike whatever each chose.
    for key in ("problem", "solver", "backend", "halo", "overlap", "rhs"):
        vals = {r.asked.get(key, str(r.config.get(key))) if key in ("halo", "overlap")
                else str(r.config.get(key)) for r in runs}
        if len(vals) > 1:
            st.issues.append(f"the runs differ in {key}: {sorted(vals)}")

    b = st.baseline.chosen
    for p in points:
        t = p.chosen.per_iter
        if kind == "weak":
            p.efficiency = b.per_iter / t
        else:
            p.efficiency = (st.baseline.ranks * b.per_iter) / (p.ranks * t)
    return st


# ---------------------------------------------------------------------------- output
def time_unit(seconds: float):
    if seconds >= 1:
        return "s", 1.0
    if seconds >= 1e-3:
        return "ms", 1e3
    return "µs", 1e6


def fmt(v: float, scale: float) -> str:
    x = v * scale
    return f"{x:.3g}" if abs(x) < 1000 else f"{x:.0f}"


def xyz(v, sep="x") -> str:
    return sep.join(str(int(a)) for a in v)


def unit_label(st: Study) -> str:
    gpu = all(p.chosen.backend == "cuda" for p in st.points)
    return "GPUs" if gpu else "ranks"


def status_lines(st: Study) -> list:
    if st.issues:
        return ["**Status: INCOMPLETE series**"] + [f"- {i}" for i in st.issues]
    return ["**Status: complete series**"]


def write_markdown(st: Study, path: Path, title: str) -> str:
    unit, scale = time_unit(sorted(p.chosen.per_iter for p in st.points)[len(st.points) // 2])
    n_label = unit_label(st)
    b = st.baseline
    eff = "T1/TN" if st.kind == "weak" else "T1/(N·TN)"
    if b.ranks != 1:
        eff = (f"T{b.ranks}/TN" if st.kind == "weak" else f"({b.ranks}·T{b.ranks})/(N·TN)") + f" (baseline N={b.ranks})"
    lines = [f"# {title}", ""] + status_lines(st) + [""]
    how = ("the problem grows with the rank count (the same points per rank, each rank's box "
           "fixed by the study's process grid, which can differ from the one halo3d picks for that "
           "grid on its own); with the multigrid preconditioner (the default) the iterations stay "
           "about constant, so the time to solution (set-up + solve) follows T"
           if st.kind == "weak" else
           "the problem stays fixed and is split over more ranks (halo3d picks each process grid); "
           "ideal T falls as 1/N")
    lines.append(f"{st.kind.capitalize()} scaling: {how}. Efficiency = {eff}, T = time per iteration "
                 f"(the median run of each count). Times per iteration in {unit}; compute, halo and "
                 "reduction are the slowest rank's totals over the whole solve divided by the iterations "
                 "(halo includes every exchange of the solve, the multigrid's too, overlapped or not), "
                 "other = the rest of the iteration (clamped at 0). Hidden halo is another measurement: "
                 "the share of ONE operator application's exchange that overlap hides, timed after the "
                 "solve, so a high hidden share can stand beside a large halo column.")
    first = st.points[0].chosen
    lines.append(f"Device: {first.device or 'n/a'}; problem {first.config.get('problem', '?')}/"
                 f"{first.config.get('solver', '?')}.")
    lines.append("")
    hdr = [n_label, "hosts", "process grid", "problem size", "points/rank", "iterations", "time to solution (s)",
           f"time/iter ({unit})",
           "compute", "halo", "reduction", "other", "hidden halo", "efficiency", "runs"]
    lines.append("| " + " | ".join(hdr) + " |")
    lines.append("|" + "|".join("---:" if i not in (2, 3) else ":---" for i in range(len(hdr))) + "|")
    for p in st.points:
        r = p.chosen

        def part(v):
            return f"{fmt(v, scale)} ({100 * v / r.per_iter:.0f}%)"

        row = [str(p.ranks), str(r.hosts if r.hosts is not None else "?"), xyz(r.procs), xyz(r.grid),
               f"{r.points / p.ranks:.0f}", str(r.iterations),
               "n/a" if r.solution is None else f"{r.solution:.4g}", fmt(r.per_iter, scale), part(r.compute),
               part(r.halo), part(r.reduction), part(r.other),
               "n/a" if r.hidden is None else f"{100 * r.hidden:.0f}%", f"{p.efficiency:.3f}", str(len(p.runs))]
        lines.append("| " + " | ".join(row) + " |")
    if st.notes:
        lines += ["", "Notes:"] + [f"- {n}" for n in st.notes]
    text = "\n".join(lines) + "\n"
    path.write_text(text)
    return text


def write_csv(st: Study, path: Path) -> None:
    with path.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["ranks", "hosts", "procs", "grid", "points_per_rank", "iterations", "time_to_solution_s",
                    "time_per_iter_s",
                    "compute_per_iter_s", "halo_per_iter_s", "reduction_per_iter_s", "other_per_iter_s",
                    "hidden_halo_fraction", "efficiency", "kind", "baseline_ranks", "runs", "device", "report"])
        for p in st.points:
            r = p.chosen
            w.writerow([p.ranks, r.hosts, xyz(r.procs), xyz(r.grid), f"{r.points / p.ranks:.6g}", r.iterations,
                        "n/a" if r.solution is None else repr(r.solution), repr(r.per_iter), repr(r.compute), repr(r.halo), repr(r.reduction), repr(r.other),
                        "n/a" if r.hidden is None else repr(r.hidden), repr(p.efficiency), st.kind,
                        st.baseline.ranks, len(p.runs), r.device, str(r.path)])


def write_plots(st: Study, out: Path, title: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    ns = np.array([p.ranks for p in st.points], dtype=float)
    eff = np.array([p.efficiency for p in st.points])
    n_label = unit_label(st)
    log_x = len(ns) > 1 and ns.max() / ns.min() >= 4
    subtitle = "INCOMPLETE: " + "; ".join(st.issues) if st.issues else "complete series"
    if len(subtitle) > 110:
        subtitle = subtitle[:107] + "..."

    def axis_counts(ax):
        if log_x:
            ax.set_xscale("log", base=2)
        ax.set_xticks(ns)
        ax.set_xticklabels([str(int(n)) for n in ns])
        ax.minorticks_off()

    fig, ax = plt.subplots(figsize=(6.4, 4.4), dpi=120)
    ax.axhline(1.0, color="0.4", linestyle="--", linewidth=1, label="ideal")
    ax.plot(ns, eff, "o-", color="tab:blue", linewidth=2, label=f"{st.kind} scaling")
    for n, e in zip(ns, eff):
        ax.annotate(f"{e:.2f}", (n, e), textcoords="offset points", xytext=(0, 7), ha="center", fontsize=8)
    axis_counts(ax)
    ax.set_xlabel(n_label)
    ax.set_ylabel("efficiency " + ("T1/TN" if st.kind == "weak" else "T1/(N·TN)"))
    ax.set_ylim(0, max(1.15, float(np.nanmax(eff)) * 1.15))
    ax.grid(True, alpha=0.3)
    ax.legend(loc="lower left")
    ax.set_title(f"{title}\n{subtitle}", fontsize=9, color="black" if not st.issues else "tab:red")
    fig.tight_layout()
    fig.savefig(out / "efficiency.png")
    plt.close(fig)

    unit, scale = time_unit(float(np.median([p.chosen.per_iter for p in st.points])))
    parts = [("compute", "tab:blue"), ("halo", "tab:orange"), ("reduction", "tab:green"), ("other", "0.7")]
    fig, ax = plt.subplots(figsize=(6.4, 4.4), dpi=120)
    pos = np.arange(len(ns))
    bottom = np.zeros(len(ns))
    for name, color in parts:
        v = np.array([getattr(p.chosen, name) for p in st.points]) * scale
        ax.bar(pos, v, 0.6, bottom=bottom, color=color, label=name)
        bottom += v
    measured = np.array([p.chosen.per_iter for p in st.points]) * scale
    ax.plot(pos, measured, "k_", markersize=22, mew=2, label="time per iteration")
    ax.set_ylim(0, 1.12 * max(float(bottom.max()), float(measured.max())))
    ax.set_xticks(pos)
    ax.set_xticklabels([str(int(n)) for n in ns])
    ax.set_xlabel(n_label)
    ax.set_ylabel(f"time per iteration ({unit})")
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title(f"{title}: time per iteration\n{subtitle}", fontsize=9,
                 color="black" if not st.issues else "tab:red")
    fig.tight_layout()
    fig.savefig(out / "time_split.png")
    plt.close(fig)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("inputs", nargs="+", help="study folders and/or report JSON files")
    ap.add_argument("--kind", choices=("weak", "strong"), help="override study.json / the guess from the sizes")
    ap.add_argument("--out", type=Path, help="where to write (default: the first folder given)")
    ap.add_argument("--title", help="title of the table and plots")
    ap.add_argument("--no-plots", action="store_true", help="tables only (no numpy/matplotlib needed)")
    ap.add_argument("--strict", action="store_true", help="exit 1 when the series is incomplete")
    ap.add_argument("--quiet", action="store_true", help="do not print the table")
    a = ap.parse_args(argv)

    if not a.no_plots:
        try:
            import matplotlib  # noqa: F401
            import numpy  # noqa: F401
        except ImportError as e:
            print(f"study.py: error: {e}. Use a Python with numpy and matplotlib (Debian: apt-get install "
                  "python3-numpy python3-matplotlib, then /usr/bin/python3 jobs/study.py ...), "
                  "or --no-plots for the tables alone", file=sys.stderr)
            return 2
    st = build(a.inputs, a.kind)
    out = a.out or next((Path(p) for p in a.inputs if Path(p).is_dir()), Path("."))
    out.mkdir(parents=True, exist_ok=True)
    b = st.points[0].chosen
    if st.kind == "weak":
        local = (st.manifest or {}).get("local")
        if isinstance(local, list) and len(local) == 3:
            size = f"{xyz(local)} points per rank"
        elif b.ranks == 1:
            size = f"{xyz(b.grid)} points per rank"
        else:
            size = f"{b.points / b.ranks:.0f} points per rank"
    else:
        size = f"grid {xyz(b.grid)}"
    title = a.title or f"halo3d {st.kind} scaling ({size})"
    text = write_markdown(st, out / "table.md", title)
    write_csv(st, out / "table.csv")
    if not a.no_plots:
        write_plots(st, out, title)
    if not a.quiet:
        print(text, end="")
    for i in st.issues:
        print(f"study.py: warning: incomplete series: {i}", file=sys.stderr)
    written = "table.md, table.csv" + ("" if a.no_plots else ", efficiency.png, time_split.png")
    print(f"study.py: wrote {written} in {out}", file=sys.stderr)
    return 1 if (a.strict and st.issues) else 0


if __name__ == "__main__":
    sys.exit(main())
