"""The Destination page with an existing destination dataset without snapshots (no lab): the
choice to replace its content is offered only once the engine has judged what it holds, and
says what is lost, never "empty" unless it was judged empty.

The judge is the engine's own over real figures (zfs-fuse's 114688 bytes of a fresh dataset,
118784 with notes.txt); only the remote read (`destination_emptiness`) is a stand-in, checked
to run off the GUI thread. The lab tests read a real dataset (tests/e2e/test_empty_destination.py).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest
from pytestqt.qtbot import QtBot

from zmigrate.engine.destination import Emptiness, Listing, judge
from zmigrate.engine.errors import ZmigrateError
from zmigrate.engine.hosts import Host, LocalHost
from zmigrate.engine.units import MiB
from zmigrate.engine.zfs import Capabilities, Dataset, Snapshot
from zmigrate.gui.pages.destination_page import DestinationPage
from zmigrate.gui.readers import emptiness as emptiness_reader
from zmigrate.gui.session import Session
from zmigrate.gui.settings import Settings

pytestmark = pytest.mark.gui
FRESH, NOTES = 114688, 118784


def caps() -> Capabilities:
    return Capabilities("zfs-fuse", "0.7.0", True, True, True, True, "20230301", True, True, True,
                        True, 2**33, "Linux 6.1.0", 0, "10.0.0.5", "10.0.0.7")


def inventories(referenced: int) -> tuple[list[Dataset], list[Dataset]]:
    src = [Dataset("tank", "filesystem", 1, 0, 0, 2**34, 0),
           Dataset("tank/data", "filesystem", 2, 0, 0, 2**34, 0)]
    src[1].snapshots = [Snapshot("tank/data@s1", 100, 1_700_000_010, 10, MiB, 24 * MiB)]
    dst = [Dataset("backup", "filesystem", 3, 0, 0, 2**34, 0),
           Dataset("backup/data", "filesystem", 4, referenced, referenced, 2**34, 0)]
    return src, dst


class Judge:
    """Stands in for the remote read: the engine's judge over `listing`; records its thread."""

    def __init__(self, listing: Listing | ZmigrateError) -> None:
        self.listing = listing
        self.threads: list[threading.Thread] = []

    def __call__(self, dst: Host, existing: Dataset | None, sets: list[Dataset],
                 dialect: str) -> Emptiness | None:
        self.threads.append(threading.current_thread())
        if isinstance(self.listing, ZmigrateError):
            raise self.listing
        assert existing is not None
        return judge(existing, sets, self.listing, dialect)


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


def open_page(qtbot: QtBot, page: DestinationPage, reader: Judge, referenced: int,
              monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The page on backup/data; the state lines it showed, in order."""
    monkeypatch.setattr(emptiness_reader, "destination_emptiness", reader)
    s = page.session
    s.src_datasets, s.dst_datasets = inventories(referenced)
    s.snapshot = s.src_datasets[1].snapshot("s1")
    page._loaded_for = s.dst_host
    page.tree.show(s.dst_datasets)
    page.initializePage()
    page.ui.parent_edit.setText("backup")
    seen: list[str] = []
    page.ui.name_edit.setText("data")
    seen.append(page.ui.state_label.text())
    assert not page.ui.force_check.isVisible()  # nothing offered before the judgement
    qtbot.waitUntil(lambda: not page.emptiness.reading, timeout=5000)
    seen.append(page.ui.state_label.text())
    return seen


def test_overwrite_is_offered_once_judged_and_says_what_is_lost(
        qtbot: QtBot, page: DestinationPage, monkeypatch: pytest.MonkeyPatch) -> None:
    reader = Judge(Listing(True, "/backup/data", ("notes.txt", "photos", ".ssh")))
    before, after = open_page(qtbot, page, reader, NOTES, monkeypatch)
    assert "Reading what backup/data holds…" in before
    assert reader.threads and all(t is not threading.main_thread() for t in reader.threads)
    ui = page.ui
    assert ui.force_check.isVisible() and not ui.force_check.isChecked()
    wanted = ("Replace the contents of backup/data (3 files or folders: notes.txt, photos, "
              ".ssh; 116 KiB referenced) with the copy; what it holds is lost")
    # On lines of its own: a check box does not wrap.
    shown = ui.force_check.text()
    assert " ".join(shown.split("\n")) == wanted and ui.force_check.accessibleName() == wanted
    assert shown.count("\n") == 1
    assert "empty" not in shown
    assert "it holds 3 file(s) or folder(s) (notes.txt, photos, .ssh)" in after
    assert not page.isComplete()  # Next waits for the tick
    ui.force_check.click()
    plan = page.chosen_plan()
    assert plan is not None and plan.replaces is not None
    assert plan.replaces.entries == ("notes.txt", "photos", ".ssh")
    assert page.isComplete() and page.validatePage() and page.session.force
    assert "Replace the contents of backup/data" in ui.state_label.text()
    ui.name_edit.setText("other")  # a new name: nothing to replace, the choice gone
    assert not ui.force_check.isVisible()
    assert page.validatePage() and not page.session.force
    ui.name_edit.setText("data")
    assert len(reader.threads) == 1  # judged once


def test_a_dataset_judged_empty_takes_the_copy_without_a_choice(
        qtbot: QtBot, page: DestinationPage, monkeypatch: pytest.MonkeyPatch) -> None:
    reader = Judge(Listing(False))  # unmounted, at a fresh dataset's figure
    _, after = open_page(qtbot, page, reader, FRESH, monkeypatch)
    assert not page.ui.force_check.isVisible()
    assert "Into the existing empty dataset:</b> backup/data (no snapshots, no children, " \
        "not mounted, 112 KiB referenced: what a fresh dataset references)" in after
    assert page.isComplete()


def test_a_failed_read_offers_no_overwrite(qtbot: QtBot, page: DestinationPage,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    reader = Judge(ZmigrateError("the SSH control session was lost"))
    _, after = open_page(qtbot, page, reader, FRESH, monkeypatch)
    assert not page.ui.force_check.isVisible() and not page.isComplete()
    assert "What it holds could not be read: the SSH control session was lost" in after
