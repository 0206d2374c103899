"""mbuffer's command line (`command`), and its status output parsed (status lines, summary,
hash, version).

Pure functions, no I/O. mbuffer computes everything in kiB and always scales by
1024, so every unit prefix is a binary multiple whether it is spelt the old way
(``kB``, ``MByte``) or the new way (``kiB``, ``MiByte``).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from ..units import NUMBER, scale, size_arg

__all__ = [
    "command",
    "LineSplitter",
    "Status",
    "Summary",
    "parse_hash",
    "parse_status",
    "parse_summary",
    "parse_version",
]

# mbuffer's kb2str() prints "%4.1f", "%4.0f" or, past its unit table, "%5.lg".
_NUM = NUMBER
_LEAD = r"\s*(?:mbuffer:\s*)?"


def _unit(name: str) -> str:
    """Regex for a byte unit such as ``MB``, ``kiB``, ``GByte``, ``MiByte``, ``Byte``."""
    return rf"(?P<{name}>[kKMGTPE]?)i?(?:Byte|B)"


_STATUS_RE = re.compile(
    _LEAD
    + rf"in\s*@\s*(?P<in>{_NUM})\s*{_unit('in_u')}/s\s*,"
    + rf"\s*out\s*@\s*(?P<out>{_NUM})\s*{_unit('out_u')}/s\s*,"
    + rf"\s*(?:[0-9]+\s*x\s+)?(?P<total>{_NUM})\s*{_unit('total_u')}\s+total\s*,"
    + rf"\s*buffer\s*(?P<fill>{_NUM})\s*%\s*full+"
    + rf"(?:\s*,\s*{_NUM}\s*%\s*done)?\s*"
)

_SUMMARY_RE = re.compile(
    _LEAD
    + rf"summary:\s*(?:(?P<n>[0-9]+)\s*x\s+)?(?P<total>{_NUM})\s*{_unit('total_u')}\s+in\s+"
    + r"(?:(?P<h>[0-9]+)\s*h\s*)?(?:(?P<m>[0-9]+)\s*min\s*)?"
    + rf"(?:(?P<s>{_NUM})\s*sec\s*)?"
    + r"(?:-\s*)?(?:average\s+of\s*)?"
    + rf"(?P<rate>{_NUM})\s*{_unit('rate_u')}/s"
    + r"(?:\s*,\s*(?P<empty>[0-9]+)\s*x\s*empty)?"
    + r"(?:\s*,\s*[0-9]+\s*x\s*full)?\s*"
)

# New mbuffer: "MD5 hash: 6261...". Old mbuffer: "md5 hash: 62 61 15 ...".
_HASH_RE = re.compile(
    _LEAD + r"[A-Za-z][A-Za-z0-9_-]*\s+hash:\s*(?P<hex>[0-9a-fA-F]{2}(?:\s?[0-9a-fA-F]{2})*)\s*"
)

_VERSION_RE = re.compile(r"\bmbuffer\s+version\s+(?P<v>[^\s,]+)", re.IGNORECASE)

_SEPARATORS = re.compile(rb"[\r\n]")



@dataclass(frozen=True, slots=True)
class Status:
    """One periodic status line: ``in @ R, out @ R, T total, buffer F% full``."""

    in_rate: float  # bytes/s
    out_rate: float  # bytes/s
    total: int  # bytes
    fill: float  # percent 0..100


@dataclass(frozen=True, slots=True)
class Summary:
    """The final ``summary:`` line."""

    total: int  # bytes
    seconds: float
    rate: float  # bytes/s
    empty: int | None  # the "240x empty" count where present


def status_and_rest(line: str) -> tuple[str, str] | None:
    """(the status, the rest) of a status line that another program's words follow with no
    line end between (mbuffer ends its last status line with none, and zfs receive may write
    next: "... buffer   6% full" then "cannot receive ..."); None for any other line."""
    m = _STATUS_RE.match(line)
    if m is None or m.end() == len(line):
        return None
    return line[:m.end()], line[m.end():]


def parse_status(line: str) -> Status | None:
    """Parse one status line; None for anything that is not one.

    Accepts an optional ``mbuffer: `` prefix (``-l`` log files), surrounding
    whitespace, the old ``fulll`` typo and a trailing ``, N% done``. With several
    outputs mbuffer prints ``N x <total>``: ``total`` is then the per-output
    count (the stream position) while ``out_rate`` is the aggregate, as printed.
    """
    m = _STATUS_RE.fullmatch(line)
    if m is None:
        return None
    return Status(
        in_rate=scale(m["in"], m["in_u"]),
        out_rate=scale(m["out"], m["out_u"]),
        total=round(scale(m["total"], m["total_u"])),
        fill=float(m["fill"]),
    )


def _unitless_total(value: float, seconds: float, rate: float, outputs: int) -> float:
    """Recover the unit mbuffer's ``%g`` branch dropped (e.g. ``1e+04 Byte``).

    kb2str() prints a value of exactly 10000 units without its unit letter, so a
    bare number is really kiB, MiB, GiB or TiB. Pick the one closest to
    rate * seconds; without an estimate fall back to kiB, mbuffer's base unit.
    """
    candidates = [value * 1024.0**power for power in range(1, 5)]
    estimate = rate * seconds / outputs
    if not (estimate > 0 and math.isfinite(estimate)):
        return candidates[0]
    return min(candidates, key=lambda c: abs(math.log(c / estimate)) if c > 0 else math.inf)


def parse_summary(line: str) -> Summary | None:
    """Parse the final ``summary:`` line; None for anything else.

    Durations may be ``20.9 sec``, `` 3.0sec``, ``4 min 59.3 sec``,
    ``1h 02min 03.0sec`` or ``1 h 2 min 3.0 sec``. A unit-less total such as
    ``1e+04 Byte`` (an mbuffer formatting bug) is rescaled using rate * seconds.
    """
    m = _SUMMARY_RE.fullmatch(line)
    if m is None or (m["h"] is None and m["m"] is None and m["s"] is None):
        return None
    seconds = (
        int(m["h"] or 0) * 3600.0 + int(m["m"] or 0) * 60.0 + (float(m["s"]) if m["s"] else 0.0)
    )
    rate = scale(m["rate"], m["rate_u"])
    outputs = int(m["n"]) if m["n"] else 1
    if m["total_u"] == "" and float(m["total"]) >= 10000:
        total = _unitless_total(float(m["total"]), seconds, rate, max(outputs, 1))
    else:
        total = scale(m["total"], m["total_u"])
    return Summary(
        total=round(total),
        seconds=seconds,
        rate=rate,
        empty=int(m["empty"]) if m["empty"] else None,
    )


def parse_hash(line: str) -> str | None:
    """Return the lower-case hex digest from ``MD5 hash: <hex>``; None otherwise."""
    m = _HASH_RE.fullmatch(line)
    if m is None:
        return None
    return "".join(m["hex"].split()).lower()


def parse_version(text: str) -> str | None:
    """Return ``R20230301`` from ``mbuffer version R20230301`` (anywhere in text)."""
    m = _VERSION_RE.search(text)
    return m["v"] if m else None


class LineSplitter:
    """Split mbuffer's stderr into pieces at ``\\r`` (status) and ``\\n`` (messages), and a
    status line from another program's words that follow it on the same line
    (`status_and_rest`: mbuffer ends its last status line with none).

    Bytes are split before decoding, so a multi-byte character split across two
    reads is never mangled; the result does not depend on how the stream is chunked.
    """

    __slots__ = ("_tail",)

    def __init__(self) -> None:
        self._tail = b""

    def feed(self, data: bytes) -> list[str]:
        """Add data; return the complete, non-empty pieces and keep a partial tail."""
        parts = _SEPARATORS.split(self._tail + data)
        self._tail = parts.pop()
        return _pieces(parts)

    def peek(self) -> str:
        """The partial piece kept so far (a status line is complete before the separator that
        ends it comes, with the next one half a second later)."""
        return self._tail.decode("utf-8", "replace")

    def flush(self) -> list[str]:
        """Return the remaining partial piece, if any, and reset."""
        tail, self._tail = self._tail, b""
        return _pieces([tail])


def _pieces(parts: list[bytes]) -> list[str]:
    """The non-empty `parts`, decoded, each status line apart from words run into it."""
    out: list[str] = []
    for p in parts:
        if p:
            text = p.decode("utf-8", "replace")
            out += status_and_rest(text) or (text,)
    return out


def command(block: int, size: int, *, hash_: bool, rate: int | None = None,
            listen: str | None = None, send_to: str | None = None,
            log: str | None = None,
            quiet: bool = False, stop_on_error: bool = False) -> list[str]:
    """An mbuffer command line; sizes in bytes.

    No start fill (-P, as the field notes give the receiving side): it only holds `zfs receive`
    back - at the start, after each time the buffer ran empty, and at the end - for no gain:
    side by side on the lab, 300 MiB streams ended ~16 ms sooner without it.

    `stop_on_error` (-e, only with the hash): with --hash, mbuffer has a second output (the
    hash) and, when its real output breaks (the ssh or `zfs receive` after it died), goes on
    reading its whole input into the hash - as long as the rest of `zfs send` takes.
    """
    argv = ["mbuffer"]
    if quiet:
        argv.append("-q")
    if log:
        argv += ["-l", log]
    argv += ["-s", size_arg(block), "-m", size_arg(size)]
    if rate:
        argv += ["-r", size_arg(rate)]
    if listen:
        argv += ["-I", listen]
    if send_to:
        argv += ["-O", send_to]
    if hash_:
        if stop_on_error:
            argv.append("-e")
        argv += ["--hash", "md5"]
    return argv
