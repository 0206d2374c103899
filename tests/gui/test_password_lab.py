"""A host that takes only a password, in the wizard on the real lab: asked once per session, both
sides and every reconnect reuse it, and it is written nowhere."""

from __future__ import annotations

from pathlib import Path

import pytest
from lab.plugin import PASSWORD, Lab, LabHost, Pool
from lab.util import snapshot_guid
from pytestqt.qtbot import QtBot
from test_wizard_lab import make_source
from wizard_driver import (
    WAIT_CONNECT,
    WAIT_TRANSFER,
    connect_panel,
    start_transfer,
    to_destination,
    to_review,
    type_host,
)

from zmigrate.engine.hosts.remembered import login_of
from zmigrate.gui.pages.base import PageId
from zmigrate.gui.settings import Settings
from zmigrate.gui.widgets.host_panel import HostPanel
from zmigrate.gui.wizard import MigrationWizard

pytestmark = [pytest.mark.gui, pytest.mark.lab, pytest.mark.timeout(240)]


def connect_answering(qtbot: QtBot, panel: HostPanel, text: str) -> list[str]:
    """Connect `panel` to `text`, typing PASSWORD into every password dialog; the prompts."""
    asked: list[str] = []
    type_host(panel, text)
    panel.ui.connect_button.click()

    def settled() -> bool:
        dialog = panel.dialogs.secret_dialog
        if dialog is not None:
            asked.append(dialog.labelText())
            panel.dialogs.answer_secret(PASSWORD)
        return not panel.busy

    qtbot.waitUntil(settled, timeout=WAIT_CONNECT)
    assert panel.connected, panel.ui.status_label.text()
    return asked


def files_holding(root: Path, secret: str) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file() and secret.encode() in p.read_bytes()]


def test_a_password_is_asked_once_per_session_and_stored_nowhere(
        qtbot: QtBot, wizard: MigrationWizard, lab_env: Lab, password_host: LabHost,
        pools: tuple[Pool, Pool], settings: Settings, history_dir: Path,
        tmp_path: Path) -> None:
    src_pool, dst_pool = pools
    dataset = make_source(src_pool, 2)
    page = wizard.hosts_page
    source, destination = page.panels()
    asked = connect_answering(qtbot, source, "lab-pw")
    assert len(asked) == 1 and asked[0].startswith("Password for root@127.0.0.1")
    # Connect again (a new session to the host): no question.
    assert connect_answering(qtbot, source, "lab-pw") == []
    # The other side, as another login of the same host (sudo: a session of its own), takes it
    # from the same memory.
    destination.ui.sudo_check.setChecked(True)
    assert connect_answering(qtbot, destination, "lab-pw") == []
    assert destination.host is not source.host
    destination.ui.sudo_check.setChecked(False)
    connect_panel(qtbot, destination, "lab-dst")

    # A transfer from the password host, so the history has a record of it.
    wizard.next()
    assert wizard.currentId() == PageId.SOURCE
    qtbot.waitUntil(lambda: wizard.session.src_datasets is not None, timeout=WAIT_CONNECT)
    to_destination(qtbot, wizard, dataset)
    wizard.destination_page.ui.parent_edit.setText(dst_pool.name)
    wizard.destination_page.ui.name_edit.setText("copy")
    to_review(qtbot, wizard)
    start_transfer(wizard)
    qtbot.waitUntil(lambda: wizard.currentId() == PageId.DONE, timeout=WAIT_TRANSFER)
    assert wizard.session.summary is not None, wizard.done_page.ui.reason_label.text()
    assert snapshot_guid(f"{dst_pool.name}/copy@one") == snapshot_guid(f"{dataset}@one")

    # Remembered: the host, never its password - not in QSettings, not in the history.
    settings.sync()
    ini = Path(settings.q.fileName()).read_text()
    assert "lab-pw" in ini and PASSWORD not in ini
    assert any(history_dir.rglob("*")) and files_holding(history_dir, PASSWORD) == []

    # Changed on the host since (here: a wrong one remembered): asked once more, then it works.
    key = (login_of(source.spec()), asked[0].split("\n")[0])
    assert page.secrets.get(key) == PASSWORD
    page.secrets.put(key, "not-" + PASSWORD)
    wizard.start_another()
    assert len(connect_answering(qtbot, source, "lab-pw")) == 1
    assert page.secrets.get(key) == PASSWORD
    # Closing the wizard forgets it.
    wizard.shutdown()
    assert len(page.secrets) == 0
