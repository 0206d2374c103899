"""What the engine found and what it advises, as data: a kind and its figures, never a sentence.

The engine judges (verdict/, doctor/); each face words the judgement in its own terms:
zmigrate.cli.words names the command's flags (`--bwlimit`, `--transport tcp`), zmigrate.gui.words
the wizard's controls (Rate limit, Direct TCP); the kinds that name neither (a command to run
on a host, a cause) both take from plain_words.py, written once. A figure is a number (bytes,
bytes/s, seconds, percent, a share of 1) or a plain name (a cipher, a host, a dataset, a stage's
title); which figures a kind carries is listed next to it.

- `Finding` is a verdict's headline: what the buffers show and which stage is slowest.
- `Advice` is one thing to do about it.
- `Note` says something about one doctor stage (why it was skipped, how it ended).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, TypeVar

Figure = int | float | str
E = TypeVar("E", bound=StrEnum)


class FindingKind(StrEnum):
    """A verdict's headline, with its figures (rates in bytes/s, fills in percent)."""

    NOT_ENOUGH_DATA = "not_enough_data"  # (live: fewer samples than a judgement needs)
    TOO_SHORT = "too_short"  # (final: the transfer ended before there was enough)
    RATE_LIMITED = "rate_limited"  # rate_limit: the user's own cap
    RECEIVE_SWINGS = "receive_swings"  # full_share, empty_share (0..1 of the time)
    RECEIVE_FULL = "receive_full"  # fill, rate: zfs receive is the slowest stage
    RECEIVE_FILLING = "receive_filling"  # fill_min, fill_max, rate: more arrives than it takes
    RECEIVE_DRAINING = "receive_draining"  # fill_min, fill_max, rate: a backlog drains at rate
    BUFFER_EMPTY = "buffer_empty"  # fill, rate: one local buffer, zfs send is slowest
    BUFFER_BALANCED = "buffer_balanced"  # fill: one local buffer, part full
    RECEIVE_STARVED = "receive_starved"  # empties, out_peak, in_rate
    SEND_FULL = "send_full"  # fill, rate, transport ("" unknown), receive_fill if known
    # as SEND_FULL, and the way's end held by CPU (verdict WANTS_CPU): program, host, side,
    # on_cpu and waiting (shares of the time: on a CPU, runnable with none free)
    END_CPU = "end_cpu"
    BOTH_EMPTY = "both_empty"  # send_fill, receive_fill if known, rate: zfs send is slowest
    # tool, send_fill, receive_fill if known, rate: both empty while compressing in transit:
    # the stage before the wire (the compressor, or zfs send before it) is the slowest
    COMPRESSOR_SLOW = "compressor_slow"
    RECEIVER_WAITS = "receiver_waits"  # (receiver figures only, near empty)
    BALANCED = "balanced"  # (no stage clearly holds the transfer back)
    # where (stall.StallWhere), host, seconds; as the place needs: fill (%), side, the
    # carrier's path figures (path, source, destination, port), answers (1/0), state
    # (stopped, disk), pool_health
    STALLED = "stalled"
    STALL_CLEARED = "stall_cleared"  # where, host, seconds: the stream moves again
    # rate, ceiling (bytes/s), share (0..1), bits (the limit's bit/s), limit ("link" or
    # "shaping"), host: the stream fills the wire (wire/ceiling.py), no tuning goes faster
    AT_THE_WIRE = "at_the_wire"


class AdviceKind(StrEnum):
    """One thing to do, with its figures (rates in bytes/s, sizes in bytes)."""

    # The user's own settings.
    RAISE_RATE_LIMIT = "raise_rate_limit"  # rate_limit
    RECEIVE_BUFFER = "receive_buffer"  # rate, seconds, size: hold `seconds` of stream
    RECEIVE_STALLS = "receive_stalls"  # buffer, seconds: the buffer is big, the pool stalls
    RECEIVE_TXG = "receive_txg"  # zfs receive reads a transaction group at a time
    # The transport.
    USE_TCP = "use_tcp"  # instead of ssh (cleartext: trusted networks only)
    USE_TCP_IF_SSH = "use_tcp_if_ssh"  # the transport is not known
    TRY_CIPHER = "try_cipher"  # cipher
    FASTER_CIPHER = "faster_cipher"  # cipher, rate, default_rate (measured by the doctor)
    TCP_FASTER = "tcp_faster"  # tcp_rate, ssh_rate (measured by the doctor)
    SSH_SLOW = "ssh_slow"  # rate: the ssh stage is the slowest
    CIPHER_CPU_BOUND = "cipher_cpu_bound"  # process, cpu, host, stage
    SSH_UNREACHABLE = "ssh_unreachable"  # reason: the source cannot ssh to the destination
    RELAY_PATH = "relay_path"  # the relay's link and CPU set the pace
    RELAY_BYPASS = "relay_bypass"  # hosts that reach each other need no relay
    RELAY_NEARBY = "relay_nearby"  # run zmigrate near both hosts
    # Compression in transit (measured by the doctor): tool, ratio (stream/compressed), rate
    # (the compressor's, stream bytes/s on the source's CPU), host, predicted (the transfer's
    # rate with it), current (without it), link (the wire's rate, 0 when not measured).
    COMPRESS_ON = "compress_on"  # it pays: the predicted rate is clearly higher
    COMPRESS_OFF = "compress_off"  # it does not: the same figures
    COMPRESS_LIGHTER = "compress_lighter"  # tool: the compressor cannot keep up (live verdict)
    # The network.
    NETWORK_LINK = "network_link"  # rate: tcp between the hosts (measured by the doctor)
    JUMBO_FRAMES = "jumbo_frames"
    NIC_RINGS = "nic_rings"
    TRANSPORT_CPU = "transport_cpu"
    TLS_CPU = "tls_cpu"  # the private transport's TLS ends and what shares their cores
    TLS_SPARED = "tls_spared"  # a TLS end held by CPU: cleartext tcp spares that CPU
    FREE_CPU = "free_cpu"  # host, program: an end waits for a CPU other work or a limit takes
    RUN_DOCTOR = "run_doctor"  # measure each stage alone
    # The wire as both hosts read it (wire/): side ("source", "destination"), host, iface.
    LINK_SLOWER = "link_slower"  # side, host, iface, speed, other_speed (Mb/s)
    HALF_DUPLEX = "half_duplex"  # side, host, iface, speed (Mb/s)
    # big_side, big_mtu, big_iface, small_side, small_mtu, small_iface, path_mtu
    MTU_MISMATCH = "mtu_mismatch"
    RINGS_BELOW_MAX = "rings_below_max"  # side, host, iface, ring ("rx", "tx"), size, max
    HOST_SHAPING = "host_shaping"  # side, host, iface, bits (bit/s a tc qdisc shapes to)
    CPU_SCALED = "cpu_scaled"  # side, host, mhz, max_mhz: frequency scaling holds it down
    WIRE_FULL = "wire_full"  # rate, ceiling, share, bits, limit, host: as AT_THE_WIRE
    # host, share, system: TCP sent that share of its segments again (the doctor's network
    # stage): the link loses packets
    LOSSY_LINK = "lossy_link"
    # The source pool.
    SOURCE_READ = "source_read"  # rate: time zfs send alone
    SOURCE_DISKS = "source_disks"
    SOURCE_POOL = "source_pool"  # rate (measured by the doctor)
    SOURCE_QUIET = "source_quiet"
    # The destination pool.
    DESTINATION_SLOW = "destination_slow"  # rate
    WRITE_TEST = "write_test"  # measure the pool's writes alone
    DESTINATION_VDEVS = "destination_vdevs"
    DESTINATION_POOL = "destination_pool"  # rate (measured by the doctor)
    # A stalled stream.
    STALL_WAIT = "stall_wait"  # timeout (seconds, 0 for none): what zmigrate does meanwhile
    # The doctor's own.
    CPU_BOUND = "cpu_bound"  # process, cpu, host, stage: one process sets the pace
    CLEANUP_FAILED = "cleanup_failed"  # dataset, host: the write test's dataset is left
    # dataset, host, created (epoch), used: an earlier run's write-test dataset is left
    LEFTOVER_DATASET = "leftover_dataset"


class NoteKind(StrEnum):
    """A note on one doctor stage, with its figures."""

    NEEDS_SNAPSHOT = "needs_snapshot"  # the source read was skipped: no snapshot given
    RAN_TO_END = "ran_to_end"  # bytes: the stage's stream ended before its time was up
    FROM_CACHE = "from_cache"  # a small snapshot's read may come from cache
    WRITE_SYNC = "write_sync"  # seconds: the write test's rate includes a sync this long
    SSH_UNREACHABLE = "ssh_unreachable"  # reason: the ssh stages were skipped
    LEFT_OUT = "left_out"  # the user left this stage out (no write test, --stage)
    NO_POOL = "no_pool"  # the write test found no pool on the destination
    NO_ROOM = "no_room"  # free, parent, share, minimum: too little space for a safe write test
    WRITE_LIMIT = "write_limit"  # limit: the write test writes at most this much
    COMPRESS_SAMPLE = "compress_sample"  # tool, ratio, sample: the compressor on a stream sample
    NO_COMPRESSOR = "no_compressor"  # tool: not installed on the source, not measured
    # host, sent, again, share: TCP segments the sending host sent during the stage, and how
    # many of them it had to send again (readings/tcp_resent.py)
    RESENT = "resent"
    # host, iface, frames, ring, queue: what a host's interface toward its peer lost during the
    # stage, by cause (readings/iface_loss.py), where it lost any
    IFACE_LOSS = "iface_loss"


class _Figures:
    """Typed access to the figures of a Finding, an Advice or a Note."""

    __slots__ = ()
    figures: Mapping[str, Figure]

    def has(self, name: str) -> bool:
        return name in self.figures

    def num(self, name: str) -> float:
        """A numeric figure (KeyError if absent, TypeError if it is a name)."""
        value = self.figures[name]
        if isinstance(value, str):
            raise TypeError(f"figure {name!r} is not a number: {value!r}")
        return float(value)

    def count(self, name: str) -> int:
        return round(self.num(name))

    def word(self, name: str) -> str:
        """A name figure (a cipher, a host...), as it is."""
        return str(self.figures[name])


def _figures_json(figures: Mapping[str, Figure]) -> dict[str, Figure]:
    return dict(figures)


def _parse(data: object, kinds: type[E]) -> tuple[E, dict[str, Figure]] | None:
    """(kind, figures) from the JSON form; None for what is not one (an older record, a kind
    this version does not know)."""
    if not isinstance(data, Mapping):
        return None
    try:
        kind = kinds(str(data.get("kind")))
    except ValueError:
        return None
    raw = data.get("figures") or {}
    if not isinstance(raw, Mapping):
        return None
    figures = {str(k): v for k, v in raw.items()
               if isinstance(v, int | float | str) and not isinstance(v, bool)}
    return kind, figures


@dataclass(frozen=True, slots=True)
class Finding(_Figures):
    """A verdict's headline: its kind and figures."""

    kind: FindingKind
    figures: Mapping[str, Figure] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind.value, "figures": _figures_json(self.figures)}

    @classmethod
    def from_json(cls, data: object) -> Finding | None:
        parsed = _parse(data, FindingKind)
        return None if parsed is None else cls(*parsed)


@dataclass(frozen=True, slots=True)
class Advice(_Figures):
    """One thing to do: its kind and figures."""

    kind: AdviceKind
    figures: Mapping[str, Figure] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind.value, "figures": _figures_json(self.figures)}

    @classmethod
    def from_json(cls, data: object) -> Advice | None:
        parsed = _parse(data, AdviceKind)
        return None if parsed is None else cls(*parsed)


@dataclass(frozen=True, slots=True)
class Note(_Figures):
    """A note on one doctor stage: its kind and figures."""

    kind: NoteKind
    figures: Mapping[str, Figure] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind.value, "figures": _figures_json(self.figures)}

    @classmethod
    def from_json(cls, data: object) -> Note | None:
        parsed = _parse(data, NoteKind)
        return None if parsed is None else cls(*parsed)


def unique(items: list[Advice]) -> tuple[Advice, ...]:
    """The items in order, each once (figures are dicts: Advice is not hashable)."""
    out: list[Advice] = []
    for item in items:
        if item not in out:
            out.append(item)
    return tuple(out)
