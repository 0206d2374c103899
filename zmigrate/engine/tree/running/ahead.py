"""A zfs-fuse catch-up's snapshot taken, and what changed measured, while the copy is read.

On a zfs without `written` (zfs-fuse) a catch-up takes its snapshot of the whole tree and then
measures each dataset's increment since the copy's newest snapshot (tree_unchanged). Both need
only the source; the copy's side is what takes long to read there (zfs-fuse opens each
unmounted dataset from disk: ~5 ms an object, 2-3 s for a 200-dataset copy). So a run (never
a dry run) does both as soon as the source's tree is read, beside that read: the increment
measured is from each dataset's newest snapshot, which is exactly the base the plan measures
(`tree_unchanged._increments`). Once the plan is made, the snapshot is its own if the plan
takes the same one; otherwise (or when planning fails) it is taken back: it is this run's own,
just taken, and holds nothing yet.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor

from ... import cmdline, zfs
from ...errors import ZmigrateError
from ...events import Observer, StageChanged
from ...hosts import Host
from ..planning.plan import TreePlan, TreeRequest, recursive_snapshot, unused_snapshot_name
from ..planning.unchanged import measure_empty
from .phases import Phases


def take_snapshot(src: Host, command: str, snapshot: str, emit: Observer) -> None:
    """Run a tree's snapshot `command` (taking @`snapshot`), said first."""
    emit(StageChanged("preflight", f"taking the snapshot @{snapshot}"))
    src.run(command, timeout=300).check("taking the snapshot")


class Ahead:
    """Called with the source's tree as soon as it is read (in the reading pool's thread; the
    run reads its results only once that read is over)."""

    def __init__(self, src: Host, caps: zfs.Capabilities, request: TreeRequest, snapshot: str,
                 emit: Observer, phases: Phases | None = None) -> None:
        self._src, self._request, self._emit = src, request, emit
        self._phases = phases or Phases()  # the snapshot's time, the run's `snapshot` phase
        self._wanted = (request.snapshot is None and not request.final and not request.excludes
                        and "written" not in caps.properties)
        self._base_name = snapshot
        self.snapshot: str | None = None  # the snapshot's short name, once taken
        self._measured: Future[set[str]] | None = None  # the datasets whose increment is empty

    @property
    def command(self) -> str | None:
        """The command that took the snapshot (None: none was taken)."""
        if self.snapshot is None:
            return None
        return recursive_snapshot(self._src, self._request.root, self.snapshot)

    def __call__(self, src_sets: Sequence[zfs.Dataset]) -> None:
        if not self._wanted or self.snapshot is not None:  # (a second call does nothing)
            return
        root = self._request.root
        tree = [d for d in src_sets if cmdline.within(d.name, root)]
        # A catch-up (some dataset has a snapshot the copy may share), and a tree.
        if len(tree) < 2 or not any(d.snapshots for d in tree):
            return
        name = unused_snapshot_name(self._base_name, src_sets)
        command = recursive_snapshot(self._src, root, name)
        with self._phases.timed("snapshot", command):
            take_snapshot(self._src, command, name, self._emit)
        self.snapshot = name
        self._emit(StageChanged("preflight", "measuring what changed since each dataset's "
                                "newest snapshot"))
        # Not waited for here: a first copy has nothing to measure, and the plan says so.
        pairs = [(f"{d.name}@{d.snapshots[-1].short}", f"{d.name}@{name}")
                 for d in tree if d.snapshots]
        measuring = ThreadPoolExecutor(max_workers=1, thread_name_prefix="zmigrate-ahead")
        self._measured = measuring.submit(measure_empty, self._src, pairs)
        measuring.shutdown(wait=False)

    @property
    def empty(self) -> set[str]:
        """The datasets whose increment to the snapshot is empty (waits for the measuring;
        raises its failure)."""
        return self._measured.result() if self._measured is not None else set()

    def owns(self, plan: TreePlan) -> bool:
        """Whether the snapshot taken ahead is the one `plan` takes (then it is not taken
        again); if one was taken and is not, it is taken back here."""
        if self.snapshot is None:
            return False
        if plan.snapshot_command == self.command:  # (it names the snapshot)
            return True
        self.take_back()
        return False

    def take_back(self) -> None:
        """Destroy the snapshot taken ahead (this run's own, holding nothing yet); a failure
        is told, not raised: the run's own failure, if any, is the one to say."""
        if self.snapshot is None:
            return
        name = f"{self._request.root}@{self.snapshot}"
        self.snapshot = None
        if self._measured is not None:  # its sends read the snapshot: done with it first
            self._measured.exception()
        destroy = self._src.privileged(["zfs", "destroy", "-r", cmdline.snapshot(name)])
        try:
            self._src.run(cmdline.join(destroy), timeout=300).check("removing the snapshot")
        except ZmigrateError as exc:
            self._emit(StageChanged("preflight", f"the snapshot {name}, taken ahead, could "
                                    f"not be removed: {exc}; remove it by hand"))
