"""Drive the wizard the way a user would, with bounded waits (shared by the lab GUI tests)."""

from __future__ import annotations

from pytestqt.qtbot import QtBot

from zmigrate.gui.pages.base import PageId
from zmigrate.gui.widgets.host_panel import HostPanel
from zmigrate.gui.wizard import MigrationWizard

WAIT_CONNECT = 30_000
WAIT_LOAD = 30_000
WAIT_TRANSFER = 90_000


def type_host(panel: HostPanel, text: str) -> None:
    panel.ui.host_combo.setEditText(text)


def connect_panel(qtbot: QtBot, panel: HostPanel, alias: str) -> None:
    type_host(panel, alias)
    panel.ui.connect_button.click()
    qtbot.waitUntil(lambda: not panel.busy, timeout=WAIT_CONNECT)
    assert panel.connected, panel.ui.status_label.text()


def to_source(qtbot: QtBot, w: MigrationWizard, src: str = "lab-src",
              dst: str = "lab-dst", wait: int = WAIT_LOAD) -> None:
    connect_panel(qtbot, w.hosts_page.source, src)
    connect_panel(qtbot, w.hosts_page.destination, dst)
    assert w.button(w.WizardButton.NextButton).isEnabled()
    w.next()
    assert w.currentId() == PageId.SOURCE
    qtbot.waitUntil(lambda: w.session.src_datasets is not None, timeout=wait)


def to_destination(qtbot: QtBot, w: MigrationWizard, choose: str) -> None:
    assert w.source_page.choose(choose)
    assert w.source_page.isComplete()
    w.next()
    assert w.currentId() == PageId.DESTINATION
    qtbot.waitUntil(lambda: w.session.dst_datasets is not None
                    and not w.destination_page.tree.loading, timeout=WAIT_LOAD)


def to_transport(w: MigrationWizard, parent: str, name: str = "copy") -> None:
    """From the Destination page to the Transport page, receiving into `parent`/`name`."""
    w.destination_page.ui.parent_edit.setText(parent)
    w.destination_page.ui.name_edit.setText(name)
    assert w.destination_page.isComplete(), w.destination_page.ui.state_label.text()
    w.next()
    assert w.currentId() == PageId.TRANSPORT


def to_review(qtbot: QtBot, w: MigrationWizard, rate_limit: str = "",
              wait: int = WAIT_LOAD) -> None:
    assert w.destination_page.isComplete(), w.destination_page.ui.state_label.text()
    w.next()
    assert w.currentId() == PageId.TRANSPORT
    w.transport_page.ui.rate_edit.setText(rate_limit)
    assert w.transport_page.isComplete(), w.transport_page.error
    w.next()
    assert w.currentId() == PageId.REVIEW
    qtbot.waitUntil(lambda: not w.review_page.preparing, timeout=wait)
    assert w.review_page.isComplete(), w.review_page.ui.error_label.text()


def start_transfer(w: MigrationWizard) -> None:
    w.next()
    assert w.currentId() == PageId.TRANSFER


def to_tree_destination(qtbot: QtBot, w: MigrationWizard, root: str,
                        excludes: tuple[str, ...] = (), parent: str = "",
                        name: str = "") -> None:
    """Pick `root` with its children minus `excludes`, and wait for the tree's plan (the
    engine's collision check) on the Destination page."""
    assert w.source_page.choose_tree(root, excludes)
    assert w.source_page.isComplete(), w.source_page.ui.selection_label.text()
    w.next()
    assert w.currentId() == PageId.DESTINATION
    page = w.destination_page
    qtbot.waitUntil(lambda: w.session.dst_datasets is not None and not page.tree.loading,
                    timeout=WAIT_LOAD)
    if parent:
        page.ui.parent_edit.setText(parent)
    if name:
        page.ui.name_edit.setText(name)
    qtbot.waitUntil(lambda: not page.checking_tree, timeout=WAIT_LOAD)


def wait_review(qtbot: QtBot, w: MigrationWizard) -> None:
    """Wait for Review's plan (after Next from Transport, or "Sync again" on Done)."""
    assert w.currentId() == PageId.REVIEW
    qtbot.waitUntil(lambda: not w.review_page.preparing, timeout=WAIT_LOAD)
    assert w.review_page.isComplete(), w.review_page.ui.error_label.text()
