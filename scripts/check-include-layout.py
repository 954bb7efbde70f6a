#!/usr/bin/env python3
"""Checks the layout of the C++ headers' API generations (the rule at the top of
include/rmm/version_config.hpp).

  check-include-layout.py [INCLUDE_DIR]   checks the tree (default: include/ of the repository)
  check-include-layout.py --self-test     checks copies of the tree with one violation each
                                          injected, and fails unless every one is reported

The rules:
  1. A generation's own headers live in rmm/detail/gen_<yy>_<mm>/. Such a header includes
     shared headers, its own folder and older generations' folders, never a newer one. A header
     of a generation newer than the oldest is guarded by `#if RMM_API_GENERATION >= <yymm>`;
     it tests the generation number nowhere else.
  2. A shared header (any other) includes a generation folder only in a selection block:
     `#if RMM_API_GENERATION >= <yymm>` [`#elif ... >= <yymm>`] [`#else`] `#endif`, whose
     branches hold nothing but such includes (or an #error), each of a generation the branch's
     condition admits (>= N: at most N; #else: older than every N). Outside such blocks a
     shared header never tests RMM_API_GENERATION or RMM_API_VERSION (version_config.hpp
     excepted): small differences go through the RMM_DETAIL_API_* knobs.
  3. Every RMM_DETAIL_API_* knob used is defined, once, in version_config.hpp.
  4. The registry keys are defined once: RMM_DETAIL_REGISTRY_KEY only in version_config.hpp,
     and every call of a C ABI function taking a registry key (a `uint32_t key` parameter in
     rmm/rmm.h) passes it.

Standard library only. Exit status 1 with one line per violation, 0 with a one-line summary.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

GEN_DIR_RE = re.compile(r"rmm/detail/gen_(\d\d)_(\d\d)/")
GEN_INCLUDE_RE = re.compile(r'^\s*#\s*include\s*[<"](rmm/detail/gen_(\d\d)_(\d\d)/[^>"]+)[>"]')
INCLUDE_RE = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]')
SELECT_RE = re.compile(r"^\s*#\s*(if|elif)\s+RMM_API_GENERATION\s*>=\s*(\d{4})\s*(//.*)?$")
GENERATION_TEST_RE = re.compile(r"\bRMM_API_(GENERATION|VERSION)\b")
STRING_RE = re.compile(r'"(?:[^"\\]|\\.)*"')
KNOB_RE = re.compile(r"\bRMM_DETAIL_API_[A-Z0-9_]+\b")
KNOB_DEFINE_RE = re.compile(r"^\s*#\s*define\s+(RMM_DETAIL_API_[A-Z0-9_]+)\b")
KEY_DEFINE_RE = re.compile(r"^\s*#\s*define\s+RMM_DETAIL_REGISTRY_KEY\b")
DIRECTIVE_RE = re.compile(r"^\s*#\s*(if|ifdef|ifndef|elif|else|endif)\b")


def strip_comment(line):
    """The line without a // comment (headers here keep // out of string literals)."""
    return line.split("//", 1)[0]


def code_lines(text):
    """(number, line) of each line, with /* */ comments blanked out."""
    out, in_block = [], False
    for number, line in enumerate(text.split("\n"), 1):
        kept = ""
        rest = line
        while rest:
            if in_block:
                end = rest.find("*/")
                if end < 0:
                    rest = ""
                else:
                    rest, in_block = rest[end + 2 :], False
            else:
                start = rest.find("/*")
                if start < 0:
                    kept, rest = kept + rest, ""
                else:
                    kept, rest, in_block = kept + rest[:start], rest[start + 2 :], True
        out.append((number, kept))
    return splice_continuations(out)


def splice_continuations(lines):
    """Joins backslash-continued lines onto the line they start on, as the preprocessor does
    (clang-format breaks a long #error message that way); the continuation lines become
    blank, so line numbers keep pointing into the file."""
    out, start = [], None
    for number, line in lines:
        if start is None:
            out.append((number, line))
        else:
            joined = out[start][1].rstrip()[:-1] + " " + line.strip()
            out[start] = (out[start][0], joined)
            out.append((number, ""))
        continued = out[-1 if start is None else start][1].rstrip().endswith("\\")
        start = (len(out) - 1 if start is None else start) if continued else None
    return out


def generation_of(path):
    """The generation (yymm) of a file in a generation folder, else None."""
    match = GEN_DIR_RE.search(path)
    return int(match.group(1) + match.group(2)) if match else None


def headers(root):
    """Paths (relative to root, '/'-separated) of every header under root/rmm."""
    found = []
    for folder, _, files in os.walk(os.path.join(root, "rmm")):
        for name in files:
            if name.endswith((".hpp", ".h")):
                found.append(os.path.relpath(os.path.join(folder, name), root).replace(os.sep, "/"))
    return sorted(found)


def check_selection_blocks(path, lines, problems):
    """Rule 2 for one shared header: returns the line numbers inside selection blocks."""
    inside = set()
    index = 0
    while index < len(lines):
        number, line = lines[index]
        match = SELECT_RE.match(strip_comment(line)) if line.lstrip().startswith("#") else None
        if not match or match.group(1) != "if":
            index += 1
            continue
        thresholds, branch_limit, depth = [], None, 0
        end = index
        for end in range(index, len(lines)):
            end_number, end_line = lines[end]
            code = strip_comment(end_line).strip()
            directive = DIRECTIVE_RE.match(code)
            inside.add(end_number)
            if directive and directive.group(1) in ("if", "ifdef", "ifndef"):
                depth += 1
                if depth == 1:
                    branch_limit = int(SELECT_RE.match(code).group(2))
                    thresholds.append(branch_limit)
                    continue
            elif directive and directive.group(1) == "endif":
                depth -= 1
                if depth == 0:
                    break
                continue
            if depth > 1:
                problems.append(f"{path}:{end_number}: nested conditional in a selection block")
                continue
            if directive and directive.group(1) == "elif":
                select = SELECT_RE.match(code)
                if not select:
                    problems.append(
                        f"{path}:{end_number}: #elif of a selection block must test "
                        "RMM_API_GENERATION >= <yymm>"
                    )
                    continue
                branch_limit = int(select.group(2))
                thresholds.append(branch_limit)
                continue
            if directive and directive.group(1) == "else":
                branch_limit = -1  # below every threshold: checked at the end
                continue
            if not code or code.startswith("#error"):
                continue
            include = GEN_INCLUDE_RE.match(code)
            if not include:
                problems.append(
                    f"{path}:{end_number}: a selection block holds only includes of "
                    f"rmm/detail/gen_*/ (or #error): '{code}'"
                )
                continue
            generation = int(include.group(2) + include.group(3))
            if branch_limit == -1:
                if thresholds and generation >= min(thresholds):
                    problems.append(
                        f"{path}:{end_number}: #else branch includes generation {generation}, "
                        f"not older than {min(thresholds)}"
                    )
            elif generation > branch_limit:
                problems.append(
                    f"{path}:{end_number}: branch for >= {branch_limit} includes the newer "
                    f"generation {generation}"
                )
        if thresholds != sorted(thresholds, reverse=True):
            problems.append(f"{path}:{number}: selection block not newest first: {thresholds}")
        index = end + 1
    return inside


def key_functions(root):
    """Names of the C ABI functions that take a registry key."""
    try:
        with open(os.path.join(root, "rmm", "rmm.h"), encoding="utf-8") as header:
            text = header.read()
    except OSError:
        return set()
    names = set()
    for match in re.finditer(r"\b(rmm_\w+)\s*\(([^;{]*?)\)\s*;", text, re.S):
        if re.search(r"\buint32_t\s+key\b", match.group(2)):
            names.add(match.group(1))
    return names


def check_key_count(root, config_text, problems):
    """Every generation's registry key is below librmm's TAG_KEYS (src/mr/per_device.rs)."""
    per_device = os.path.join(os.path.dirname(os.path.abspath(root)), "src", "mr", "per_device.rs")
    if not os.path.exists(per_device):
        return
    with open(per_device, encoding="utf-8") as source:
        found = re.search(r"pub const TAG_KEYS: usize = (\d+);", source.read())
    keys = [int(k) for k in re.findall(r"#\s*define\s+RMM_DETAIL_REGISTRY_KEY\s+(\d+)", config_text)]
    if found and keys and max(keys) >= int(found.group(1)):
        problems.append(
            f"rmm/version_config.hpp: registry key {max(keys)} needs TAG_KEYS > {max(keys)} in "
            f"src/mr/per_device.rs (it is {found.group(1)})"
        )


def check(root):
    """All violations of the rules in the tree under root."""
    problems = []
    files = headers(root)
    texts = {}
    for path in files:
        with open(os.path.join(root, path), encoding="utf-8") as source:
            texts[path] = source.read()
    config = "rmm/version_config.hpp"
    generations = sorted({g for g in (generation_of(p) for p in files) if g is not None})
    oldest = generations[0] if generations else None

    knobs_defined = {}
    for path in files:
        for number, line in code_lines(texts[path]):
            define = KNOB_DEFINE_RE.match(line)
            if define:
                if path != config:
                    problems.append(f"{path}:{number}: knob {define.group(1)} defined outside {config}")
                elif define.group(1) in knobs_defined:
                    problems.append(f"{path}:{number}: knob {define.group(1)} defined twice")
                knobs_defined.setdefault(define.group(1), number)
            if KEY_DEFINE_RE.match(line) and path != config:
                problems.append(f"{path}:{number}: RMM_DETAIL_REGISTRY_KEY defined outside {config}")
    check_key_count(root, texts.get(config, ""), problems)

    keyed = key_functions(root)
    for path in files:
        if path in (config, "rmm/rmm.h"):
            continue
        lines = code_lines(texts[path])
        generation = generation_of(path)
        for number, line in lines:
            for knob in KNOB_RE.findall(line):
                if knob not in knobs_defined:
                    problems.append(f"{path}:{number}: knob {knob} is not defined in {config}")
            if re.search(r"\bregistry_key\w*\s*=", line):
                problems.append(f"{path}:{number}: a registry key defined outside {config}")
        text = "\n".join(line for _, line in lines)
        for name in keyed:
            for call in re.finditer(r"\b%s\s*\(" % re.escape(name), text):
                start, depth, end = call.end() - 1, 0, call.end() - 1
                for end in range(start, len(text)):
                    depth += {"(": 1, ")": -1}.get(text[end], 0)
                    if depth == 0:
                        break
                if "RMM_DETAIL_REGISTRY_KEY" not in text[start:end]:
                    number = text.count("\n", 0, call.start()) + 1
                    problems.append(
                        f"{path}:{number}: {name} must be given RMM_DETAIL_REGISTRY_KEY as its key"
                    )

        if generation is not None:
            guard = f"RMM_API_GENERATION >= {generation}"
            guarded = False
            for number, line in lines:
                include = GEN_INCLUDE_RE.match(line)
                if include and int(include.group(2) + include.group(3)) > generation:
                    problems.append(
                        f"{path}:{number}: generation {generation} includes the newer "
                        f"{include.group(1)}"
                    )
                code = strip_comment(line)
                if GENERATION_TEST_RE.search(code):
                    if re.match(r"^\s*#\s*if\s+" + re.escape(guard) + r"\s*$", code):
                        guarded = True
                    else:
                        problems.append(
                            f"{path}:{number}: a generation's header tests the generation only "
                            f"in its guard '#if {guard}'"
                        )
            if generation != oldest and not guarded:
                problems.append(f"{path}: missing its guard '#if {guard}'")
            continue

        inside = check_selection_blocks(path, lines, problems)
        for number, line in lines:
            if number in inside:
                continue
            if GEN_INCLUDE_RE.match(line):
                problems.append(
                    f"{path}:{number}: a shared header includes a generation folder outside a "
                    "selection block"
                )
            # A message may name RMM_API_VERSION: only code outside string literals counts.
            if GENERATION_TEST_RE.search(STRING_RE.sub('""', strip_comment(line))):
                problems.append(
                    f"{path}:{number}: a shared header tests the generation number; use a "
                    f"RMM_DETAIL_API_* knob of {config}"
                )
    return problems, len(files), len(generations)


# One violation of each rule, injected into a copy of the tree: (file, old text, new text).
INJECTIONS = [
    (
        "upward include",
        "rmm/detail/gen_25_02/container_policy.hpp",
        "#include <rmm/resource_ref.hpp>\n",
        "#include <rmm/resource_ref.hpp>\n#include <rmm/detail/gen_26_06/container_policy.hpp>\n",
    ),
    (
        "generation folder included outside a selection block",
        "rmm/detail/basic_device_buffer.hpp",
        "#include <rmm/rmm.h>\n",
        "#include <rmm/rmm.h>\n#include <rmm/detail/gen_25_02/container_policy.hpp>\n",
    ),
    (
        "generation number tested in a shared header",
        "rmm/error.hpp",
        "#if RMM_DETAIL_API_INVALID_ARGUMENT",
        "#if RMM_API_GENERATION >= 2606",
    ),
    (
        "selection branch includes a newer generation",
        "rmm/device_buffer.hpp",
        "#include <rmm/detail/gen_25_02/device_buffer.hpp>",
        "#include <rmm/detail/gen_26_06/device_buffer.hpp>",
    ),
    (
        "unknown knob",
        "rmm/prefetch.hpp",
        "RMM_DETAIL_API_STD_SPAN_PREFETCH",
        "RMM_DETAIL_API_STD_SPAN_PREFETCH_TYPO",
    ),
    (
        "registry key defined twice",
        "rmm/detail/gen_26_06/mr/per_device_resource.hpp",
        "namespace detail {\n",
        "namespace detail {\ninline constexpr std::uint32_t registry_key = 2;\n",
    ),
    (
        "registry key given as a number",
        "rmm/detail/gen_25_02/mr/device/per_device_resource.hpp",
        "rmm_initial_resource_tag(device, RMM_DETAIL_REGISTRY_KEY,",
        "rmm_initial_resource_tag(device, 1,",
    ),
]


def self_test(root):
    """Each injected violation must be reported; returns the failures of the self-test."""
    failures = []
    for what, path, old, new in INJECTIONS:
        with tempfile.TemporaryDirectory() as tmp:
            copy = os.path.join(tmp, "include")
            shutil.copytree(root, copy)
            target = os.path.join(copy, path)
            with open(target, encoding="utf-8") as source:
                text = source.read()
            if old not in text:
                failures.append(f"self-test '{what}': '{old.strip()}' is not in {path} any more")
                continue
            with open(target, "w", encoding="utf-8") as sink:
                sink.write(text.replace(old, new, 1))
            result = subprocess.run(
                [sys.executable, os.path.abspath(__file__), copy],
                capture_output=True,
                text=True,
                check=False,
            )
            if result.returncode == 0:
                failures.append(f"self-test '{what}': the check accepted it ({path})")
    return failures


def main(argv):
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    args = [a for a in argv if a != "--self-test"]
    root = args[0] if args else os.path.join(repo, "include")
    if "--self-test" in argv:
        failures = self_test(root)
        for failure in failures:
            print(failure, file=sys.stderr)
        if failures:
            return 1
        print(f"check-include-layout: {len(INJECTIONS)} of {len(INJECTIONS)} injected violations reported")
        return 0
    problems, count, generations = check(root)
    for problem in problems:
        print(problem, file=sys.stderr)
    if problems:
        print(f"check-include-layout: {len(problems)} violations", file=sys.stderr)
        return 1
    print(
        f"check-include-layout: {count} headers, {generations} generation folders, "
        "layout rule and registry keys hold"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
