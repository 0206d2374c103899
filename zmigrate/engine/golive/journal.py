"""Going live and back as a journal: each step recorded before it starts and after it ends.

The plan is in the history before its first command (`history/golive_log.py`); `done` counts
the steps that ran and `pending` says one was begun, its end unknown (the link dropped, a
timeout, Ctrl-C, a crash). So a cut-off go-live is finished by running the rest of the
recorded plan (`forward`), and undone by undoing exactly the steps that ran or may have, last
first (`backward`). Both sides are idempotent where a step's end state may already hold:
unmounting what is not mounted, mounting what is, setting a value it has; so a step run twice
(begun, cut off, run again) and a way back repeated after it failed both end as asked.

Going back stops at the first undo that fails (a busy mountpoint): the copy stays as it is, and
the record says what is still to undo; run again, it continues there.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from .. import cmdline
from ..history import History, golive_log
from ..hosts import Host
from .cutover import GoLiveError, Step

WAS_LIVE = "was_live"  # the record's extra: the copy was in service when going back began
_NOT_MOUNTED = "not currently mounted"
_ALREADY_MOUNTED = "already mounted"


def to_record(step: Step) -> dict[str, Any]:
    """A step as the history keeps it."""
    return {"side": step.side, "what": step.what, "argv": list(step.argv),
            "undo": list(step.undo) if step.undo else None, "already": step.already,
            "path": step.path}


def of_record(s: dict[str, Any]) -> Step:
    """A step from the history (schema 2 rows hold no `already` nor `path`)."""
    return Step(s["side"], s["what"], tuple(s["argv"]), tuple(s["undo"]) if s["undo"] else None,
                already=s.get("already"), path=s.get("path"))


def _fine(argv: tuple[str, ...], stderr: str) -> bool:
    """The error says the command's end state holds already: an unmount of what is not
    mounted, a mount of what is."""
    if argv[:2] == ("zfs", "unmount"):
        return _NOT_MOUNTED in stderr
    if argv[:2] == ("zfs", "mount"):
        return _ALREADY_MOUNTED in stderr
    return False


class StepFailedError(GoLiveError):
    """A step of going live (or its undo) failed on its host."""


def _failure(step: Step, host: Host, stderr: str, status: int, undoing: bool) -> StepFailedError:
    lines = stderr.strip().splitlines()
    said = lines[-1] if lines else f"exit {status}"
    argv = step.undo if undoing and step.undo else step.argv
    what = f"undoing {step.what}" if undoing else step.what
    return StepFailedError(f"{what} failed ({cmdline.join(argv)}): {said}"
                      + ("; it is in use" if "busy" in said.lower() else ""), host=host.label)


def forward(history: History, row_id: int, steps: list[Step], start: int, src: Host, dst: Host,
            on_step: Callable[[Step], None] | None = None) -> None:
    """Run steps[start:], recording each before it starts and after it ends; a step whose
    end state holds already counts as done. StepFailedError on the first that fails (recorded
    as not done); anything raised in between (a lost link, Ctrl-C) leaves it begun."""
    golive_log.progress(history, row_id, start, state=golive_log.GOING_LIVE)
    for i in range(start, len(steps)):
        step = steps[i]
        host = src if step.side == "source" else dst
        golive_log.progress(history, row_id, i, pending=True)
        if on_step is not None:
            on_step(step)
        r = host.execute(host.privileged(list(step.argv)), timeout=300)
        if not r.ok and not (step.already and step.already in r.stderr) \
                and not _fine(step.argv, r.stderr):
            golive_log.progress(history, row_id, i)
            raise _failure(step, host, r.stderr, r.status, False)
        golive_log.progress(history, row_id, i + 1)
    golive_log.progress(history, row_id, len(steps), state=golive_log.LIVE)


def undo_one(step: Step, src: Host, dst: Host) -> None:
    """Run the undo of `step` (StepFailedError when it fails and its end state does not hold)."""
    if step.undo is None:
        return
    host = src if step.side == "source" else dst
    r = host.execute(host.privileged(list(step.undo)), timeout=300)
    if not r.ok and not _fine(step.undo, r.stderr):
        raise _failure(step, host, r.stderr, r.status, True)


def unmount_again(steps: list[Step], dst: Host) -> None:
    """Restoring the copy's mountpoint remounts it (OpenZFS mounts a canmount=on dataset whose
    mountpoint changes): what going live mounted is unmounted again, children first."""
    for step in reversed(steps):
        if step.side == "destination" and step.undo is not None \
                and step.undo[:2] == ("zfs", "unmount"):
            undo_one(step, dst, dst)


def remount_writable(steps: list[Step], src: Host) -> None:
    """A source dataset mounted while it was still read-only stays mounted read-only when its
    readonly is put back (zfs shows it as `on`, source `temporary`; OpenZFS 2.3 and zfs-fuse
    alike): each such dataset is unmounted and mounted again, now as its readonly says."""
    names = sorted({s.argv[-1] for s in steps if s.side == "source" and s.undo is not None
                    and s.undo[:3] in (("zfs", "inherit", "readonly"),
                                       ("zfs", "set", "readonly=off"))})
    if not names:
        return
    # One read for all of them (a pool has hundreds: one round trip each would cost minutes).
    r = src.execute(src.privileged(["zfs", "get", "-H", "-o", "name,value,source", "readonly",
                                    *map(cmdline.dataset, names)]), timeout=120)
    stuck = {f[0] for f in (line.split("\t") for line in r.stdout.splitlines())
             if f[1:] == ["on", "temporary"]} if r.ok else set()
    for name in reversed([n for n in names if n in stuck]):  # children first
        for argv in (["zfs", "unmount", name], ["zfs", "mount", name]):
            src.execute(src.privileged(argv), timeout=120).check(
                f"mounting {name} again writable after going back")


def source_first(steps: list[Step]) -> int:
    """How many of the plan's first steps are on the source (its way out of the way, which
    going back undoes last, once the copy is out of service)."""
    n = 0
    while n < len(steps) and steps[n].side == "source":
        n += 1
    return n


def backward(history: History, row: golive_log.GoLiveRow, src: Host, dst: Host,
             between: Callable[[bool], None],
             on_step: Callable[[Step], None] | None = None, *, copy: bool = True) -> None:
    """Undo the steps of `row` that ran or may have, last first, recording each. `between`
    runs once the copy is out of service and before the source is served again (to carry
    the copy's writes back; its argument: whether any step on the copy ran). Marks the row
    back at the end; StepFailedError stops it, the record saying what is still to undo.
    Without `copy` (it no longer exists): the source's steps alone."""
    steps = [of_record(s) for s in row.steps]
    boundary = source_first(steps)
    ran = row.ran
    golive_log.progress(history, row.id, ran, state=golive_log.GOING_BACK)
    # Whether the copy was in service, recorded before its undos: a way back cut off after
    # them still carries its writes back when run again (its `ran` no longer says so).
    was_live = ran > boundary or bool(row.extra.get(WAS_LIVE))
    if was_live and not row.extra.get(WAS_LIVE):
        golive_log.set_extra(history, row.id, {**row.extra, WAS_LIVE: True})

    def undo(i: int) -> None:
        if on_step is not None:
            on_step(steps[i])
        undo_one(steps[i], src, dst)
        golive_log.progress(history, row.id, i, state=golive_log.GOING_BACK)

    if copy:
        for i in range(ran - 1, boundary - 1, -1):  # the copy's steps
            undo(i)
        unmount_again(steps[boundary:], dst)  # all it may have mounted: idempotent
        between(was_live)
    for i in range(min(ran, boundary) - 1, -1, -1):  # then the source's
        undo(i)
    remount_writable(steps[:boundary], src)
    golive_log.mark_back(history, row.id, time.time())
