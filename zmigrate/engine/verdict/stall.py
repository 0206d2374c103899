"""A stalled stream: no byte moves through any stage for a while, and where it stopped.

Pure engine code: no I/O. The step runner looks at both mbuffers' latest status lines (and
whether lines still arrive at all) a few times a second and asks `StallWatch.check`; it says
when a stall begins, when the stream moves again, and where it stopped (docs/figures.md):

- no status line from one side for STALL_SILENT seconds -> that host or its SSH session
  (from neither side: this computer's link to both);
- the receive buffer holds data and `zfs receive` takes none -> the destination (the receiving
  mbuffer writes whatever it holds: it has no start fill);
- the send buffer holds data and nothing arrives -> the path between the hosts (the carrier
  names it: a tcp port, the source's ssh, this computer's links);
- both buffers empty, nothing leaves `zfs send` -> the source.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from ..findings import Figure
from ..readings.mbuffer import Status

STALL_AFTER = 30.0  # seconds without a byte moving before a stall is reported (--stall-after)
# mbuffer prints a status line twice a second: a side silent this long is not merely slow to
# print (a log followed with `tail -F` lags by up to a second).
STALL_SILENT = 10.0
EMPTY = 1.0  # below this fill (percent) a buffer holds nothing (mbuffer prints whole percents)


class StallWhere(StrEnum):
    """Where the stream stopped (a str: JSON writes the value)."""

    PATH = "path"  # the way between the hosts carries nothing
    DESTINATION = "destination"  # zfs receive (or its pool) takes nothing
    SOURCE = "source"  # nothing leaves zfs send
    HOST = "host"  # no status line from one host: the host or its SSH session
    CONTROL = "control"  # no status line from either host: this computer's link to them


@dataclass(frozen=True, slots=True)
class SideView:
    """What one side's mbuffer has said: its last status line, how many lines so far, and how
    long ago the last one came (None: none yet)."""

    host: str
    status: Status | None
    lines: int
    age: float | None


@dataclass(frozen=True, slots=True)
class Stall:
    """A stall as it stands: where, on which host, since how long (seconds without a byte
    moving), with the figures that say so; `cleared` once bytes move again."""

    where: StallWhere
    host: str
    seconds: float
    figures: dict[str, Figure] = field(default_factory=dict)
    cleared: bool = False


def _holds(status: Status | None) -> bool:
    """The buffer holds data."""
    return status is not None and status.fill >= EMPTY


def _silent(view: SideView, stalled_for: float) -> bool:
    """No status line for STALL_SILENT s (or none at all during the stall so far)."""
    if view.age is None:
        return stalled_for >= STALL_SILENT
    return view.age >= min(STALL_SILENT, stalled_for)


def locate(send: SideView, recv: SideView, single: bool, stalled_for: float,
           path: dict[str, Figure]) -> tuple[StallWhere, str, dict[str, Figure]]:
    """Where the stream stopped, from both sides' last words: (where, host, figures).

    `single`: one pipeline reports for both sides (local); `path`: how the carrier names the
    way between the hosts (figures)."""
    if single:
        if _silent(send, stalled_for):
            return StallWhere.HOST, send.host, {"side": "send"}
        if _holds(send.status):
            return StallWhere.DESTINATION, recv.host, _fill(send.status)
        return StallWhere.SOURCE, send.host, {}
    send_silent, recv_silent = _silent(send, stalled_for), _silent(recv, stalled_for)
    if send_silent and recv_silent:
        return StallWhere.CONTROL, f"{send.host}, {recv.host}", {}
    if recv_silent:
        return StallWhere.HOST, recv.host, {"side": "receive"}
    if _holds(recv.status):
        return StallWhere.DESTINATION, recv.host, _fill(recv.status)
    if send_silent:
        return StallWhere.HOST, send.host, {"side": "send"}
    if _holds(send.status):
        return StallWhere.PATH, recv.host, {**path, **_fill(send.status)}
    return StallWhere.SOURCE, send.host, {}


def _fill(status: Status | None) -> dict[str, Figure]:
    return {"fill": status.fill} if status is not None else {}


class StallWatch:
    """Follows both sides and says when the stream stalls, and when it moves again.

    A side moved when it printed a new status line whose rates are not both 0 or whose total
    grew; lines that stopped coming move nothing (their last rates are stale)."""

    def __init__(self, now: float, after: float = STALL_AFTER, *, single: bool = False,
                 path: dict[str, Figure] | None = None) -> None:
        self.after = after
        self.single = single
        self.path = dict(path or {})
        self.last_moved = now
        self.stall: Stall | None = None
        self._at: tuple[StallWhere, str] | None = None  # where the sides' words place it
        self._seen: dict[str, tuple[int, int]] = {}  # side -> (lines, total) looked at

    def _moved(self, name: str, view: SideView) -> bool:
        lines, total = self._seen.get(name, (0, -1))
        status = view.status
        if view.lines == lines or status is None:
            return False
        self._seen[name] = (view.lines, status.total)
        return status.in_rate > 0 or status.out_rate > 0 or (total >= 0 and status.total > total)

    def stalled_for(self, now: float) -> float | None:
        """Seconds without a byte moving, while stalled; None while the stream moves."""
        return None if self.stall is None else now - self.last_moved

    def check(self, now: float, send: SideView, recv: SideView) -> Stall | None:
        """A stall that began or changed where it is, or one that just cleared; None for no
        news (still moving, or still stalled at the same place)."""
        moved = self._moved("send", send)
        moved = self._moved("receive", recv) or moved
        if moved:
            stall, self.stall, self._at = self.stall, None, None
            seconds = now - self.last_moved
            self.last_moved = now
            if stall is None:
                return None
            return Stall(stall.where, stall.host, seconds, stall.figures, cleared=True)
        seconds = now - self.last_moved
        if seconds < self.after:
            return None
        where, host, figures = locate(send, recv, self.single, seconds, self.path)
        if self.stall is not None and self._at == (where, host):
            # Same place: keep what a look at the host added (refine).
            self.stall = Stall(self.stall.where, host, seconds, self.stall.figures)
            return None
        self._at = (where, host)
        self.stall = Stall(where, host, seconds, figures)
        return self.stall

    def ended(self, now: float) -> Stall | None:
        """The stream ended well while a stall was on (its last bytes went between two looks):
        that stall, cleared; None if none was on."""
        stall, self.stall, self._at = self.stall, None, None
        if stall is None:
            return None
        return Stall(stall.where, stall.host, now - self.last_moved, stall.figures, cleared=True)

    def refine(self, figures: dict[str, Figure], where: StallWhere | None = None) -> Stall | None:
        """What a look at the host added (process state, pool health, whether it answers):
        the stall with it, or None if nothing changed or no stall is on."""
        stall = self.stall
        if stall is None:
            return None
        merged = {**stall.figures, **figures}
        new_where = where or stall.where
        if merged == stall.figures and new_where is stall.where:
            return None
        self.stall = Stall(new_where, stall.host, stall.seconds, merged)
        return self.stall
