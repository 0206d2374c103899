"""What the wizard's pages share: the two connected hosts, inventories, choices and the job."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field, replace

from zmigrate.engine.hosts.login import HostSpec
from zmigrate.engine.readings.samples import SampleStore
from zmigrate.engine.verdict.diagnosis import Verdict

from ..engine.errors import ZmigrateError
from ..engine.events import Summary
from ..engine.golive.final_sync import remember_readonly
from ..engine.hosts import Host, same_host
from ..engine.hosts.remembered import SessionLogins
from ..engine.job import Job
from ..engine.plan import Options, Plan
from ..engine.runner.elsewhere import RunnerCheck
from ..engine.runner.remote import Pointer
from ..engine.runner.state import Status
from ..engine.transports import Transport, chosen
from ..engine.tree import TreeJob, TreePlan, TreeRequest
from ..engine.zfs import Capabilities, Dataset, Snapshot
from .models.tree_pick import TreePick

log = logging.getLogger(__name__)


@dataclass
class Session:
    """The wizard's state. It owns every Host in `owned` and closes them in `close_hosts`."""

    src_host: Host | None = None
    # How the window logs in to runner hosts: its dialogs, and what the Hosts page was told.
    logins: SessionLogins = field(default_factory=SessionLogins)
    src_caps: Capabilities | None = None
    dst_host: Host | None = None
    dst_caps: Capabilities | None = None
    src_datasets: list[Dataset] | None = None
    dst_datasets: list[Dataset] | None = None
    source_dataset: Dataset | None = None
    snapshot: Snapshot | None = None
    # A tree (issue 10): the picked root with its ticked children; None moves one snapshot.
    tree: TreePick | None = None
    take_snapshot: bool = False  # the engine snapshots the tree at the start of the transfer
    tree_snapshot: str | None = None  # else: the short name every picked dataset shares
    mount_root: str | None = None  # None: received unmounted (-u), mountpoints kept
    final: bool = False  # the source is set readonly=on first (cut-over)
    # Small datasets (under tree.SMALL) this many at once, a big one alone: small ones spend
    # most of their time on round trips, which overlap; big ones would fight for the link.
    parallel: int | None = None  # None: up to 4, as both hosts' memory allows
    destination: str | None = None
    force: bool = False
    resume: bool = False  # the destination's interrupted receive is resumed (zfs send -t)
    discard_partial: bool = False  # ... or discarded first (zfs receive -A)
    options: Options = field(default_factory=Options)
    # What Review prepared and Transfer runs: one dataset's Job and its Plan, or a tree's
    # TreeJob and its TreePlan (`dataset_plan` and `tree_plan` say which).
    job: Job | TreeJob | None = None
    plan: Plan | TreePlan | None = None
    store: SampleStore | None = None
    summary: Summary | None = None
    error: ZmigrateError | None = None
    cancelled: bool = False
    verdict: Verdict | None = None  # the latest: live, then the final one
    # A job a runner owns that the Transfer page follows through its record (engine/runner),
    # and whether it is a tree's.
    attached: str | None = None
    attached_tree: bool = False
    # ... or one whose runner is another machine (its pointer); and the runner host Review
    # chose and checked for the next transfer (None: this computer).
    attached_remote: Pointer | None = None
    runner_check: RunnerCheck | None = None
    # The runner's job the Transfer page followed last (kept after its end: Done repeats it
    # from its record), and the record's sequence number to follow it after (0: the first).
    followed: str | None = None
    follow_after: int = 0
    # ... or the job on a runner host it followed last (Done repeats it there), and that job
    # as its runner host last said (read off the GUI thread: gui/jobs/kept).
    followed_remote: Pointer | None = None
    remote_status: Status | None = None
    # The logins the Hosts page made (a runner repeats them where it can: engine/runner).
    src_spec: HostSpec | None = None
    dst_spec: HostSpec | None = None
    owned: list[Host] = field(default_factory=list)

    @property
    def shows_tree(self) -> bool:
        """The transfer is a tree's: picked here, or a runner's job re-attached to."""
        return self.tree is not None or self.attached_tree

    @property
    def same_host(self) -> bool:
        """Both ends are one machine (one Host object, or the same label)."""
        if self.src_host is None or self.dst_host is None:
            return False
        return same_host(self.src_host, self.dst_host)

    @property
    def default_transport(self) -> Transport:
        return chosen(None, self.same_host, (self.src_caps.tools if self.src_caps else None,
                                             self.dst_caps.tools if self.dst_caps else None))

    def adopt(self, host: Host) -> None:
        """Take ownership of a freshly connected host."""
        if all(h is not host for h in self.owned):
            self.owned.append(host)

    def release(self, host: Host) -> bool:
        """Forget `host` if neither side uses it any more; True if the caller should close it."""
        if host is self.src_host or host is self.dst_host:
            return False
        before = len(self.owned)
        self.owned = [h for h in self.owned if h is not host]
        return len(self.owned) != before

    def choices(self) -> Options:
        """The options the pages chose: the Transport page's, plus the Destination page's."""
        return replace(self.options, force=self.force, resume=self.resume,
                       discard_partial=self.discard_partial)

    def tree_request(self, destination: str | None = None) -> TreeRequest:
        """The picked tree as the engine's request (snapshot None: the job names one now, so
        Review shows the exact name the transfer creates)."""
        assert self.tree is not None
        dest = destination or self.destination
        assert dest is not None
        snapshot = None if self.take_snapshot else self.tree_snapshot
        return TreeRequest(self.tree.root, dest, snapshot,
                           excludes=self.tree.excludes(), final=self.final,
                           mount_root=self.mount_root, options=self.choices(),
                           parallel=self.parallel)

    def new_tree_job(self, destination: str | None = None) -> TreeJob:
        """A TreeJob over the connected hosts (its prepare() plans it, off the GUI thread)."""
        assert self.src_host is not None and self.dst_host is not None
        return remember_readonly(TreeJob(self.src_host, self.dst_host,
                                         self.tree_request(destination)))

    @property
    def dataset_plan(self) -> Plan | None:
        """The plan Review showed, where it is one dataset's."""
        return self.plan if isinstance(self.plan, Plan) else None

    @property
    def tree_plan(self) -> TreePlan | None:
        """The plan Review showed (or a followed runner's record said), where it is a tree's."""
        return self.plan if isinstance(self.plan, TreePlan) else None

    def reset_transfer(self) -> None:
        """Forget the last transfer (for "start another"); inventories are read again."""
        self.src_datasets = self.dst_datasets = None
        self.source_dataset = self.snapshot = None
        self.tree = None
        self.take_snapshot = self.final = False
        self.tree_snapshot = self.mount_root = None
        self.destination = None
        self.force = self.resume = self.discard_partial = False
        self.job = self.plan = None
        self.store = None
        self.summary = self.error = None
        self.cancelled = False
        self.verdict = None
        self.attached = None
        self.attached_tree = False
        self.attached_remote = None
        self.followed = None
        self.follow_after = 0
        self.followed_remote = None
        self.remote_status = None

    def close_hosts(self) -> None:
        """Close every host this session owns (safe to call twice)."""
        hosts, self.owned = self.owned, []
        self.src_host = self.dst_host = None
        for host in hosts:
            try:
                host.close()
            except Exception:  # noqa: BLE001 - closing must go on for the other hosts
                log.exception("closing %s", host)
