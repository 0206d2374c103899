"""Compression in transit: a stream stage the carriers place around the wire.

The compressor runs on the source between `zfs send` and the source's mbuffer (which then
buffers and, for tcp, sends the compressed bytes); the decompressor runs on the destination
between the wire and the destination's mbuffer (which feeds `zfs receive` the stream as it was
sent). So both mbuffers still do their jobs - keep the wire busy, absorb `zfs receive`'s
bursts - and the figures split cleanly: the sender's mbuffer counts compressed bytes (what
crosses the link, what --rate-limit caps), the receiver's counts stream bytes (progress, rate
and ETA, the sizes users plan with).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, Protocol

from ..errors import PreflightError, PreflightReason
from ..hosts import tools as capabilities
from ..remedies import Caveat, PlanWarning, Remedy

if TYPE_CHECKING:
    from ..zfs import Capabilities


class Way(Protocol):
    """What compression asks of a carrier (`base.Carrier`): whether its stream crosses a link."""

    @property
    def crosses_link(self) -> bool: ...


class Compression(str, Enum):
    """A compressor the user can ask for (`--compress`)."""

    ZSTD = "zstd"
    LZ4 = "lz4"
    NONE = "none"


@dataclass(frozen=True, slots=True)
class Compressor:
    """One tool: its argv each way, and what a host must have (the probed tool's name)."""

    name: str
    tool: str
    compress: tuple[str, ...]
    decompress: tuple[str, ...]


# zstd -3 with a thread per core: about 2-4x on text at a few hundred MiB/s a core; lz4:
# less gain, several times faster (for links of 1 Gbit/s and more or weak CPUs).
COMPRESSORS: dict[Compression, Compressor] = {
    Compression.ZSTD: Compressor("zstd", "zstd", ("zstd", "-T0", "-3", "-q", "-c"),
                                 ("zstd", "-d", "-q", "-c")),
    Compression.LZ4: Compressor("lz4", "lz4", ("lz4", "-q", "-c"), ("lz4", "-d", "-q", "-c")),
}


def compressor(asked: Compression | None) -> Compressor | None:
    """The compressor for `asked`, None for none."""
    return COMPRESSORS.get(asked) if asked is not None else None


@dataclass(frozen=True, slots=True)
class Stream:
    """What the decision needs to know of the stream: sent raw (-w: ciphertext), or as stored
    (-c) from a dataset stored with `compression` (None or "off": not compressed)."""

    raw: bool = False
    as_stored: bool = False
    compression: str | None = None

    def already(self) -> Suggests | None:
        """Why compressing it again gains little (RAW, AS_STORED), or None."""
        if self.raw:
            return Suggests.RAW
        if self.as_stored and self.compression not in (None, "", "off"):
            return Suggests.AS_STORED
        return None

    def compressed_already(self) -> str | None:
        """Why compressing it again gains little, in the plan's words, or None."""
        match self.already():
            case Suggests.RAW:
                return "the stream is raw (zfs send -w): its encrypted blocks do not compress"
            case Suggests.AS_STORED:
                return (f"the dataset is stored compressed (compression={self.compression}) "
                        "and sent as stored (zfs send -c): its blocks are compressed already")
        return None


class Suggests(str, Enum):
    """Why compression in transit is suggested, or not, before the user asks for it."""

    ONE_HOST = "one_host"  # nothing crosses a link
    RAW = "raw"  # encrypted blocks (zfs send -w)
    AS_STORED = "as_stored"  # blocks sent compressed as stored (zfs send -c)
    NO_TOOL = "no_tool"  # a host lacks zstd
    STORED_OFF = "stored_off"  # the dataset is stored uncompressed: zstd pays
    COMPRESSIBLE = "compressible"  # nothing says otherwise: zstd pays on a slow link


@dataclass(frozen=True, slots=True)
class Suggestion:
    """The compression suggested and why, with its figures: the dataset's `compression`
    property (AS_STORED), the `host` lacking the tool and its `install` command (NO_TOOL)."""

    compression: Compression
    why: Suggests
    stored: str | None = None
    host: str | None = None
    install: str | None = None


def suggest(carrier: Way, stream: Stream,
            ends: Sequence[tuple[str, Capabilities | None]]) -> Suggestion:
    """What to suggest by decide's own rules: none where decide would leave zstd out (one
    host, a raw or compressed-block stream) or refuse it (a host without it; an end not
    probed yet counts as having it), else zstd. `ends`: (label, capabilities) of both."""
    if not carrier.crosses_link:
        return Suggestion(Compression.NONE, Suggests.ONE_HOST)
    already = stream.already()
    if already is not None:
        return Suggestion(Compression.NONE, already, stored=stream.compression)
    zstd = COMPRESSORS[Compression.ZSTD].tool
    for label, caps in ends:
        if caps is not None and zstd not in caps.tools.tools:
            return Suggestion(Compression.NONE, Suggests.NO_TOOL, host=label,
                              install=capabilities.install_hint(caps.system, zstd))
    why = Suggests.STORED_OFF if stream.compression == "off" else Suggests.COMPRESSIBLE
    return Suggestion(Compression.ZSTD, why, stored=stream.compression)


def decide(asked: Compression | None, always: bool, carrier: Way, stream: Stream,
           ends: list[tuple[str, Capabilities]]
           ) -> tuple[Compressor | None, list[PlanWarning]]:
    """The compressor a step's ends use, and the plan's notes on why none where one was asked.

    `ends`: (label, capabilities) of the source and the destination. Raw streams and streams
    sent as compressed blocks are left alone unless `always` (the user insists): compressing
    them again costs CPU on both hosts and saves next to nothing.

    Raises:
        PreflightError (MISSING_TOOL): a host lacks the tool; named with its install command.
    """
    chosen = compressor(asked)
    if chosen is None:
        return None, []
    if not carrier.crosses_link:
        return None, [f"both ends are on one host, so nothing crosses a link: the stream is "
                      f"not compressed ({chosen.name} left out)"]
    why = stream.compressed_already()
    if why is not None and not always:
        return None, [Caveat(f"{why}, so the stream is not compressed again ({chosen.name} "
                             "left out)", (Remedy.COMPRESS_ALWAYS,))]
    for label, caps in ends:
        if chosen.tool not in caps.tools.tools:
            raise PreflightError(
                f"{chosen.tool} is not installed, so the stream cannot be "
                f"{'compressed' if (label, caps) == ends[0] else 'decompressed'} there",
                host=label,
                fix=capabilities.install_hint(caps.system, chosen.tool)
                + "; or send without --compress",
                reason=PreflightReason.MISSING_TOOL,
                figures={"tool": chosen.tool, "install": capabilities.install_hint(
                    caps.system, chosen.tool), "instead": "no_compression"})
    return chosen, []


__all__ = ["COMPRESSORS", "Compression", "Compressor", "Stream", "Suggestion", "Suggests",
           "compressor", "decide", "suggest"]
