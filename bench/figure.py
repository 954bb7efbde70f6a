#!/usr/bin/env python3
"""Draws the benchmark figure of docs/benchmarks.md (an SVG) from benchmark JSON.

    python3 bench/figure.py                                   # regenerate the figure
    python3 bench/figure.py [-o OUT.svg] [--title T] INPUT...  # any other input
    python3 bench/figure.py extract COMPARISON.md OUTDIR [KEY=VALUE...]
    python3 bench/figure.py table [--all] VS_RMM_FOLDER...   # the README's table, Markdown

INPUT is one of:
  - a bench/vs-rmm output folder (its vs_rmm.json, as bench/vs-rmm/run.sh writes it in $OUT):
    for every cell, rmm-rs's time per operation over RAPIDS's RMM 26.10's (for W3, RMM's
    aggregate rate over rmm-rs's), and over RMM 23.12's when the run has that column, log
    scale: below 1 means rmm-rs is faster. One marker per folder and RMM release.
  - a bench-vs-rmm output folder (the harness's $OUT, or a folder of docs/bench/data/): its
    perf_rmm.json and perf_rmmrs.json, as perf_anchor writes them. Drawn: for every cell
    (workload x resource), rmm-rs's time per operation over RMM's (for W3, RMM's aggregate
    rate over rmm-rs's), on a log scale: below 1 means rmm-rs is faster. One marker per
    folder, so several runs show their spread.
  - an rmm-bench --json file (a list of rows): ns per operation of every cell, log scale,
    one marker per file. rmm-bench measures rmm-rs alone, with the runtime's malloc (cuda)
    and async pool (async) as baselines.
All inputs of one figure are of one kind. Without INPUT: every folder of docs/bench/data/
that holds a perf_rmmrs.json (not the folders below them), written to
docs/bench/bvr-ratios.svg; bench/vs-rmm folders are written to docs/bench/vs-rmm-ratios.svg
unless -o says otherwise.

`table` prints the README's benchmark table from bench/vs-rmm folders: per cell, the median
over the folders of rmm-rs ÷ RMM 26.10 (÷ RMM 23.12 in brackets where the runs have it); the
README's rows (churn, random N=10 000, streams) or, with --all, every cell.

`extract` turns a bench-vs-rmm comparison table (compare.py's comparison.md, as kept in
docs/bench/data/<run>/) back into perf_rmm.json and perf_rmmrs.json in OUTDIR, for runs
whose JSON was not kept. What the table does not show is absent (seconds, operations, runs_s); W3's
ns_per_op is derived from its rate, W4's peak_live_bytes from its upstream/live ratio.
KEY=VALUE pairs (date=..., commit=..., label=...) are added at the top level of both files.

The SVG is deterministic (fixed hash salt, no date, text as text): regenerating it from the
same JSON with the same matplotlib gives the same file. Needs matplotlib (for instance
`python3 -m venv /tmp/fig && /tmp/fig/bin/pip install matplotlib`, then run it with
/tmp/fig/bin/python).
"""
import json
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_DATA = os.path.join(ROOT, "docs", "bench", "data")
DEFAULT_OUT = os.path.join(ROOT, "docs", "bench", "bvr-ratios.svg")
DEFAULT_VS_RMM_OUT = os.path.join(ROOT, "docs", "bench", "vs-rmm-ratios.svg")
RESOURCES = ["pool", "binning", "arena", "cuda_async", "cuda"]
RMM_BENCH_RESOURCES = ["pool", "binning", "arena", "async", "cuda"]
MIB = 1 << 20
W3_THREADS = (1, 8, 16)  # the W3 cells drawn (T = 2 and 4 lie between)


# ---------------------------------------------------------------------------------------
# extract: comparison.md -> perf_rmm.json + perf_rmmrs.json


def _num(s):
    s = s.strip().replace("\u00d7", "").replace(" ", "").replace("\u202f", "")
    if s in ("", "\u2014", "-"):
        return None
    return float(s)


def _pair(cell):
    """'1 062 / 31.8 (0.03)' -> (1062.0, 31.8); '—' -> None."""
    m = re.match(r"\s*([0-9 .]+?)\s*/\s*([0-9 .]+?)\s*\(", cell)
    return (_num(m.group(1)), _num(m.group(2))) if m else None


def _refine(p, cell):
    """Rates are printed with 3 decimals and their ratio with 2, from the unrounded rates: move
    the rates within their rounding so that the ratio is the printed one again (the thin
    resources' rates, 0.02 Mpairs/s, lose several percent to rounding otherwise)."""
    m = re.search(r"\(([0-9.]+)\)", cell)
    a, b = p
    if not m or not a or not b:
        return p
    want, r = m.group(1), float(m.group(1))
    if f"{b / a:.2f}" == want:
        return p
    best = None
    cands = []
    for k in range(-49, 50):  # one rate moved by k / 100 000, the other solved for a ratio
        for rr in (r + j * 0.0009 for j in range(-5, 6)):  # within the printed ratio's rounding
            cands += [(a + k * 1e-5, (a + k * 1e-5) * rr), ((b + k * 1e-5) / rr, b + k * 1e-5)]
    for x, y in cands:
        if f"{x:.3f}" == f"{a:.3f}" and f"{y:.3f}" == f"{b:.3f}" and f"{y / x:.2f}" == want:
            d = abs(x - a) + abs(y - b)
            if best is None or d < best[0]:
                best = (d, x, y)
    return (round(best[1], 7), round(best[2], 7)) if best else p


def _workload_fields(w):
    f = {"n": 0, "max_mib": 0, "steps": 0, "threads": 0}
    m = re.match(r"W1 N=(\d+) max=(\d+)MiB", w)
    if m:
        f["n"], f["max_mib"] = int(m.group(1)), int(m.group(2))
    m = re.search(r"(\d+) steps", w)
    if m:
        f["steps"] = int(m.group(1))
    m = re.match(r"W3 T=(\d+)", w)
    if m:
        f["threads"] = int(m.group(1))
    return f


def _tables(text):
    """{section title: (header cells, [row cells])} for every markdown table."""
    out, title, lines = {}, None, text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("## "):
            title = line[3:].strip()
        elif line.startswith("|") and title is not None and title not in out:
            head = [c.strip() for c in line.strip().strip("|").split("|")]
            rows = []
            i += 2  # the header and its separator
            while i < len(lines) and lines[i].startswith("|"):
                rows.append([c.strip() for c in lines[i].strip().strip("|").split("|")])
                i += 1
            out[title] = (head, rows)
            continue
        i += 1
    return out


def dump_like_perf_anchor(doc):
    """JSON laid out as perf_anchor writes it: one top-level key a line, one row a line."""
    lines = [f"  {json.dumps(k)}: {json.dumps(v, ensure_ascii=False)}" for k, v in doc.items() if k != "rows"]
    rows = [f"    {json.dumps(r, ensure_ascii=False)}" for r in doc.get("rows", [])]
    return "{\n" + ",\n".join(lines + ['  "rows": [\n' + ",\n".join(rows) + "\n  ]"]) + "\n}\n"


def extract(md_path, outdir, extra):
    text = open(md_path, encoding="utf-8").read()
    meta = {}
    for tag in ("A", "B"):
        m = re.search(rf"^- {tag} = (\S+) \u2014 device: (.+)$", text, re.M)
        if not m:
            sys.exit(f"{md_path}: no '- {tag} = VARIANT — device: ...' line (not compare.py's output?)")
        meta[tag] = {"variant": m.group(1), "device": m.group(2).strip()}
    rows = {"A": {}, "B": {}}

    def row(tag, resource, workload):
        key = (resource, workload)
        if key not in rows[tag]:
            r = {"resource": resource, "workload": workload, "kind": workload[:2]}
            r.update(_workload_fields(workload))
            r["failures"] = 0
            r["note"] = ""
            rows[tag][key] = r
        return rows[tag][key]

    tables = _tables(text)
    for title, (head, body) in tables.items():
        res = head[1:]
        if title.startswith("ns per operation"):
            for cells in body:
                for resource, cell in zip(res, cells[1:]):
                    p = _pair(cell)
                    if p:
                        for tag, v in zip("AB", p):
                            row(tag, resource, cells[0])["ns_per_op"] = v
        elif title.startswith("W3 threads"):
            for cells in body:
                for resource, cell in zip(res, cells[1:]):
                    p = _pair(cell)
                    if not p:
                        continue
                    sc = re.search(r";\s*\u00d7([0-9.]+)\s*/\s*\u00d7([0-9.]+)", cell)
                    p = _refine(p, cell)
                    for k, (tag, v) in enumerate(zip("AB", p)):
                        r = row(tag, resource, cells[0])
                        r["mpairs_per_s"] = v
                        r["ns_per_op"] = 500.0 / v if v else None  # 2 operations a pair
                        r["scaling"] = float(sc.group(k + 1)) if sc else None
        elif title.startswith("Peak upstream memory"):
            for cells in body:
                for resource, cell in zip(res, cells[1:]):
                    p = _pair(cell)
                    if not p:
                        continue
                    q = re.search(r"up/live\s*([0-9.]+)\s*/\s*([0-9.]+)", cell)
                    for k, (tag, v) in enumerate(zip("AB", p)):
                        r = row(tag, resource, cells[0])
                        r["peak_upstream_bytes"] = int(round(v * MIB))
                        if q:
                            ratio = float(q.group(k + 1))
                            r["peak_live_bytes"] = int(round(v * MIB / ratio)) if ratio else 0
    for m in re.finditer(r"^- ([AB]) (\S+) (.+?): (.+)$", text, re.M):
        tag, resource, workload, what = m.groups()
        if (resource, workload) in rows[tag]:
            r = rows[tag][(resource, workload)]
            if what.startswith("ERROR "):
                r["error"] = what[6:]
            for part in what.split(", "):
                if part == "1 timed run":
                    r["note"] = "1 timed run (warm-up slow)"
                fm = re.match(r"(\d+) allocation failures", part)
                if fm:
                    r["failures"] = int(fm.group(1))
    os.makedirs(outdir, exist_ok=True)
    for tag, name in (("A", "perf_rmm.json"), ("B", "perf_rmmrs.json")):
        doc = {"variant": meta[tag]["variant"], "device": meta[tag]["device"]}
        doc.update(extra)
        doc["extracted_from"] = os.path.relpath(md_path, ROOT) if md_path.startswith(ROOT) else md_path
        doc["rows"] = list(rows[tag].values())
        with open(os.path.join(outdir, name), "w", encoding="utf-8") as f:
            f.write(dump_like_perf_anchor(doc))
    print(f"wrote {outdir}/perf_rmm.json, perf_rmmrs.json ({len(rows['A'])} / {len(rows['B'])} rows)")


# ---------------------------------------------------------------------------------------
# reading


def short_workload(w):
    """A cell's name without its step count: 'W2 churn 1000000 steps' -> 'W2 churn'."""
    w = re.sub(r"^W1 random ", "W1 ", w)
    w = re.sub(r"^W3 threads ", "W3 ", w)
    w = re.sub(r" \d+ steps$", "", w)
    m = re.match(r"W1 N=(\d+) max=(\d+)MiB", w)
    if m:
        n, mx = int(m.group(1)), int(m.group(2))
        return f"W1 N={n:,} {mx} MiB".replace(",", " ")
    return w.replace("W4 streams", "W4 4 streams")


def load_bvr(folder):
    docs = []
    for name in ("perf_rmm.json", "perf_rmmrs.json"):
        try:
            with open(os.path.join(folder, name), encoding="utf-8") as f:
                docs.append(json.load(f))
        except (OSError, ValueError) as e:
            sys.exit(f"{folder}: not a bench-vs-rmm output folder ({e})")
    rmm, ours = docs
    label = ours.get("label") or os.path.basename(os.path.normpath(folder))
    a = {(r["resource"], r["workload"]): r for r in rmm.get("rows", []) if "error" not in r}
    ratios = {}
    for r in ours.get("rows", []):
        if "error" in r or (r["resource"], r["workload"]) not in a:
            continue
        ra = a[(r["resource"], r["workload"])]
        if r["workload"].startswith("W3"):
            x, y = ra.get("mpairs_per_s"), r.get("mpairs_per_s")
            v = x / y if x and y else None
        else:
            x, y = ra.get("ns_per_op"), r.get("ns_per_op")
            v = y / x if x and y else None
        if v is not None and (not r["workload"].startswith("W3") or r.get("threads") in W3_THREADS):
            ratios[(r["resource"], short_workload(r["workload"]))] = v
    return label, ours.get("device", ""), ratios


VS_RMM_ANCHORS = (("rmm-26.10", "RMM 26.10"), ("rmm-23.12", "RMM 23.12"))


def is_vs_rmm(folder):
    return os.path.isfile(os.path.join(folder, "vs_rmm.json"))


def load_vs_rmm(folder, threads=W3_THREADS):
    """bench/vs-rmm's vs_rmm.json: (label, device, {anchor: {(resource, cell): ratio}}), the
    ratio being rmm-rs's time over the anchor's (for W3, the anchor's rate over rmm-rs's)."""
    with open(os.path.join(folder, "vs_rmm.json"), encoding="utf-8") as f:
        doc = json.load(f)
    variants = doc.get("variants", {})

    def index(v):
        return {(r["resource"], r["workload"]): r for r in variants.get(v, {}).get("rows", [])
                if "error" not in r}
    ours = index("rmm-rs")
    out = {}
    for anchor, _ in VS_RMM_ANCHORS:
        theirs = {(res, short_workload(w)): r for (res, w), r in index(anchor).items()}
        ratios = {}
        for (res, w), r in ours.items():
            cell = short_workload(w)
            a = theirs.get((res, cell))
            if a is None:
                continue
            if w.startswith("W3"):
                if r.get("threads") not in threads:
                    continue
                x, y = a.get("mpairs_per_s"), r.get("mpairs_per_s")
                v = x / y if x and y else None
            else:
                x, y = a.get("ns_per_op"), r.get("ns_per_op")
                v = y / x if x and y else None
            if v is not None:
                ratios[(res, cell)] = v
        if ratios:
            out[anchor] = ratios
    meta = variants.get("rmm-rs", {}).get("meta", {})
    label = doc.get("label") or os.path.basename(os.path.normpath(folder))
    return label, meta.get("device", ""), out


README_CELLS = ("W2 churn", "W1 N=10 000 1 MiB", "W4 4 streams")


def readme_table(folders, all_cells=False):
    """The README's table: per cell, the median over the folders of rmm-rs ÷ RMM 26.10, with
    ÷ RMM 23.12 in brackets where the runs have that column."""
    per = {}  # (anchor, resource, cell) -> [ratio per folder]
    for folder in folders:
        _, _, by_anchor = load_vs_rmm(folder, threads=(1, 2, 4, 8, 16))
        for anchor, ratios in by_anchor.items():
            for (res, cell), v in ratios.items():
                per.setdefault((anchor, res, cell), []).append(v)

    def median(xs):
        xs = sorted(xs)
        n = len(xs)
        return xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2

    def fmt(v):
        return "—" if v is None else f"{v:.2f}" if v >= 0.01 else f"{v:.3f}"

    cells = sorted({c for (_, _, c) in per}, key=cell_order)
    if not all_cells:
        cells = [c for c in cells if c in README_CELLS or c in ("W3 T=8",)]
    resources = [r for r in RESOURCES if any(k[1] == r for k in per)]
    has_2312 = any(k[0] == "rmm-23.12" for k in per)
    lines = ["| workload | " + " | ".join(resources) + " |",
             "| --- |" + " --- |" * len(resources)]
    for c in cells:
        row = []
        for r in resources:
            a = per.get(("rmm-26.10", r, c))
            b = per.get(("rmm-23.12", r, c))
            txt = fmt(median(a) if a else None)
            if has_2312:
                txt += f" ({fmt(median(b) if b else None)})"
            row.append(txt)
        name = re.sub(r"^W1 N=([\d ]+) (\d+) MiB$", r"W1 N=\1, ≤ \2 MiB", c)
        name += ": RMM's rate ÷ rmm-rs's" if c.startswith("W3") else ""
        lines.append(f"| {name} | " + " | ".join(row) + " |")
    runs = len(folders)
    head = (f"rmm-rs ÷ RMM 26.10{' (÷ RMM 23.12)' if has_2312 else ''}, below 1: rmm-rs faster; "
            f"median of {runs} run{'s' if runs != 1 else ''}")
    return head + "\n\n" + "\n".join(lines) + "\n"


# rmm-bench names its workloads; the figure labels cells by BENCH.md's codes, as bench-vs-rmm.
RMM_BENCH_CODES = {"random": "W1 random", "churn": "W2 churn", "threads": "W3 threads",
                   "streams": "W4 streams", "replay": "W5 replay", "fragmentation": "W6 frag"}


def rmm_bench_label(r):
    """A row's cell as bench-vs-rmm labels it: 'W2 churn 1000000 steps' for workload 'churn'
    and case '1000000 steps' (files written before the names carry that label already)."""
    code = RMM_BENCH_CODES.get(r["workload"])
    if code is None:
        return r["workload"]
    return f"{code} {r.get('case', '')}".strip()


def load_rmm_bench(path):
    with open(path, encoding="utf-8") as f:
        rows = json.load(f)
    values, seen = {}, {}
    for r in rows:
        if str(r.get("note", "")).startswith("error") or not r.get("ns_per_op"):
            continue
        w = short_workload(rmm_bench_label(r))
        k = seen.get((r["resource"], w), 0)
        seen[(r["resource"], w)] = k + 1
        if k:  # a case listed twice (--quick shrinks N=100 000 to 10 000)
            w = f"{w} ({k + 1})"
        values[(r["resource"], w)] = r["ns_per_op"]
    return os.path.splitext(os.path.basename(path))[0], values


def cell_order(w):
    """W2, then W1 by size and N, W4, W3 by threads (as compare.py's tables)."""
    group = {"W2": 0, "W1": 1, "W4": 2, "W3": 3, "W5": 4}.get(w[:2], 5)
    m = re.match(r"W1 N=([\d ]+) (\d+) MiB", w)
    if m:
        return (group, int(m.group(2)), int(m.group(1).replace(" ", "")), w)
    m = re.match(r"W3 T=(\d+)", w)
    if m:
        return (group, int(m.group(1)), 0, w)
    return (group, 0, 0, w)


# ---------------------------------------------------------------------------------------
# drawing


def setup_matplotlib():
    try:
        import matplotlib
    except ImportError:
        sys.exit("bench/figure.py needs matplotlib: python3 -m pip install matplotlib (in a venv)")
    matplotlib.use("agg")
    matplotlib.rcParams.update({
        "svg.hashsalt": "rmm-rs-bench-figure",
        "svg.fonttype": "none",
        "font.family": "DejaVu Sans",
        "font.size": 9,
        "axes.titlesize": 10,
    })
    import matplotlib.pyplot as plt
    return plt


MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*"]
COLORS = ["#1f77b4", "#2ca02c", "#9467bd", "#d62728", "#ff7f0e", "#8c564b", "#17becf", "#7f7f7f"]


def draw(series, resources, ylabel, title, out, ref_line=None, note=None):
    """series: [(label, {(resource, cell): value})]; one panel per resource."""
    plt = setup_matplotlib()
    present = [r for r in resources if any(k[0] == r for _, v in series for k in v)]
    present += sorted({k[0] for _, v in series for k in v} - set(present))
    cells = {r: sorted({k[1] for _, v in series for k in v if k[0] == r}, key=cell_order) for r in present}
    widths = [max(3, len(cells[r])) for r in present]
    fig, axes = plt.subplots(1, len(present), figsize=(1.3 + 0.3 * sum(widths), 4.4), sharey=True,
                             gridspec_kw={"width_ratios": widths}, squeeze=False)
    axes = axes[0]
    allv = [x for _, v in series for x in v.values() if x > 0]
    lo, hi = min(allv), max(allv)
    if ref_line:
        lo, hi = min(lo, ref_line), max(hi, ref_line)
    n = len(series)
    for ax, r in zip(axes, present):
        xs = range(len(cells[r]))
        for i, (label, values) in enumerate(series):
            off = (i - (n - 1) / 2) * min(0.12, 0.6 / max(n, 1))
            pts = [(x + off, values[(r, c)]) for x, c in zip(xs, cells[r]) if (r, c) in values]
            if pts:
                ax.scatter([p[0] for p in pts], [p[1] for p in pts], s=22, marker=MARKERS[i % len(MARKERS)],
                           color=COLORS[i % len(COLORS)], label=label, zorder=3, linewidths=0.5,
                           edgecolors="black")
        if ref_line:
            ax.axhline(ref_line, color="black", linewidth=0.9, zorder=2)
        ax.set_yscale("log")
        ax.set_ylim(lo / 1.6, hi * 1.6)
        ax.set_title(r)
        ax.set_xticks(list(xs))
        ax.set_xticklabels(cells[r], rotation=60, ha="right", rotation_mode="anchor", fontsize=7.5)
        ax.set_xlim(-0.6, len(cells[r]) - 0.4)
        ax.grid(axis="y", which="major", color="#dddddd", linewidth=0.6, zorder=0)
        ax.tick_params(axis="y", which="minor", length=2)
    axes[0].set_ylabel(ylabel)
    handles, labels = axes[0].get_legend_handles_labels()
    for ax in axes[1:]:
        for h, l in zip(*ax.get_legend_handles_labels()):
            if l not in labels:
                handles.append(h)
                labels.append(l)
    fig.suptitle(title, fontsize=11)
    fig.legend(handles, labels, loc="lower center", ncol=min(len(labels), 4), frameon=False,
               bbox_to_anchor=(0.5, 0.035), fontsize=8)
    if note:
        fig.text(0.005, 0.005, note, fontsize=7, color="#555555", ha="left", va="bottom")
    fig.tight_layout(rect=(0, 0.1, 1, 1))
    if out.endswith(".svg"):
        fig.savefig(out, format="svg", metadata={"Date": None, "Creator": "bench/figure.py"})
    else:  # a preview in another format (png, pdf), by the file's extension
        fig.savefig(out, dpi=110)
    print(f"wrote {out}")


def main(argv):
    if argv and argv[0] == "table":
        rest = [a for a in argv[1:] if a != "--all"]
        if not rest or not all(is_vs_rmm(p) for p in rest):
            sys.exit("table: give bench/vs-rmm output folders (each with a vs_rmm.json)")
        sys.stdout.write(readme_table(rest, all_cells="--all" in argv[1:]))
        return 0
    if argv and argv[0] == "extract":
        if len(argv) < 3:
            sys.exit(__doc__)
        extra = dict(a.split("=", 1) for a in argv[3:])
        extract(argv[1], argv[2], extra)
        return 0
    out, title, inputs = None, None, []
    it = iter(argv)
    for a in it:
        if a in ("-h", "--help"):
            print(__doc__)
            return 0
        if a == "-o":
            out = next(it)
        elif a == "--title":
            title = next(it)
        else:
            inputs.append(a)
    if not inputs:
        inputs = sorted(os.path.join(DEFAULT_DATA, d) for d in os.listdir(DEFAULT_DATA)
                        if os.path.isfile(os.path.join(DEFAULT_DATA, d, "perf_rmmrs.json")))
    if inputs and all(os.path.isdir(p) and is_vs_rmm(p) for p in inputs):
        series, devices = [], []
        for p in inputs:
            label, device, by_anchor = load_vs_rmm(p)
            for anchor, name in VS_RMM_ANCHORS:
                if anchor in by_anchor:
                    series.append((f"{label} \u00f7 {name}", by_anchor[anchor]))
            devices.append(device.split(",")[0])
        if not series:
            sys.exit("no cell measured by both rmm-rs and an RMM release in " + ", ".join(inputs))
        draw(series, RESOURCES,
             "rmm-rs \u00f7 RMM, time per operation\n(W3: RMM's rate \u00f7 rmm-rs's)",
             title or "rmm-rs \u00f7 RAPIDS's RMM 26.10 (and 23.12) per cell of bench/vs-rmm "
                      "(below 1: rmm-rs faster)",
             out or DEFAULT_VS_RMM_OUT, ref_line=1.0,
             note="Devices: " + "; ".join(sorted(set(devices))) + ". Method: docs/benchmarks.md.")
        return 0
    out = out or DEFAULT_OUT
    if all(os.path.isdir(p) for p in inputs):
        series, devices = [], []
        for p in inputs:
            label, device, ratios = load_bvr(p)
            series.append((label, ratios))
            devices.append(device.split(",")[0])
        draw(series, RESOURCES,
             "rmm-rs \u00f7 RMM 23.12, time per operation\n(W3: RMM's rate \u00f7 rmm-rs's)",
             title or "rmm-rs \u00f7 RMM 23.12 per cell of bench-vs-rmm (below 1: rmm-rs faster)",
             out, ref_line=1.0,
             note="Devices: " + "; ".join(sorted(set(devices))) + ". Data: docs/bench/data/; "
                  "method: docs/benchmarks.md.")
    elif not any(os.path.isdir(p) for p in inputs):
        series = [load_rmm_bench(p) for p in inputs]
        draw(series, RMM_BENCH_RESOURCES, "ns per operation (W3: aggregate)",
             title or "rmm-bench: ns per operation (cuda, async: the runtime's malloc and async pool)",
             out)
    else:
        sys.exit("inputs mix bench-vs-rmm folders and rmm-bench JSON files: draw them apart")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
