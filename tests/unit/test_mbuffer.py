"""Unit tests for zmigrate.engine.readings.mbuffer (the parser of mbuffer's status output)."""

from __future__ import annotations

import dataclasses
import math
import re
from pathlib import Path

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from zmigrate.engine.readings.mbuffer import (
    LineSplitter,
    Status,
    Summary,
    parse_hash,
    parse_status,
    parse_summary,
    parse_version,
)
from zmigrate.engine.units import format_size, parse_size

DATA = Path(__file__).resolve().parent.parent / "data" / "mbuffer"

KiB = 1024
MiB = 1024**2
GiB = 1024**3
TiB = 1024**4


def _status(in_rate: float, out_rate: float, total: float, fill: float) -> Status:
    return Status(in_rate=in_rate, out_rate=out_rate, total=round(total), fill=fill)


def _summary(total: float, seconds: float, rate: float, empty: int | None = None) -> Summary:
    return Summary(total=round(total), seconds=seconds, rate=rate, empty=empty)


def _assert_same(got: object, want: object) -> None:
    """Compare dataclasses field by field: ints exactly, floats with pytest.approx."""
    assert type(got) is type(want)
    assert dataclasses.is_dataclass(want)
    for field in dataclasses.fields(want):
        name = field.name
        g, w = getattr(got, name), getattr(want, name)
        if isinstance(w, float):
            assert g == pytest.approx(w, rel=1e-12, abs=1e-9), name
        else:
            assert g == w, name


# --------------------------------------------------------------------------------------
# 2008-2010 field notes: every status/summary line quoted in /work/shared/seeds/*.txt
# --------------------------------------------------------------------------------------

SEED_EXPECTED: dict[str, Status | Summary] = {
    "summary: 170 GByte in 4 min 59.3 sec - average of 583 MB/s": _summary(
        170 * GiB, 299.3, 583 * MiB
    ),
    "summary: 678 MByte in 20.9 sec - average of 32.5 MB/s": _summary(678 * MiB, 20.9, 32.5 * MiB),
    "summary: 9.9 GByte in 3 min 13.6 sec - average of 52.5 MB/s": _summary(
        9.9 * GiB, 193.6, 52.5 * MiB
    ),
    "summary: 7410 MByte in 1 min 28.7 sec - average of 83.5 MB/s": _summary(
        7410 * MiB, 88.7, 83.5 * MiB
    ),
    "summary: 7410 MByte in 1 min 14.9 sec - average of 98.9 MB/s": _summary(
        7410 * MiB, 74.9, 98.9 * MiB
    ),
    "in @ 103 MB/s, out @ 103 MB/s, 912 MB total, buffer 100% full": _status(
        103 * MiB, 103 * MiB, 912 * MiB, 100.0
    ),
    # mbuffer's kb2str() prints exactly 10000 units with "%5.lg " and no unit letter.
    # The notes say it was dd bs=1024k count=10000, i.e. 10000 MiB, which agrees with
    # rate * seconds (204 MiB/s * 49 s ~ 9996 MiB); the parser recovers the unit that way.
    "summary: 1e+04 Byte in 49.0 sec - average of 204 MB/s": _summary(10000 * MiB, 49.0, 204 * MiB),
    "in @ 233 MB/s, out @ 233 MB/s, 7882 MB total, buffer 100% full": _status(
        233 * MiB, 233 * MiB, 7882 * MiB, 100.0
    ),
    "summary: 1e+04 Byte in 43.3 sec - average of 231 MB/s": _summary(10000 * MiB, 43.3, 231 * MiB),
    "summary: 1e+04 Byte in 32.1 sec - average of 311 MB/s": _summary(10000 * MiB, 32.1, 311 * MiB),
    "  in @  113 MB/s, out @  225 MB/s, 38.3 GB total, buffer   1% fulll": _status(
        113 * MiB, 225 * MiB, 38.3 * GiB, 1.0
    ),
    "  summary: 38.3 GByte in 10 min 12.3 sec - average of 64.1 MB/s, 240x empty": _summary(
        38.3 * GiB, 612.3, 64.1 * MiB, 240
    ),
    "  in @  0.0 kB/s, out @  113 MB/s, 38.3 GB total, buffer   0% full": _status(
        0.0, 113 * MiB, 38.3 * GiB, 0.0
    ),
    "  summary: 38.3 GByte in 10 min 12.2 sec - average of 64.1 MB/s": _summary(
        38.3 * GiB, 612.2, 64.1 * MiB
    ),
    "in @ 15.8 MB/s, out @ 8923 kB/s, 1.0 GB total, buffer   6% full": _status(
        15.8 * MiB, 8923 * KiB, 1.0 * GiB, 6.0
    ),
}


def _seed_lines() -> list[str]:
    text = (DATA / "seeds-2008-2010.txt").read_text(encoding="utf-8")
    return [line for line in text.splitlines() if line.strip() and not line.startswith("#")]


def test_seed_fixture_and_expectations_cover_the_same_lines() -> None:
    lines = _seed_lines()
    assert len(lines) == len(set(lines)) == 15
    assert set(lines) == set(SEED_EXPECTED)


@pytest.mark.parametrize("line", _seed_lines())
def test_seed_line(line: str) -> None:
    want = SEED_EXPECTED[line]
    if isinstance(want, Status):
        _assert_same(parse_status(line), want)
        assert parse_summary(line) is None
    else:
        _assert_same(parse_summary(line), want)
        assert parse_status(line) is None
    assert parse_hash(line) is None


@pytest.mark.parametrize("line", _seed_lines())
def test_seed_line_with_logfile_prefix(line: str) -> None:
    prefixed = "mbuffer: " + line.strip()
    want = SEED_EXPECTED[line]
    got = parse_status(prefixed) if isinstance(want, Status) else parse_summary(prefixed)
    _assert_same(got, want)


# --------------------------------------------------------------------------------------
# Raw stderr captured from Debian's mbuffer R20230301 (see README in the data folder)
# --------------------------------------------------------------------------------------

MD5 = "626115eee9fcaefa18f29b5e79d4b28c"  # md5sum of the 20 MiB input used for the captures

# file -> (number of status lines, first status, last status, summary, hash, other lines)
CAPTURES: dict[str, tuple[int, Status | None, Status | None, Summary | None, str | None, int]] = {
    "r20230301-stall-input-idle.err": (
        9,
        _status(11.4 * MiB, 11.4 * MiB, 8192 * KiB, 0.0),
        _status(0.0, 0.0, 8192 * KiB, 0.0),
        _summary(12.0 * MiB, 5.1, 2416 * KiB),
        None,
        0,
    ),
    "r20230301-stall-output-blocked.err": (
        11,
        _status(17.0 * MiB, 5790 * KiB, 4096 * KiB, 25.0),
        _status(0.0, 0.0, 12.0 * MiB, 0.0),
        _summary(12.0 * MiB, 6.1, 2016 * KiB),
        None,
        0,
    ),
    "r20230301-stall-output-blocked-full.err": (
        7,
        _status(11.4 * MiB, 0.0, 0.0, 98.0),
        _status(0.0, 0.0, 0.0, 98.0),
        _summary(40.0 * MiB, 4.1, 9919 * KiB),
        None,
        0,
    ),
    "r20230301-fast.err": (
        0,
        None,
        None,
        _summary(100 * MiB, 0.4, 270 * MiB),
        None,
        0,
    ),
    "r20230301-ratelimited.err": (
        5,
        _status(10.0 * MiB, 10.0 * MiB, 7168 * KiB, 0.0),
        _status(10.0 * MiB, 10.0 * MiB, 27.0 * MiB, 0.0),
        _summary(30.0 * MiB, 3.0, 10.1 * MiB),
        None,
        0,
    ),
    "r20230301-prefill-empty.err": (
        5,
        _status(10.0 * MiB, 10.0 * MiB, 7168 * KiB, 0.0),
        _status(8437 * KiB, 6903 * KiB, 24.5 * MiB, 8.0),
        _summary(30.0 * MiB, 3.0, 10.1 * MiB, 8),
        None,
        0,
    ),
    "r20230301-hash-md5.err": (
        3,
        _status(10.0 * MiB, 10.0 * MiB, 7168 * KiB, 0.0),
        _status(10.0 * MiB, 10.0 * MiB, 17.0 * MiB, 0.0),
        _summary(20.0 * MiB, 1.9, 10.4 * MiB),
        MD5,
        0,
    ),
    "r20230301-logfile.err": (
        3,
        _status(10.0 * MiB, 6025 * KiB, 4224 * KiB, 9.0),
        _status(10.0 * MiB, 8435 * KiB, 16.1 * MiB, 3.0),
        _summary(20.0 * MiB, 1.9, 10.3 * MiB, 4),
        MD5,
        0,
    ),
    "r20230301-logfile-verbose.err": (
        3,
        _status(10.0 * MiB, 10.0 * MiB, 7168 * KiB, 0.0),
        _status(10.0 * MiB, 10.0 * MiB, 17.0 * MiB, 0.0),
        _summary(20.0 * MiB, 1.9, 10.4 * MiB),
        None,
        27,
    ),
    "r20230301-net-recv.err": (
        3,
        _status(10.0 * MiB, 6025 * KiB, 4224 * KiB, 9.0),
        _status(8182 * KiB, 8182 * KiB, 16.1 * MiB, 3.0),
        _summary(20.0 * MiB, 1.9, 10.3 * MiB, 4),
        MD5,
        0,
    ),
    "r20230301-net-send.err": (
        3,
        _status(10.0 * MiB, 10.0 * MiB, 7168 * KiB, 0.0),
        _status(8181 * KiB, 8181 * KiB, 17.0 * MiB, 0.0),
        _summary(20.0 * MiB, 1.9, 10.3 * MiB),
        None,
        0,
    ),
    "r20230301-large.err": (
        7,
        _status(1461 * MiB, 1461 * MiB, 1024 * MiB, 0.0),
        _status(1249 * MiB, 1249 * MiB, 6109 * MiB, 0.0),
        _summary(6144 * MiB, 3.7, 1647 * MiB),
        None,
        0,
    ),
    "r20230301-infile-done.err": (
        3,
        _status(10.0 * MiB, 10.0 * MiB, 7168 * KiB, 0.0),
        _status(10.0 * MiB, 10.0 * MiB, 17.0 * MiB, 0.0),
        _summary(20.0 * MiB, 2.0, 10.0 * MiB),
        None,
        1,
    ),
    # Two outputs: "2 x <total>" is per output; out rate and summary rate are aggregates.
    "r20230301-two-outputs.err": (
        3,
        _status(15.7 * MiB, 20.0 * MiB, 7168 * KiB, 97.0),
        _status(8182 * KiB, 20.0 * MiB, 17.0 * MiB, 75.0),
        _summary(20.0 * MiB, 2.0, 20.0 * MiB),
        None,
        1,
    ),
    "r20230301-fatal-option.err": (0, None, None, None, None, 1),
    "r20230301-bad-hash.err": (0, None, None, _summary(0, 0.0, 0.0), None, 1),
}

_LOOKS_LIKE_STATUS = re.compile(r"^\s*(?:mbuffer:\s*)?in @")


def test_every_capture_has_expectations() -> None:
    assert {p.name for p in DATA.glob("r20230301-*.err")} == set(CAPTURES)
    for path in DATA.iterdir():
        assert path.stat().st_size < 20_000, path.name


def _pieces(path: Path) -> list[str]:
    splitter = LineSplitter()
    return splitter.feed(path.read_bytes()) + splitter.flush()


@pytest.mark.parametrize("name", sorted(CAPTURES))
def test_capture(name: str) -> None:
    n_status, first, last, summary, digest, n_other = CAPTURES[name]
    raw = (DATA / name).read_bytes()
    pieces = _pieces(DATA / name)

    statuses = [s for s in map(parse_status, pieces) if s is not None]
    summaries = [s for s in map(parse_summary, pieces) if s is not None]
    hashes = [h for h in map(parse_hash, pieces) if h is not None]
    others = [
        p
        for p in pieces
        if parse_status(p) is None and parse_summary(p) is None and parse_hash(p) is None
    ]

    # Every piece that looks like a status line parses; nothing is parsed twice.
    assert len(statuses) == n_status == sum(bool(_LOOKS_LIKE_STATUS.match(p)) for p in pieces)
    assert len(statuses) + len(summaries) + len(hashes) + len(others) == len(pieces)
    # On a terminal-less stderr each status line is introduced by '\r'.
    if b"\r" in raw:
        assert raw.count(b"\r") == n_status
    if first is not None and last is not None:
        _assert_same(statuses[0], first)
        _assert_same(statuses[-1], last)
    if summary is None:
        assert summaries == []
    else:
        assert len(summaries) == 1
        _assert_same(summaries[0], summary)
    assert hashes == ([digest] if digest else [])
    assert len(others) == n_other
    # Totals never go backwards and fill stays a percentage.
    totals = [s.total for s in statuses]
    assert totals == sorted(totals)
    assert all(0.0 <= s.fill <= 100.0 for s in statuses)


@pytest.mark.parametrize("name", sorted(CAPTURES))
def test_capture_split_byte_by_byte(name: str) -> None:
    raw = (DATA / name).read_bytes()
    splitter = LineSplitter()
    pieces: list[str] = []
    for i in range(len(raw)):
        pieces += splitter.feed(raw[i : i + 1])
    pieces += splitter.flush()
    assert pieces == _pieces(DATA / name)


def test_capture_summary_consistent_with_md5sum_input() -> None:
    """The network receiver saw exactly the 20 MiB that was sent, and hashed it."""
    recv = _pieces(DATA / "r20230301-net-recv.err")
    send = _pieces(DATA / "r20230301-net-send.err")
    recv_sum = [s for s in map(parse_summary, recv) if s]
    send_sum = [s for s in map(parse_summary, send) if s]
    assert recv_sum[0].total == send_sum[0].total == 20 * MiB


# --------------------------------------------------------------------------------------
# Lines that are not status / summary / hash lines
# --------------------------------------------------------------------------------------

NOT_STATUS = [
    "mbuffer: warning: No controlling terminal and no autoloader command specified.",
    'mbuffer: fatal: unknown option "md5"',
    "mbuffer: error: invalid or unsupported hash function md55",
    "",
    "   ",
    "cannot receive: failed to read from stream",
    "mbuffer: 256 blocks with 128kiB",
    "mbuffer: allocating 32MiB as buffer",
    "in @",
    "in @ 10.0 MiB/s",
    "in @ 10.0 MiB/s, out @ 10.0 MiB/s, 7168 kiB total",
    "in @ fast MiB/s, out @ 10.0 MiB/s, 7168 kiB total, buffer   0% full",
    "in @ 10.0 MiB/s, out @ 10.0 MiB/s, 7168 kiB total, buffer   0% full trailing junk",
    "xin @ 10.0 MiB/s, out @ 10.0 MiB/s, 7168 kiB total, buffer   0% full",
    "in @ 10.0 MiB/s, out @ 10.0 MiB/s, 7168 kiB total, buffer   0% full\nsummary: x",
    "summary: 20.0 MiByte in  1.9sec - average of 10.4 MiB/s",
    "MD5 hash: 626115eee9fcaefa18f29b5e79d4b28c",
    "mbuffer version R20230301",
    "summary:",
    "summary: 20.0 MiByte in - average of 10.4 MiB/s",
    "summary: 20.0 MiByte in 1.9sec - average of 10.4 MiB/s, many empty",
    "summary: 20.0 parsecs in 1.9sec - average of 10.4 MiB/s",
]


@pytest.mark.parametrize("line", NOT_STATUS)
def test_not_status(line: str) -> None:
    assert parse_status(line) is None


@pytest.mark.parametrize("line", [ln for ln in NOT_STATUS if not ln.startswith("summary: 20.0 M")])
def test_not_summary(line: str) -> None:
    assert parse_summary(line) is None


@pytest.mark.parametrize("line", [ln for ln in NOT_STATUS if not ln.startswith("MD5")])
def test_not_hash(line: str) -> None:
    assert parse_hash(line) is None


# --------------------------------------------------------------------------------------
# Formats seen in mbuffer's source or other versions, and liberal input
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "want"),
    [
        (
            "summary: 1.2 TiByte in 1h 02min 03.0sec - average of  330 MiB/s, 3x empty, 2x full",
            _summary(1.2 * TiB, 3723.0, 330 * MiB, 3),
        ),
        (
            "summary: 1.2 TByte in 1 h 2 min 3.0 sec - average of  330 MB/s",
            _summary(1.2 * TiB, 3723.0, 330 * MiB),
        ),
        (
            "summary: 401 MiByte in 4.4sec - average of 91.4 MiB/s",
            _summary(401 * MiB, 4.4, 91.4 * MiB),
        ),
        (
            "summary: 38.3 GByte in 10 min 12.3 sec - average of 64.1 MB/s, 29x empty",
            _summary(38.3 * GiB, 612.3, 64.1 * MiB, 29),
        ),
        (
            "\tmbuffer: summary:  100 MiByte in  0.4sec - average of  270 MiB/s \r\n",
            _summary(100 * MiB, 0.4, 270 * MiB),
        ),
        (
            "summary:  4 min 59.3 sec",  # no total: rejected below, see test
            None,
        ),
        # Old mbuffer (2008) forgot "sec - average of" when the run took over an hour.
        (
            "summary: 170 GByte in 1 h 05 min  583 MB/s",
            _summary(170 * GiB, 3900.0, 583 * MiB),
        ),
        (
            "summary: 2x 20.0 MiByte in  2.0sec - average of 20.0 MiB/s",
            _summary(20 * MiB, 2.0, 20 * MiB),
        ),
        (
            "summary: 2 x 1e+04 Byte in 20.0 sec - average of 1000 MB/s",
            _summary(10000 * MiB, 20.0, 1000 * MiB),
        ),
        # Unit lost and nothing to estimate from: fall back to kiB, mbuffer's base unit.
        (
            "summary: 1e+04 Byte in  0.0sec - average of  0.0 kiB/s",
            _summary(10000 * KiB, 0.0, 0.0),
        ),
    ],
)
def test_summary_variants(line: str, want: Summary | None) -> None:
    got = parse_summary(line)
    if want is None:
        assert got is None
    else:
        _assert_same(got, want)


@pytest.mark.parametrize(
    ("line", "want"),
    [
        (
            "in @  0.0 KiB/s, out @ 14.3 MiB/s, 43.6 MiB total, buffer  10% full,  93% done",
            _status(0.0, 14.3 * MiB, 43.6 * MiB, 10.0),
        ),
        (
            "mbuffer: in @  164 MiB/s, out @  164 MiB/s, 3102 MiB total, buffer  99% full",
            _status(164 * MiB, 164 * MiB, 3102 * MiB, 99.0),
        ),
        (
            "in @ 95.2 MiB/s, out @ 94.8 MiB/s, 1234 GiB total, buffer  78% full",
            _status(95.2 * MiB, 94.8 * MiB, 1234 * GiB, 78.0),
        ),
        (
            "\rin @ 10.0 MiB/s, out @ 20.0 MiB/s, 2 x 12.0 MiB total, buffer  97% full\n",
            _status(10 * MiB, 20 * MiB, 12 * MiB, 97.0),
        ),
        (
            "in @  0.0 kiB/s, out @  0.0 kiB/s,  0.0 kiB total, buffer   0% full",
            _status(0.0, 0.0, 0, 0.0),
        ),
        (
            "in @ 1.5 TiB/s, out @ 1.5 TiB/s, 71.1 MiB total, buffer 100% full",
            _status(1.5 * TiB, 1.5 * TiB, 71.1 * MiB, 100.0),
        ),
        (
            "in @ 1.0 GiB/s, out @ 1.0 GiB/s, 71.1 MiByte total, buffer 50% full",
            _status(GiB, GiB, 71.1 * MiB, 50.0),
        ),
    ],
)
def test_status_variants(line: str, want: Status) -> None:
    _assert_same(parse_status(line), want)


@pytest.mark.parametrize(
    ("line", "want"),
    [
        ("MD5 hash: 626115eee9fcaefa18f29b5e79d4b28c", MD5),
        ("mbuffer: MD5 hash: 626115EEE9FCAEFA18F29B5E79D4B28C  ", MD5),
        # mbuffer 2008-2010 printed "md5 hash:" followed by space-separated bytes.
        ("md5 hash: 62 61 15 ee e9 fc ae fa 18 f2 9b 5e 79 d4 b2 8c", MD5),
        ("SHA256 hash: " + "ab" * 32, "ab" * 32),
        ("MD5 hash:", None),
        ("MD5 hash: xyz", None),
        ("MD5 hash: 626", None),
        ("hash: 626115eee9fcaefa18f29b5e79d4b28c", None),
    ],
)
def test_parse_hash(line: str, want: str | None) -> None:
    assert parse_hash(line) == want


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("mbuffer version R20230301", "R20230301"),
        (
            "mbuffer version R20230301\nCopyright 2001-2023 - T. Maier-Komor\n"
            "License: GPLv3 - see the LICENSE file\n",
            "R20230301",
        ),
        ("mbuffer version 20100610\n", "20100610"),
        ("  mbuffer version R20220418  ", "R20220418"),
        ("", None),
        ('mbuffer: fatal: unknown option "-V"', None),
        ("bash: mbuffer: command not found", None),
    ],
)
def test_parse_version(text: str, want: str | None) -> None:
    assert parse_version(text) == want


# --------------------------------------------------------------------------------------
# parse_size / format_size
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("128k", 128 * KiB),
        ("128K", 128 * KiB),
        ("1G", GiB),
        ("1g", GiB),
        ("20M", 20 * MiB),
        ("2048M", 2048 * MiB),
        ("512", 512),
        ("0", 0),
        ("1.5G", 3 * GiB // 2),
        ("0.5k", 512),
        ("2T", 2 * TiB),
        (" 2 GiB ", 2 * GiB),
        ("128kB", 128 * KiB),
        ("128 KiB", 128 * KiB),
        ("4 MiByte", 4 * MiB),
        ("512B", 512),
        ("512 bytes", 512),
        ("1e3", 1000),
    ],
)
def test_parse_size(text: str, want: int) -> None:
    got = parse_size(text)
    assert got == want
    assert isinstance(got, int)


@pytest.mark.parametrize(
    "text",
    ["", " ", "k", "abc", "12x", "-1k", "1.5.2G", "iB", "1 iB", "nan", "inf", "1 2", "1kk", "10%"],
)
def test_parse_size_rejects_junk(text: str) -> None:
    with pytest.raises(ValueError, match="size"):
        parse_size(text)


def test_parse_size_rejects_overflow() -> None:
    with pytest.raises(ValueError, match="size"):
        parse_size("1e400")


@pytest.mark.parametrize(
    ("n", "want"),
    [
        (0, "0 B"),
        (0.4, "0 B"),
        (1, "1 B"),
        (1023, "1023 B"),
        (1024, "1 KiB"),
        (1536, "1.5 KiB"),
        (128 * KiB, "128 KiB"),
        (1.5 * GiB, "1.5 GiB"),
        (20 * MiB, "20 MiB"),
        (71.1 * MiB, "71.1 MiB"),
        (MiB - 1, "1 MiB"),
        (1023.5, "1 KiB"),
        (3 * TiB, "3 TiB"),
        (1024**6, "1 EiB"),
        (1024**7, "1024 EiB"),
        (-1536, "-1.5 KiB"),
    ],
)
def test_format_size(n: float, want: str) -> None:
    assert format_size(n) == want


@pytest.mark.parametrize("n", [math.nan, math.inf, -math.inf])
def test_format_size_rejects_non_finite(n: float) -> None:
    with pytest.raises(ValueError, match="finite"):
        format_size(n)


@given(st.integers(min_value=0, max_value=1024**6))
def test_format_size_parses_back(n: int) -> None:
    text = format_size(n)
    back = parse_size(text)
    # One decimal: within 0.05 of the unit, relative error < 5 %, and exact below 1 KiB.
    assert back == n if n < 1024 else abs(back - n) <= 0.051 * n


# --------------------------------------------------------------------------------------
# LineSplitter
# --------------------------------------------------------------------------------------


def test_line_splitter_keeps_partial_tail() -> None:
    sp = LineSplitter()
    assert sp.feed(b"\rin @ 10.0 MiB/s, out") == []
    assert sp.feed(b" @ 10.0 MiB/s, 7168 kiB total, buffer   0% full\rin @ 1") == [
        "in @ 10.0 MiB/s, out @ 10.0 MiB/s, 7168 kiB total, buffer   0% full"
    ]
    assert sp.feed(b"") == []
    assert sp.flush() == ["in @ 1"]
    assert sp.flush() == []


def test_line_splitter_drops_empty_pieces_and_handles_crlf() -> None:
    sp = LineSplitter()
    assert sp.feed(b"\r\n\n\ra\r\nb\n\r") == ["a", "b"]
    assert sp.flush() == []


def test_line_splitter_multibyte_across_chunks() -> None:
    data = "mbuffer: error opening Grüße.txt: No such file\n".encode()
    cut = data.index("ü".encode()) + 1  # in the middle of the two-byte 'ü'
    sp = LineSplitter()
    assert sp.feed(data[:cut]) == []
    assert sp.feed(data[cut:]) == ["mbuffer: error opening Grüße.txt: No such file"]


def test_line_splitter_invalid_utf8_is_replaced() -> None:
    sp = LineSplitter()
    assert sp.feed(b"bad \xff byte\n") == ["bad \ufffd byte"]


_TEXT = st.text(alphabet=st.sampled_from(list("in @%.,: 0123456789kMiB/s\r\n\tüé€")), max_size=200)


@given(_TEXT, st.lists(st.integers(min_value=0, max_value=800), max_size=12))
def test_line_splitter_chunking_invariant(text: str, cuts: list[int]) -> None:
    data = text.encode()
    whole = LineSplitter()
    expected = whole.feed(data) + whole.flush()
    assert expected == [p for p in re.split(r"[\r\n]", text) if p]

    bounds = sorted({min(c, len(data)) for c in cuts} | {0, len(data)})
    chunked = LineSplitter()
    got: list[str] = []
    for lo, hi in zip(bounds, bounds[1:], strict=False):
        got += chunked.feed(data[lo:hi])
    got += chunked.flush()
    assert got == expected


# --------------------------------------------------------------------------------------
# Round trip against a Python copy of mbuffer's own formatter (kb2str in mbuffer.c)
# --------------------------------------------------------------------------------------


def _kb2str(kib: float, new_style: bool) -> tuple[str, float] | None:
    """Format like mbuffer's kb2str(); return (text, half a unit of the last digit in bytes).

    None for the "%5.lg" branch (value exactly 10000 units or past TiB): mbuffer drops
    the unit letter there, so the value cannot round-trip from a status line.
    """
    dims = "kMGT"
    i = 0
    v = kib
    while v > 10000.0:
        v /= 1024.0
        i += 1
        if i == len(dims):
            return None
    suffix = dims[i] + ("i" if new_style else "")
    unit = 1024.0 ** (i + 1)
    if v < 100:
        return f"{v:4.1f} {suffix}", 0.05 * unit
    if v < 10000:
        return f"{round(v):4.0f} {suffix}", 0.5 * unit
    return None


_KIB = st.floats(min_value=0.0, max_value=1e12, allow_nan=False, allow_infinity=False)


@given(
    in_kib=_KIB,
    out_kib=_KIB,
    total_kib=_KIB,
    fill=st.floats(min_value=0.0, max_value=100.0),
    done=st.none() | st.floats(min_value=0.0, max_value=100.0),
    senders=st.integers(min_value=1, max_value=3),
    new_style=st.booleans(),
    logfile=st.booleans(),
)
def test_status_round_trip(
    in_kib: float,
    out_kib: float,
    total_kib: float,
    fill: float,
    done: float | None,
    senders: int,
    new_style: bool,
    logfile: bool,
) -> None:
    fin, fout, ftot = (_kb2str(v, new_style) for v in (in_kib, out_kib, total_kib))
    assume(fin is not None and fout is not None and ftot is not None)
    assert fin is not None  # for mypy
    assert fout is not None
    assert ftot is not None
    many = f"{senders} x " if senders != 1 else ""
    line = f"in @ {fin[0]}B/s, out @ {fout[0]}B/s, {many}{ftot[0]}B total, buffer {fill:3.0f}% full"
    if done is not None:
        line += f", {done:3.0f}% done"
    line = ("mbuffer: " + line + "\n") if logfile else ("\r" + line)

    got = parse_status(line)
    assert got is not None, line
    assert abs(got.in_rate - in_kib * 1024) <= fin[1] * (1 + 1e-9)
    assert abs(got.out_rate - out_kib * 1024) <= fout[1] * (1 + 1e-9)
    assert abs(got.total - total_kib * 1024) <= ftot[1] * (1 + 1e-9) + 0.5
    assert abs(got.fill - fill) <= 0.5 + 1e-9
    assert parse_summary(line) is None


@given(
    total_kib=st.integers(min_value=0, max_value=10**12),
    secs=st.floats(min_value=0.05, max_value=10 * 86400.0),
    empty=st.integers(min_value=0, max_value=10**6),
    full=st.integers(min_value=0, max_value=1000),
)
def test_summary_round_trip(total_kib: int, secs: float, empty: int, full: int) -> None:
    # Mirrors summary() in mbuffer.c R20230301.
    rate_kib = total_kib / secs
    ftot, frate = _kb2str(total_kib, True), _kb2str(rate_kib, True)
    assume(ftot is not None and frate is not None)
    assert ftot is not None  # for mypy
    assert frate is not None
    h = int(secs) // 3600
    m = int(secs - h * 3600) // 60
    s = secs - (m * 60 + h * 3600)
    if h > 0:
        dur = f"{h}h {m:02d}min {s:04.1f}sec"
    elif m > 0:
        dur = f"{m:2d}min {s:04.1f}sec"
    else:
        dur = f"{s:4.1f}sec"
    line = f"summary: {ftot[0]}Byte in {dur} - average of {frate[0]}B/s"
    if empty:
        line += f", {empty}x empty"
    if full:
        line += f", {full}x full"

    got = parse_summary(line)
    assert got is not None, line
    assert abs(got.total - total_kib * 1024) <= ftot[1] * (1 + 1e-9) + 0.5
    assert abs(got.rate - rate_kib * 1024) <= frate[1] * (1 + 1e-9)
    assert got.seconds == pytest.approx(secs, abs=0.05 + 1e-6)
    assert got.empty == (empty or None)
    assert parse_status(line) is None


def test_the_doctors_meter_takes_a_status_line_as_it_comes_not_with_the_next_one() -> None:
    """A stage of one second sees one or two status lines: each one counts when it arrives
    whole ("% full"), not half a second later when the next one ends it, and only once."""
    from zmigrate.engine.doctor.measure import Meter

    text = (DATA / "r20230301-net-recv.err").read_bytes()
    statuses = [p for p in text.split(b"\r") if p.rstrip().endswith(b"full")]
    assert len(statuses) >= 2
    meter = Meter()
    meter.feed(b"\r" + statuses[0])
    assert len(meter.points) == 1  # no separator after it yet
    meter.feed(b"\r" + statuses[1][:10])  # ends the first: not counted twice
    assert len(meter.points) == 1
    meter.feed(statuses[1][10:])
    assert [total for _, total in meter.points] == [
        parse_status(s.decode()).total for s in statuses[:2]]  # type: ignore[union-attr]


def test_the_doctors_meter_measures_from_the_first_bytes_out_not_from_a_slow_start() -> None:
    """A CPU-starved ssh takes a second or more to log in while its mbuffer already prints
    status lines of 0 bytes out: those seconds are start-up, not the stage's rate."""
    from zmigrate.engine.doctor.measure import Meter

    meter = Meter()
    rate = 30 * 1024 * 1024
    meter.points = [(0.5, 0), (1.0, 0), (1.5, 0)]
    meter.points += [(1.5 + 0.5 * i, int(rate * 0.5 * i) + 4096) for i in range(1, 14)]
    got = meter.rate(0.0, completed=False)
    assert got == pytest.approx(rate, rel=0.001)
    # Flowing from the start: the first line (start-up and set-up) is still left out.
    meter.points = [(0.5, 1000)] + [(0.5 * i, rate * 0.5 * i) for i in range(2, 16)]
    assert meter.rate(0.0, completed=False) == pytest.approx(rate, rel=0.001)
