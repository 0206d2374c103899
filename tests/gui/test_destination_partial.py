"""The Destination page with an interrupted receive at the destination (no lab): the state line,
the Resume / Discard choice, Next waiting for it, and the choice flowing into the job's options.

The hosts are stand-ins: only the decoding of the token (a remote call, `partial_receive`) is
replaced, and the test checks that it runs off the GUI thread. The OpenZFS lane drives the same
page against a real resume token (tests/openzfs/test_gui_resume.py).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest
from pytestqt.qtbot import QtBot

from zmigrate.engine.errors import ZmigrateError
from zmigrate.engine.hosts import Host, LocalHost
from zmigrate.engine.units import MiB
from zmigrate.engine.zfs import Capabilities, Dataset, ResumeInfo, Snapshot
from zmigrate.gui.pages.destination_page import DestinationPage
from zmigrate.gui.readers import partial as partial_reader
from zmigrate.gui.session import Session
from zmigrate.gui.settings import Settings

pytestmark = pytest.mark.gui
TOKEN = "1-abc-def-0"


def caps() -> Capabilities:
    return Capabilities("openzfs", "2.3.2-1", True, True, True, True, "20230301", True, True,
                        True, True, 2**33, "Linux 6.1.0", 0, "10.0.0.5", "10.0.0.7",
                        discard_partial=True)


def snapshot(name: str, guid: int, txg: int) -> Snapshot:
    return Snapshot(name, guid, 1_700_000_000 + txg, txg, MiB, 24 * MiB)


def inventories(snaps: tuple[str, ...] = ("s1",)) -> tuple[list[Dataset], list[Dataset]]:
    src = [Dataset("tank", "filesystem", 1, 0, 0, 2**34, 0),
           Dataset("tank/data", "filesystem", 2, 0, 0, 2**34, 0)]
    src[1].snapshots = [snapshot(f"tank/data@{s}", 100 + i, 10 + i) for i, s in enumerate(snaps)]
    dst = [Dataset("backup", "filesystem", 3, 0, 0, 2**34, 0),
           Dataset("backup/data", "filesystem", 4, 0, 0, 2**34, 0, resume_token=TOKEN)]
    return src, dst


class FakeDecoder:
    """Stands in for job.partial_receive; records the thread it ran on."""

    def __init__(self, result: ResumeInfo | ZmigrateError | None) -> None:
        self.result = result
        self.threads: list[threading.Thread] = []

    def __call__(self, src: Host, dst: Host, destination: str, **_kw: object) -> ResumeInfo | None:
        self.threads.append(threading.current_thread())
        if isinstance(self.result, ZmigrateError):
            raise self.result
        return self.result


def info(toname: str = "tank/data@s1", toguid: int = 100) -> ResumeInfo:
    received = int(9.1 * MiB)
    return ResumeInfo(TOKEN, toname, toguid, None, received, int(24.1 * MiB) - received)


@pytest.fixture
def page(qtbot: QtBot, settings: Settings) -> Iterator[DestinationPage]:
    s = Session()
    s.src_host, s.dst_host = LocalHost("tank.lan"), LocalHost("backup-01")
    s.src_caps = s.dst_caps = caps()
    p = DestinationPage(s, settings)
    qtbot.addWidget(p)
    p.show()
    yield p
    p.cleanupPage()


def open_page(qtbot: QtBot, page: DestinationPage, decoder: FakeDecoder,
              monkeypatch: pytest.MonkeyPatch, snap: str = "s1",
              snaps: tuple[str, ...] = ("s1",)) -> None:
    monkeypatch.setattr(partial_reader, "partial_receive", decoder)
    s = page.session
    s.src_datasets, s.dst_datasets = inventories(snaps)
    s.snapshot = s.src_datasets[1].snapshot(snap)
    page._loaded_for = s.dst_host
    page.tree.show(s.dst_datasets)
    page.initializePage()
    page.ui.parent_edit.setText("backup")
    page.ui.name_edit.setText("data")
    qtbot.waitUntil(lambda: not page.reading_partial, timeout=5000)


def test_resume_or_discard_must_be_chosen(qtbot: QtBot, page: DestinationPage,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    decoder = FakeDecoder(info())
    open_page(qtbot, page, decoder, monkeypatch)
    assert decoder.threads and all(t is not threading.main_thread() for t in decoder.threads)
    ui = page.ui
    assert page.state.kind == "partial"
    assert "An interrupted transfer left 9.1 MiB of 24.1 MiB here</b> (to @s1)" \
        in ui.state_label.text()
    assert ui.resume_radio.isVisible() and ui.discard_radio.isVisible()
    assert ui.resume_radio.isEnabled() and ui.discard_radio.isEnabled()
    assert not ui.resume_radio.isChecked() and not ui.discard_radio.isChecked()
    assert "send only the rest (15 MiB)" in ui.resume_radio.text()
    assert "zfs receive -A" in ui.discard_radio.text()
    assert "zfs receive -A" in ui.discard_radio.accessibleName()
    assert ui.partial_note.isVisible()
    assert "Discarding destroys only the partially received data; nothing else on the " \
        "destination is touched" in ui.partial_note.text()
    assert "destroys only the partially" in ui.discard_radio.accessibleDescription()
    assert not page.isComplete()  # Next waits for a choice
    with qtbot.waitSignal(page.completeChanged, timeout=1000):
        ui.resume_radio.click()
    assert page.isComplete()
    plan = page.chosen_plan()
    assert plan is not None and plan.resume_token == TOKEN
    assert page.validatePage()
    s = page.session
    assert (s.resume, s.discard_partial) == (True, False)
    assert s.choices().resume and not s.choices().discard_partial
    ui.discard_radio.click()
    plan = page.chosen_plan()
    assert plan is not None and plan.discard and "receive -A" in plan.discard
    assert plan.kind == "full" and plan.resume_token is None
    assert page.validatePage()
    assert (s.resume, s.discard_partial) == (False, True)
    # Another name: an ordinary new dataset, no choice shown, the flags drop.
    ui.name_edit.setText("other")
    assert page.state.kind == "new" and not ui.resume_radio.isVisible()
    assert not ui.partial_note.isVisible()
    assert page.isComplete() and page.validatePage()
    assert (s.resume, s.discard_partial) == (False, False)
    # Back to the partial one: decoded once, the choice asked again.
    ui.name_edit.setText("data")
    assert len(decoder.threads) == 1
    assert page.state.kind == "partial" and not page.isComplete()


def test_resume_of_another_snapshot_is_refused(qtbot: QtBot, page: DestinationPage,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    # The interrupted stream was of @s1; the user picked @s2: only Discard is possible.
    open_page(qtbot, page, FakeDecoder(info()), monkeypatch, snap="s2", snaps=("s1", "s2"))
    ui = page.ui
    assert "(to @s1)" in ui.state_label.text()
    assert not ui.resume_radio.isEnabled()
    assert "not possible" in ui.resume_radio.text() and "pick @s1" in ui.resume_radio.text()
    assert ui.discard_radio.isEnabled()
    ui.discard_radio.click()
    assert page.isComplete()


def test_unreadable_token_offers_discard_only(qtbot: QtBot, page: DestinationPage,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    decoder = FakeDecoder(ZmigrateError("cannot resume send: snapshot vanished", host="tank.lan"))
    open_page(qtbot, page, decoder, monkeypatch)
    ui = page.ui
    assert "could not be read: cannot resume send: snapshot vanished" in ui.state_label.text()
    assert not ui.resume_radio.isEnabled() and ui.discard_radio.isEnabled()
    assert not page.isComplete()
    ui.discard_radio.click()
    assert page.isComplete()


def test_token_gone_since_the_list_was_read(qtbot: QtBot, page: DestinationPage,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    open_page(qtbot, page, FakeDecoder(None), monkeypatch)
    assert "gone since the list was read" in page.ui.state_label.text()
    assert not page.ui.resume_radio.isEnabled() and not page.isComplete()
