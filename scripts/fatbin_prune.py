#!/usr/bin/env python3
"""Prunes the CUDA device code of a shared library down to one GPU architecture, checks the
result, and rebuilds a wheel around changed files. scripts/carry-cudf-wheels.sh uses it to make
RAPIDS's libcudf.so (370 MB, 8 device-code variants) and libnvcomp.so.5 small enough, once
xz-compressed, for a GPU machine that receives at most 64 MiB at a time: a pruned library keeps the machine code
of one architecture only, so it then runs on that architecture only (sm_90: H100, H200) and
fails elsewhere (no kernel image for the device, no PTX to JIT from).

    python3 scripts/fatbin_prune.py list LIB
    python3 scripts/fatbin_prune.py prune LIB OUT [--keep-arch 90]
    python3 scripts/fatbin_prune.py verify ORIGINAL PRUNED [--keep-arch 90]
    python3 scripts/fatbin_prune.py rewheel IN.whl OUT.whl [--drop PREFIX]... [--replace ARCNAME=FILE]...

list: the .nv_fatbin entries per kind, arch and flags word: how many, payload bytes.
prune: copies LIB to OUT and zeroes, in place, the payload of every entry that is not an ELF
  (cubin) for the kept arch: PTX of any arch included. Every header stays, so the file keeps its
  size and layout; zeroed payloads compress to almost nothing. Exit 1 if LIB has no ELF for the
  kept arch (the result could run nowhere).
verify: ORIGINAL and PRUNED have the same size, differ only inside the payloads that prune zeroes
  (parsed from ORIGINAL), and those payloads are all zero in PRUNED. Prints the counts; exit 1
  on any violation.
rewheel: copies the wheel IN.whl to OUT.whl leaving out every member whose name starts with a
  --drop PREFIX and taking the bytes of each --replace ARCNAME from FILE, then regenerates
  *.dist-info/RECORD (sha256 and size of every file; written last). Members keep their order,
  timestamps and permissions; all are deflated at level 9, so the output depends only on the
  inputs (and zlib). A --drop that matches nothing or a --replace of a missing member is an
  error.

The layout parsed (ELF64 little-endian; what NVIDIA's tools write, as read from libcudf and
libnvcomp, not from a published specification):
  ELF header: e_shoff (u64) at 0x28; e_shentsize, e_shnum, e_shstrndx (u16 each) at 0x3a. Each
    section header: sh_name (u32, offset in the .shstrtab section), sh_type (u32), sh_flags,
    sh_addr, sh_offset, sh_size (u64 each). The section named .nv_fatbin holds the device code.
  .nv_fatbin: fatbin containers one after the other, 8-byte aligned, with zero bytes between
    them. Container header (16 bytes): magic 0xBA55ED50 (u32), version (u16), header size (u16),
    size of the entries that follow the header (u64).
  Entry header (its size at +4, 64 bytes or more), then the payload: kind (u16 at +0: 1 PTX,
    2 ELF), header size (u32 at +4), payload size (u64 at +8), arch (u32 at +28: 90 for sm_90 or
    compute_90), flags (u64 at +40). Variants of one arch (libcudf has two sm_120 ELF, and its
    sm_90 one is built with other flags than its sm_80 one) differ only in the flags word, which
    this tool prints but does not interpret: --keep-arch 90 keeps every ELF whose arch is 90.
"""
import argparse
import base64
import collections
import csv
import hashlib
import io
import mmap
import os
import re
import shutil
import struct
import sys
import zipfile

FATBIN_MAGIC = 0xBA55ED50
KIND = {1: "PTX", 2: "ELF"}
CHUNK = 1 << 20


class Entry(collections.namedtuple("Entry", "kind arch flags header payload size")):
    """One fatbin entry: header and payload are file offsets, size the payload's bytes."""

    def label(self):
        return f"{KIND.get(self.kind, f'kind{self.kind}')} {'sm' if self.kind == 2 else 'compute'}_{self.arch}"


def fatbin_section(buf):
    """(offset, size) in the file of the .nv_fatbin section of the ELF64 image buf."""
    if buf[:4] != b"\x7fELF" or buf[4] != 2 or buf[5] != 1:
        raise ValueError("not a little-endian ELF64 file")
    (shoff,) = struct.unpack_from("<Q", buf, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", buf, 0x3A)
    headers = [struct.unpack_from("<IIQQQQ", buf, shoff + i * shentsize) for i in range(shnum)]
    strtab = headers[shstrndx][4]
    for name, _type, _flags, _addr, offset, size in headers:
        start = strtab + name
        if buf[start:buf.find(b"\0", start)] == b".nv_fatbin":
            return offset, size
    raise ValueError("no .nv_fatbin section")


def entries(buf):
    """Every entry of every fatbin container in the .nv_fatbin section of buf, in file order."""
    offset, size = fatbin_section(buf)
    p, end = offset, offset + size
    out = []
    while p < end:
        magic, _version, hsize, fsize = struct.unpack_from("<IHHQ", buf, p)
        if magic != FATBIN_MAGIC:
            if buf[p:p + 8] != bytes(8):
                raise ValueError(f"neither a fatbin container nor zero padding at {p:#x}")
            p += 8
            continue
        q, cend = p + hsize, p + hsize + fsize
        if cend > end:
            raise ValueError(f"fatbin container at {p:#x} runs past the section")
        while q < cend:
            kind, _, ehsize, psize = struct.unpack_from("<HHIQ", buf, q)
            (arch,) = struct.unpack_from("<I", buf, q + 28)
            (flags,) = struct.unpack_from("<Q", buf, q + 40)
            if ehsize < 48 or q + ehsize + psize > cend:
                raise ValueError(f"bad fatbin entry header at {q:#x}")
            out.append(Entry(kind, arch, flags, q, q + ehsize, psize))
            q += ehsize + psize
        p = cend
    return out


def kept(entry, arch):
    return entry.kind == 2 and entry.arch == arch


def mapped(path):
    with open(path, "rb") as f:
        return mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)


def cmd_list(args):
    buf = mapped(args.lib)
    offset, size = fatbin_section(buf)
    groups = collections.defaultdict(lambda: [0, 0])
    found = entries(buf)
    for e in found:
        g = groups[(e.kind, e.arch, e.flags)]
        g[0] += 1
        g[1] += e.size
    print(f"{args.lib}: {len(buf)} bytes; .nv_fatbin at {offset:#x}, {size} bytes, {len(found)} entries")
    print(f"  {'entry':<14} {'flags':>10} {'count':>6} {'payload bytes':>14}")
    for (kind, arch, flags), (n, b) in sorted(groups.items()):
        print(f"  {Entry(kind, arch, flags, 0, 0, 0).label():<14} {flags:#10x} {n:>6} {b:>14}")
    print(f"  {'total':<14} {'':>10} {len(found):>6} {sum(e.size for e in found):>14}")


def cmd_prune(args):
    found = entries(mapped(args.lib))
    zero = [e for e in found if not kept(e, args.keep_arch)]
    if len(zero) == len(found):
        sys.exit(f"prune: {args.lib} has no ELF for sm_{args.keep_arch}: nothing would run")
    shutil.copyfile(args.lib, args.out)
    with open(args.out, "r+b") as f:
        for e in zero:
            f.seek(e.payload)
            left = e.size
            while left:
                n = min(left, CHUNK)
                f.write(bytes(n))
                left -= n
    labels = sorted({e.label() for e in zero}, key=lambda s: (s.split()[0], int(s.rsplit("_", 1)[1])))
    print(f"prune: {args.out}: zeroed {len(zero)} of {len(found)} entries ({sum(e.size for e in zero)} bytes): "
          f"{', '.join(labels)}; kept {len(found) - len(zero)} ELF sm_{args.keep_arch}; "
          f"{os.path.getsize(args.out)} bytes as before")


def cmd_verify(args):
    a, b = mapped(args.original), mapped(args.pruned)
    bad = 0
    if len(a) != len(b):
        print(f"verify: sizes differ: {len(a)} and {len(b)} bytes")
        sys.exit(1)
    found = entries(a)
    zero = sorted((e.payload, e.payload + e.size) for e in found if not kept(e, args.keep_arch))
    nkept = len(found) - len(zero)
    if nkept == 0:
        print(f"verify: {args.original} has no ELF for sm_{args.keep_arch}")
        bad += 1
    # bytes outside the zeroed payloads: identical (headers, kept ELF, the rest of the file)
    outside_diff = 0
    pos = 0
    for start, stop in zero + [(len(a), len(a))]:
        for c in range(pos, start, CHUNK):
            x, y = a[c:min(c + CHUNK, start)], b[c:min(c + CHUNK, start)]
            if x != y:
                outside_diff += sum(1 for u, v in zip(x, y) if u != v)
        pos = max(pos, stop)
    # the zeroed payloads: all zero in PRUNED
    nonzero = was_nonzero = 0
    for start, stop in zero:
        for c in range(start, stop, CHUNK):
            x, y = a[c:min(c + CHUNK, stop)], b[c:min(c + CHUNK, stop)]
            nonzero += len(y) - y.count(0)
            was_nonzero += len(x) - x.count(0)
    zbytes = sum(stop - start for start, stop in zero)
    print(f"verify: {len(a)} bytes each; {len(found)} fatbin entries: {nkept} ELF sm_{args.keep_arch} kept, "
          f"{len(zero)} zeroable ({zbytes} bytes)")
    print(f"  bytes differing outside the zeroable payloads: {outside_diff}")
    print(f"  non-zero bytes inside the zeroable payloads of the pruned file: {nonzero} "
          f"(in the original: {was_nonzero})")
    bad += outside_diff > 0
    bad += nonzero > 0
    print("verify: OK" if not bad else "verify: FAILED")
    sys.exit(1 if bad else 0)


def record_hash(data):
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def cmd_rewheel(args):
    replace = {}
    for r in args.replace:
        name, sep, path = r.partition("=")
        if not sep:
            sys.exit(f"rewheel: --replace {r}: want ARCNAME=FILE")
        replace[name] = path
    with zipfile.ZipFile(args.inp) as zin:
        infos = zin.infolist()
        names = {i.filename for i in infos}
        records = [i for i in infos if re.fullmatch(r"[^/]+\.dist-info/RECORD", i.filename)]
        if len(records) != 1:
            sys.exit(f"rewheel: {args.inp}: {len(records)} *.dist-info/RECORD members")
        record = records[0]
        missing = sorted(set(replace) - names)
        unused = [d for d in args.drop if not any(n.startswith(d) for n in names)]
        if missing or unused:
            sys.exit(f"rewheel: not in {args.inp}: {' '.join(missing + unused)}")
        if record.filename in replace or any(record.filename.startswith(d) for d in args.drop):
            sys.exit("rewheel: RECORD is regenerated, not dropped or replaced")
        rows, dropped, tmp = [], 0, args.out + ".part"
        with zipfile.ZipFile(tmp, "w") as zout:
            def put(info, data):
                zi = zipfile.ZipInfo(info.filename, info.date_time)
                zi.external_attr, zi.create_system = info.external_attr, info.create_system
                zi.compress_type = zipfile.ZIP_STORED if info.is_dir() else zipfile.ZIP_DEFLATED
                zout.writestr(zi, data, compresslevel=9)

            for info in infos:
                n = info.filename
                if n == record.filename:
                    continue
                if any(n.startswith(d) for d in args.drop):
                    dropped += 1
                    continue
                if n in replace:
                    with open(replace[n], "rb") as f:
                        data = f.read()
                else:
                    data = zin.read(n)
                put(info, data)
                if not info.is_dir():
                    rows.append([n, record_hash(data), str(len(data))])
            rows.append([record.filename, "", ""])
            text = io.StringIO()
            csv.writer(text, lineterminator="\n").writerows(rows)
            put(record, text.getvalue().encode())
    os.replace(tmp, args.out)
    print(f"rewheel: {args.out}: {len(rows)} files in RECORD; dropped {dropped} members "
          f"({' '.join(args.drop) or 'none'}), replaced {len(replace)} ({' '.join(replace) or 'none'})")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("list", help="fatbin entries per kind, arch and flags, with bytes")
    s.add_argument("lib")
    s.set_defaults(func=cmd_list)
    s = sub.add_parser("prune", help="zero every payload but the kept arch's ELF, into OUT")
    s.add_argument("lib")
    s.add_argument("out")
    s.add_argument("--keep-arch", type=int, default=90)
    s.set_defaults(func=cmd_prune)
    s = sub.add_parser("verify", help="PRUNED differs from ORIGINAL only as prune makes it")
    s.add_argument("original")
    s.add_argument("pruned")
    s.add_argument("--keep-arch", type=int, default=90)
    s.set_defaults(func=cmd_verify)
    s = sub.add_parser("rewheel", help="copy a wheel, dropping and replacing members; new RECORD")
    s.add_argument("inp", metavar="IN.whl")
    s.add_argument("out", metavar="OUT.whl")
    s.add_argument("--drop", action="append", default=[], metavar="PREFIX")
    s.add_argument("--replace", action="append", default=[], metavar="ARCNAME=FILE")
    s.set_defaults(func=cmd_rewheel)
    args = p.parse_args()
    try:
        args.func(args)
    except ValueError as e:
        sys.exit(f"{args.cmd}: {e}")


if __name__ == "__main__":
    main()
