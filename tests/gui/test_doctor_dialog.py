"""The Doctor dialog: a stand-in doctor for the drawing, the real one on the lab."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from lab.plugin import Pool
from lab.util import (
    doctor_processes,
    wait_until,
    write_random_files,
    zfs,
    zfs_processes_naming,
)
from PySide6.QtWidgets import QMessageBox
from pytestqt.qtbot import QtBot
from wire_samples import bad_cable

from zmigrate.engine.doctor import (
    TEMP_PREFIX,
    DoctorReport,
    HostCpu,
    ProcessCpu,
    StageResult,
    StageStarted,
    advise,
    temp_dataset,
)
from zmigrate.engine.doctor.results import PrivateCost
from zmigrate.engine.hosts import Host, LocalHost
from zmigrate.engine.losses import Loss
from zmigrate.engine.plan import Options
from zmigrate.engine.transports import Transport
from zmigrate.engine.units import MiB
from zmigrate.engine.zfs import Snapshot
from zmigrate.gui.dialogs.doctor_dialog import DoctorDialog, five_second_buffer
from zmigrate.gui.pages.transport_page import TransportPage
from zmigrate.gui.plots.stage_bars import BOTTLENECK_COLOR, IN_PATH_COLOR
from zmigrate.gui.session import Session
from zmigrate.gui.settings import Settings

pytestmark = pytest.mark.gui


class FakeDoctor:
    """Emits the stages the real doctor would, from the worker thread, then the report."""

    stages = (
        StageResult("source_read", "source read (zfs send)", 180 * MiB, 2.0, 360 * MiB, True),
        StageResult("network", "network (tcp, mbuffer)", 940 * MiB, 2.0, 1880 * MiB, True),
        StageResult("ssh_default", "ssh, default cipher", 113 * MiB, 2.0, 226 * MiB, False,
                    cpu=(HostCpu("src", 30.0, 4, (ProcessCpu("src", 9, "ssh", 99.0),)),)),
        StageResult("destination_write", "destination write (temp dataset)", 135 * MiB, 2.0,
                    270 * MiB, True),
    )

    def __init__(self, src: Host, dst: Host, **kw: Any) -> None:
        self.kw = kw
        self.cancelled = threading.Event()
        self.clear_leftovers: frozenset[str] = frozenset()

    def named_losses(self) -> tuple[Loss, ...]:
        return ()  # no earlier run left anything

    def run(self) -> DoctorReport:
        emit = self.kw["emit"]
        for s in self.stages:
            emit(StageStarted(s.name, s.title, self.kw["seconds"]))
            emit(s)
        slowest = self.stages[3]
        return DoctorReport("r1", "src", "dst", Transport.TCP, self.kw["seconds"], self.stages,
                            slowest.name, slowest.rate,
                            advise(list(self.stages), slowest, Transport.TCP),
                            wire=bad_cable(),
                            private_cost=PrivateCost(135 * MiB, 131 * MiB,
                                                     {"src": 0.4, "dst": 0.52}))

    def cancel(self) -> None:
        self.cancelled.set()


def test_bars_bottleneck_and_buffer_reach_the_transport_page(qtbot: QtBot,
                                                             settings: Settings) -> None:
    session = Session()
    session.src_host = session.dst_host = LocalHost()
    session.snapshot = Snapshot("tank/data@one", 1, 0, 1, 0, 0)
    session.destination = "backup/data"
    page = TransportPage(session, settings)
    qtbot.addWidget(page)
    page.doctor_factory = FakeDoctor
    page.initializePage()
    assert page.ui.doctor_button.isEnabled()
    dialog = page.open_doctor()
    assert dialog is not None
    assert dialog.ui.seconds_spin.value() == 10
    # The write test is on by default (the destination is often the slowest stage).
    assert dialog.ui.write_check.isChecked()
    assert "always destroys it" in dialog.ui.write_warning.text()
    assert "at most 10% of the free space" in dialog.ui.write_warning.text()
    dialog.ui.write_check.setChecked(False)
    assert "Off" in dialog.ui.write_warning.text()
    dialog.ui.write_check.setChecked(True)
    assert f"{TEMP_PREFIX}… under backup on" in dialog.ui.write_warning.text()
    with qtbot.waitSignal(dialog.finished_run, timeout=5000):
        dialog.run()
    chart = dialog.chart
    assert chart.names == ["source_read", "network", "ssh_default", "destination_write"]
    assert chart.titles[2] == "(ssh, default cipher)"  # an alternative, not on the path
    colors = [chart.color(i) for i in range(4)]
    assert colors == [IN_PATH_COLOR, IN_PATH_COLOR, "#9ca3af", BOTTLENECK_COLOR]
    assert "bottleneck" in chart.labels[3].textItem.toPlainText()
    assert "135 MiB/s" in dialog.ui.expected_label.text()
    assert "ssh used 99% of a core" in dialog.ui.cpu_label.text()
    # Each side's link as its host read it, and the ceiling (wire_samples: real captures).
    link = dialog.ui.cpu_label.text()
    assert "Source tank.lan: eth0, 100 Mb/s full duplex, MTU 1400, path MTU 1400" in link
    assert "Destination backup-01: em0, 1 Gb/s full duplex, MTU 1500" in link
    assert "Ceiling: 11.3 MiB/s (the 100 Mb/s link of tank.lan&#x27;s eth0" in link \
        or "Ceiling: 11.3 MiB/s (the 100 Mb/s link of tank.lan's eth0" in link, link
    # What the private transport would cost here, as the CLI says it too.
    assert ("Private (TLS 1.3) on this path: about 131 MiB/s against tcp's 135 MiB/s "
            "(0.97x); its TLS CPU a GiB: src 0.4 s, dst 0.5 s") in link.replace("&#x27;", "'")
    advice = dialog.ui.advice_label.text()
    assert "The destination pool writes at 135 MiB/s" in advice
    assert "(set Buffer size to 704M on the Transport and tuning page)" in advice
    assert "--" not in advice
    assert dialog.ui.buffer_button.isEnabled()
    dialog.ui.buffer_button.click()
    assert five_second_buffer(135 * MiB) == 704 * MiB
    assert page.ui.buffer_combo.currentText() == "704M"
    assert page.options().buffer_size == 704 * MiB
    dialog.reject()


# -- the lab ------------------------------------------------------------------------------------
@pytest.fixture
def snapshot(pools: tuple[Pool, Pool]) -> str:
    src, _ = pools
    zfs("create", f"{src.name}/ds")
    write_random_files(src.mountpoint / "ds", 20, files=5)
    zfs("snapshot", f"{src.name}/ds@snap")
    return f"{src.name}/ds@snap"


def naming(pools: tuple[Pool, Pool]) -> list[str]:
    return zfs_processes_naming(*(pool.name for pool in pools))


@pytest.mark.lab
@pytest.mark.timeout(120)
def test_doctor_on_the_lab_then_cancel(qtbot: QtBot, lab_hosts: tuple[Host, Host],
                                       pools: tuple[Pool, Pool], snapshot: str) -> None:
    src, dst = lab_hosts
    dialog = DoctorDialog(src, dst, snapshot=snapshot, parent_dataset=pools[1].name,
                          options=Options())
    qtbot.addWidget(dialog)
    dialog.show()
    dialog.ui.seconds_spin.setValue(2)
    dialog.ui.write_check.setChecked(True)
    with qtbot.waitSignal(dialog.finished_run, timeout=60_000) as blocker:
        dialog.run()
        assert dialog.running and not dialog.ui.run_button.isEnabled()
    report = blocker.args[0]
    assert isinstance(report, DoctorReport), dialog.ui.status_label.text()
    chart = dialog.chart
    assert chart.names[:3] == ["source_read", "compress", "network"]
    assert chart.names[-1] == "destination_write"
    measured = {n: r for n, r in zip(chart.names, chart.rates, strict=True) if r}
    assert {"source_read", "network", "destination_write"} <= set(measured)
    assert report.bottleneck in measured
    slow = chart.names.index(report.bottleneck)
    assert chart.color(slow) == BOTTLENECK_COLOR
    assert [chart.color(i) for i in range(len(chart.names))].count(BOTTLENECK_COLOR) == 1
    assert "end to end" in dialog.ui.expected_label.text()
    assert "Advice" in dialog.ui.advice_label.text()
    # zstd on the snapshot's random data gains nothing: the wizard's words say leave it off.
    assert "Compressing with zstd: 1.0x smaller" in dialog.ui.advice_label.text()
    assert "Compression in transit" in dialog.ui.advice_label.text()
    assert not any(TEMP_PREFIX in n for n in zfs("list", "-H", "-o", "name", "-r",
                                                  pools[1].name).split())

    # Cancel mid-run: the dialog waits for the clean-up, then nothing of the run is left.
    dialog.ui.seconds_spin.setValue(30)
    dialog.ui.write_check.setChecked(False)
    with qtbot.waitSignal(dialog.finished_run, timeout=30_000) as blocker:
        dialog.run()
        qtbot.waitUntil(lambda: "network" in dialog.ui.status_label.text(), timeout=20_000)
        doctor = dialog.doctor
        run_id = getattr(doctor, "run_id", "")
        assert wait_until(lambda: bool(doctor_processes(run_id)), 10)
        t0 = time.monotonic()
        dialog.ui.cancel_button.click()
        assert "cleaning up" in dialog.ui.status_label.text()
        assert not dialog.ui.close_button.isEnabled()  # it waits for the clean-up
    assert time.monotonic() - t0 < 10
    report = blocker.args[0]
    assert isinstance(report, DoctorReport) and report.cancelled
    assert "Cancelled" in dialog.ui.status_label.text()
    assert dialog.ui.close_button.isEnabled()
    assert wait_until(lambda: doctor_processes(run_id) == [] and naming(pools) == [], 5), \
        doctor_processes(run_id) + naming(pools)


@pytest.mark.lab
@pytest.mark.timeout(180)
def test_the_write_test_datasets_earlier_runs_left_are_asked_about_by_name(
        qtbot: QtBot, lab_hosts: tuple[Host, Host], pools: tuple[Pool, Pool],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A dataset an earlier doctor run left is named in a question before the run: Cancel runs
    nothing, "Keep them" leaves it (the advice names its command), "Destroy them too" destroys
    it with the run's own; a look-alike at another level stays every time."""
    src, dst = lab_hosts
    pool = pools[1]
    old = f"{pool.name}/{TEMP_PREFIX}0badcafe"
    alike = f"{pool.name}/keep/{TEMP_PREFIX}0badf00d"
    zfs("create", old)
    zfs("create", "-p", alike)
    monkeypatch.setattr(temp_dataset, "STALE_AFTER", 0.0)  # made just now: any age counts
    dialog = DoctorDialog(src, dst, snapshot=None, parent_dataset=pool.name, options=Options())
    qtbot.addWidget(dialog)
    dialog.show()
    dialog.ui.seconds_spin.setValue(1)
    dialog.ui.write_check.setChecked(True)

    def answer(button: str) -> str:
        """Run, wait for the question, press `button`; the question's text."""
        dialog.run()
        qtbot.waitUntil(lambda: dialog.findChild(QMessageBox, "leftovers_box") is not None,
                        timeout=30_000)
        box = dialog.findChild(QMessageBox, "leftovers_box")
        assert box is not None
        text = box.text()
        (chosen,) = [b for b in box.buttons() if b.text() == button]
        chosen.click()
        return text

    text = answer("Cancel")
    assert old in text and "left by an earlier doctor run" in text and alike not in text, text
    qtbot.waitUntil(lambda: not dialog.running, timeout=10_000)
    assert dialog.ui.status_label.text() == "Not run." and old in names(pool)

    with qtbot.waitSignal(dialog.finished_run, timeout=60_000) as kept:
        answer("Keep them")
    assert isinstance(kept.args[0], DoctorReport), dialog.ui.status_label.text()
    assert old in names(pool)
    assert f"zfs destroy -r {old}" in dialog.ui.advice_label.text()

    with qtbot.waitSignal(dialog.finished_run, timeout=60_000) as destroyed:
        answer("Destroy them too")
    report = destroyed.args[0]
    assert isinstance(report, DoctorReport) and report.stage("destination_write") is not None
    assert old not in names(pool) and alike in names(pool)
    assert not [n for n in names(pool) if n.startswith(f"{pool.name}/{TEMP_PREFIX}")]
    assert f"zfs destroy -r {old}" not in dialog.ui.advice_label.text()


def names(pool: Pool) -> list[str]:
    return zfs("list", "-H", "-o", "name", "-r", pool.name).split()
