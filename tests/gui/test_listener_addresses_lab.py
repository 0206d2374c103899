"""The Transport page's listener addresses on the real lab: what the user types is where the
source connects and the only sender Direct TCP's listener accepts; an address the source is
not seen from is refused, and the wizard's fix names the field."""

from __future__ import annotations

import pytest
from lab.plugin import Lab, Pool
from lab.util import snapshot_guid, zfs
from pytestqt.qtbot import QtBot
from test_wizard_lab import make_source
from test_words_faces import FLAG, plain
from wizard_driver import (
    WAIT_LOAD,
    WAIT_TRANSFER,
    start_transfer,
    to_destination,
    to_source,
    to_transport,
)

from zmigrate.gui.pages.base import PageId
from zmigrate.gui.wizard import MigrationWizard

pytestmark = [pytest.mark.gui, pytest.mark.lab, pytest.mark.timeout(240)]


def _to_review(qtbot: QtBot, w: MigrationWizard, pool: Pool, name: str, connect: str,
               allow: str) -> None:
    """From the Destination page to the Review page over Direct TCP with these addresses."""
    to_transport(w, pool.name, name)
    ui = w.transport_page.ui
    ui.tcp_radio.setChecked(True)
    assert ui.connect_edit.isEnabled() and ui.allow_edit.isEnabled()
    ui.connect_edit.setText(connect)
    ui.allow_edit.setText(allow)
    assert w.transport_page.isComplete(), w.transport_page.error
    w.next()
    qtbot.waitUntil(lambda: not w.review_page.preparing, timeout=WAIT_LOAD)
    assert w.review_page.isComplete(), w.review_page.ui.error_label.text()


def test_the_addresses_typed_are_the_ones_the_transfer_uses(
        qtbot: QtBot, wizard: MigrationWizard, lab_env: Lab, pools: tuple[Pool, Pool]) -> None:
    src_pool, dst_pool = pools
    dataset = make_source(src_pool, 4)
    w = wizard
    to_source(qtbot, w)
    to_destination(qtbot, w, dataset)
    _to_review(qtbot, w, dst_pool, "copy", "127.0.0.1", "127.0.0.1")
    commands = w.review_page.ui.commands_edit.toPlainText()
    assert "-I 127.0.0.1:" in commands and "-O 127.0.0.1:" in commands, commands
    start_transfer(w)
    qtbot.waitUntil(lambda: w.currentId() == PageId.DONE, timeout=WAIT_TRANSFER)
    assert w.session.summary is not None, w.done_page.ui.reason_label.text()
    assert snapshot_guid(f"{dst_pool.name}/copy@one") == snapshot_guid(f"{dataset}@one")


def test_a_sender_not_from_the_address_typed_is_refused_and_the_fix_names_the_field(
        qtbot: QtBot, wizard: MigrationWizard, lab_env: Lab, pools: tuple[Pool, Pool]) -> None:
    src_pool, dst_pool = pools
    dataset = make_source(src_pool, 1)
    w = wizard
    to_source(qtbot, w)
    to_destination(qtbot, w, dataset)
    # 192.0.2.9 (TEST-NET-1) is never the source: the listener must refuse 127.0.0.1.
    _to_review(qtbot, w, dst_pool, "copy", "", "192.0.2.9")
    assert "-I 192.0.2.9:" in w.review_page.ui.commands_edit.toPlainText()
    start_transfer(w)
    qtbot.waitUntil(lambda: w.currentId() == PageId.DONE, timeout=WAIT_TRANSFER)
    assert w.session.summary is None
    said = plain(w.done_page.ui.reason_label.text())
    assert "127.0.0.1" in said and '"Accept only from"' in said, said
    assert not FLAG.search(said), said
    assert zfs("list", "-H", "-o", "name", "-r", dst_pool.name).count("\n") == 1
