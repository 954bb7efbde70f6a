"""Helpers: byte-size parsing and argument checks."""

import re

from rmm import _generation

_BYTE_SIZES = {
    "b": 1,
    "": 1,
    "kb": 1000,
    "mb": 1000**2,
    "gb": 1000**3,
    "tb": 1000**4,
    "pb": 1000**5,
    "kib": 1024,
    "mib": 1024**2,
    "gib": 1024**3,
    "tib": 1024**4,
    "pib": 1024**5,
}

_SIZE_RE = re.compile(r"^\s*([0-9]+(?:\.[0-9]*)?)[\t ]*((?:[kmgtpKMGTP][iI]?)?[bB])?\s*$")

#: RMM's module-level expression for a size string (public there, kept for code that uses
#: it): a number, optional blanks, and an optional case-insensitive unit; groups 1 and 2.
#: ``parse_bytes`` uses ``_SIZE_RE``, which also accepts blanks around the whole string.
pattern = re.compile(r"^([0-9]+(?:\.[0-9]*)?)[\t ]*((?i:(?:[kmgtp]i?)?b))?$")


def parse_bytes(s):
    """Return the number of bytes that ``s`` names.

    An ``int`` is returned as it is; a string is a number (possibly with a fraction)
    followed by an optional, case-insensitive unit: ``B``, SI ``kB``..``PB`` (powers of
    1000) or binary ``KiB``..``PiB`` (powers of 1024). Raises ``ValueError`` for a string
    that is not such a size and ``TypeError`` for other types. A number too large for a
    float (hundreds of digits) raises ``ValueError`` as RMM 26.10 does, ``OverflowError``
    as RMM before it did, following the API generation in force.
    """
    if isinstance(s, bool):
        raise TypeError(f"a size must be an int or a string, not {type(s).__name__}")
    if isinstance(s, int):
        return s
    if not isinstance(s, str):
        raise TypeError(f"a size must be an int or a string, not {type(s).__name__}")
    match = _SIZE_RE.match(s)
    if match is None:
        raise ValueError(f"Could not parse {s!r} as a byte specification")
    number = float(match.group(1))
    unit = (match.group(2) or "").lower()
    try:
        return int(number * _BYTE_SIZES[unit])
    except OverflowError:
        if not _generation.available(since="26.10"):
            raise
        raise ValueError(f"Could not parse {s!r} as a byte specification") from None


def check_size(value, name="size"):
    """``value`` as a non-negative int (as Cython's ``size_t`` conversion would take it)."""
    if isinstance(value, bool) or not hasattr(value, "__index__"):
        raise TypeError(f"{name} must be an int, not {type(value).__name__}")
    value = value.__index__()
    if value < 0:
        raise OverflowError(f"{name} must be non-negative, got {value}")
    if value >= 1 << 64:
        raise OverflowError(f"{name} is too large: {value}")
    return value


def check_pointer(value, name="ptr"):
    """``value`` as an address (a non-negative int)."""
    return check_size(value, name)


def parse_size(value, name="size"):
    """A size given as an int or a string such as ``"1GiB"``, checked to be non-negative."""
    return check_size(parse_bytes(value), name)
