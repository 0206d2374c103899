"""A big pool does not freeze the wizard (lab): 421 datasets and 10,525 snapshots on lab-src,
driven Hosts -> Source (the pool picked as a tree, a child unticked and ticked again, the
list filtered) -> Destination -> Review while a 10 ms timer measures the event loop's longest
stall in each step. The pool is made for this test and destroyed right after it: while it is
imported zfs-fuse keeps many threads busy and slows everything else down."""

from __future__ import annotations

import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from lab.plugin import Lab, Pool, PoolFactory
from lab.util import quiet_machine
from lab.zfsfuse import destroy_pool
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QTreeView
from pytestqt.qtbot import QtBot
from wizard_driver import to_review, to_source

from zmigrate.gui.pages.base import PageId
from zmigrate.gui.wizard import MigrationWizard

pytestmark = [pytest.mark.gui, pytest.mark.lab, pytest.mark.timeout(900)]

PARENTS = 20  # children of the pool, each with PARENTS children: 420 datasets below the root
SNAPSHOTS = 25  # recursive snapshots: 25 x 421 = 10,525
# The longest the event loop may stand still, in seconds. Measured on the quiet lab (styled
# window, 2 cores shared with zfs-fuse): 20-60 ms per phase, where picking the pool froze the
# window for 2.5-9 s at first and 90-200 ms per phase before completeChanged was said only on
# a change, the figure columns fitted once per load and the collector kept off the inventory.
AIM = 0.100
TICK_MS = 10
WAIT_BIG = 180_000  # ms: reading 10,000 snapshots on a loaded lab


def _queued() -> float:
    """Seconds the GUI thread has waited, runnable, for a core (its schedstat's second
    figure): the shared machine's doing, not the wizard's."""
    with open(f"/proc/self/task/{threading.get_native_id()}/schedstat") as f:
        return int(f.read().split()[1]) / 1e9


class EventLoopMeter:
    """A 10 ms timer on the GUI thread: the longest gap between two of its ticks in each named
    phase, less the tick itself and less the time the thread waited for a core meanwhile
    (another process's, on a loaded machine), is how long the wizard held the event loop:
    running on it, or blocked (a remote call, another thread's hold on Python's lock)."""

    def __init__(self) -> None:
        self.worst: dict[str, float] = {}
        self.phase = "start"
        self._last, self._queued = time.monotonic(), _queued()
        self._timer = QTimer()
        self._timer.setInterval(TICK_MS)
        self._timer.timeout.connect(self._tick)

    def _tick(self) -> None:
        now, queued = time.monotonic(), _queued()
        stall = max(0.0, now - self._last - TICK_MS / 1000 - (queued - self._queued))
        self.worst[self.phase] = max(self.worst.get(self.phase, 0.0), stall)
        self._last, self._queued = now, queued

    def start(self, phase: str) -> None:
        self.phase = phase
        self._last, self._queued = time.monotonic(), _queued()
        self._timer.start()

    def stop(self) -> None:
        self._timer.stop()

    @contextmanager
    def aside(self) -> Iterator[None]:
        """The test's own looks at the view (walking a thousand rows in Python): not counted."""
        self._timer.stop()
        try:
            yield
        finally:
            self.start(self.phase)


def _zfs_script(lines: list[str]) -> None:
    subprocess.run(["sh", "-e", "-c", "\n".join(lines)], check=True, timeout=600)


@pytest.fixture
def big_pool(make_pool: PoolFactory) -> Iterator[Pool]:
    pool = make_pool("big", size_mb=1024)
    try:
        names = [f"{pool.name}/p{i:02d}" for i in range(PARENTS)]
        names += [f"{parent}/c{j:02d}" for parent in names[:PARENTS] for j in range(PARENTS)]
        _zfs_script([f"zfs create -o mountpoint=none {n}" for n in names])
        _zfs_script([f"zfs snapshot -r {pool.name}@s{k:02d}" for k in range(SNAPSHOTS)])
        yield pool
    finally:
        destroy_pool(pool.name)


def _drive(qtbot: QtBot, w: MigrationWizard, pool: Pool, dst: Pool) -> dict[str, float]:
    """Hosts -> Source (pick the pool, untick and tick a child, filter) -> Destination ->
    Review: each phase's longest event-loop stall, in seconds (and its length, printed)."""
    meter = EventLoopMeter()
    seconds: dict[str, float] = {}

    def phase(name: str) -> None:
        meter.phase = name
        seconds[name] = time.monotonic()

    meter.start("hosts and source")
    try:
        seconds["hosts and source"] = time.monotonic()
        to_source(qtbot, w, wait=WAIT_BIG)
        datasets = w.session.src_datasets or []
        mine = [d for d in datasets if d.name.split("/")[0] == pool.name]
        assert len(mine) == 1 + PARENTS + PARENTS * PARENTS
        assert sum(len(d.snapshots) for d in mine) == SNAPSHOTS * len(mine)
        page = w.source_page
        phase("pick the pool")
        assert page.choose_tree(pool.name)
        qtbot.wait(300)
        assert w.session.tree is not None and len(w.session.tree.picked()) == len(mine)
        phase("untick and tick a child")
        child = f"{pool.name}/p03"
        assert page.set_ticked(child, False)
        qtbot.wait(200)
        assert len(w.session.tree.picked()) == len(mine) - 1 - PARENTS
        assert page.set_ticked(child, True)
        qtbot.wait(200)
        phase("filter")
        view, tree = page.ui.dataset_tree, page.tree
        opened = f"{pool.name}/p05"
        view.expand(tree.proxy.mapFromSource(tree.model.index_of(opened)))
        with meter.aside():
            open_before = set(tree._expanded())
        assert opened in open_before
        page.ui.filter_edit.setText("c07")
        qtbot.wait(300)
        with meter.aside():
            # Only the matches (c07 under each parent, with their snapshots) and their parents.
            rows = [n for n in _visible(view) if not n.startswith("@")]
        assert sorted(n for n in rows if n.startswith("c")) == ["c07"] * PARENTS
        assert len(rows) == 1 + PARENTS + PARENTS
        page.ui.filter_edit.setText("")
        qtbot.wait(300)
        with meter.aside():
            # Every row is back, and exactly the rows open before the filter are open again.
            assert set(tree._expanded()) == open_before
        phase("destination")
        assert page.isComplete()
        w.next()
        assert w.currentId() == PageId.DESTINATION
        dest = w.destination_page
        qtbot.waitUntil(lambda: w.session.dst_datasets is not None and not dest.tree.loading,
                        timeout=WAIT_BIG)
        dest.ui.parent_edit.setText(dst.name)
        dest.ui.name_edit.setText("copy")
        qtbot.waitUntil(lambda: not dest.checking_tree, timeout=WAIT_BIG)
        phase("review")
        to_review(qtbot, w, wait=WAIT_BIG)
        qtbot.wait(200)
    finally:
        meter.stop()
    now = time.monotonic()
    names = list(seconds)
    took = {n: (seconds[names[i + 1]] if i + 1 < len(names) else now) - seconds[n]
            for i, n in enumerate(names)}
    print("\n" + "\n".join(f"{n}: longest stall {meter.worst.get(n, 0.0) * 1000:.0f} ms "
                           f"in {took[n]:.1f} s" for n in names))
    return {n: meter.worst.get(n, 0.0) for n in names}


def _visible(view: QTreeView) -> list[str]:
    """The names the view's rows show (a dataset's last component, a snapshot's `@name`),
    under open parents, top to bottom."""
    names: list[str] = []
    index = view.model().index(0, 0)
    while index.isValid():
        names.append(str(index.data()))
        index = view.indexBelow(index)
    return names


def test_a_big_pool_never_freezes_the_wizard(qtbot: QtBot, wizard: MigrationWizard,
                                             lab_env: Lab, big_pool: Pool,
                                             make_pool: PoolFactory) -> None:
    dst = make_pool("bigdst")
    # One run holds the bound (the README says so): the machine is made quiet first, and a
    # stall of the shared machine is not forgiven by a second try.
    quiet_machine()
    worst = _drive(qtbot, wizard, big_pool, dst)
    print(f"worst {max(worst.values()) * 1000:.0f} ms (aim {AIM * 1000:.0f} ms): "
          + ", ".join(f"{k} {v * 1000:.0f}" for k, v in worst.items()))
    assert max(worst.values()) < AIM, worst
