#!/usr/bin/env python3
"""Plots a `halo3d probe --model --report FILE.json` report: parallel efficiency against GPU
count, per system, for the weak (512^3 per GPU) and strong (1024^3) series, and the measured
points on one H200 shared under MPS against the model.
Run: /usr/bin/python3 docs/img/scaling_model_plot.py REPORT.json docs/img/scaling_model.png"""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

report, out = sys.argv[1], sys.argv[2]
with open(report) as f:
    m = json.load(f)["model"]

fig, axes = plt.subplots(1, 3, figsize=(12, 3.6))
style = {"nvlink": "o-", "pcie": "s--", "ib-hdr": "^-", "ib-ndr": "v-"}
for ax, series, title in ((axes[0], "weak-512", "weak, 512^3 per GPU"),
                          (axes[1], "strong-1024", "strong, 1024^3 in all")):
    for s in m["series"]:
        if s["series"] != series:
            continue
        rows = [r for r in s["rows"] if r["efficiency"] is not None]
        ax.plot([r["gpus"] for r in rows], [100 * r["efficiency"] for r in rows],
                style.get(s["system"], "x-"), label=s["system"], ms=4)
    ax.set_xscale("log", base=2)
    ax.set_xticks([1, 2, 8, 64, 512, 4096], ["1", "2", "8", "64", "512", "4096"])
    ax.set_ylim(0, 105)
    ax.set_xlabel("GPUs")
    ax.set_ylabel("efficiency %")
    ax.set_title(title, fontsize=10)
    ax.grid(alpha=0.3)
axes[0].legend(fontsize=8)

ax = axes[2]
for n, mark in ((512, "o"), (256, "s")):
    # The default gather's points (the others, at larger --mg-gather, are in the doc's table).
    pts = [h for h in m["held_against"] if h["grid"][0] == n and h.get("mg_gather", 262144) == 262144]
    ranks = [h["ranks"] for h in pts]
    ax.plot(ranks, [h["measured_solve_ms"] for h in pts], mark + "-", color="k", ms=4,
            label=f"{n}^3 measured")
    ax.plot(ranks, [h["predicted_solve_ms"] for h in pts], mark + "--", color="tab:red", ms=4,
            label=f"{n}^3 model")
ax.set_xscale("log", base=2)
ax.set_xticks([1, 2, 4, 8], ["1", "2", "4", "8"])
ax.set_yscale("log")
ax.set_xlabel("ranks on one H200 (MPS)")
ax.set_ylabel("solve ms (7 iterations)")
ax.set_title("model vs measured, shared GPU", fontsize=10)
ax.grid(alpha=0.3)
ax.legend(fontsize=7, loc="center right")
fig.tight_layout()
fig.savefig(out, dpi=80)
