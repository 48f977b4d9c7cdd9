#!/usr/bin/env python3
"""The documentation against the program (issue 27, items 3 and 7), without running a solve:

1. every option named in docs/OPTIONS.md exists in the --help of halo3d solve, bench or probe
   (a few that are not halo3d's are listed below with the reason), and every option in the
   README's options table exists in `halo3d solve --help`;
2. every option of `halo3d solve --help` has its row in one of docs/OPTIONS.md's tables of
   `halo3d solve`, and every row there names an option of solve;
3. the defaults in those rows match the defaults --help shows;
4. every relative link of README.md and docs/*.md leads to a file that exists and, for a
   `#anchor` into a Markdown page, to one of its headings (GitHub's anchor rule);
5. --help shows clean types, without CLI11's validator text.
Run: docs_options_test.py HALO3D SOURCE_DIR"""
import os
import re
import subprocess
import sys

HALO3D, SRC = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
# Options named in docs/OPTIONS.md that are not halo3d's, and why.
NOT_HALO3D = {
    "--gird": "the mistyped option of the example error message",
    "--name": "the generic form `--name value`",
}
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def help_options(command):
    """{--name: default as --help shows it, or None} of `halo3d COMMAND --help`."""
    p = subprocess.run([HALO3D, command, "--help"], capture_output=True, text=True, timeout=120,
                       stdin=subprocess.DEVNULL)
    check(p.returncode == 0, f"halo3d {command} --help: exit {p.returncode} {p.stderr[-300:]!r}")
    out = {}
    for line in p.stdout.splitlines():
        m = re.match(r"\s+(?:-\w,)?(--[a-z][\w-]*)(.*)", line)
        if m and m.group(1) != "--help":
            # "TYPE[=DEFAULT]" up to the description (two spaces) or CLI11's " Excludes:".
            spec = re.split(r"  | Excludes:| Needs:", m.group(2).strip())[0]
            default = (spec.rpartition("=")[2].split() or [""])[0].strip("[]") if "=" in spec else None
            out[m.group(1)] = default
    check(len(out) >= 3, f"halo3d {command} --help lists options ({len(out)}): is the parser broken?")
    return out


def read(rel):
    with open(os.path.join(SRC, rel), encoding="utf-8") as f:
        return f.read()


def section(text, title):
    """The text of the `## title` section (up to the next `## `)."""
    start = text.find("\n## " + title)
    if start < 0:
        return ""
    end = text.find("\n## ", start + 1)
    return text[start:end if end > 0 else len(text)]


def table_rows(text):
    """(options named in the first cell, default cell) of every table row that starts with an option."""
    rows = []
    for line in text.splitlines():
        cells = [c.strip().replace("\0", "|") for c in line.replace("\\|", "\0").strip().strip("|").split("|")] \
            if line.startswith("| `--") else []
        if len(cells) >= 3:
            rows.append((re.findall(r"`(--[a-z][\w-]*)", cells[0]), cells[1]))
    return rows


solve, bench, probe = help_options("solve"), help_options("bench"), help_options("probe")
known = set(solve) | set(bench) | set(probe) | {"--help"}

# 1. Every option OPTIONS.md names exists.
options_md = read("docs/OPTIONS.md")
named = sorted(set(re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*)", options_md)))
unknown = [o for o in named if o not in known and o not in NOT_HALO3D]
check(not unknown, f"every option docs/OPTIONS.md names is in the --help of solve, bench or probe: unknown {unknown}")
stale = [o for o in NOT_HALO3D if o not in named or o in known]
check(not stale, f"NOT_HALO3D lists only options OPTIONS.md names and halo3d lacks: remove {stale}")

readme_rows = table_rows(section(read("README.md"), "Options"))
check(len(readme_rows) >= 10, f"the README's options table has rows ({len(readme_rows)})")
readme_unknown = [o for opts, _ in readme_rows for o in opts if o not in solve]
check(not readme_unknown, f"every option of the README's table is an option of halo3d solve: unknown {readme_unknown}")

# 2. Every solve option has its row, and every row is a solve option.
solve_rows = table_rows(section(options_md, "Options of `halo3d solve`"))
documented = {o for opts, _ in solve_rows for o in opts}
undocumented = sorted(set(solve) - documented)
check(not undocumented, f"every option of halo3d solve --help has a row in docs/OPTIONS.md: missing {undocumented}")
extra = sorted(documented - set(solve))
check(not extra, f"every row of docs/OPTIONS.md's solve tables is an option of halo3d solve: not one {extra}")


# 3. Defaults: a row of one option says the default --help shows ("none" for an empty one,
#    "off" for a flag, the --rhs default of --initial written as (`--rhs`)).
def same_default(doc, shown):
    doc = doc.strip("`").replace(" ", "")
    if shown is None:
        return doc in ("none", "off", "(`--rhs`)".replace(" ", ""), "(--rhs)") or doc == ""
    if doc == shown:
        return True
    try:
        return float(doc) == float(shown)
    except ValueError:
        return shown == "0" and doc == "none"  # counts where 0 means none (--output-every)


for table, rows in (("docs/OPTIONS.md", solve_rows), ("README.md", readme_rows)):
    wrong = []
    for opts, default in rows:
        if len(opts) == 1 and opts[0] in solve and not same_default(default, solve[opts[0]]):
            wrong.append(f"{opts[0]}: {default!r} where --help shows {solve[opts[0]]!r}")
    check(not wrong, f"{table}: the defaults of the one-option rows are --help's: {wrong}")


# 4. Links.
def slug(heading):
    s = heading.strip().lower()
    s = re.sub(r"[^\w\- ]", "", s)
    return s.replace(" ", "-")


def anchors(rel):
    return {slug(m.group(1)) for m in re.finditer(r"^#+\s+(.*)$", read(rel), re.M)}


pages = ["README.md"] + sorted("docs/" + f for f in os.listdir(os.path.join(SRC, "docs")) if f.endswith(".md"))
broken = []
for page in pages:
    text = re.sub(r"```.*?```", "", read(page), flags=re.S)
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+:", target):
            continue  # https:, mailto:
        path, _, anchor = target.partition("#")
        rel = os.path.normpath(os.path.join(os.path.dirname(page), path)) if path else page
        if not os.path.exists(os.path.join(SRC, rel)):
            broken.append(f"{page}: {target} (no {rel})")
        elif anchor and rel.endswith(".md") and anchor not in anchors(rel):
            broken.append(f"{page}: {target} (no heading #{anchor} in {rel})")
check(not broken, f"every relative link of README.md and docs/*.md resolves: broken {broken}")

# 5. --help shows each option's type alone (issue 27): no validator text appended by CLI11,
# such as "INT:(INT) AND (>= 0)"; a choice shows its choices, "{cg,jacobi}".
for command in ("solve", "bench", "probe"):
    p = subprocess.run([HALO3D, command, "--help"], capture_output=True, text=True, timeout=120,
                       stdin=subprocess.DEVNULL)
    cluttered = [l.strip()[:60] for l in p.stdout.splitlines()
                 if re.match(r"\s+(?:-\w,)?--[a-z][\w-]* \S*:", l) or " AND " in l]
    check(not cluttered, f"halo3d {command} --help shows clean types: {cluttered}")

if failures:
    print("FAILED:\n  " + "\n  ".join(failures))
    sys.exit(1)
print("the documented options, defaults and links agree with the program and the pages")
