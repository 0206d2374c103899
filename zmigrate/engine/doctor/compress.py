"""The doctor's compression stage, and what it predicts.

On the source, and never on disk: the first SAMPLE bytes of `zfs send SNAP` are held in an
mbuffer's memory until they are all read (so the read does not pace what follows), then flow
through a measuring mbuffer into the compressor zmigrate would run: that mbuffer's rate is the
compressor's (stream bytes a second on the source's CPU, all its threads), `wc -c` of its
output gives the ratio. A second pass compresses the sample again into memory and times the
decompressor alone. With the link's measured rate, `predict` says what a transfer would carry
with and without compression.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from .. import cmdline, zfs
from ..findings import Advice, AdviceKind, Note, NoteKind
from ..transports import Compression, Compressor, Transport, carrier
from ..transports.compress import COMPRESSORS
from ..units import MiB, size_arg
from .measure import BLOCK, mbuffer_argv
from .results import StageResult

if TYPE_CHECKING:
    from .context import StageContext

SAMPLE = 256 * MiB  # of the stream: enough for the ratio of its first files and a steady rate
PAYS = 1.15  # compression is advised when it predicts at least this much more
TITLE = "compression ({tool}, on the source)"


_TIMES = re.compile(r"^(\d+)m([\d.]+)s\s+(\d+)m([\d.]+)s$")
CPU_MARK = "zmigrate-cpu"  # `CPU_MARK part status`, then that part's `times`


def _seconds(m: re.Match[str]) -> float:
    return int(m[1]) * 60 + float(m[2]) + int(m[3]) * 60 + float(m[4])


def part_cpu(lines: list[str]) -> dict[str, tuple[int, float | None]]:
    """Each part's exit status and CPU seconds: a subshell ran the part alone and then said
    `CPU_MARK part status` and its `times` (the second line: its children's, the part's).
    stdout and stderr come through two pipes: a line of the other (`wc -c`'s count) may fall
    between the mark and its `times`, so those are the next two lines that look like them
    before the next mark."""
    parts: dict[str, tuple[int, float | None]] = {}
    stripped = [x.strip() for x in lines]
    for i, line in enumerate(stripped):
        words = line.split()
        if len(words) != 3 or words[0] != CPU_MARK or not words[2].isdigit():
            continue
        times: list[re.Match[str]] = []
        for later in stripped[i + 1:]:
            if later.startswith(CPU_MARK) or len(times) == 2:
                break
            if (m := _TIMES.match(later)) is not None:
                times.append(m)
        parts[words[1]] = (int(words[2]), _seconds(times[1]) if len(times) == 2 else None)
    return parts


def tool_for(asked: Compression | None) -> Compressor:
    """The compressor the stage measures: the one asked for, zstd by default."""
    return COMPRESSORS.get(asked or Compression.ZSTD, COMPRESSORS[Compression.ZSTD])


def sample_size(read_rate: float | None, seconds: float, memory: int | None) -> int:
    """How much of the stream the stage holds: what the source reads in half the stage's time
    (`read_rate`, measured just before), at most SAMPLE and a quarter of the source's free
    memory (the sample and its compressed copy are held there, one pass after the other)."""
    size = SAMPLE if not read_rate else max(16 * MiB, min(SAMPLE, int(read_rate * seconds / 2)))
    if memory:
        size = max(MiB, min(size, memory // 4))
    return size // MiB * MiB


def _timed(part: str, argv: list[str], out: str = "") -> str:
    """`argv` in a subshell of its own that then says its status and its CPU (`part_cpu`)."""
    return ("{ " + cmdline.join(argv) + out + "; s=$?; printf '\\n%s %s %s\\n' "
            + cmdline.join([CPU_MARK, part]) + ' "$s" >&2; times >&2; }')


def probe_line(send: str, tool: Compressor, size: int) -> str:
    """The stage's shell line: nothing of the stream is written to a file.

    Pass 1: the sample is held in an mbuffer (-P 100: it writes nothing until the whole sample
    is in, or the stream ended); one byte through `dd` starts the measuring mbuffer when the
    bytes come (its average then counts the compressor's time only); the compressor in its own
    subshell (its CPU); `wc -c` of its output on stdout. Pass 2: the sample compressed again
    into a second held mbuffer, then the decompressor alone (its CPU)."""
    head = cmdline.join(["head", "-c", str(size)])
    hold = size + size // 16 + MiB  # a stream that does not compress grows a little
    held = cmdline.join(mbuffer_argv_quiet(hold))
    measured = ("{ dd bs=1 count=1 2>/dev/null && exec "
                + cmdline.join(mbuffer_argv()) + "; }")
    first = cmdline.pipe(send, head, held, measured, _timed("compress", list(tool.compress)),
                         cmdline.join(["wc", "-c"]))
    second = cmdline.pipe(send, head, cmdline.join(tool.compress), held,
                          _timed("decompress", list(tool.decompress), " > /dev/null"))
    return f"{first}; {second}"


def mbuffer_argv_quiet(hold: int) -> list[str]:
    """A quiet mbuffer holding up to `hold` bytes in memory before it writes any."""
    return ["mbuffer", "-q", "-s", size_arg(BLOCK), "-m", str(hold), "-P", "100"]


def compress_stage(doctor: StageContext, asked: Compression | None, in_path: bool,
                   read_rate: float | None) -> StageResult:
    """Measure the compressor on a sample of the snapshot's stream, on the source: at most
    what the source reads in half the stage's time, so reading and compressing fit in twice
    that time."""
    tool = tool_for(asked)
    title = TITLE.format(tool=tool.name)
    caps = doctor.src_caps
    if caps is not None and tool.tool not in caps.tools.tools:
        return StageResult("compress", title, None, 0.0, 0, in_path, skipped=True,
                           notes=(Note(NoteKind.NO_COMPRESSOR, {"tool": tool.tool}),))
    assert doctor.snapshot is not None
    send = cmdline.join(zfs.send_argv(doctor.src, doctor.snapshot)) + " 2>/dev/null"
    size = sample_size(read_rate, doctor.seconds, caps.mem_available if caps else None)
    result = doctor.measure_stage("compress", title, in_path,
                                  [(doctor.src, probe_line(send, tool, size))],
                                  details={"tool": tool.name, "sample": size},
                                  seconds=2 * doctor.seconds)
    output = [x.strip() for x in result.details.pop("output", [])]
    parts = part_cpu(output)
    status, cpu = parts.get("compress", (None, None))
    if status not in (None, 0) and result.error is None:
        result = replace(result, rate=None, error=f"{tool.tool} failed (exit {status})")
    compressed = next((int(x) for x in reversed(output) if x.isdigit()), None) \
        if status == 0 else None
    result = replace(result, details={
        **result.details, "compressed": compressed, "cpu_seconds": cpu,
        "decompress_seconds": parts.get("decompress", (None, None))[1]})
    if result.rate is None or not isinstance(compressed, int) or compressed <= 0 \
            or result.bytes <= 0:
        return result
    ratio = result.bytes / compressed
    return replace(result, notes=(
        *(n for n in result.notes if n.kind is not NoteKind.RAN_TO_END),
        Note(NoteKind.COMPRESS_SAMPLE, {"tool": tool.name, "ratio": round(ratio, 3),
                                        "sample": result.bytes})),
        details={**result.details, "ratio": round(ratio, 3)})


@dataclass(frozen=True, slots=True)
class Prediction:
    """What a transfer would carry without and with compression (bytes/s of the stream)."""

    without: float
    with_: float
    link: float  # the wire's own rate, 0 when the doctor did not measure the way it goes
    ratio: float
    rate: float  # the compressor's


@dataclass(frozen=True, slots=True)
class Machines:
    """Which CPU each host's stages share: the source's and the destination's labels, and
    whether they are one machine (both print the same boot id)."""

    source: str
    destination: str
    shared: bool = False


WIRE_STAGES = ("network", "tls")  # the doctor stages that model a wire (tcp, private)


def _busy_share(stage: StageResult, host: str) -> float | None:
    """The share of `host`'s machine a byte a second of the stage needs: the share of all its
    cores busy during the stage over the stage's rate."""
    busy = next((h.busy for h in stage.cpu if h.host == host and h.busy is not None), None)
    return busy / 100.0 / stage.rate if busy and stage.rate else None


def _per_core(stage: StageResult, used: object, host: str) -> float | None:
    """`used` CPU seconds of the stage (its own, on `host`) as a share of that machine a byte
    a second: over the bytes the stage carried and the host's cores."""
    cores = next((h.cores for h in stage.cpu if h.host == host and h.cores), None)
    if not isinstance(used, float) or not used or not cores or stage.bytes <= 0:
        return None
    return used / stage.bytes / cores


def _cpu_share(stage: StageResult, key: str, host: str) -> float | None:
    """The same from the CPU seconds a pipeline of the stage used (`times`): its own cost,
    not the host's other work."""
    return _per_core(stage, stage.details.get(key), host)


def cpu_limit(path: list[StageResult], machines: Machines, compressing: bool) -> float | None:
    """The rate a machine's CPU allows when its stages run at once: a stage that needs a
    share of the machine per byte a second (`_busy_share`, `_cpu_share`) adds it, and those
    shares add up to at most the whole machine. On the source: zfs send (also a read from
    cache costs its CPU, and the transfer reads from that cache too), the compressor and the
    wire's sending end; on the destination: the write test, the decompressor and the wire's
    receiving end; one machine where both hosts are.
    None where no machine has two such stages (one alone runs at its own rate)."""
    shares: dict[str, list[float]] = {}

    def add(side: str, share: float | None) -> None:
        if share:
            shares.setdefault("source" if machines.shared else side, []).append(share)

    by_name = {s.name: s for s in path if s.rate}
    if "source_read" in by_name:
        add("source", _busy_share(by_name["source_read"], machines.source))
    if "destination_write" in by_name:
        add("destination", _busy_share(by_name["destination_write"], machines.destination))
    squeeze = by_name.get("compress")
    ratio = 1.0
    if compressing and squeeze is not None:
        add("source", _cpu_share(squeeze, "cpu_seconds", machines.source)
            or _busy_share(squeeze, machines.source))
        add("destination", _cpu_share(squeeze, "decompress_seconds", machines.destination))
        measured_ratio = squeeze.details.get("ratio")
        ratio = measured_ratio if isinstance(measured_ratio, float) and measured_ratio > 0 else 1.0
    # The wire (the path holds one: its transport's) costs each machine CPU a byte it carries:
    # its ends (mbuffers; over private, the TLS ends too) and the kernel's network work, which
    # no process is charged with, so each machine's busy share. Counting the ends' processes
    # only, the lab's compressed transfers ran 8-29 % below the prediction, their machine
    # 90-98 % busy. A stream byte is 1/ratio of a wire byte once compressed. One machine
    # holding both hosts is counted once: its busy share is both ends'.
    ends = [("source", machines.source)]
    if not machines.shared:
        ends.append(("destination", machines.destination))
    for wire in (by_name.get(n) for n in WIRE_STAGES):
        if wire is not None:
            for side, host in ends:
                share = _busy_share(wire, host)
                add(side, share / ratio if share else None)
    limits = [1.0 / sum(each) for each in shares.values() if len(each) > 1]
    return min(limits) if limits else None


def predict(path: list[StageResult], stage: StageResult, transport: Transport,
            machines: Machines | None = None) -> Prediction | None:
    """The slowest of the stages on the path, without and with compression: with it, the wire
    carries `ratio` times more of the stream and the compressor is one more stage; and no more
    than the hosts' cores allow with every stage running at once (`cpu_limit`). None when the
    compressor or the path was not measured."""
    ratio = stage.details.get("ratio")
    if stage.rate is None or not isinstance(ratio, float) or ratio <= 0:
        return None
    wire_name = carrier(transport).doctor_stage
    wire_names = {"ssh_default"} if wire_name == "ssh" else {wire_name}
    rates = [(s.name, s.rate) for s in path if s.rate is not None and s.name != "compress"]
    if not rates:
        return None
    wire = [r for n, r in rates if n in wire_names]
    others = [r for n, r in rates if n not in wire_names]
    without = [r for _, r in rates]
    with_ = [*others, *(r * ratio for r in wire), stage.rate]
    if machines is not None:
        measured = [*path, stage]
        without += [x for x in [cpu_limit(measured, machines, False)] if x is not None]
        with_ += [x for x in [cpu_limit(measured, machines, True)] if x is not None]
    return Prediction(min(without), min(with_), wire[0] if wire else 0.0, ratio, stage.rate)


@dataclass(frozen=True, slots=True)
class WithCompression:
    """What the compression stage changes in the doctor's report: its advice; and, where the
    transfer compresses (doctor --compress), the expected rate and the stage that sets it."""

    advice: Advice | None = None
    expected: float | None = None
    slowest: StageResult | None = None


def with_compression(stages: list[StageResult], path: list[StageResult],
                     slowest: StageResult | None, transport: Transport,
                     machines: Machines) -> WithCompression:
    """The compression stage's part of the report (nothing where it was not measured)."""
    squeeze = next((s for s in stages if s.name == "compress" and s.rate is not None), None)
    prediction = predict(path, squeeze, transport, machines) if squeeze else None
    if squeeze is None or prediction is None:
        return WithCompression()
    advice = compress_advice(prediction, str(squeeze.details["tool"]), machines.source)
    if not squeeze.in_path:
        return WithCompression(advice)
    # Compressing: the wire carries `ratio` times more stream and the compressor is one more
    # stage; the slowest of them (or the cores) sets the pace.
    return WithCompression(advice, prediction.with_,
                           squeeze if prediction.with_ == squeeze.rate else slowest)


def compress_advice(p: Prediction, tool: str, host: str) -> Advice:
    """On (it predicts clearly more) or off, with the figures."""
    kind = AdviceKind.COMPRESS_ON if p.with_ >= PAYS * p.without else AdviceKind.COMPRESS_OFF
    return Advice(kind, {"tool": tool, "ratio": p.ratio, "rate": p.rate, "host": host,
                         "predicted": p.with_, "current": p.without, "link": p.link})
