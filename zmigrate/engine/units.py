"""Sizes and rates: binary units (k = 1024, as mbuffer and zfs count), parsed and printed."""

from __future__ import annotations

import math
import re
from typing import Final

KiB: Final = 1024
MiB: Final = 1024 * KiB
GiB: Final = 1024 * MiB
TiB: Final = 1024 * GiB

_PREFIX_POWER = {"": 0, "k": 1, "K": 1, "M": 2, "G": 3, "T": 4, "P": 5, "E": 6}
# A decimal number as mbuffer's kb2str() prints it ("%4.1f", "%4.0f", "%5.lg") and people type it.
NUMBER: Final = r"(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
_SIZE_RE = re.compile(
    rf"\s*(?P<num>{NUMBER})\s*(?P<p>[kKmMgGtTpPeE]?)(?P<suffix>iB|iByte|B|Byte|bytes?)?\s*"
)

_FORMAT_UNITS = ("KiB", "MiB", "GiB", "TiB", "PiB", "EiB")


def scale(value: str, prefix: str) -> float:
    """`value` times 1024 to the power of a unit prefix ("", K, M, G ...)."""
    return float(value) * 1024.0 ** _PREFIX_POWER[prefix]


def parse_size(text: str) -> int:
    """Parse ``128k``, ``1G``, ``20M``, ``512``, ``1.5G``, ``2 GiB`` into bytes.

    Prefixes are binary (k = 1024). Raises ValueError on anything else.
    """
    m = _SIZE_RE.fullmatch(text)
    if m is None:
        raise ValueError(f"not a size: {text!r}")
    prefix, suffix = m["p"], m["suffix"] or ""
    if suffix.startswith("i") and not prefix:
        raise ValueError(f"not a size: {text!r}")
    value = scale(m["num"], prefix.upper())
    if not math.isfinite(value):
        raise ValueError(f"size out of range: {text!r}")
    return round(value)


def format_size(n: float) -> str:
    """Format a byte count for humans: ``0 B``, ``128 KiB``, ``1.5 GiB``.

    Raises ValueError for NaN or infinity.
    """
    if not math.isfinite(n):
        raise ValueError(f"not a finite size: {n!r}")
    sign = "-" if n < 0 else ""
    value = abs(float(n))
    if round(value) < 1024:
        return f"{sign}{round(value)} B"
    unit = 0
    value /= 1024.0
    while round(value, 1) >= 1024 and unit < len(_FORMAT_UNITS) - 1:
        value /= 1024.0
        unit += 1
    text = f"{value:.1f}".removesuffix(".0")
    return f"{sign}{text} {_FORMAT_UNITS[unit]}"


def format_rate(n: float | None) -> str:
    """A rate as people read it: ``135.6 MiB/s``, or ``-`` when unknown."""
    return "-" if n is None else f"{format_size(n)}/s"


def size_arg(n: int) -> str:
    """A size the way a person writes it for mbuffer: 128k, 64M, 1G, or plain bytes."""
    for unit, factor in (("G", GiB), ("M", MiB), ("k", KiB)):
        if n >= factor and n % factor == 0:
            return f"{n // factor}{unit}"
    return str(n)
