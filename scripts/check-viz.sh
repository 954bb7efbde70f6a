#!/usr/bin/env bash
# rmm-viz in a real browser: records memory snapshots of small C programs
# (tests/data/viz_workload.c through the C ABI, RMM_MEMORY_HISTORY), turns them into reports
# with rmm-viz, renders the reports in headless Chromium and checks the rendered DOM: the
# page rendered without a script error, its self-test (hover, click, the controls; see
# report.js) passed, the timeline has a band per allocation, the block maps show every
# segment's blocks, the sites table has the expected counts, and the 100 000-event report
# renders in time. Screenshots: build/rmm-viz.png (the small run) and build/rmm-viz-100k.png;
# the reports, DOMs and logs are under build/viz-check/.
#
# Needs cargo, a C compiler and Chromium (Debian's `chromium`: scripts/setup.sh test
# installs it). Exits non-zero on any failure.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
out="$root/build/viz-check"
export RMM_RUNTIME="${RMM_RUNTIME:-host}"

fail() {
  echo "check-viz: $*" >&2
  exit 1
}

browser=""
for b in chromium chromium-browser google-chrome; do
  if command -v "$b" >/dev/null; then
    browser="$b"
    break
  fi
done
[[ -n "$browser" ]] || fail "no Chromium found: install it (apt-get install -y chromium; scripts/setup.sh test does)"
command -v python3 >/dev/null || fail "python3 is needed to read the rendered pages"

rm -rf "$out"
mkdir -p "$out"

echo "check-viz: building librmm and rmm-viz (release)"
cargo build --release -p rmm-capi
cargo build --release -p rmm-tools --bin rmm-viz
# cargo's target directory (CARGO_TARGET_DIR or a cargo configuration may move it).
target="$(cargo metadata --format-version 1 --no-deps |
  python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')"
viz="$target/release/rmm-viz"
cc -g -O0 -Wall -Wextra -Werror -I include tests/data/viz_workload.c -L "$target/release" -lrmm \
  -Wl,-rpath,"$target/release" -o "$out/viz_workload"

# render NAME: the page's DOM after its script ran (with the self-test) and a screenshot.
render() {
  local name="$1" png="$2" url="file://$out/$1.html"
  local flags=(--headless --no-sandbox --disable-gpu --disable-dev-shm-usage
    --user-data-dir="$out/chromium-profile" --enable-logging=stderr --v=0)
  timeout 180 "$browser" "${flags[@]}" --dump-dom "$url#selftest" >"$out/$name.dom.html" \
    2>"$out/$name.chromium.log" || {
    tail -n 20 "$out/$name.chromium.log" >&2
    fail "$browser --dump-dom $url failed"
  }
  timeout 180 "$browser" "${flags[@]}" --window-size=1400,1000 --screenshot="$png" "$url" \
    >/dev/null 2>>"$out/$name.chromium.log" || fail "$browser --screenshot $url failed"
  [[ -s "$png" ]] || fail "no screenshot at $png"
  if grep -E "Uncaught|CONSOLE.*[Ee]rror" "$out/$name.chromium.log"; then
    fail "$name: script errors in the browser's log ($out/$name.chromium.log)"
  fi
}

# The small run: known sites and counts (see tests/data/viz_workload.c), with stacks.
echo "check-viz: small run (stacks on)"
RMM_MEMORY_HISTORY="$out/small.json" RMM_MEMORY_HISTORY_STACKS=1 "$out/viz_workload"
"$viz" "$out/small.json" -o "$out/small.html"
render small "$root/build/rmm-viz.png"

# The large run: 120 000 operations into a ring of 100 000 events (the oldest dropped).
echo "check-viz: large run (120 000 operations, 100 000 events kept)"
RMM_MEMORY_HISTORY="$out/large.json" RMM_MEMORY_HISTORY_MAX_ENTRIES=100000 \
  "$out/viz_workload" --many 120000
"$viz" "$out/large.json" -o "$out/large.html"
render large "$root/build/rmm-viz-100k.png"

python3 - "$out" <<'EOF'
import html.parser, json, re, sys

out = sys.argv[1]
problems = []

def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        problems.append(what)

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "wbr"}

class Dom(html.parser.HTMLParser):
    """The elements of a rendered page: tag, attributes and text of each."""
    def __init__(self):
        super().__init__()
        self.elements, self.stack = [], []
    def handle_starttag(self, tag, attrs):
        e = {"tag": tag, "attrs": dict(attrs), "text": ""}
        self.elements.append(e)
        if tag not in VOID:
            self.stack.append(e)
    def handle_startendtag(self, tag, attrs):
        self.elements.append({"tag": tag, "attrs": dict(attrs), "text": ""})
    def handle_endtag(self, tag):
        if any(e["tag"] == tag for e in self.stack):
            while self.stack.pop()["tag"] != tag:
                pass
    def handle_data(self, data):
        for e in self.stack:
            e["text"] += data

def load(name):
    d = Dom()
    d.feed(open(f"{out}/{name}.dom.html", encoding="utf-8").read())
    return d.elements

def find(els, tag=None, cls=None, **attrs):
    res = []
    for e in els:
        if tag and e["tag"] != tag:
            continue
        if cls and cls not in e["attrs"].get("class", "").split():
            continue
        if any(e["attrs"].get(k.replace("_", "-")) != v for k, v in attrs.items()):
            continue
        res.append(e)
    return res

def common(name, els):
    body = find(els, "body")[0]["attrs"]
    check(body.get("data-rendered") == "ok", f"{name}: rendered (data-rendered={body.get('data-rendered')})")
    errors = find(els, "pre", id="errors")
    check(bool(errors) and not errors[0]["text"].strip(), f"{name}: no script errors {errors[0]['text'].strip()[:300] if errors else ''}")
    st = find(els, "pre", id="selftest")
    lines = st[0]["text"].strip().splitlines() if st else []
    check(body.get("data-selftest") == "ok" and lines,
          f"{name}: self-test ({len(lines)} checks: hover, click, the controls)" +
          ("" if body.get("data-selftest") == "ok" else "\n" + "\n".join(lines or ["(no self-test output)"])))
    page = open(f"{out}/{name}.html", encoding="utf-8").read()
    ext = re.findall(r"""(?:src|href)\s*=\s*["']?\s*(?:https?:)?//|url\(\s*["']?(?:https?:)?//|@import|<link\b""", page)
    check(not ext, f"{name}: no external resources in the report {ext[:3]}")
    check(len(find(els, "script", id="rmm-viz-data")) == 1, f"{name}: the data is embedded")
    print(f"     {name}: rendered in {body.get('data-render-ms')} ms")
    return body

# ---- the small run ---------------------------------------------------------------------
snap = json.load(open(f"{out}/small.json"))
els = load("small")
common("small", els)
allocs = sum(1 for e in snap["events"] if e["action"] == "allocate")
svg = find(els, "svg", id="timeline-svg")
check(len(svg) == 1, "small: the timeline's svg")
bands = find(els, "path", "band")
check(len(bands) == allocs == 145, f"small: a band per allocation ({len(bands)} bands, {allocs} allocations, 145 made)")
check(all(re.fullmatch(r"M[-0-9.,HVZ ]+", b["attrs"].get("d", "")) for b in bands), "small: the bands are drawn (paths)")
check(len(find(els, "path", "failed")) == 1 and len(find(els, "path", "refused")) == 1,
      "small: one failed allocation and one refused free marked")
check(len(find(els, "path", "grow")) >= 1, "small: pool growth marked")
segs = find(els, "div", "segment")
check(len(segs) == len(snap["segments"]) >= 3, f"small: a block map per segment ({len(segs)} of {len(snap['segments'])})")
for s in segs:
    i, n = s["attrs"]["data-seg"], int(s["attrs"]["data-blocks"])
    rects = find(els, "rect", "blk", data_s=i)
    kind = snap["segments"][int(i)]["kind"]
    check(len(rects) == n == len(snap["segments"][int(i)]["blocks"]), f"small: segment {i} ({kind}) shows its {n} blocks ({len(rects)} drawn)")
check(any(find(els, "rect", "largest", data_s=s["attrs"]["data-seg"]) for s in segs), "small: the largest free block is marked")
check(any("fragmentation" in e["text"] for e in segs), "small: fragmentation is shown")
rows = find(els, "tr", "site")
def row(site):
    r = [x for x in rows if x["attrs"].get("data-site") == site]
    return r[0]["attrs"] if r else {}
expected = {  # site: (allocations, live at the end)
    "load_batch": (24, 0), "scratch": (40, 0), "build_cache": (6, 6),
    "stream_work": (10, 5), "small_objects": (64, 16),
}
for site, (count, live) in expected.items():
    a = row(site)
    check(a.get("data-count") == str(count) and a.get("data-live") == str(live),
          f"small: site {site}: {count} allocations, {live} live (found {a.get('data-count')}, {a.get('data-live')})")
mains = [x["attrs"] for x in rows if x["attrs"].get("data-site") == "main"]
check(sorted((m["data-count"], m["data-failed"]) for m in mains) == [("0", "1"), ("1", "0")],
      "small: main's failed allocation and its one allocation (two lines of main)")
peak = [x["attrs"] for x in rows]
check(all(int(a["data-peak"]) <= int(a["data-bytes"]) or int(a["data-earlier"]) > 0 for a in peak), "small: peak live ≤ bytes allocated per site")

# ---- the large run ---------------------------------------------------------------------
big = json.load(open(f"{out}/large.json"))
els = load("large")
body = common("large", els)
check(len(big["events"]) == 100000 and big["events_dropped"] > 0, f"large: 100 000 events kept, {big['events_dropped']} dropped")
svg = find(els, "svg", id="timeline-svg")[0]["attrs"]
check(svg.get("data-bands") == "1000" and len(find(els, "path", "band")) == 1000, f"large: 1000 bands ({svg.get('data-bands')})")
check(len(find(els, "path", "other-band")) == 1, "large: the other allocations as one band")
check(int(body.get("data-render-ms", "1000000")) < 15000, "large: rendered within 15 s")
rows = find(els, "tr", "site")
check(len(rows) >= 1, f"large: the sites table has rows ({len(rows)})")

if problems:
    print(f"check-viz: {len(problems)} checks failed", file=sys.stderr)
    sys.exit(1)
EOF
echo "check-viz: ok (screenshots build/rmm-viz.png, build/rmm-viz-100k.png; reports under build/viz-check/)"
