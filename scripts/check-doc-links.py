#!/usr/bin/env python3
"""Checks every relative link and image of README.md and docs/**/*.md: the file or folder
it names exists, and a #fragment names a heading of the target (GitHub's anchors: lower
case, punctuation dropped, spaces to hyphens). Links in code blocks and to other sites are
not checked. Prints each broken link and a summary; exit status 1 when one is broken.

    python3 scripts/check-doc-links.py [FILE.md ...]
"""
import glob
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")


def slug(heading):
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link's text
    text = text.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def prose(path):
    """The file's lines outside fenced code blocks, with inline code spans blanked."""
    out, fence = [], None
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            m = re.match(r"\s*(```|~~~)", line)
            if m:
                fence = None if fence == m.group(1) else (fence or m.group(1))
                continue
            if fence is None:
                out.append((n, re.sub(r"`[^`]*`", "``", line)))
    return out


def anchors(path):
    seen, result = {}, set()
    for _, line in prose(path):
        m = re.match(r"(#{1,6})\s+(.*?)\s*#*\s*$", line)
        if m:
            s = slug(m.group(2))
            k = seen.get(s, 0)
            seen[s] = k + 1
            result.add(s if k == 0 else f"{s}-{k}")
    with open(path, encoding="utf-8") as f:  # explicit <a name=...> / id=... anchors
        result.update(re.findall(r"<a\s+(?:name|id)=\"([^\"]+)\"", f.read()))
    return result


def main(files):
    files = files or [os.path.join(ROOT, "README.md")] + sorted(
        glob.glob(os.path.join(ROOT, "docs", "**", "*.md"), recursive=True))
    checked, broken = 0, []
    cache = {}
    for md in files:
        for n, line in prose(md):
            for target in LINK.findall(line):
                if re.match(r"[a-z][a-z0-9+.-]*:", target, re.I):  # http:, mailto:, ...
                    continue
                checked += 1
                path, _, frag = target.partition("#")
                dest = os.path.normpath(os.path.join(os.path.dirname(md), path)) if path else md
                where = f"{os.path.relpath(md, ROOT)}:{n}: {target}"
                if not os.path.exists(dest):
                    broken.append(f"{where}: no such file")
                    continue
                if frag:
                    if not dest.endswith(".md") or os.path.isdir(dest):
                        broken.append(f"{where}: a fragment on a file that is not markdown")
                        continue
                    if dest not in cache:
                        cache[dest] = anchors(dest)
                    if frag not in cache[dest]:
                        broken.append(f"{where}: no heading #{frag} in {os.path.relpath(dest, ROOT)}")
    for b in broken:
        print(b)
    print(f"check-doc-links: {len(files)} files, {checked} relative links, {len(broken)} broken")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
