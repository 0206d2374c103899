#!/usr/bin/env python3
"""Render every wizard page with realistic data into docs/screenshot-<page>.png.

No hosts are contacted: the hosts are stand-ins with made-up capabilities and inventories, the
plan comes from the real planner, and the Transfer/Done pages replay a synthetic event sequence
shaped like a real 1 GbE run (sender buffer full, receiver dipping during zfs receive stalls).
The verdicts are the real Diagnoser's on those events, the doctor's advice the real advise()'s
on its stages.

    QT_QPA_PLATFORM=offscreen python docs/screenshots.py
"""

from __future__ import annotations

import math
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("PYQTGRAPH_QT_LIB", "PySide6")
# The zmigrate of this checkout, not whichever one is installed (a worktree's own pages).
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from PySide6.QtCore import QCoreApplication, QSettings, Qt  # noqa: E402
from PySide6.QtGui import QColor, QPainter  # noqa: E402
from PySide6.QtWidgets import QMessageBox, QWidget  # noqa: E402

from zmigrate.engine.destination import Emptiness, Listing, judge  # noqa: E402
from zmigrate.engine.doctor import (  # noqa: E402
    DoctorReport,
    HostCpu,
    ProcessCpu,
    StageResult,
    StageStarted,
    advise,
)
from zmigrate.engine.doctor.compress import Machines  # noqa: E402
from zmigrate.engine.doctor.private_cost import private_cost  # noqa: E402
from zmigrate.engine.errors import TransferError  # noqa: E402
from zmigrate.engine.events import (  # noqa: E402
    DatasetState,
    Failed,
    Finished,
    LogLine,
    PlanReady,
    Progress,
    Resent,
    Sample,
    Side,
    StageChanged,
    Summary,
    Synced,
)
from zmigrate.engine.findings import Note, NoteKind  # noqa: E402
from zmigrate.engine.golive import Step  # noqa: E402
from zmigrate.engine.golive.carry_back import Writes  # noqa: E402
from zmigrate.engine.history import History, Recorder  # noqa: E402
from zmigrate.engine.hosts import LocalHost  # noqa: E402
from zmigrate.engine.hosts.login import HostKeyInfo, HostSpec  # noqa: E402
from zmigrate.engine.hosts.tools import HostTools  # noqa: E402
from zmigrate.engine.job import Job  # noqa: E402
from zmigrate.engine.losses import DESTINATION, Loss, LossKind  # noqa: E402
from zmigrate.engine.plan import Options, Plan, Site, Transport, make_plan  # noqa: E402
from zmigrate.engine.runner import JobState, Status, Writer, place  # noqa: E402
from zmigrate.engine.runner.keep import Keep  # noqa: E402
from zmigrate.engine.tree import (  # noqa: E402
    RECEIVED,
    SENDING,
    SKIPPED,
    VERIFIED,
    WAITING,
    TreeEntry,
    TreeJob,
    TreePlan,
    TreePlanReady,
)
from zmigrate.engine.verdict.diagnosis import Diagnoser  # noqa: E402
from zmigrate.engine.wire import LinkReading, Rings, Wire, ceiling  # noqa: E402
from zmigrate.engine.zfs import Capabilities, Dataset, ResumeInfo, Snapshot  # noqa: E402
from zmigrate.gui.app import make_app  # noqa: E402
from zmigrate.gui.dialogs.doctor_dialog import DoctorDialog  # noqa: E402
from zmigrate.gui.dialogs.host_key_dialog import HostKeyDialog  # noqa: E402
from zmigrate.gui.golive.buttons import GoLiveTarget  # noqa: E402
from zmigrate.gui.job_bridge import JobBridge  # noqa: E402
from zmigrate.gui.pages.transfer_page import DETACHED  # noqa: E402
from zmigrate.gui.readers import emptiness as emptiness_reader  # noqa: E402
from zmigrate.gui.readers import partial as partial_reader  # noqa: E402
from zmigrate.gui.settings import Settings  # noqa: E402
from zmigrate.gui.windows.history_window import HistoryWindow  # noqa: E402
from zmigrate.gui.wizard import MigrationWizard  # noqa: E402

OUT = Path(__file__).resolve().parent
GiB, MiB = 2**30, 2**20
NOW = 1_732_000_000
rng = random.Random(7)


def caps(mem_gib: float, version: str) -> Capabilities:
    """A Debian host as the probe finds it: util-linux, procps and iproute2, /proc readable."""
    free = int(mem_gib * GiB)
    tools = HostTools(frozenset({"setsid", "ss", "flock", "ps", "pkill", "pgrep"}), probed=True,
                      job_control=True, openssl=(3, 0), mem_available=free, mem_total=free * 2,
                      memory_source="/proc/meminfo", cpu_source="/proc/stat")
    return Capabilities("openzfs", version, True, True, True, True, "20230301", True, True, True,
                        True, free, "Linux 6.1.0", 0, "10.0.0.5", "10.0.0.7", tools=tools,
                        receive_unmounted=True, receive_properties=True)  # OpenZFS 2.x


@contextmanager
def environment(**values: str) -> Iterator[None]:
    """os.environ with `values` set, then as it was."""
    before = {name: os.environ.get(name) for name in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for name, value in before.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def shoot_first_run(tmp: Path) -> None:
    """The Hosts page of someone new: no ~/.ssh/config, no recent host; an agent runs and
    ~/.ssh/id_ed25519 exists (the page reads both when it is made)."""
    home = tmp / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text("")
    settings = Settings(QSettings(str(tmp / "first-run.ini"), QSettings.Format.IniFormat))
    with environment(HOME=str(home), ZMIGRATE_SSH_CONFIG=str(home / ".ssh" / "config"),
                     SSH_AUTH_SOCK=str(tmp / "agent.sock")):
        w = MigrationWizard(settings)
    w.resize(1060, 800)
    w.show()
    shoot(w, "first-run")
    w.shutdown()
    w.deleteLater()
    settle()


def snaps(name: str, count: int, start_txg: int, size: int) -> list[Snapshot]:
    return [Snapshot(f"{name}@daily-2024-11-{d + 1:02d}", 7_000_000 + start_txg * 100 + d,
                     NOW - (count - d) * 86400, start_txg + d * 50, rng.randint(40, 900) * MiB,
                     size + d * 300 * MiB) for d in range(count)]


def source_inventory() -> list[Dataset]:
    out = [Dataset("tank", "filesystem", 1, 2200 * GiB, 96 * 1024, 1400 * GiB, NOW - 900 * 86400)]
    out[0].snapshots = snaps("tank", 14, 500, 96 * 1024)
    for i, (name, size) in enumerate([("tank/home", 320), ("tank/home/anna", 120),
                                      ("tank/home/ben", 84), ("tank/media", 1100),
                                      ("tank/media/photos", 410), ("tank/projects", 74),
                                      ("tank/vm", 180), ("tank/vm/win11", 96)]):
        ds = Dataset(name, "filesystem", 100 + i, size * GiB, size * GiB * 9 // 10, 1400 * GiB,
                     NOW - (700 - i * 40) * 86400)
        ds.snapshots = snaps(name, 14 if i != 5 else 9, 1000 + i * 1000, size * GiB * 8 // 10)
        out.append(ds)
    return out


def destination_inventory(src: list[Dataset]) -> list[Dataset]:
    out = [Dataset("backup", "filesystem", 2, 3100 * GiB, 96 * 1024, 4200 * GiB, NOW - 400 * 86400),
           Dataset("backup/tank", "filesystem", 3, 2100 * GiB, 96 * 1024, 4200 * GiB,
                   NOW - 400 * 86400)]
    out[1].snapshots = [Snapshot("backup/" + s.name, s.guid, s.creation, s.createtxg, s.used,
                                 s.referenced) for s in src[0].snapshots[:-3]]
    for ds in src[1:]:
        if ds.name in ("tank/projects", "tank/vm/win11"):
            continue
        copy = Dataset("backup/" + ds.name, "filesystem", ds.guid + 50, ds.used, ds.referenced,
                       4200 * GiB, ds.creation + 3600)
        copy.snapshots = [Snapshot("backup/" + s.name, s.guid, s.creation, s.createtxg, s.used,
                                   s.referenced) for s in ds.snapshots[:-3]]
        out.append(copy)
    return out


def synthetic_run(seconds: int, estimate: int, net: float = 111.5 * MiB,
                  buf: float = 512 * MiB) -> list[object]:
    """A 1 GbE run: zfs send outpaces the network, so the sender's buffer fills and stays full;
    zfs receive stalls briefly every ~90 s (txg sync), so the receiver's buffer swells, then drains.
    """
    events: list[object] = [StageChanged("sending", "step 1/1: incremental from daily-2024-11-11")]
    sent = received = 0.0
    send_fill = recv_fill = 0.0
    for i in range(seconds * 2):
        t = 2.0 + i / 2
        wobble = 1 + 0.02 * math.sin(t / 7) + rng.uniform(-0.015, 0.015)
        rate_net = net * wobble
        stall = (t % 90) < 6 and t > 30
        rate_recv = rate_net * (0.35 if stall else 1.0) if recv_fill < 95 else rate_net
        if not stall and recv_fill > 1:
            rate_recv = rate_net * 1.6
        rate_send_in = 185 * MiB * (1 + rng.uniform(-0.1, 0.1)) if send_fill < 99 else rate_net
        send_fill = min(100.0, send_fill + (rate_send_in - rate_net) / 2 / buf * 100)
        recv_fill = min(100.0, max(0.0, recv_fill + (rate_net - rate_recv) / 2 / buf * 100))
        if recv_fill <= 0:
            rate_recv = rate_net
        sent += rate_net / 2
        received += rate_recv / 2
        events.append(Sample(t, Side.SEND, rate_send_in, rate_net, int(sent), send_fill))
        events.append(Sample(t + 0.02, Side.RECEIVE, rate_net * (1 + rng.uniform(-0.01, 0.01)),
                             rate_recv, int(received), recv_fill))
        if i % 2 == 0:
            eta = max(0.0, (estimate - received) / net)
            events.append(Progress(t, int(received), estimate, rate_recv, eta))
        if i % 10 == 5:  # the source's TCP counters, read every 5 s: a clean link
            segments = int(rate_net * 5 / 1448)
            events.append(Resent(t, "tank.lan", "Linux", segments, rng.randint(0, 9), 5.0))
    events.append(LogLine("backup-01", Side.RECEIVE, "receiving incremental stream of "
                          "tank/home@daily-2024-11-12 into backup/tank/home@daily-2024-11-12"))
    return events


def record(path: Path, plan: Plan, events: list[object], start: float) -> int:
    """Store a run the way the wizard does: the real Recorder, fed the job's events and the
    verdicts the job's Diagnoser adds (its final one before a success)."""
    clock = [float(start)]
    rec = Recorder(History(path), clock=lambda: clock[0], background=False, owns_history=True)
    diagnoser = Diagnoser(rec)
    for event in (PlanReady(plan), *events):
        t = getattr(event, "t", None)
        if isinstance(t, float):
            clock[0] = start + t
        if isinstance(event, Finished):
            diagnoser.finish()  # as the job does before its summary (not when it fails)
        rec(event)
        diagnoser(event)
    assert rec.job_id is not None
    return rec.job_id


def history_store(path: Path, plan: Plan) -> list[int]:
    """Three jobs: over ssh with a small buffer (the receiver starves), the same after the
    doctor's advice (tcp, 5 s buffer), and a failed one."""
    ids = []
    before = replace(plan, transport=Transport.SSH, job_id="b1", port=None,
                     options=replace(plan.options, transport=Transport.SSH, buffer_size=64 * MiB))
    events = synthetic_run(600, 74 * GiB, net=92 * MiB, buf=64 * MiB)
    total = max(e.total for e in events if isinstance(e, Sample))
    events.append(Finished(Summary(total, 601.0, total / 601.0, 9, 5, 5, True)))
    ids.append(record(path, before, events, NOW - 6 * 86400 + 7200))
    after = replace(plan, job_id="b2", options=replace(plan.options, buffer_size=576 * MiB))
    events = synthetic_run(540, 74 * GiB, buf=576 * MiB)
    total = max(e.total for e in events if isinstance(e, Sample))
    events.append(Finished(Summary(total, 541.0, total / 541.0, 0, 5, 5, True)))
    ids.append(record(path, after, events, NOW - 5 * 86400 + 7200))
    def vm(text: str) -> str:
        return text.replace("tank/home", "tank/vm/win11")

    failed = replace(plan, source_snapshot=vm(plan.source_snapshot),
                     destination_dataset=vm(plan.destination_dataset), job_id="b3",
                     steps=tuple(replace(st, source_command=vm(st.source_command),
                                         destination_command=vm(st.destination_command or ""))
                                 for st in plan.steps))
    events = synthetic_run(180, 96 * GiB)
    events.append(Failed(TransferError("the receiver failed (exit 1): cannot receive new "
                                       "filesystem stream: out of space", host="backup-01",
                                       fix="free space on backup or choose another pool")))
    ids.append(record(path, failed, events, NOW - 2 * 86400 + 3600))
    return ids


DOCTOR_STAGES = (
    ("source_read", "source read (zfs send)", 180, True, 41.0,
     (("tank.lan", "zfs", 38.0),)),
    ("network", "network (tcp, mbuffer)", 940, False, 22.0, (("tank.lan", "mbuffer", 64.0),)),
    ("ssh_default", "ssh, default cipher", 113, False, 27.0, (("tank.lan", "ssh", 99.0),)),
    ("ssh_aes128-gcm@openssh.com", "ssh, aes128-gcm@openssh.com", 214, False, 29.0,
     (("tank.lan", "ssh", 97.0),)),
    ("tls", "network (private: TLS 1.3)", 905, True, 30.0,
     (("tank.lan", "socat", 71.0), ("backup-01", "socat", 58.0))),
    ("destination_write", "destination write (temp dataset)", 135, True, 35.0,
     (("backup-01", "z_wr_iss", 61.0),)),
)
# The wire stages' own CPU seconds on each host (10 s each): TLS adds about 0.4 s a GiB.
DOCTOR_OWN_CPU = {"network": {"tank.lan": 6.4, "backup-01": 5.0},
                  "tls": {"tank.lan": 9.5, "backup-01": 8.6}}


def link(host: str, peer: str, iface: str, speed: int, mtu: int, path_mtu: int,
         rings: Rings | None = None) -> LinkReading:
    """A host's side of the path as wire/ reads it (made up, like the rest of these hosts)."""
    return LinkReading(host, peer, "Linux", iface, speed=speed, duplex="full", mtu=mtu,
                       path_mtu=path_mtu, rings=rings, cpu_mhz=3400, cpu_max_mhz=3400)


def wire(src: LinkReading, dst: LinkReading) -> Wire:
    return Wire(src, dst, ceiling(src, dst))


# The doctor's 10 GbE pair: jumbo frames set on the source only, the destination's rings small.
DOCTOR_WIRE = wire(link("tank.lan", "10.0.0.7", "enp3s0", 10_000, 9000, 1500,
                        Rings(4096, 4096, 4096, 4096)),
                   link("backup-01", "10.0.0.5", "enp1s0f0", 10_000, 1500, 1500,
                        Rings(512, 8192, 512, 8192)))
# The transfer's 1 GbE pair.
TRANSFER_WIRE = wire(link("tank.lan", "10.0.0.7", "eno1", 1000, 1500, 1500),
                     link("backup-01", "10.0.0.5", "eno1", 1000, 1500, 1500))


class SyntheticDoctor:
    """Stands in for zmigrate.engine.doctor.Doctor: the stages of a 10 GbE pair with slow disks."""

    left: tuple[Loss, ...] = ()  # what earlier runs left, as the real look finds it

    def __init__(self, src: Any, dst: Any, **kw: Any) -> None:
        self.kw = kw
        self.clear_leftovers: frozenset[str] = frozenset()

    def named_losses(self) -> tuple[Loss, ...]:
        own = Loss(DESTINATION, LossKind.DATASET, "backup/tank/zmigrate-doctor-5e1f09aa",
                   "the write test's own: created by this run, destroyed at its end")
        return (own, *self.left)

    def run(self) -> DoctorReport:
        stages = []
        for name, title, mib, in_path, busy, top in DOCTOR_STAGES:
            cpu = tuple(HostCpu(h, busy, 8, (ProcessCpu(h, 4242, n, c),)) for h, n, c in top)
            sync = (Note(NoteKind.WRITE_SYNC, {"seconds": 1.4}),)
            cipher = title.removeprefix("ssh, ") if name.startswith("ssh_") else None
            stage = StageResult(name, title, mib * MiB, 10.0, mib * MiB * 10, in_path, cpu=cpu,
                                notes=sync if name == "destination_write" else (),
                                details={"cipher": None if cipher == "default cipher"
                                         else cipher, "own_cpu": DOCTOR_OWN_CPU.get(name)})
            self.kw["emit"](StageStarted(name, title, 10.0))
            self.kw["emit"](stage)
            stages.append(stage)
        slowest = min((s for s in stages if s.in_path), key=lambda s: s.rate or 0.0)
        return DoctorReport("5e1f09aa", "tank.lan", "backup-01", Transport.PRIVATE, 10.0,
                            tuple(stages), slowest.name, slowest.rate,
                            advise(stages, slowest, Transport.PRIVATE, wire=DOCTOR_WIRE),
                            wire=DOCTOR_WIRE,
                            private_cost=private_cost(stages, Machines("tank.lan",
                                                                       "backup-01")))

    def cancel(self) -> None:
        pass


def settle(until: Callable[[], bool] = lambda: True, timeout: float = 10.0) -> None:
    """Let queued events and worker results arrive (a script may spin the loop; the app never)."""
    deadline = time.monotonic() + timeout
    while True:
        QCoreApplication.processEvents()
        if until() or time.monotonic() > deadline:
            break
        time.sleep(0.01)
    for _ in range(5):
        QCoreApplication.processEvents()


def shoot(widget: QWidget, name: str) -> None:
    settle()
    path = OUT / f"screenshot-{name}.png"
    widget.grab().save(str(path))
    sys.stdout.write(f"wrote {path.relative_to(OUT.parent)}\n")


def shoot_over(widget: QWidget, box: QWidget, name: str) -> None:
    """`widget` with `box` (a window-modal question, its own window offscreen) drawn centred
    over it, as the user sees them."""
    settle()
    box.adjustSize()
    shot = widget.grab()
    top = box.grab()
    x, y = (shot.width() - top.width()) // 2, (shot.height() - top.height()) // 3
    painter = QPainter(shot)
    painter.fillRect(x - 1, y - 25, top.width() + 2, 25, QColor("#3c4654"))  # its title bar
    painter.setPen(QColor("white"))
    painter.drawText(x + 10, y - 24, top.width() - 20, 24, Qt.AlignmentFlag.AlignVCenter,
                     box.windowTitle())
    painter.drawPixmap(x, y, top)
    painter.setPen(QColor("#3c4654"))
    painter.drawRect(x - 1, y - 25, top.width() + 1, top.height() + 25)
    painter.end()
    path = OUT / f"screenshot-{name}.png"
    shot.save(str(path))
    sys.stdout.write(f"wrote {path.relative_to(OUT.parent)}\n")


def shoot_resume(w: MigrationWizard, dst_sets: list[Dataset]) -> None:
    """An interrupted receive of tank/home into backup/archive/home, 31.4 of 74.2 GiB there."""
    page = w.destination_page
    snap = w.session.snapshot
    assert snap is not None
    token = "1-f1a2b3c4d5-118-789c636064000310a500c4ec50360710e72765a526973030"
    archive = Dataset("backup/archive", "filesystem", 9, 40 * GiB, 96 * 1024, 4200 * GiB,
                      NOW - 300 * 86400)
    partial = Dataset("backup/archive/home", "filesystem", 10, int(31.4 * GiB), 96 * 1024,
                      4200 * GiB, NOW - 3 * 3600, resume_token=token)
    received = int(31.4 * GiB)
    info = ResumeInfo(token, snap.name, snap.guid, None, received, int(74.2 * GiB) - received,
                      compressed=True)

    def decoded(*_args: Any, **_kw: Any) -> ResumeInfo:
        return info  # what `zfs send -nvP -t TOKEN` would report on tank.lan

    vars(partial_reader)["partial_receive"] = decoded  # where the page's reader calls it
    before = (page.ui.parent_edit.text(), page.ui.name_edit.text())
    sets = w.session.dst_datasets = [*dst_sets, archive, partial]
    page.tree.show(sets)
    page.tree.select("backup/archive")
    page.ui.parent_edit.setText("backup/archive")
    page.ui.name_edit.setText("home")
    settle(lambda: page.state.partial is not None and not page.reading_partial)
    page.ui.resume_radio.setChecked(True)
    shoot(w, "resume")
    # Back to the incremental destination for the rest of the pages.
    w.session.dst_datasets = dst_sets
    page.tree.show(dst_sets)
    page.ui.parent_edit.setText(before[0])
    page.ui.name_edit.setText(before[1])
    page.tree.select(before[0])


def shoot_overwrite(w: MigrationWizard, dst_sets: list[Dataset]) -> None:
    """backup/data exists without snapshots and holds three things (the engine's judge over a
    listing of its folder): the page offers to replace them, saying what is lost; ticked."""
    page = w.destination_page
    data = Dataset("backup/data", "filesystem", 11, 118784, 118784, 4200 * GiB,
                   NOW - 30 * 86400)
    listing = Listing(True, "/backup/data", ("notes.txt", "photos", ".ssh"))

    def read(_dst: Any, existing: Dataset | None, sets: list[Dataset],
             dialect: str) -> Emptiness | None:
        assert existing is not None
        return judge(existing, sets, listing, dialect)  # what the remote read would judge

    vars(emptiness_reader)["destination_emptiness"] = read  # where the page's reader calls it
    before = (page.ui.parent_edit.text(), page.ui.name_edit.text())
    sets = w.session.dst_datasets = [*dst_sets, data]
    page.tree.show(sets)
    page.tree.select("backup/data")
    page.ui.parent_edit.setText("backup")
    page.ui.name_edit.setText("data")
    settle(lambda: not page.emptiness.reading and page.ui.force_check.isVisible())
    page.ui.force_check.setChecked(True)
    w.resize(1200, 800)  # the checkbox's one line (a QCheckBox does not wrap) shown whole
    shoot(w, "destination-overwrite")
    w.resize(1060, 800)
    page.ui.force_check.setChecked(False)
    w.session.dst_datasets = dst_sets
    page.tree.show(dst_sets)
    page.ui.parent_edit.setText(before[0])
    page.ui.name_edit.setText(before[1])
    page.tree.select(before[0])


def diverged(dst_sets: list[Dataset]) -> list[Dataset]:
    """The destination with two snapshots taken on backup/tank/home after the last copy."""
    out = []
    for ds in dst_sets:
        if ds.name == "backup/tank/home":
            last = ds.snapshots[-1]
            ds = replace(ds, snapshots=[*ds.snapshots, *(
                Snapshot(f"backup/tank/home@local-2024-11-{d:02d}", 9_100_000 + d,
                         last.creation + d * 3600, last.createtxg + d * 7, 12 * MiB * d,
                         last.referenced) for d in (12, 13))])
        out.append(ds)
    return out


def shoot_review_destroys(w: MigrationWizard, sites: tuple[Site, Site], plan: Plan) -> None:
    """Review of the same transfer where the copy was changed since: with --force the rollback
    destroys two snapshots, named under "Will be destroyed on backup-01:"."""
    src, dst = sites
    forced = make_plan(src, replace(dst, datasets=diverged(dst.datasets)), plan.source_snapshot,
                       plan.destination_dataset, replace(plan.options, force=True),
                       connect_address="10.0.0.7", allow_address="10.0.0.5", port=40871)
    w.back()
    Job.prepare = lambda _job: forced  # type: ignore[method-assign, assignment, misc]
    w.next()
    settle(lambda: w.review_page.isComplete())
    shoot(w, "review-destroys")
    w.back()
    Job.prepare = lambda _job: plan  # type: ignore[method-assign, assignment, misc]
    w.next()
    settle(lambda: w.review_page.isComplete())


def shoot_go_back(w: MigrationWizard, target: GoLiveTarget) -> None:
    """Done after going live (as the lab test's final sync leaves it), then Go back's question
    with what was written to the copy while it was live; its default carries that back."""
    controls = w.done_page.go_live
    controls.show_for(target, True, live=True)
    controls._done(True, "Live: the copy is in service; what ran is in the history, and Go "
                   "back undoes exactly that.")
    steps = [Step("source", "unmount tank/home", ("zfs", "unmount", "tank/home"),
                  ("zfs", "mount", "tank/home")),
             Step("destination", "mount backup/tank/home where tank/home was",
                  ("zfs", "set", "mountpoint=/tank/home", "backup/tank/home"),
                  ("zfs", "set", "mountpoint=none", "backup/tank/home"))]
    controls._confirm_back(steps, Writes((("backup/tank/home", int(1.3 * GiB)),
                                          ("backup/tank/projects", 48 * MiB))))
    box = controls.back_box
    assert box is not None
    shoot_over(w, box, "go-back")
    box.reject()
    settle()


def job_record(plan: Plan, seconds: int) -> tuple[str, subprocess.Popen[bytes]]:
    """A job a runner owns, `seconds` into the synthetic 1 GbE run, written by the runner's
    own Writer; its "runner" a process that only waits (its command line names the job, as a
    runner's does, so readers see it alive)."""
    job_id = place.new_id()
    directory = place.create_dir(job_id)
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)", job_id])
    started = time.time() - seconds
    clock = [started]
    writer = Writer(directory, Status(
        id=job_id, what=f"{plan.source_snapshot} -> {plan.destination_dataset}",
        request={"argv": [plan.source_snapshot, f"backup-01:{plan.destination_dataset}"]},
        started=started, state=JobState.RUNNING, pid=proc.pid), clock=lambda: clock[0])
    diagnoser = Diagnoser(writer)  # the runner's job: its verdicts go to the record too
    # What the job's preflight read beside its reads goes first, as in a runner's record.
    for event in (PlanReady(plan), TRANSFER_WIRE, *synthetic_run(seconds, 74 * GiB)):
        t = getattr(event, "t", None) or getattr(event, "elapsed", None)
        if isinstance(t, float):
            clock[0] = started + t
        writer(event)  # type: ignore[arg-type]
        diagnoser(event)
    writer.close()
    return job_id, proc


def shoot_long_jobs(settings: Settings, plan: Plan) -> None:
    """A transfer its runner owns, left running when the window closed: the next wizard's
    Hosts page lists it with its progress, Show transfer re-attaches the Transfer page to its
    record (the whole plot since it started), and closing again asks Keep it running / Stop."""
    with tempfile.TemporaryDirectory() as tmp, environment(ZMIGRATE_JOBS_DIR=tmp):
        job_id, proc = job_record(plan, 420)
        try:
            w = MigrationWizard(settings)
            w.resize(1120, 800)  # the progress line with the wire's figures shown whole
            w.show()
            w.hosts_page.source.ui.host_combo.setEditText("tank.lan")
            w.hosts_page.destination.ui.host_combo.setEditText("backup-01")
            panel = w.hosts_page.jobs
            panel.refresh()
            panel.list.setCurrentRow(0)
            shoot(w, "hosts-jobs")
            panel.show_button.click()
            store = w.session

            def plotted() -> bool:
                s = store.store
                return s is not None and s.series[Side.RECEIVE].last() is not None

            settle(lambda: w.currentId() == 5 and plotted())
            settle(timeout=1.0)
            page = w.transfer_page
            page.refresher.refresh() if page.refresher else None
            page._show_progress()
            shoot(w, "transfer-reattached")
            w.done(0)
            box = w.close_box
            assert box is not None
            shoot_over(w, box, "close-keep")
            box.reject()  # stay: the record is not touched
            settle()
            w.shutdown()
            w.deleteLater()
            settle()
        finally:
            proc.kill()
            proc.wait()


def kept_record(plan: TreePlan) -> tuple[str, subprocess.Popen[bytes]]:
    """A tree job a runner keeps in sync every 15 minutes (`send --keep-syncing 15m`): its
    first copy three hours ago, the catch-ups since, the last 4 minutes ago; written by the
    runner's own Writer, its "runner" a process that only waits (as in `job_record`)."""
    job_id = place.new_id()
    directory = place.create_dir(job_id)
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)", job_id])
    now = time.time()
    started = now - 3 * 3600
    clock = [started]
    argv = ["send", "-r", "tank.lan:tank", "backup-01:backup/tank", "--snapshot",
            "--keep-syncing", "15m"]
    writer = Writer(directory, Status(
        id=job_id, what="tank.lan:tank -> backup-01:backup/tank (tree), kept in sync every 15m",
        request={"argv": argv, "source": "tank.lan:tank"}, started=started,
        state=JobState.RUNNING, pid=proc.pid), clock=lambda: clock[0])
    writer.update(extra={"keep": Keep(900.0).to_json()})
    writer(TreePlanReady(plan))
    n = len(plan.entries)
    total = sum(e.size for e in plan.entries if e.action != "skip")
    for event in synthetic_run(300, total):
        t = getattr(event, "t", None) or getattr(event, "elapsed", None)
        if isinstance(t, float):
            clock[0] = started + t
        writer(event)  # type: ignore[arg-type]
    for i, e in enumerate(plan.entries):
        state = SKIPPED if e.action == "skip" else VERIFIED
        writer(DatasetState(e.source, e.destination, state, i, n, e.size,
                            e.size if state == VERIFIED else 0, 108.2 * MiB, e.reason))
    writer(Finished(Summary(total, 300.0, total / 300.0, 2, 1, 1, None)))
    syncs = 11
    for k in range(1, syncs + 1):
        clock[0] = now - 240 - (syncs - k) * 900
        writer(Synced(k, True, 2_400_000 * k, 9.0, f"zmigrate-{k}", window=12.0,
                      changed=180 * MiB, next_in=900.0))
    writer.close()
    return job_id, proc


def shoot_kept(settings: Settings, src_sets: list[Dataset]) -> None:
    """A tree kept in sync by its runner: the first page says when it last synced and what a
    final sync would cost now; Show transfer, then Done with Keep in sync (repeating) and
    Final sync."""
    with tempfile.TemporaryDirectory() as tmp, environment(ZMIGRATE_JOBS_DIR=tmp):
        job_id, proc = kept_record(tree_plan(src_sets, ("tank/vm",)))
        try:
            w = MigrationWizard(settings)
            w.resize(1120, 800)
            w.show()
            w.hosts_page.source.ui.host_combo.setEditText("tank.lan")
            w.hosts_page.destination.ui.host_combo.setEditText("backup-01")
            panel = w.hosts_page.jobs
            panel.refresh()
            panel.list.setCurrentRow(0)
            shoot(w, "hosts-kept")
            panel.show_button.click()
            settle(lambda: w.currentId() == 6, timeout=30.0)
            settle(timeout=1.0)
            shoot(w, "done-kept")
            w.shutdown()
            w.deleteLater()
            settle()
        finally:
            proc.kill()
            proc.wait()


def tree_plan(src_sets: list[Dataset], excluded: tuple[str, ...]) -> TreePlan:
    """tank into backup/tank: most datasets catch up, one arrives in full, one is complete."""
    entries = []
    for ds in src_sets:
        if any(ds.name == x or ds.name.startswith(x + "/") for x in excluded):
            continue
        dest = "backup/" + ds.name
        if ds.name == "tank/projects":
            action, reason = "full", ""
        elif ds.name == "tank/home/ben":
            action, reason = "skip", "@zmigrate-20241115-060000 is already there"
        else:
            action, reason = "incremental", "from @daily-2024-11-11"
        size = ds.referenced if action == "full" else ds.referenced // 40
        entries.append(TreeEntry(ds.name, dest, "filesystem", size, action, reason))
    snap = "zmigrate-20241115-060000"
    return TreePlan("tank.lan", "backup-01", "tank", "backup/tank", snap,
                    f"zfs snapshot tank@{snap} tank/home@{snap} ...", None, tuple(entries), (),
                    excluded, "The copy is received unmounted (zfs receive -u), its mountpoint "
                    "properties kept")


def shoot_tree(settings: Settings, one_plan: Plan) -> None:
    """The tree pages: Source with its children ticked (one left out), Destination's tree
    plan, Review, and Transfer's dataset table half-way through."""
    w = MigrationWizard(settings)
    w.resize(1060, 800)
    w.show()
    w.transfer_page.recorder_factory = None
    s = w.session
    src_host, dst_host = LocalHost("tank.lan"), LocalHost("backup-01")
    src_caps, dst_caps = caps(28.4, "2.2.6-1"), caps(11.7, "2.1.11-1")
    src_sets = source_inventory()
    dst_sets = destination_inventory(src_sets)
    hosts = w.hosts_page
    hosts.source.ui.host_combo.setEditText("tank.lan")
    hosts.source.adopt(src_host, src_caps, HostSpec("tank.lan"))
    hosts.destination.ui.host_combo.setEditText("backup-01")
    hosts.destination.adopt(dst_host, dst_caps, HostSpec("backup-01"))
    s.src_datasets, s.dst_datasets = src_sets, dst_sets
    w.source_page._loaded_for = src_host
    w.source_page.tree.show(src_sets)
    w.next()
    excluded = ("tank/vm",)
    w.source_page.choose_tree("tank", excluded)
    w.source_page.ui.dataset_tree.expandAll()
    shoot(w, "source-tree")

    plan = tree_plan(src_sets, excluded)

    def prepare(_job: TreeJob) -> TreePlan:
        return plan

    def dataset_plan(_job: TreeJob, entry: TreeEntry) -> Plan:
        """Each dataset's own commands from the real planner, up to its newest snapshot."""
        ds = next(d for d in src_sets if d.name == entry.source)
        if ds.newest is None:
            return one_plan
        return make_plan(Site(src_host, src_caps, src_sets), Site(dst_host, dst_caps, dst_sets),
                         ds.newest.name, entry.destination,
                         Options(transport=Transport.TCP, buffer_size=512 * MiB, history=True),
                         connect_address="10.0.0.7", allow_address="10.0.0.5", port=40871)

    TreeJob.prepare = prepare  # type: ignore[method-assign, assignment]
    TreeJob.dataset_plan = dataset_plan  # type: ignore[method-assign, assignment]
    w.destination_page._loaded_for = dst_host
    w.destination_page.tree.show(dst_sets)
    w.next()
    w.destination_page.ui.parent_edit.setText("backup")
    w.destination_page.ui.name_edit.setText("tank")
    settle(lambda: w.destination_page.isComplete())
    shoot(w, "destination-tree")
    w.next()
    w.next()
    settle(lambda: w.review_page.isComplete())
    shoot(w, "review-tree")

    w.next()
    bridge = w.transfer_page.bridge
    assert bridge is not None
    n = len(plan.entries)
    for i, e in enumerate(plan.entries):
        bridge.on_event(DatasetState(e.source, e.destination, SKIPPED if e.action == "skip"
                                     else WAITING, i, n, e.size, detail=e.reason))
    current = 4  # tank/media: the big one, being sent
    for i, e in enumerate(plan.entries[:current]):
        if e.action != "skip":
            bridge.on_event(DatasetState(e.source, e.destination, SENDING, i, n, e.size))
            # Arrived; verified with the others (one read per host) once all have.
            bridge.on_event(DatasetState(e.source, e.destination, RECEIVED, i, n, e.size,
                                         e.size, 108.2 * MiB))
    e = plan.entries[current]
    bridge.on_event(DatasetState(e.source, e.destination, SENDING, current, n, e.size))
    done_before = sum(x.size for x in plan.entries[:current] if x.action != "skip")
    for event in synthetic_run(240, e.size):
        if isinstance(event, Progress):
            done = done_before + event.done
            event = Progress(event.elapsed, done, plan.total, event.rate,
                             (plan.total - done) / event.rate if event.rate else None,
                             current + 1, n)
        elif isinstance(event, StageChanged):
            event = replace(event, dataset=e.source)  # as the tree relays its datasets' stages
        bridge.on_event(event)
    w.transfer_page.refresher.refresh() if w.transfer_page.refresher else None
    w.transfer_page._show_progress()
    shoot(w, "transfer-tree")
    w.shutdown()
    w.deleteLater()
    settle()


def shoot_run(w: MigrationWizard, plan: Plan) -> None:
    """Transfer: a synthetic 1 GbE run replayed, stopped 8 minutes in (the job's Diagnoser
    giving its verdicts); then Done, verified."""
    s = w.session
    estimate = 74 * GiB
    events = synthetic_run(480, estimate)
    w.next()
    bridge = w.transfer_page.bridge
    assert bridge is not None
    diagnoser = Diagnoser(bridge.on_event)  # the job's: its verdicts go to the page
    diagnoser(PlanReady(plan))
    for wired in (bridge.on_event, diagnoser):  # what the job's preflight read beside its reads
        wired(TRANSFER_WIRE)
    for event in events:
        bridge.on_event(event)
        diagnoser(event)
    w.transfer_page.ui.log_toggle.setChecked(True)
    w.transfer_page.refresher.refresh() if w.transfer_page.refresher else None
    w.transfer_page._show_progress()
    shoot(w, "transfer")

    # Done
    w.transfer_page.ui.log_toggle.setChecked(False)
    store = s.store
    assert store is not None
    last = store.series[Side.RECEIVE].last()
    total = int(last[1][2]) if last else 0
    bridge.on_event(StageChanged("verifying", "comparing snapshot guids"))
    final = diagnoser.finish()
    bridge.on_event(Finished(Summary(total, 478.0, total / 478.0, 6, s.snapshot.guid if s.snapshot
                                     else 0, s.snapshot.guid if s.snapshot else 0,
                                     None, plan.arrives,  # the default: no --hash
                                     extra={"verdict": final.to_json()})))
    settle(lambda: w.currentId() == 6)
    shoot(w, "done")


def shoot_windows(w: MigrationWizard, plan: Plan) -> None:
    """The History window (three recorded jobs, one opened, then two compared) and the
    doctor, run to its report from the Transport page's button."""
    src_host, dst_host = LocalHost("tank.lan"), LocalHost("backup-01")
    with tempfile.TemporaryDirectory() as kept:
        db = Path(kept) / "history.sqlite3"
        before, after, _failed = history_store(db, plan)
        history = HistoryWindow(db)
        history.resize(1100, 820)
        history.show()
        settle(lambda: history.model.rowCount() == 3 and not history.loading)
        history.select_ids([after])
        settle(lambda: history.job_view.job is not None and not history.detail_loading)
        shoot(history, "history")
        history.select_ids([before, after])
        history.ui.compare_button.click()
        settle(lambda: len(history.compare_view.jobs) == 2 and not history.detail_loading)
        shoot(history, "compare")
        history.close()
        history.deleteLater()

    w.transport_page.doctor_factory = SyntheticDoctor
    doctor = DoctorDialog(src_host, dst_host, snapshot="tank/home@daily-2024-11-14",
                          parent_dataset="backup/tank", options=Options(),
                          doctor_factory=SyntheticDoctor, parent=w)
    doctor.ui.write_check.setChecked(True)
    doctor.show()
    doctor.run()
    settle(lambda: doctor.report is not None)
    shoot(doctor, "doctor")
    # A run stopped before its clean-up left its test dataset: the next one asks first.
    SyntheticDoctor.left = (Loss(
        DESTINATION, LossKind.DATASET, "backup/tank/zmigrate-doctor-0badcafe",
        "left by an earlier doctor run (created 2026-11-28 14:02, 3.2 GiB): destroyed with "
        "this run's"),)
    doctor.run()
    settle(lambda: doctor.findChild(QMessageBox, "leftovers_box") is not None)
    box = doctor.findChild(QMessageBox, "leftovers_box")
    assert box is not None
    shoot_over(doctor, box, "doctor-leftovers")
    box.reject()
    settle(lambda: doctor.report is not None and not doctor.running)
    doctor.close()


def main() -> int:
    app = make_app([])
    app.setStyleSheet(app.styleSheet())
    tmp = Path(tempfile.mkdtemp(prefix="zmigrate-screenshots-"))
    shoot_first_run(tmp)
    # The other pages' user has both hosts in ~/.ssh/config (whatever this machine's says).
    config = tmp / "ssh_config"
    config.write_text("Host tank.lan\n    User root\n\nHost backup-01\n    User zfsrecv\n")
    os.environ["ZMIGRATE_SSH_CONFIG"] = str(config)
    # Records of jobs a runner owns go to the temporary directory, never the user's; the
    # replayed transfers run in the window (no runner is started: nothing is contacted).
    os.environ["ZMIGRATE_JOBS_DIR"] = str(tmp / "jobs")
    settings = Settings(QSettings(str(OUT / ".screenshots.ini"), QSettings.Format.IniFormat))
    settings.set_value(DETACHED, False)
    w = MigrationWizard(settings)
    w.resize(1060, 800)
    w.show()
    w.transfer_page.recorder_factory = None  # the History window's jobs are made below
    s = w.session
    src_host, dst_host = LocalHost("tank.lan"), LocalHost("backup-01")
    src_caps, dst_caps = caps(28.4, "2.2.6-1"), caps(11.7, "2.1.11-1")
    src_sets = source_inventory()
    dst_sets = destination_inventory(src_sets)

    # 1 Hosts
    hosts = w.hosts_page
    hosts.source.ui.host_combo.setEditText("tank.lan")
    hosts.source.adopt(src_host, src_caps, HostSpec("tank.lan"))
    hosts.destination.ui.host_combo.setEditText("backup-01")
    hosts.destination.ui.user_edit.setText("zfsrecv")
    hosts.destination.ui.sudo_check.setChecked(True)
    hosts.destination.adopt(dst_host, dst_caps, HostSpec("backup-01", user="zfsrecv", sudo=True))
    shoot(w, "hosts")

    # 2 Source: inventory already "loaded"
    s.src_datasets, s.dst_datasets = src_sets, dst_sets
    w.source_page._loaded_for = src_host
    w.source_page.tree.show(src_sets)
    w.next()
    # One dataset at one snapshot (a dataset with children would pick the tree: see below).
    w.source_page.ui.dataset_tree.expand(w.source_page.tree.select("tank/home").parent())
    w.source_page.choose("tank/home@daily-2024-11-14")
    shoot(w, "source")

    # 3 Destination: finds backup/tank/home, which shares history: incremental
    w.destination_page._loaded_for = dst_host
    w.destination_page.tree.show(dst_sets)
    w.next()
    shoot(w, "destination")

    # 3b The same page where an interrupted transfer left a resumable receive: Resume chosen.
    shoot_resume(w, dst_sets)
    # 3c An existing dataset without snapshots that holds files: Replace its contents, ticked.
    shoot_overwrite(w, dst_sets)

    # 4 Transport
    w.next()
    shoot(w, "transport")

    # 5 Review: the real planner with the addresses a preflight would have found
    plan = make_plan(Site(src_host, src_caps, src_sets), Site(dst_host, dst_caps, dst_sets),
                     s.snapshot.name if s.snapshot else "", s.destination or "",
                     Options(transport=Transport.PRIVATE, buffer_size=512 * MiB),
                     connect_address="10.0.0.7", allow_address="10.0.0.5", port=40871)

    def prepare(_job: Job) -> Plan:
        return plan

    Job.prepare = prepare  # type: ignore[method-assign, assignment]
    w.transport_page.ui.buffer_combo.setCurrentText("512M")
    w.next()
    settle(lambda: w.review_page.isComplete())
    shoot(w, "review")
    # 5b The same where the copy changed since and --force rolls it back: what is destroyed.
    sites = (Site(src_host, src_caps, src_sets), Site(dst_host, dst_caps, dst_sets))
    shoot_review_destroys(w, sites, plan)

    # 6 Transfer and 7 Done: the job does not run; its events are replayed.
    def no_start(bridge: JobBridge, plan: Plan | None = None) -> None:
        bridge.started = True

    real_start = JobBridge.start
    JobBridge.start = no_start  # type: ignore[method-assign, assignment]
    shoot_run(w, plan)
    # 7b Done after going live, and Go back's question over it.
    shoot_go_back(w, GoLiveTarget(src_host, dst_host, src_caps, dst_caps, "tank/home",
                                  "backup/tank/home"))

    # The host key question
    dialog = HostKeyDialog(HostKeyInfo("backup-01", "backup-01", "ssh-ed25519",
                                       "SHA256:q0nQG7cCmq0H2mY8Zb0GZr5P3m7b1wHk9n2V4cTq3xE",
                                       Path.home() / ".ssh/known_hosts"), w)
    dialog.show()
    shoot(dialog, "host-key")
    dialog.close()

    shoot_windows(w, plan)
    w.shutdown()
    # Delete the window while the QApplication still exists (not at interpreter exit).
    w.deleteLater()
    settle()
    shoot_tree(settings, plan)
    JobBridge.start = real_start  # type: ignore[method-assign]
    shoot_long_jobs(settings, plan)
    shoot_kept(settings, source_inventory())
    (OUT / ".screenshots.ini").unlink(missing_ok=True)
    shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
