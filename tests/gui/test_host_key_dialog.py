"""The host-key dialog: Reject is the default (Enter and Esc both reject), "accept once" trusts
the key for this session only, "accept and remember" writes it to known_hosts - on the lab's
real sshd, through the GUI's prompts as the Hosts page uses them."""

from __future__ import annotations

import threading
from concurrent.futures import Future
from pathlib import Path

import pytest
from lab.sshd import Lab
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QPushButton
from pytestqt.qtbot import QtBot

from zmigrate.engine.errors import HostKeyError
from zmigrate.engine.hosts import Host
from zmigrate.engine.hosts.login import HostKeyDecision, HostKeyInfo, HostSpec, connect
from zmigrate.gui.dialogs.host_key_dialog import HostKeyDialog
from zmigrate.gui.prompts import GuiPrompts, PromptRelay

INFO = HostKeyInfo("nas.lan", "nas.lan", "ssh-ed25519",
                   "SHA256:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU", Path("/nonexistent"))


@pytest.mark.parametrize("key", [Qt.Key.Key_Escape, Qt.Key.Key_Return])
def test_reject_is_the_default_and_escape_rejects(qtbot: QtBot, key: Qt.Key) -> None:
    dialog = HostKeyDialog(INFO)
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitExposed(dialog)
    focused = dialog.focusWidget()
    assert isinstance(focused, QPushButton) and focused is dialog.ui.reject_button
    assert not dialog.ui.once_button.isDefault() and not dialog.ui.remember_button.isDefault()
    with qtbot.waitSignal(dialog.finished, timeout=2000):
        qtbot.keyClick(focused if key == Qt.Key.Key_Return else dialog, key)
    assert dialog.decision is HostKeyDecision.REJECT
    assert dialog.result() == 0


def _connect_answering(qtbot: QtBot, button: str) -> tuple[Host | Exception, list[str]]:
    """Connect to lab-src on a worker thread; the dialog that opens gets `button` clicked."""
    relay = PromptRelay()
    prompts = GuiPrompts(relay)
    asked: list[str] = []

    def on_asked(info: HostKeyInfo, fut: Future[object]) -> None:
        asked.append(info.fingerprint)
        dialog = HostKeyDialog(info)
        qtbot.addWidget(dialog)
        dialog.finished.connect(lambda _r: fut.set_result(dialog.decision))
        dialog.open()
        getattr(dialog.ui, button).click()

    relay.host_key_asked.connect(on_asked)
    box: dict[str, Host | Exception] = {}

    def work() -> None:
        try:
            box["out"] = connect(HostSpec("lab-src"), prompts, timeout=15)
        except Exception as exc:  # noqa: BLE001 - handed to the test thread
            box["out"] = exc

    thread = threading.Thread(target=work, name="test-connect")
    thread.start()
    qtbot.waitUntil(lambda: not thread.is_alive(), timeout=30000)
    thread.join()
    return box["out"], asked


@pytest.mark.lab
def test_accept_once_keeps_known_hosts_and_remember_writes_it(
        qtbot: QtBot, lab: Lab, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    known = tmp_path / "known_hosts"
    known.write_text("")
    monkeypatch.setenv("ZMIGRATE_SSH_CONFIG", str(lab.ssh_config))
    monkeypatch.setenv("ZMIGRATE_KNOWN_HOSTS", str(known))
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)
    # Reject: no session, nothing written.
    out, asked = _connect_answering(qtbot, "reject_button")
    assert isinstance(out, HostKeyError) and len(asked) == 1
    assert known.read_text() == ""
    # Accept once: a session, still nothing written - the next connect asks again.
    out, asked = _connect_answering(qtbot, "once_button")
    assert isinstance(out, Host), out
    out.close()
    assert asked == [lab.src.host_key_fingerprint] and known.read_text() == ""
    # Accept and remember: written; the next connect asks nothing.
    out, asked = _connect_answering(qtbot, "remember_button")
    assert isinstance(out, Host), out
    out.close()
    assert len(asked) == 1 and known.read_text().strip()
    out, asked = _connect_answering(qtbot, "reject_button")
    assert isinstance(out, Host), out
    out.close()
    assert asked == []
