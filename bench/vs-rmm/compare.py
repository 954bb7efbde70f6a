#!/usr/bin/env python3
"""Tables of a bench/vs-rmm run (run.sh calls it): rmm-rs against RAPIDS's RMM 26.10 and
against RMM 23.12, cell by cell.

    compare.py --work WORK [--build-status FILE] [--json OUT.json] [--note TEXT]... > comparison.md
    compare.py --from vs_rmm.json > comparison.md          (the tables again, from the JSON)

WORK is run.sh's work folder: json/<variant>/*.json (one file per process: vs_rmm_bench's or
perf_anchor's rows) and gbench/<variant>__<resource>__n<N>__m<M>.json (RMM's random_allocations,
google benchmark's JSON). --json writes every row of every variant into one file (vs_rmm.json),
the input of `bench/figure.py`.

Every ratio reads the same way: below 1, rmm-rs is faster. For times (ns per operation, ms per
iteration) it is rmm-rs's over RMM's; for W3's throughput (pairs per second) RMM's over rmm-rs's.
"""
import argparse
import glob
import json
import os
import re
import sys

RESOURCES = ["pool", "binning", "arena", "cuda_async", "cuda"]
OURS = "rmm-rs"
ANCHORS = ["rmm-26.10", "rmm-23.12"]  # the columns, in order
LABEL = {"rmm-rs": "rmm-rs", "rmm-26.10": "RMM 26.10", "rmm-23.12": "RMM 23.12"}
DIRS = {"rmmrs": "rmm-rs", "rapids": "rmm-26.10", "rmm2312": "rmm-23.12"}
MIB = 1 << 20


def cell_of(workload):
    """The cell a row measures, without its step count: 'W2 churn 1000000 steps' -> 'W2 churn',
    'W3 T=8 50000 steps' -> 'W3 T=8'; W1 keeps its case ('W1 N=10000 max=1MiB')."""
    return re.sub(r" \d+ steps$", "", workload)


def cell_order(cell):
    group = {"W2": 0, "W1": 1, "W4": 2, "W3": 3}.get(cell[:2], 4)
    m = re.match(r"W1 N=(\d+) max=(\d+)MiB", cell)
    if m:
        return (group, int(m.group(2)), int(m.group(1)))
    m = re.match(r"W3 T=(\d+)", cell)
    if m:
        return (group, int(m.group(1)), 0)
    return (group, 0, 0)


def load_work(work):
    """{variant: {"meta": {...}, "rows": [...]}} from the per-process JSON files."""
    out = {}
    for d, variant in DIRS.items():
        files = sorted(glob.glob(os.path.join(work, "json", d, "*.json")))
        if not files:
            continue
        doc = {"meta": {}, "rows": [], "errors": []}
        for f in files:
            try:
                with open(f, encoding="utf-8") as fh:
                    j = json.load(fh)
            except (OSError, ValueError) as e:
                doc["errors"].append(f"{os.path.basename(f)}: unreadable ({e})")
                continue
            for k, v in j.items():
                if k not in ("rows", "error") and k not in doc["meta"]:
                    doc["meta"][k] = v
            if "error" in j:
                doc["errors"].append(j["error"])
            doc["rows"].extend(j.get("rows", []))
        out[variant] = doc
    return out


def load_gbench(work):
    rows = []
    for f in sorted(glob.glob(os.path.join(work, "gbench", "*.json"))):
        name = os.path.basename(f)[:-5]
        try:
            d, resource, n, m = name.split("__")
            with open(f, encoding="utf-8") as fh:
                j = json.load(fh)
        except (ValueError, OSError):
            continue
        for bm in j.get("benchmarks", []):
            if bm.get("run_type", "iteration") != "iteration" or bm.get("error_occurred"):
                continue
            rows.append({"variant": DIRS.get(d, d), "resource": resource, "n": int(n[1:]),
                         "max_mib": int(m[1:]), "name": bm.get("name"),
                         "real_time": bm["real_time"], "time_unit": bm.get("time_unit", "ms"),
                         "iterations": bm.get("iterations")})
    return rows


def fmt(v, digits=1):
    if v is None:
        return "—"
    if abs(v) >= 1000:
        return f"{v:,.0f}".replace(",", " ")
    return f"{v:.{digits}f}"


def fratio(r):
    if r is None:
        return "—"
    return f"{r:.2f}" if r >= 0.01 else f"{r:.3f}"


def ratio(a, b):
    return a / b if a is not None and b else None


class Table:
    def __init__(self, variants):
        self.v = variants
        self.idx = {}
        for name, doc in variants.items():
            for r in doc["rows"]:
                self.idx[(name, r["resource"], cell_of(r["workload"]))] = r

    def row(self, variant, resource, cell):
        return self.idx.get((variant, resource, cell))

    def value(self, variant, resource, cell, key):
        r = self.row(variant, resource, cell)
        if r is None or "error" in r:
            return None
        return r.get(key)

    def cells(self, prefix=None):
        """The cells measured (a workload a process skipped is no cell), in table order."""
        cs = {c for (_, _, c), r in self.idx.items() if not str(r.get("error", "")).startswith("skipped")}
        return sorted((c for c in cs if prefix is None or c.startswith(prefix)), key=cell_order)

    def time_ratio(self, anchor, resource, cell):
        key = "mpairs_per_s" if cell.startswith("W3") else "ns_per_op"
        a = self.value(OURS, resource, cell, key)
        b = self.value(anchor, resource, cell, key)
        if cell.startswith("W3"):
            return ratio(b, a)
        return ratio(a, b)


def markdown(doc):
    variants = doc["variants"]
    t = Table(variants)
    present = [v for v in [OURS] + ANCHORS if v in variants]
    anchors = [a for a in ANCHORS if a in variants]
    out = []
    p = out.append
    p("# rmm-rs against RAPIDS's RMM 26.10" + (" and RMM 23.12" if "rmm-23.12" in variants else ""))
    p("")
    for v in present:
        meta = variants[v]["meta"]
        prog = meta.get("program", "perf_anchor")
        p(f"- {LABEL[v]}: {meta.get('device', '(no run)')}; program {prog}"
          + (f", RMM API {meta['api']}" if meta.get("api") else ""))
    p("- rmm-rs and RMM 26.10 run one source, `bench/vs-rmm/vs_rmm_bench.cpp` (RMM 26.x API), built "
      "twice; RMM 23.12 runs the 23.12 harness's `perf_anchor.cpp` (RMM 23.12's API, the same "
      "workloads and step counts).")
    p("- Each cell: the median of three timed runs after one warm-up (one timed run, or the "
      "warm-up alone, where the warm-up was slow: see the notes). The programs ran alternating, "
      "one process per workload and resource.")
    p("- **Ratios: below 1, rmm-rs is faster.** Times: rmm-rs ÷ RMM. W3 throughput: RMM ÷ rmm-rs.")
    if doc.get("notes"):
        for n in doc["notes"]:
            p(f"- {n}")
    p("")

    def head(cols):
        p("| " + " | ".join(cols) + " |")
        p("|" + "---|" * len(cols))

    res = [r for r in RESOURCES if any(k[1] == r for k in t.idx)]
    if anchors:
        p("## Summary: rmm-rs ÷ " + LABEL[anchors[0]]
          + (f" ({LABEL[anchors[1]]} in brackets)" if len(anchors) > 1 else ""))
        p("")
        head(["cell"] + res)
        for c in t.cells():
            if c.startswith("W3") and c not in ("W3 T=1", "W3 T=8", "W3 T=16"):
                continue
            cells = []
            for r in res:
                rs = [t.time_ratio(a, r, c) for a in anchors]
                s = fratio(rs[0])
                if len(rs) > 1:
                    s += f" ({fratio(rs[1])})"
                cells.append(s if any(x is not None for x in rs) else "—")
            p(f"| {c} | " + " | ".join(cells) + " |")
        p("")

    cols = [LABEL[v] for v in present] + [f"÷ {LABEL[a]}" for a in anchors]
    p("## ns per operation (one allocate or one free)")
    p("")
    head(["resource", "cell"] + cols)
    for r in res:
        for c in t.cells():
            if c.startswith("W3"):
                continue
            vals = [t.value(v, r, c, "ns_per_op") for v in present]
            if all(x is None for x in vals) and not any(t.row(v, r, c) for v in present):
                continue
            p(f"| {r} | {c} | " + " | ".join(fmt(x) for x in vals) + " | "
              + " | ".join(fratio(t.time_ratio(a, r, c)) for a in anchors) + " |")
    p("")
    p("## W2 churn: ns per allocate+free pair")
    p("")
    head(["resource"] + [LABEL[v] for v in present])
    for r in res:
        vals = [t.value(v, r, "W2 churn", "ns_per_op") for v in present]
        if any(x is not None for x in vals):
            p(f"| {r} | " + " | ".join(fmt(None if x is None else 2 * x) for x in vals) + " |")
    p("")
    p("## W3 threads: aggregate Mpairs/s (scaling over T=1)")
    p("")
    head(["resource", "cell"] + [LABEL[v] for v in present]
         + [f"{LABEL[a]} ÷ rmm-rs" for a in anchors])
    for r in res:
        for c in t.cells("W3"):
            vals = []
            for v in present:
                x = t.value(v, r, c, "mpairs_per_s")
                s = t.value(v, r, c, "scaling")
                vals.append("—" if x is None else f"{x:.3f} (×{s:.2f})" if s else f"{x:.3f}")
            if all(x == "—" for x in vals):
                continue
            p(f"| {r} | {c} | " + " | ".join(vals) + " | "
              + " | ".join(fratio(t.time_ratio(a, r, c)) for a in anchors) + " |")
    p("")
    p("## W4 streams: time and peak memory taken from upstream")
    p("")
    head(["resource"] + [f"{LABEL[v]} ms" for v in present]
         + [f"{LABEL[v]} peak MiB (÷ live)" for v in present])
    for r in res:
        times, peaks = [], []
        for v in present:
            x = t.value(v, r, "W4 streams", "seconds")
            times.append(fmt(None if x is None else x * 1e3))
            up = t.value(v, r, "W4 streams", "peak_upstream_bytes")
            live = t.value(v, r, "W4 streams", "peak_live_bytes")
            peaks.append("—" if up is None else f"{fmt(up / MIB)} ({fmt(up / live if live else None, 2)})")
        if any(x != "—" for x in times):
            p(f"| {r} | " + " | ".join(times + peaks) + " |")
    p("")

    gb = doc.get("gbench", [])
    if gb:
        by = {}
        for g in gb:
            by[(g["variant"], g["resource"], g["n"], g["max_mib"])] = g
        cases = sorted({(g["resource"], g["n"], g["max_mib"]) for g in gb},
                       key=lambda c: (RESOURCES.index(c[0]) if c[0] in RESOURCES else 9, c[2], c[1]))
        p("## RMM's own benchmarks/random_allocations (google benchmark, time per iteration)")
        p("")
        head(["resource", "N", "max MiB"] + [LABEL[v] for v in present] + [f"÷ {LABEL[a]}" for a in anchors])
        for (r, n, m) in cases:
            vals = [by.get((v, r, n, m)) for v in present]
            txt = [f"{g['real_time']:.3f} {g['time_unit']}" if g else "—" for g in vals]
            ours = by.get((OURS, r, n, m))
            rs = []
            for a in anchors:
                g = by.get((a, r, n, m))
                ok = g and ours and g["time_unit"] == ours["time_unit"]
                rs.append(fratio(ratio(ours["real_time"], g["real_time"]) if ok else None))
            p(f"| {r} | {n} | {m} | " + " | ".join(txt) + " | " + " | ".join(rs) + " |")
        p("")
        how = {"as-is": "RMM 26.06's file as it is",
               "patched": "RMM 26.06's file with `#include <rmm/cuda_stream_view.hpp>` added (as "
                          "it is, it does not compile: RAPIDS 26.10's headers no longer include "
                          "that header for it)"}
        build = doc.get("build", {})
        for key, name in (("rmmrs", "rmm-rs"), ("rapids", "RMM 26.10")):
            src = build.get(f"random_allocations_{key}-source")
            if src:
                p(f"- {name}: {how.get(src, src)}")
        if "rmm-23.12" in present:
            p("- RMM 23.12: RMM 23.12's own file (the 23.12 harness's build)")
        p("")

    build = doc.get("build", {})
    if build:
        p("## Builds")
        p("")
        p(", ".join(f"{k} {v}" for k, v in sorted(build.items())))
        p("")

    notes = []
    for v in present:
        for e in variants[v].get("errors", []):
            notes.append(f"- {LABEL[v]}: {e}")
        for r in variants[v]["rows"]:
            tag = f"- {LABEL[v]} {r['resource']} {r['workload']}: "
            if "error" in r:
                notes.append(tag + str(r["error"]))
                continue
            extra = []
            if r.get("failures"):
                extra.append(f"{r['failures']} allocation failures")
            for what in ("1 timed run", "the warm-up only"):
                if what in r.get("note", ""):
                    extra.append(what)
            if extra:
                notes.append(tag + ", ".join(extra))
    for r in res:
        for c in t.cells():
            steps = {v: t.value(v, r, c, "steps") for v in present if t.value(v, r, c, "steps")}
            if len(set(steps.values())) > 1:
                notes.append(f"- {r} {c}: different step counts "
                             + ", ".join(f"{LABEL[v]} {s}" for v, s in steps.items()))
    if notes:
        p("## Notes")
        p("")
        out.extend(notes)
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--work")
    ap.add_argument("--from", dest="from_json")
    ap.add_argument("--build-status")
    ap.add_argument("--json")
    ap.add_argument("--note", action="append", default=[])
    a = ap.parse_args()
    if a.from_json:
        with open(a.from_json, encoding="utf-8") as f:
            doc = json.load(f)
    elif a.work:
        doc = {"program": "bench/vs-rmm", "variants": load_work(a.work), "gbench": load_gbench(a.work),
               "notes": a.note}
        if a.build_status and os.path.exists(a.build_status):
            with open(a.build_status, encoding="utf-8") as f:
                doc["build"] = dict(line.split(None, 1) for line in f.read().split("\n") if line.strip())
                doc["build"] = {k: v.strip() for k, v in doc["build"].items()}
    else:
        ap.error("give --work or --from")
    if a.json:
        with open(a.json, "w", encoding="utf-8") as f:
            json.dump(doc, f, indent=1)
            f.write("\n")
    sys.stdout.write(markdown(doc))
    return 0


if __name__ == "__main__":
    sys.exit(main())
