"""The Transfer page's transfers handed to a runner (engine/runner): starting one from the
reviewed choices, and the plans its record carries back into the session."""

from __future__ import annotations

import contextlib
from typing import Protocol

from PySide6.QtCore import QObject

from zmigrate.engine.readings.samples import SampleStore

from ...engine import runner
from ...engine.errors import ZmigrateError
from ...engine.events import Event, Failed, Finished, Observer, PlanReady, TreePlanReady
from ...engine.runner.keep import Keep, again_argv, request_final
from ...engine.runner.request import request_of, send_argv
from ...engine.tree.planning.plan import TreePlan
from ..job_bridge import JobBridge
from ..session import Session
from .kept import followed_status
from .record_job import RecordJob
from .remote_job import RemoteRecordJob


class FollowingPage(Protocol):
    """What of the Transfer page following a runner's job is used here."""

    session: Session
    recorder: Observer | None

    def attach(self, bridge: JobBridge) -> None: ...


def transfer_argv(s: Session) -> tuple[list[str], str, str] | None:
    """The reviewed transfer as `send`'s arguments, its destination and its words; None where
    its choices cannot be handed to a runner (the page runs it itself)."""
    if s.tree is not None and s.tree_plan is not None:
        tree = s.tree_request()
        if tree.snapshot is None and not s.take_snapshot:
            return None
        argv = send_argv(s.src_spec, s.dst_spec, tree.root, tree.destination, tree.options,
                         tree)
        destination, what = tree.destination, f"{tree.root} -> {tree.destination} (tree)"
    elif s.dataset_plan is not None and s.snapshot is not None and s.destination is not None:
        argv = send_argv(s.src_spec, s.dst_spec, s.snapshot.name, s.destination, s.choices())
        destination, what = s.destination, f"{s.snapshot.name} -> {s.destination}"
    else:
        return None
    return (argv, destination, what) if argv is not None else None


def start_runner(s: Session, said: tuple[list[str], str, str]) -> str:
    """Start the reviewed transfer (`transfer_argv`'s words) in a runner of its own (it
    outlives the window), on the job's thread: its id, followed from here on."""
    argv, destination, what = said
    job_id = runner.start(what, request_of(argv, s.src_spec, s.dst_spec, destination)).id
    s.attached = s.followed = job_id
    return job_id


def follows_runner(page: FollowingPage, parent: QObject, detached: bool) -> bool:
    """Feed `page` from the job a runner owns for this transfer (see `runner_bridge`); False
    where the page runs the job itself."""
    bridge = runner_bridge(page.session, detached, parent)
    if bridge is None:
        return False
    page.recorder = None  # the runner records the history itself
    page.attach(bridge)
    bridge.start()
    return True


def runner_bridge(s: Session, detached: bool, parent: QObject) -> JobBridge | None:
    """The bridge of the job a runner owns for this transfer: the one re-attached to, else
    one started now on the runner host Review chose, else (`detached`) here; None where the
    page runs the job itself."""
    if s.attached_remote is not None:
        # Done repeats it on its runner host; Final sync on a kept one follows after `after`.
        s.followed, s.followed_remote, s.remote_status = None, s.attached_remote, None
        job = RemoteRecordJob(s.attached_remote, after=s.follow_after, logins=s.logins)
        s.follow_after = 0
        return record_bridge(s, job, parent)
    if s.attached is None and s.runner_check is not None:
        said = transfer_argv(s)
        if said is not None:  # (Review chose a runner host only where there is one)
            s.attached_tree = s.tree is not None
            s.followed = s.followed_remote = s.remote_status = None  # (`shown` notes it)
            start = (s.runner_check.runner, s.runner_check.zmigrate, said[0])
            return record_bridge(s, RemoteRecordJob(None, start, logins=s.logins), parent)
    if s.attached is None and detached:
        said = transfer_argv(s)
        if said is None:
            return None  # a job a runner cannot repeat: the page runs it itself
        s.attached_tree = s.tree is not None
        s.followed = s.followed_remote = s.remote_status = None  # (`start_runner` sets it)
        s.follow_after = 0
        return record_bridge(s, RecordJob("", start=lambda: start_runner(s, said)), parent)
    if s.attached is None:
        return None
    # Done repeats this job from its record; Final sync on a kept one follows it after `after`.
    s.followed, after, s.follow_after = s.attached, s.follow_after, 0
    s.followed_remote = s.remote_status = None
    return record_bridge(s, RecordJob(s.attached, after), parent)


def record_bridge(s: Session, job: RecordJob, parent: QObject) -> JobBridge:
    """The bridge that feeds the Transfer page from `job`'s record, from its first event
    (the whole plot since it started); its plan comes from the record too."""
    s.store = SampleStore()
    s.summary = s.error = s.verdict = None
    s.cancelled = False
    job.subscribe(plans_into(s))
    return JobBridge(job, s.store, parent)


def shown(s: Session, job: object = None) -> None:
    """The page showed the followed job's end (`job`: the handle it followed): no longer news
    on the first page; the next transfer (Sync again) is a job of its own. A job started on
    a runner host is noted: Done repeats it there."""
    if isinstance(job, RemoteRecordJob) and job.pointer is not None:
        s.followed_remote = job.pointer
    if s.attached is not None:
        with contextlib.suppress(OSError, ZmigrateError, ValueError):
            runner.mark_watched(s.attached)
        s.attached = None
    s.attached_remote = None  # (its runner host marked it watched as it showed the end)


def plans_into(s: Session) -> Observer:
    """An observer putting the record's plan into the session (Done words the outcome with
    it): a tree's, or a single dataset's."""
    def plans(event: Event) -> None:
        match event:
            case TreePlanReady(plan=plan) if isinstance(plan, TreePlan):
                s.plan = plan
            case PlanReady(plan=plan) if not s.attached_tree:
                s.plan = plan
            case _:
                pass
    return plans


def again(s: Session, final: bool, keep_every: str | None = None) -> tuple[str, int]:
    """What Done's Sync again / Final sync / Keep in sync on a runner's job follows: a
    kept-in-sync job's own final sync (asked now; followed after the record's current end),
    else a new job of the same tree from the followed job's record (a new snapshot: the
    window that picked the tree may be gone). The job id and the sequence number to follow
    it after."""
    status = followed_status(s)
    if status is None:
        raise ZmigrateError("the transfer's record is gone: it cannot be repeated from here",
                            fix="start it again from the first page")
    keep = Keep.of(status)
    if keep is not None and not status.state.final:
        records = runner.read_events(runner.job_dir(status.id))
        if keep.final:  # its final sync runs already: follow it (after the first copy's end)
            return status.id, next((r.seq for r in records
                                    if isinstance(r.event, Finished | Failed)), 0)
        if final:
            request_final(status.id, status.pid)
            return status.id, max((r.seq for r in records), default=0)
    argv = again_argv(list(status.request.get("argv", [])), status.request.get("source"),
                      final=final, keep_every=keep_every)
    what = status.what.split(", kept in sync")[0].removesuffix(" (final sync)")
    what += " (final sync)" if final else (f", kept in sync every {keep_every}"
                                           if keep_every else "")
    return runner.start(what, {**status.request, "argv": argv}).id, 0
