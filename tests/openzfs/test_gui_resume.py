"""The wizard against a real resume token on OpenZFS: the Destination page offers Resume or
Discard, and the choice runs through Review and Transfer to a verified Done.

The interrupted receive is made with the engine (a rate-limited send cancelled mid-way); the
wizard then connects to the guest like a user would (alias `openzfs-vm` as the source,
`root@127.0.0.1:PORT` with the lane's key as the destination).
"""

from __future__ import annotations

import os

os.environ["QT_QPA_PLATFORM"] = "offscreen"
os.environ.setdefault("PYQTGRAPH_QT_LIB", "PySide6")

import re  # noqa: E402
from collections.abc import Iterator  # noqa: E402
from dataclasses import replace  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402
from PySide6.QtCore import QSettings  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402
from pytestqt.qtbot import QtBot  # noqa: E402

from zmigrate.engine.events import Progress  # noqa: E402
from zmigrate.engine.job import Job, Request  # noqa: E402
from zmigrate.engine.units import MiB  # noqa: E402
from zmigrate.gui import style
from zmigrate.gui.pages.base import PageId  # noqa: E402
from zmigrate.gui.settings import Settings  # noqa: E402
from zmigrate.gui.threads import collect_on_gui_thread  # noqa: E402
from zmigrate.gui.widgets.host_panel import AUTH_KEY, HostPanel
from zmigrate.gui.wizard import MigrationWizard  # noqa: E402

from .test_openzfs import _opts, _prop, _wait  # noqa: E402
from .vm import Pair, Vm  # noqa: E402

pytestmark = [pytest.mark.openzfs, pytest.mark.gui, pytest.mark.timeout(400)]
WAIT_CONNECT = 60_000  # ms: the guest runs under TCG emulation
WAIT_LOAD = 60_000
WAIT_TRANSFER = 180_000
DATA_MB = 16


@pytest.fixture
def wizard(qtbot: QtBot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
           ) -> Iterator[MigrationWizard]:
    monkeypatch.setenv("ZMIGRATE_DATA_DIR", str(tmp_path / "history"))
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    app.setStyleSheet(style.STYLE_SHEET)
    collect_on_gui_thread()
    settings = Settings(QSettings(str(tmp_path / "zmigrate.ini"), QSettings.Format.IniFormat))
    w = MigrationWizard(settings)
    qtbot.addWidget(w)
    w.show()
    try:
        yield w
    finally:
        w.shutdown()


def make_partial(pair: Pair, vm: Vm, tag: str) -> tuple[str, str]:
    """srcpool/TAG@s1 with DATA_MB MiB, and an interrupted receive of it into dstpool/TAG."""
    src, dst = f"srcpool/{tag}", f"dstpool/{tag}"
    vm.ssh(f"zfs create {src} && head -c {DATA_MB}M /dev/urandom > /{src}/f0 && "
           f"zfs snapshot {src}@s1")
    seen: list[object] = []
    opts = _opts(rate_limit=2 * MiB)
    job = Job(pair.src, pair.dst, Request(f"{src}@s1", dst, opts), seen.append,
              src_caps=pair.src_caps, dst_caps=pair.dst_caps)
    job.start()
    try:
        assert _wait(lambda: any(isinstance(e, Progress) and e.done > 3 * MiB for e in seen),
                     90), "the transfer did not get going"
        job.cancel()
        assert job.wait(30), "the job did not end after cancel"
    finally:
        if not job.done:
            job.cancel()
            job.wait(30)
    assert job.partial_kept, job.error
    assert _prop(vm, dst, "receive_resume_token") not in ("", "-")
    return src, dst


def connect(qtbot: QtBot, panel: HostPanel, host: str, *, port: int = 0,
            key: Path | None = None) -> None:
    panel.ui.host_combo.setEditText(host)
    if key is not None:
        panel.ui.user_edit.setText("root")
        panel.ui.port_spin.setValue(port)
        panel.ui.auth_combo.setCurrentIndex(AUTH_KEY)
        panel.ui.key_edit.setText(str(key))
    panel.ui.connect_button.click()
    qtbot.waitUntil(lambda: not panel.busy, timeout=WAIT_CONNECT)
    assert panel.connected, panel.ui.status_label.text()


def to_choice(qtbot: QtBot, w: MigrationWizard, vm: Vm, src: str, dst: str) -> None:
    """Hosts → Source (src's newest snapshot) → Destination showing dst's partial receive."""
    connect(qtbot, w.hosts_page.source, "openzfs-vm")
    connect(qtbot, w.hosts_page.destination, "127.0.0.1", port=vm.port, key=vm.key)
    w.next()
    assert w.currentId() == PageId.SOURCE
    qtbot.waitUntil(lambda: w.session.src_datasets is not None, timeout=WAIT_LOAD)
    assert w.source_page.choose(src)
    w.next()
    assert w.currentId() == PageId.DESTINATION
    page = w.destination_page
    qtbot.waitUntil(lambda: w.session.dst_datasets is not None and not page.tree.loading,
                    timeout=WAIT_LOAD)
    parent, name = dst.split("/", 1)
    page.ui.parent_edit.setText(parent)
    page.ui.name_edit.setText(name)
    qtbot.waitUntil(lambda: page.state.partial is not None and not page.reading_partial,
                    timeout=WAIT_LOAD)
    text = page.ui.state_label.text()
    print(f"\nDESTINATION: {text}\n  {page.ui.resume_radio.text()}\n  "
          f"{page.ui.discard_radio.text()}\n  {page.ui.partial_note.text()}")
    assert re.search(r"An interrupted transfer left [\d.]+ [KM]iB of [\d.]+ MiB here</b> "
                     r"\(to @s1\)", text), text
    assert page.ui.resume_radio.isEnabled() and page.ui.discard_radio.isEnabled()
    assert not page.isComplete()  # Next waits for Resume or Discard
    assert not w.button(w.WizardButton.NextButton).isEnabled()


def review_and_run(qtbot: QtBot, w: MigrationWizard) -> str:
    """Destination → Transport (loopback, 16M buffer) → Review → Transfer → Done; the
    commands Review showed."""
    assert w.destination_page.isComplete()
    assert w.button(w.WizardButton.NextButton).isEnabled()
    # Both "hosts" are one guest: the stream goes over its loopback (as in test_openzfs.py).
    w.session.options = replace(w.session.options, connect_address="127.0.0.1",
                                allow_address="127.0.0.1")
    w.next()
    assert w.currentId() == PageId.TRANSPORT
    w.transport_page.ui.buffer_combo.setCurrentText("16M")
    assert w.transport_page.isComplete(), w.transport_page.error
    w.next()
    assert w.currentId() == PageId.REVIEW
    qtbot.waitUntil(lambda: not w.review_page.preparing, timeout=WAIT_LOAD)
    assert w.review_page.isComplete(), w.review_page.ui.error_label.text()
    commands = w.review_page.ui.commands_edit.toPlainText()
    w.next()
    assert w.currentId() == PageId.TRANSFER
    qtbot.waitUntil(lambda: w.currentId() == PageId.DONE, timeout=WAIT_TRANSFER)
    assert w.session.summary is not None, w.done_page.ui.reason_label.text()
    assert "verified" in w.done_page.ui.result_label.text()
    return commands


def test_wizard_resumes_an_interrupted_transfer(qtbot: QtBot, wizard: MigrationWizard,
                                                pair: Pair, vm: Vm, tag: str) -> None:
    src, dst = make_partial(pair, vm, tag)
    w = wizard
    to_choice(qtbot, w, vm, src, dst)
    w.destination_page.ui.resume_radio.click()
    commands = review_and_run(qtbot, w)
    plan, summary = w.session.plan, w.session.summary
    assert plan is not None and summary is not None
    assert plan.resume_token and plan.resumed_from > 0
    assert f"zfs send -t {plan.resume_token}" in commands
    assert "The rest of an interrupted transfer" in w.review_page.ui.summary_label.text()
    assert plan.estimate is not None and summary.bytes <= plan.estimate * 1.05  # only the rest
    assert summary.verified and summary.extra.get("resumed_from") == plan.resumed_from
    assert _prop(vm, dst, "receive_resume_token") == "-"
    assert _prop(vm, f"{dst}@s1", "guid") == _prop(vm, f"{src}@s1", "guid")


def test_wizard_discards_an_interrupted_transfer(qtbot: QtBot, wizard: MigrationWizard,
                                                 pair: Pair, vm: Vm, tag: str) -> None:
    src, dst = make_partial(pair, vm, tag)
    w = wizard
    to_choice(qtbot, w, vm, src, dst)
    assert "destroys only the partially received data" in \
        w.destination_page.ui.partial_note.text()
    w.destination_page.ui.discard_radio.click()
    commands = review_and_run(qtbot, w)
    plan, summary = w.session.plan, w.session.summary
    assert plan is not None and summary is not None
    assert plan.discard and f"zfs receive -A {dst}" in commands
    assert commands.index("receive -A") < commands.index("zfs send")  # discarded first
    assert plan.resume_token is None and plan.kind == "full"
    assert summary.bytes >= DATA_MB * MiB * 0.95  # everything again
    assert summary.verified
    assert _prop(vm, dst, "receive_resume_token") == "-"
    assert _prop(vm, f"{dst}@s1", "guid") == _prop(vm, f"{src}@s1", "guid")
