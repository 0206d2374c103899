"""The Transfer page's line on the way between the buffers, on the real lab: a private transfer
through the wizard shows the CPU each TLS end got as the job reads it (readings/end_cpu.py),
sender first, and keeps the last figures once it is done."""

from __future__ import annotations

import pytest
from lab.plugin import Lab, Pool
from pytestqt.qtbot import QtBot
from test_wizard_lab import make_source
from test_words_faces import plain
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


def test_a_private_transfer_shows_each_tls_ends_cpu(
        qtbot: QtBot, wizard: MigrationWizard, lab_env: Lab, pools: tuple[Pool, Pool]) -> None:
    src_pool, dst_pool = pools
    dataset = make_source(src_pool, 24)
    w = wizard
    to_source(qtbot, w)
    to_destination(qtbot, w, dataset)
    to_transport(w, dst_pool.name)
    ui = w.transport_page.ui
    ui.private_radio.setChecked(True)
    ui.rate_edit.setText("4M")  # about 6 s: the ends are read 2 s in, 1 s later, then every 5 s
    assert w.transport_page.isComplete(), w.transport_page.error
    w.next()
    qtbot.waitUntil(lambda: not w.review_page.preparing, timeout=WAIT_LOAD)
    start_transfer(w)
    label = w.transfer_page.ui.ends_label
    assert label.isHidden()  # nothing read yet
    qtbot.waitUntil(lambda: "on lab-dst" in label.text() and "on lab-src" in label.text(),
                    timeout=WAIT_TRANSFER)
    assert w.currentId() == PageId.TRANSFER and label.isVisible()
    said = plain(label.text())
    assert said.index("on lab-src") < said.index("on lab-dst"), said  # the sender first
    assert "of a CPU" in said and ("socat" in said or "openssl" in said), said
    qtbot.waitUntil(lambda: w.currentId() == PageId.DONE, timeout=WAIT_TRANSFER)
    assert w.session.summary is not None, w.done_page.ui.reason_label.text()
