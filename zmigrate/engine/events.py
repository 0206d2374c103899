"""What a running job tells its observers: plain frozen dataclasses, no Qt."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .errors import ZmigrateError
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
class PlanReady:
    plan: Plan


@dataclass(frozen=True, slots=True)
class StageChanged:
    """The job moved on: preflight, starting (each step's ends), sending (its stream flows),
    verifying, cleanup."""

    stage: str
    detail: str = ""
    # A tree's dataset whose own job moved on (several may be in flight); "" for the tree's
    # own stages and a single dataset's job.
    dataset: str = ""


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
class Failed:
    error: ZmigrateError
    cancelled: bool = False


Event = PlanReady | StageChanged | Sample | LogLine | Progress | Stalled | Finished | Failed
# Observers take any event object: later features add event kinds (verdicts) of their own.
Observer = Callable[[Any], None]
