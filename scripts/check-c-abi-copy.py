#!/usr/bin/env python3
"""Checks the Python package's declarations of the C ABI against include/rmm/rmm.h.

`python/src/lib.rs` declares the `rmm_*` functions, the status codes and the `#[repr(C)]`
structs it uses; the header is generated from `src/ffi/` by cbindgen. This compares the two
at the level the ABI cares about and fails (exit 1) on any difference:

- every declared function exists in the header, with the same number of parameters and the
  same parameter and return types;
- every status constant has the value of `RMM_STATUS_<NAME>`;
- every `#[repr(C)]` struct has the header struct's fields, in order, with the same types.
  A struct maps to `rmm_<snake_case name>`, or to the `rmm_*` name its doc comment gives.

Types are compared by their ABI: integers by width and signedness (`usize` = `size_t`),
pointers by pointee (`void` and opaque handles alike), function pointers as such, structs
by name. Usage: scripts/check-c-abi-copy.py [rmm.h] [lib.rs]
"""
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HEADER = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "include/rmm/rmm.h"
BINDING = Path(sys.argv[2]) if len(sys.argv) > 2 else ROOT / "python/src/lib.rs"

# Scalars by (kind, bits); the opaque and void pointees compare equal.
C_SCALARS = {
    "size_t": ("u", 64), "uintptr_t": ("u", 64), "uint64_t": ("u", 64), "int64_t": ("i", 64),
    "uint32_t": ("u", 32), "int32_t": ("i", 32), "unsigned": ("u", 32), "int": ("i", 32),
    "uint16_t": ("u", 16), "int16_t": ("i", 16), "uint8_t": ("u", 8), "int8_t": ("i", 8),
    "char": ("i", 8), "bool": ("bool", 8), "double": ("f", 64), "float": ("f", 32),
    "void": ("void", 0),
}
RUST_SCALARS = {
    "usize": ("u", 64), "u64": ("u", 64), "i64": ("i", 64), "u32": ("u", 32), "i32": ("i", 32),
    "c_int": ("i", 32), "c_uint": ("u", 32), "u16": ("u", 16), "i16": ("i", 16), "u8": ("u", 8),
    "i8": ("i", 8), "c_char": ("i", 8), "bool": ("bool", 8), "f64": ("f", 64), "f32": ("f", 32),
    "c_void": ("void", 0), "()": ("void", 0),
}


def strip_c_comments(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", " ", text)


def split_params(params):
    """Splits a parameter list at top-level commas."""
    out, depth, cur = [], 0, ""
    for ch in params:
        if ch in "(<[":
            depth += 1
        elif ch in ")]" or (ch == ">" and not cur.endswith("-")):
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


class Header:
    """The declarations of rmm.h: typedefs, structs, status values, function prototypes."""

    def __init__(self, text):
        text = strip_c_comments(text)
        text = re.sub(r"#ifdef __cplusplus.*?#endif", " ", text, flags=re.S)
        self.aliases = {}  # typedef name -> C type text, or "fn" for function pointers
        self.structs = {}  # name -> [(field, type)]
        self.status = {}
        for m in re.finditer(r"typedef\s+struct\s*\{(.*?)\}\s*(\w+)\s*;", text, flags=re.S):
            self.structs[m.group(2)] = [self.c_decl(f) for f in m.group(1).split(";") if f.strip()]
        body = re.sub(r"typedef\s+struct\s*\{.*?\}\s*\w+\s*;", " ", text, flags=re.S)
        for m in re.finditer(r"typedef\s+[^;(]*\(\s*\*\s*(\w+)\s*\)\s*\([^;]*\)\s*;", body):
            self.aliases[m.group(1)] = "fn"
        for m in re.finditer(r"typedef\s+struct\s+(\w+)\s+(\w+)\s*;", body):
            self.aliases[m.group(2)] = "opaque"
        for m in re.finditer(r"typedef\s+([\w\s\*]+?)\s*(\w+)\s*;", body):
            self.aliases.setdefault(m.group(2), m.group(1))
        enum = re.search(r"enum\s+rmm_status_t\s*\{(.*?)\}", text, flags=re.S)
        for name, value in re.findall(r"(RMM_STATUS_\w+)\s*=\s*(\d+)", enum.group(1)):
            self.status[name] = int(value)
        self.functions = {}
        for m in re.finditer(r"([\w\s\*]+?)\b(rmm_\w+)\s*\(([^;{]*?)\)\s*;", body):
            ret = m.group(1).split("\n")[-1].strip()
            params = split_params(m.group(3))
            if params == ["void"]:
                params = []
            self.functions[m.group(2)] = (
                self.c_type(ret),
                [self.c_decl(p)[1] for p in params],
            )

    def c_decl(self, decl):
        """(name, canonical type) of a C declaration such as `const int32_t *peer_devices`."""
        decl = " ".join(decl.split())
        fn = re.match(r".*\(\s*\*\s*(\w+)\s*\)\s*\(.*\)$", decl)
        if fn:
            return fn.group(1), ("fn",)
        arr = re.match(r"(.*?)(\w+)\s*\[(\d+)\]$", decl)
        if arr:
            return arr.group(2), ("array", self.c_type(arr.group(1)), int(arr.group(3)))
        m = re.match(r"(.*?)(\w+)$", decl)
        return m.group(2), self.c_type(m.group(1))

    def c_type(self, t):
        t = t.replace("const", " ").strip()
        stars = t.count("*")
        base = t.replace("*", " ").split()
        base = " ".join(w for w in base if w not in ("struct", "enum"))
        canon = self.resolve(base)
        for _ in range(stars):
            canon = ("ptr", canon)
        return canon

    def resolve(self, base):
        if base in C_SCALARS:
            return C_SCALARS[base]
        if base in self.structs:
            return ("struct", base)
        alias = self.aliases.get(base)
        if alias == "fn":
            return ("fn",)
        if alias == "opaque":
            return ("void", 0)
        if alias is not None:
            return self.c_type(alias)
        raise SystemExit(f"check-c-abi-copy: unknown C type {base!r} in {HEADER}")


class Binding:
    """The declarations of lib.rs: aliases, consts, `#[repr(C)]` structs, extern functions."""

    def __init__(self, text):
        self.aliases = dict(re.findall(r"^type (\w+) = ([^;]+);", text, flags=re.M))
        self.consts = {n: int(v) for n, v in re.findall(r"^const (\w+): Status = (\d+);", text, flags=re.M)}
        self.structs = {}
        for m in re.finditer(
            r"((?:^///[^\n]*\n)*)^#\[repr\(C\)\]\n(?:^#\[[^\n]*\]\n)*^struct (\w+) \{(.*?)^\}",
            text,
            flags=re.M | re.S,
        ):
            doc, name, body = m.groups()
            named = re.search(r"`(rmm_\w+)`", doc)
            c_name = named.group(1) if named else "rmm_" + re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()
            fields = []
            for f in split_params(body):
                f = f.strip()
                if not f or f.startswith("//"):
                    continue
                fname, ftype = f.split(":", 1)
                fields.append((fname.strip().removeprefix("pub "), self.rust_type(ftype.strip())))
            self.structs[name] = (c_name, fields)
        self.functions = {}
        for block in re.findall(r'^extern "C" \{(.*?)^\}', text, flags=re.M | re.S):
            for m in re.finditer(r"fn (rmm_\w+)\((.*?)\)\s*(?:->\s*([^;]+))?;", block, flags=re.S):
                params = [p.split(":", 1)[1].strip() for p in split_params(m.group(2))]
                self.functions[m.group(1)] = (
                    self.rust_type(m.group(3).strip() if m.group(3) else "()"),
                    [self.rust_type(p) for p in params],
                )

    def rust_type(self, t):
        t = " ".join(t.split())
        if t.startswith("Option<") and t.endswith(">"):
            t = t[len("Option<"):-1]
        if re.match(r"(unsafe )?extern \"C\" fn", t):
            return ("fn",)
        m = re.match(r"\*(mut|const) (.*)$", t)
        if m:
            return ("ptr", self.rust_type(m.group(2)))
        m = re.match(r"\[(\w+); (\d+)\]$", t)
        if m:
            return ("array", self.rust_type(m.group(1)), int(m.group(2)))
        if t in RUST_SCALARS:
            return RUST_SCALARS[t]
        if t in self.aliases:
            return self.rust_type(self.aliases[t])
        if t in self.structs:
            return ("struct", self.structs[t][0])
        raise SystemExit(f"check-c-abi-copy: unknown Rust type {t!r} in {BINDING}")


def main():
    header = Header(HEADER.read_text())
    binding = Binding(BINDING.read_text())
    errors = []
    for name, (ret, params) in sorted(binding.functions.items()):
        if name not in header.functions:
            errors.append(f"{name}: declared in {BINDING.name}, not in rmm.h")
            continue
        c_ret, c_params = header.functions[name]
        if len(params) != len(c_params):
            errors.append(f"{name}: {len(params)} parameters, rmm.h has {len(c_params)}")
            continue
        for i, (r, c) in enumerate(zip(params, c_params)):
            if r != c:
                errors.append(f"{name}: parameter {i + 1} is {r}, rmm.h has {c}")
        if ret != c_ret:
            errors.append(f"{name}: returns {ret}, rmm.h returns {c_ret}")
    for name, value in sorted(binding.consts.items()):
        c_name = "RMM_STATUS_" + name
        if header.status.get(c_name) != value:
            errors.append(f"{name} = {value}, rmm.h has {c_name} = {header.status.get(c_name)}")
    for name, (c_name, fields) in sorted(binding.structs.items()):
        if c_name not in header.structs:
            errors.append(f"struct {name}: no {c_name} in rmm.h")
            continue
        c_fields = header.structs[c_name]
        if [f for f, _ in fields] != [f for f, _ in c_fields] or [t for _, t in fields] != [t for _, t in c_fields]:
            errors.append(f"struct {name}: fields {fields} differ from {c_name}'s {c_fields}")
    for e in errors:
        print(f"check-c-abi-copy: {e}", file=sys.stderr)
    if errors:
        return 1
    print(
        f"check-c-abi-copy: {len(binding.functions)} functions, {len(binding.consts)} status codes "
        f"and {len(binding.structs)} structs of {BINDING} agree with {HEADER} "
        f"({len(header.functions)} functions)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
