#!/usr/bin/env python3
"""Checks the layer rule of the Rust library (src/lib.rs: ffi -> mr -> runtime, nothing
calls upward) and the size of its source files. Fails (exit 1) on any of:

- ffi: a file outside the top layer reaches `crate::ffi`. The top layer is src/lib.rs,
  src/ffi/, and the memory history's snapshot writer with its facade and tests
  (src/history/{mod,snapshot,tests}.rs), which enumerates the C handles;
- runtime: a file under src/runtime/ reaches `crate::mr`, `crate::device` or the memory
  history beyond its recorder (`crate::history::recorder`);
- recorder: the memory-history recorder (src/history/recorder.rs), a leaf that the lower
  layers call, reaches anything above it: `crate::mr`, `crate::device`, the rest of
  `crate::history`, or `crate::runtime` beyond `crate::runtime::os`;
- pool: a file under src/mr/pool/ reaches `crate::mr::vmm_pool` (the vmm pool is built on
  the pool, not the other way round);
- size: a source file of the library (src/ but src/bin/, whose binaries are crates of their
  own) other than a test file (`tests.rs`, `*_tests.rs`) has more than 1000 lines.

"Reaches" is a path in code (comments and string literals do not count): `crate::x`,
`super::x` and `self::x` resolved from the file's module, grouped imports
(`use crate::{a, b::c}`) expanded, `$crate` as `crate`.

Usage: scripts/check-layers.py [--root DIR]   checks DIR/src (default: the repository's)
       scripts/check-layers.py --self-test    checks that copies of src/ with one injected
                                               violation each fail, and that the clean copy
                                               (with a comment naming crate::ffi) passes
"""
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MAX_LINES = 1000

TOP = {"lib.rs", "history/mod.rs", "history/snapshot.rs", "history/tests.rs"}


def strip(code):
    """`code` without comments and with string and char literals emptied (lines kept)."""
    out = []
    i, n = 0, len(code)
    while i < n:
        c = code[i]
        if code.startswith("//", i):
            j = code.find("\n", i)
            i = n if j < 0 else j
        elif code.startswith("/*", i):
            depth, i = 1, i + 2
            while i < n and depth:
                if code.startswith("/*", i):
                    depth, i = depth + 1, i + 2
                elif code.startswith("*/", i):
                    depth, i = depth - 1, i + 2
                else:
                    if code[i] == "\n":
                        out.append("\n")
                    i += 1
        elif re.match(r'b?r#*"', code[i:i + 40]) and not re.match(r"\w", code[i - 1:i] or " "):
            m = re.match(r'b?r(#*)"', code[i:])
            end = '"' + m.group(1)
            j = code.find(end, i + m.end())
            j = n if j < 0 else j + len(end)
            out.append('""' + "\n" * code.count("\n", i, j))
            i = j
        elif c == '"':
            j = i + 1
            while j < n and code[j] != '"':
                j += 2 if code[j] == "\\" else 1
            out.append('""' + "\n" * code.count("\n", i, j))
            i = j + 1
        elif c == "'":
            m = re.match(r"'(\\.[^']*|[^\\'])'", code[i:])
            if m:
                out.append("' '")
                i += m.end()
            else:
                out.append(c)
                i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def module_of(rel):
    """The module path of the file `rel` (relative to src/): ['crate', ...]."""
    parts = list(Path(rel).with_suffix("").parts)
    if parts[-1] in ("mod", "lib"):
        parts = parts[:-1]
    return ["crate"] + parts


def expand_use(tree):
    """The paths a `use` tree names: `a::{b, c::{d, e}}` -> a::b, a::c::d, a::c::e."""
    tree = re.sub(r"\s+", "", tree)
    m = re.match(r"^(.*?)\{(.*)\}$", tree)
    if not m:
        return [re.sub(r"as\w+$", "", tree)] if "::" in tree or tree else []
    prefix, inner = m.group(1), m.group(2)
    parts, depth, cur = [], 0, ""
    for ch in inner:
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
            continue
        depth += (ch == "{") - (ch == "}")
        cur += ch
    parts.append(cur)
    out = []
    for p in parts:
        if p in ("", "self"):
            out.append(prefix.rstrip(":"))
        else:
            out.extend(prefix + q for q in expand_use(p))
    return out


def paths(code, module):
    """Absolute paths (lists of names from `crate`) that `code` names."""
    found = []
    for m in re.finditer(r"\buse\s+([^;]*);", code):
        found.extend(expand_use(m.group(1)))
    for m in re.finditer(r"(?<![\w:])\$?(?:crate|super|self)(?:::\w+)+", code):
        found.append(m.group(0))
    out = []
    for p in found:
        names = [x for x in p.replace("$crate", "crate").split("::") if x]
        if not names or names[0] not in ("crate", "super", "self"):
            continue
        if names[0] == "crate":
            out.append(names)
            continue
        base = list(module)
        while names and names[0] in ("super", "self"):
            if names.pop(0) == "super":
                base.pop()
        if base:
            out.append(base + names)
    return out


def reaches(p, prefix):
    return p[: len(prefix)] == prefix


def check(src):
    errors = []
    files = sorted(f for f in src.rglob("*.rs") if not f.relative_to(src).as_posix().startswith("bin/"))
    for f in files:
        rel = f.relative_to(src).as_posix()
        text = f.read_text()
        name = f.name
        test_file = name == "tests.rs" or name.endswith("_tests.rs")
        lines = text.count("\n")
        if not test_file and lines > MAX_LINES:
            errors.append(f"size: src/{rel} has {lines} lines (at most {MAX_LINES} outside tests)")
        used = paths(strip(text), module_of(rel))

        def flag(rule, p):
            errors.append(f"{rule}: src/{rel} reaches {'::'.join(p)}")

        top = rel in TOP or rel.startswith("ffi/")
        for p in used:
            if not top and reaches(p, ["crate", "ffi"]):
                flag("ffi", p)
            if rel.startswith("runtime/"):
                if (
                    reaches(p, ["crate", "mr"])
                    or reaches(p, ["crate", "device"])
                    or (reaches(p, ["crate", "history"]) and not reaches(p, ["crate", "history", "recorder"]))
                ):
                    flag("runtime", p)
            if rel == "history/recorder.rs":
                if (
                    reaches(p, ["crate", "mr"])
                    or reaches(p, ["crate", "device"])
                    or reaches(p, ["crate", "ffi"])
                    or (reaches(p, ["crate", "history"]) and not reaches(p, ["crate", "history", "recorder"]))
                    or (reaches(p, ["crate", "runtime"]) and not reaches(p, ["crate", "runtime", "os"]))
                ):
                    flag("recorder", p)
            if (rel == "mr/pool.rs" or rel.startswith("mr/pool/")) and reaches(p, ["crate", "mr", "vmm_pool"]):
                flag("pool", p)
    return files, sorted(set(errors))


def run(root):
    src = Path(root) / "src"
    files, errors = check(src)
    for e in errors:
        print(f"check-layers: {e}", file=sys.stderr)
    if errors:
        print(f"check-layers: {len(errors)} violations in {src}", file=sys.stderr)
        return 1
    print(f"check-layers: {len(files)} files of {src} keep the layers and the size limit")
    return 0


# (file under src/, text appended, rule the check must report)
INJECTIONS = [
    ("mr/mod.rs", "\nfn _probe() { let _ = crate::ffi::live_resources(); }\n", "ffi"),
    ("mr/pool/shard.rs", "\nuse super::super::super::{error, ffi::live_resources};\n", "ffi"),
    ("runtime/select.rs", "\nuse crate::mr::SharedResource;\n", "runtime"),
    ("runtime/host/mod.rs", "\nfn _probe() { let _ = crate::history::snapshot(); }\n", "runtime"),
    ("history/recorder.rs", "\nuse super::snapshot::describe;\n", "recorder"),
    ("mr/pool/growth.rs", "\nuse super::super::vmm_pool::VirtualSpace;\n", "pool"),
    ("mr/free_index.rs", "const _: () = ();\n" * (MAX_LINES + 1), "size"),
]


def self_test():
    script = Path(__file__).resolve()
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        for case, (rel, text, rule) in enumerate([(None, None, None)] + INJECTIONS):
            root = Path(tmp) / str(case)
            shutil.copytree(ROOT / "src", root / "src")
            if rel is None:
                # Comments and strings name ffi freely.
                with open(root / "src/mr/mod.rs", "a") as f:
                    f.write('\n// crate::ffi::live_resources()\nconst _: &str = "crate::ffi";\n')
            else:
                with open(root / "src" / rel, "a") as f:
                    f.write(text)
            r = subprocess.run(
                [sys.executable, str(script), "--root", str(root)],
                capture_output=True,
                text=True,
            )
            if rel is None:
                if r.returncode != 0:
                    failures.append(f"the clean copy failed:\n{r.stderr}")
            elif r.returncode == 0 or f"{rule}: src/{rel}" not in r.stderr:
                failures.append(f"a {rule} violation injected in src/{rel} was not reported")
    for f in failures:
        print(f"check-layers --self-test: {f}", file=sys.stderr)
    if failures:
        return 1
    print(f"check-layers --self-test: {len(INJECTIONS)} injected violations reported, the clean copy passes")
    return 0


def main(argv):
    if argv == ["--self-test"]:
        return self_test()
    if len(argv) == 2 and argv[0] == "--root":
        return run(argv[1])
    if not argv:
        return run(ROOT)
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
