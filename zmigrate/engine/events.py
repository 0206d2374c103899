"""What the engine tells its observers: one closed vocabulary of frozen dataclasses, no Qt.

`Event` is the union of every kind the engine emits (a job's, a tree's, the doctor's); an
`Observer` takes an `Event`. The faces dispatch on it with `match` and `assert_never`, so mypy
proves each handles (or explicitly ignores) every kind. `event_json.to_json`/`from_json` carry
any event to JSON and back exactly (a "kind" and all fields).

Kinds defined next to what they carry stay importable from there (diagnosis.Verdict,
doctor.StageResult, tree.TreePlanReady); they live here so the union needs no import cycle.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum, StrEnum
from typing import TYPE_CHECKING, Any, Protocol

from .errors import ZmigrateError
from .findings import Advice, Finding, Note
from .remedies import Caveat

if TYPE_CHECKING:
    from .losses import Loss
    from .plan import Plan


def json_default(obj: object) -> object:
    """`json.dumps(default=...)` for event fields: enums by value, sets and tuples as lists.

    The one encoder the CLI's --json lines and the history store share.
    """
    if isinstance(obj, Enum):
        return obj.value
    if isinstance(obj, (set, frozenset, tuple)):
        return list(obj)
    return str(obj)


class Side(str, Enum):
    """Which mbuffer a sample comes from."""

    SEND = "send"
    RECEIVE = "receive"


@dataclass(frozen=True, slots=True)
class Sample:
    """One mbuffer status line, stamped with seconds since the job started; in a tree, the
    source dataset whose stream it measures (several may flow at once with --parallel)."""

    t: float
    side: Side
    in_rate: float
    out_rate: float
    total: int
    fill: float
    dataset: str = ""


@dataclass(frozen=True, slots=True)
class NicLoss:
    """What one host's interface toward the other lost over a reading (readings/iface_loss.py):
    frames received bad, frames missed with the receive ring full, packets its own queue
    (qdisc) dropped; `tool`: what read them (`ip`, or FreeBSD's `netstat`), whose host the
    cure is worded for."""

    host: str
    iface: str
    frames: int
    ring: int
    queue: int
    tool: str = "ip"  # readings/iface_loss.IP (which imports this module)

    @property
    def total(self) -> int:
        return self.frames + self.ring + self.queue


@dataclass(frozen=True, slots=True)
class Resent:
    """TCP segments the host that sends the stream onto the link sent over the last `seconds`,
    and how many of them it sent again (readings/tcp_resent.py: the host's own counters, all
    its connections). `system`: its uname, for the words of a fix there. `ifaces_read`: how
    many of the two hosts' interfaces toward each other were read over the same time, and
    `lost` what those that lost any lost. Stamped with seconds since the job started; in a
    tree, the source dataset streaming."""

    t: float
    host: str
    system: str
    sent: int
    again: int
    seconds: float
    dataset: str = ""
    ifaces_read: int = 0
    lost: tuple[NicLoss, ...] = ()


@dataclass(frozen=True, slots=True)
class EndCpu:
    """What the CPU gave one end of the way (its TLS end, the source's ssh) on its host over
    the last `seconds`: `on_cpu` and `waiting` (runnable, no CPU free) as shares of that time
    (readings/end_cpu.py). Stamped with seconds since the job started; in a tree, the source
    dataset streaming."""

    t: float
    side: Side
    host: str
    program: str
    on_cpu: float
    waiting: float
    seconds: float
    dataset: str = ""

    @property
    def wants(self) -> float:
        """The share of the time it would have run, given a CPU."""
        return self.on_cpu + self.waiting


@dataclass(frozen=True, slots=True)
class OutOfTouch:
    """This side lost (`back` False) or regained (`back` True) the session over which it
    follows a job whose runner is another machine, `runner`; the job goes on there. `since`:
    when touch was lost (wall clock); `reason`: why the last try failed; `retry_in`: seconds
    until the next."""

    runner: str
    since: float
    reason: str = ""
    retry_in: float = 0.0
    back: bool = False


@dataclass(frozen=True, slots=True)
class PlanReady:
    """A single dataset's plan, before anything runs."""

    plan: Plan


class TreePlanFacts(Protocol):
    """What a face reads of a tree's plan (`tree.TreePlan`: the tree emits events, so this
    module does not import it; event_json reads the plan back as a TreePlan)."""

    @property
    def source_host(self) -> str: ...
    @property
    def destination_host(self) -> str: ...
    @property
    def root(self) -> str: ...
    @property
    def destination(self) -> str: ...
    @property
    def snapshot(self) -> str: ...
    @property
    def transport(self) -> str: ...
    @property
    def total(self) -> int: ...
    @property
    def destroys(self) -> tuple[Loss, ...]: ...
    def commands(self) -> list[tuple[str, str]]: ...
    def describe(self) -> str: ...
    def room_warning(self) -> str: ...
    def to_json(self) -> dict[str, Any]: ...


@dataclass(frozen=True, slots=True)
class TreePlanReady:
    """The tree's plan, before anything runs."""

    plan: TreePlanFacts

    def to_json(self) -> dict[str, Any]:
        return self.plan.to_json()


@dataclass(frozen=True, slots=True)
class StageChanged:
    """The job moved on: preflight, starting (each step's ends), sending (its stream flows),
    verifying, cleanup."""

    stage: str
    detail: str = ""
    # A tree's dataset whose own job moved on (several may be in flight); "" for the tree's
    # own stages and a single dataset's job.
    dataset: str = ""
    # A plan's warning said as the detail, whose way out each face words (`detail` is the
    # command line's words of it).
    caveat: Caveat | None = None


@dataclass(frozen=True, slots=True)
class LogLine:
    """A line a remote command wrote to stderr that is not mbuffer status."""

    host: str
    side: Side
    text: str


@dataclass(frozen=True, slots=True)
class Progress:
    """Bytes through the receiving end so far; `total` and `eta` are None when unknown.

    A tree's: `done`, `rate` and `eta` are the whole tree's (every dataset in flight), `step`
    the dataset that reported and `step_rate` its own rate."""

    elapsed: float
    done: int
    total: int | None
    rate: float
    eta: float | None
    step: int = 1
    steps: int = 1
    step_rate: float | None = None
    # Seconds without a byte moving, while the stream is stalled (then `eta` is None).
    stalled: float | None = None
    # Bytes/s crossing the link where they are not the stream's (compressed in transit: what
    # the sender's mbuffer sends); None where the wire carries the stream as it is.
    wire_rate: float | None = None


@dataclass(frozen=True, slots=True)
class Stalled:
    """The stream stopped: no byte moved through any stage for `seconds`; or, `cleared`, it
    moves again after `seconds` without.

    `where` is a stall.StallWhere value (path, destination, source, host, control), `host` the
    host it names, `figures` what says so (fills, the carrier's path, a process state); a tree's
    dataset in `dataset`."""

    t: float
    where: str
    host: str
    seconds: float
    figures: dict[str, Any] = field(default_factory=dict)
    cleared: bool = False
    dataset: str = ""


@dataclass(frozen=True, slots=True)
class DatasetState:
    """A dataset of a tree transfer changed state.

    `state` is one of waiting, sending, verified, skipped, failed; `index` counts from 0 of
    `count` datasets (parents first); `size` is the bytes it references on the source; `bytes`
    and `rate` are what was sent (once verified); `detail` says why (skip reason, error, guid).
    """

    dataset: str
    destination: str
    state: str
    index: int
    count: int
    size: int
    bytes: int = 0
    rate: float | None = None
    detail: str = ""


@dataclass(frozen=True, slots=True)
class Summary:
    """How a finished transfer went."""

    bytes: int
    seconds: float
    rate: float
    receive_empty_count: int | None
    source_guid: int
    destination_guid: int
    hash_match: bool | None
    snapshots_sent: tuple[str, ...] = ()
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def verified(self) -> bool:
        return self.source_guid == self.destination_guid and self.hash_match is not False


@dataclass(frozen=True, slots=True)
class Finished:
    summary: Summary


@dataclass(frozen=True, slots=True)
class Synced:
    """A kept-in-sync job's catch-up ended (runner, `send --keep-syncing`): `number` counts
    them (1: the first copy), `ok` says whether it verified, else `error` and `fix` say why
    (the next catch-up resumes); `window` is the read-only window a final sync would take
    then, in seconds (None: not known), with the bytes `changed` since; `next_in` when the
    next catch-up starts."""

    number: int
    ok: bool
    bytes: int = 0
    seconds: float = 0.0
    snapshot: str = ""
    error: str = ""
    fix: str = ""
    window: float | None = None
    changed: int = 0
    next_in: float | None = None


@dataclass(frozen=True, slots=True)
class Failed:
    """The job ended with `error` (`cancelled`: the user stopped it).

    Equal to another Failed whose error is of the same class with the same attributes
    (exceptions alone compare by identity), so an event read back from JSON equals the one
    written."""

    error: ZmigrateError
    cancelled: bool = False

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Failed):
            return NotImplemented
        return (self.cancelled == other.cancelled and type(self.error) is type(other.error)
                and self.error.args == other.error.args
                and vars(self.error) == vars(other.error))

    def __hash__(self) -> int:
        return hash((type(self.error), self.error.message, self.cancelled))


class Bottleneck(StrEnum):
    """The stage that holds the transfer back (a str: JSON writes the value)."""

    SOURCE = "source"
    NETWORK = "network"
    DESTINATION = "destination"
    BURSTY_RECEIVE = "bursty_receive"
    RATE_LIMITED = "rate_limited"
    STALLED = "stalled"  # no byte moves at all (stall.py says where)
    COMPRESSOR = "compressor"  # compressing in transit: the stage before the wire
    NONE = "none"  # balanced, or not enough data yet


@dataclass(frozen=True, slots=True)
class Verdict:
    """What limits the transfer (`kind`), what the buffers show (`finding`), what to do about
    it (`advice`), on which figures (`evidence`) and how sure (`confidence`, 0..1)."""

    kind: Bottleneck
    finding: Finding
    advice: tuple[Advice, ...] = ()
    evidence: dict[str, float] = field(default_factory=dict)
    confidence: float = 0.0
    final: bool = False
    t: float = 0.0
    dataset: str = ""  # a tree's dataset whose transfer this judges ("" for a single one)

    def to_json(self) -> dict[str, Any]:
        """The data of the --json form: rates in bytes/s, sizes in bytes, times in seconds.

        No words: the CLI adds `text` and `advice` (its wording of `finding` and
        `advice_items`) before it prints the event.
        """
        return {
            "event": "verdict",
            "kind": self.kind.value,
            "finding": self.finding.to_json(),
            "advice_items": [a.to_json() for a in self.advice],
            "evidence": dict(self.evidence),
            "confidence": round(self.confidence, 3),
            "final": self.final,
            "t": self.t,
            **({"dataset": self.dataset} if self.dataset else {}),
        }

    @classmethod
    def from_json(cls, data: object) -> Verdict | None:
        """The verdict back from `to_json` (e.g. out of the history), or None for anything
        else (an older record without its finding, a kind this version does not know)."""
        if not isinstance(data, dict):
            return None
        finding = Finding.from_json(data.get("finding"))
        try:
            kind = Bottleneck(str(data.get("kind")))
        except ValueError:
            return None
        if finding is None:
            return None
        items = data.get("advice_items")
        advice = [Advice.from_json(a) for a in items] if isinstance(items, list) else []
        evidence = data.get("evidence")
        t, confidence = data.get("t"), data.get("confidence")
        return cls(kind, finding, tuple(a for a in advice if a is not None),
                   {str(k): float(v) for k, v in evidence.items()
                    if isinstance(v, int | float)} if isinstance(evidence, dict) else {},
                   float(confidence) if isinstance(confidence, int | float) else 0.0,
                   data.get("final") is True, float(t) if isinstance(t, int | float) else 0.0)


# -- the doctor's stages -------------------------------------------------------------------------
CPU_BOUND = 90.0  # percent of one core: a process at this is the limit of its stage


@dataclass(frozen=True, slots=True)
class ProcessCpu:
    """One process's CPU over a stage, in percent of one core."""

    host: str
    pid: int
    name: str
    cpu: float


@dataclass(frozen=True, slots=True)
class HostCpu:
    """A host's CPU over a stage: `busy` in percent of all its cores, None where unknown."""

    host: str
    busy: float | None
    cores: int | None
    top: tuple[ProcessCpu, ...] = ()
    unread: tuple[str, ...] = ()  # figures that could not be read on that host, by name


@dataclass(frozen=True, slots=True)
class StageResult:
    """One measured stage. `in_path`: part of the transfer zmigrate would run (the others are
    alternatives shown for comparison, e.g. ssh ciphers when the transport is tcp). `notes`:
    why it was skipped, how it ended (data: each face words them)."""

    name: str
    title: str
    rate: float | None
    seconds: float
    bytes: int
    in_path: bool
    cpu: tuple[HostCpu, ...] = ()
    notes: tuple[Note, ...] = ()
    error: str | None = None
    skipped: bool = False
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def busiest(self) -> ProcessCpu | None:
        """The process that used the most CPU during the stage, on either host."""
        return max((p for h in self.cpu for p in h.top), key=lambda p: p.cpu, default=None)

    @property
    def cpu_bound(self) -> ProcessCpu | None:
        """The busiest process if it used a whole core (it, not the hardware, set the pace)."""
        top = self.busiest
        return top if top is not None and top.cpu >= CPU_BOUND else None

    def to_json(self) -> dict[str, Any]:
        return {
            "event": "doctor_stage", "name": self.name, "title": self.title, "rate": self.rate,
            "seconds": round(self.seconds, 3), "bytes": self.bytes, "in_path": self.in_path,
            "cpu": [{"host": h.host, "busy": h.busy, "cores": h.cores, "unread": list(h.unread),
                     "top": [{"pid": p.pid, "name": p.name, "cpu": p.cpu} for p in h.top]}
                    for h in self.cpu],
            "cpu_bound": None if (bound := self.cpu_bound) is None else {
                "host": bound.host, "name": bound.name, "cpu": bound.cpu},
            "notes": [n.to_json() for n in self.notes], "error": self.error,
            "skipped": self.skipped,
            **self.details,
        }


@dataclass(frozen=True, slots=True)
class StageStarted:
    """A stage began; it runs for about `seconds`."""

    name: str
    title: str
    seconds: float


# -- the wire (engine/wire reads it) ------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Rings:
    """A NIC's rx/tx ring sizes and their maximums (`ethtool -g`)."""

    rx: int | None
    rx_max: int | None
    tx: int | None
    tx_max: int | None


@dataclass(frozen=True, slots=True)
class LinkReading:
    """One host's side of the path to its peer.

    `speed` in Mb/s as negotiated; `shaping` a rate (bit/s) the host's own qdisc applies on that
    interface (tc tbf/htb); `path_mtu` the largest IP packet that reached the peer with Don't
    Fragment set; `cpu_mhz`/`cpu_max_mhz` the clock now and its top (frequency scaling);
    `virtual` names a kind whose speed means nothing (veth, tun...); `local` when the route to
    the peer is a local one (both on one machine: no wire); `missing` the tools not found
    there, whose figures are therefore unknown."""

    host: str
    peer: str
    system: str = ""
    iface: str | None = None
    local: bool = False
    virtual: str = ""
    speed: int | None = None
    duplex: str | None = None
    mtu: int | None = None
    path_mtu: int | None = None
    rings: Rings | None = None
    shaping: int | None = None
    cpu_mhz: int | None = None
    cpu_max_mhz: int | None = None
    missing: tuple[str, ...] = ()  # tools not found there (their figures are unknown)

    @property
    def linux(self) -> bool:
        return self.system == "Linux"

    def to_json(self) -> dict[str, Any]:
        rings = self.rings
        return {"host": self.host, "peer": self.peer, "system": self.system,
                "iface": self.iface, "local": self.local, "virtual": self.virtual,
                "speed": self.speed, "duplex": self.duplex, "mtu": self.mtu,
                "path_mtu": self.path_mtu, "shaping": self.shaping,
                "rings": None if rings is None else {"rx": rings.rx, "rx_max": rings.rx_max,
                                                     "tx": rings.tx, "tx_max": rings.tx_max},
                "cpu_mhz": self.cpu_mhz, "cpu_max_mhz": self.cpu_max_mhz,
                "missing": list(self.missing)}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> LinkReading:
        r = data.get("rings")
        rings = Rings(r.get("rx"), r.get("rx_max"), r.get("tx"), r.get("tx_max")) \
            if isinstance(r, dict) else None
        return cls(str(data.get("host", "")), str(data.get("peer", "")),
                   str(data.get("system", "")), data.get("iface"), bool(data.get("local")),
                   str(data.get("virtual", "")), data.get("speed"), data.get("duplex"),
                   data.get("mtu"), data.get("path_mtu"), rings, data.get("shaping"),
                   data.get("cpu_mhz"), data.get("cpu_max_mhz"),
                   tuple(str(x) for x in data.get("missing") or ()))


@dataclass(frozen=True, slots=True)
class Ceiling:
    """The most the path carries: `rate` in payload bytes/s, set by `bits` bit/s of `limit`
    ("link": a negotiated speed; "shaping": a host's qdisc) on `host`'s `iface`, at `mtu`."""

    rate: float
    bits: int
    mtu: int
    limit: str
    host: str
    iface: str

    def share(self, rate: float) -> float:
        """`rate` as a share of the ceiling (1.0 = the wire is full)."""
        return rate / self.rate if self.rate > 0 else 0.0

    def to_json(self) -> dict[str, Any]:
        return {"rate": round(self.rate), "bits": self.bits, "mtu": self.mtu,
                "limit": self.limit, "host": self.host, "iface": self.iface}

    @classmethod
    def from_json(cls, data: object) -> Ceiling | None:
        if not isinstance(data, dict):
            return None
        try:
            return cls(float(data["rate"]), int(data["bits"]), int(data["mtu"]),
                       str(data["limit"]), str(data["host"]), str(data["iface"]))
        except (KeyError, TypeError, ValueError):
            return None


@dataclass(frozen=True, slots=True)
class Wire:
    """The path between the hosts as each end reads it, and its ceiling (None: unknown). Also
    the event a job emits once its preflight has read it."""

    source: LinkReading
    destination: LinkReading
    ceiling: Ceiling | None

    def side(self, name: str) -> LinkReading:
        return self.source if name == "source" else self.destination

    def to_json(self) -> dict[str, Any]:
        return {"event": "wire", "source": self.source.to_json(),
                "destination": self.destination.to_json(),
                "ceiling": None if self.ceiling is None else self.ceiling.to_json()}

    @classmethod
    def from_json(cls, data: object) -> Wire | None:
        if not isinstance(data, dict) or not isinstance(data.get("source"), dict) \
                or not isinstance(data.get("destination"), dict):
            return None
        return cls(LinkReading.from_json(data["source"]),
                   LinkReading.from_json(data["destination"]),
                   Ceiling.from_json(data.get("ceiling")))


Event = (PlanReady | TreePlanReady | StageChanged | Sample | LogLine | Progress | Stalled
         | DatasetState | Verdict | Finished | Failed | StageStarted | StageResult | Wire
         | Synced | EndCpu | Resent | OutOfTouch)
"""Every kind the engine emits; closed: a new kind joins here, and mypy then names each face
that does not handle it (and tests/unit/test_event_json.py asks for an example of it)."""
Observer = Callable[[Event], None]
