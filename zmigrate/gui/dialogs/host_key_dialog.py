"""Ask the user about a host key nobody has seen before, showing its SHA256 fingerprint."""

from __future__ import annotations

from PySide6.QtWidgets import QDialog, QWidget

from zmigrate.engine.hosts.login import HostKeyDecision, HostKeyInfo

from .. import forms, markup, style
from ..generated.ui_host_key_dialog import Ui_HostKeyDialog


class HostKeyDialog(QDialog):
    """Reject (the default, also Esc), accept once, or accept and remember in known_hosts.

    The answer is in `decision` once the dialog has finished.
    """

    def __init__(self, info: HostKeyInfo, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.ui = Ui_HostKeyDialog()
        forms.setup(self.ui, self)
        self.info = info
        self.decision = HostKeyDecision.REJECT
        self.setWindowTitle(f"Unknown host key: {info.host}")
        self.ui.intro_label.setText(
            f"<b>zmigrate has never seen the host key of {markup.escape(info.entry)}.</b><br>"
            "Before trusting it, check that the fingerprint below is the one the host's "
            "administrator gives you (on the host: <code>ssh-keygen -lf "
            "/etc/ssh/ssh_host_ed25519_key.pub</code>).")
        fixed = style.monospace()
        fixed.setPointSizeF(fixed.pointSizeF() * 1.1)
        self.ui.fingerprint_label.setFont(fixed)
        self.ui.fingerprint_label.setText(info.fingerprint)
        self.ui.fingerprint_label.setAccessibleDescription(info.fingerprint)
        self.ui.details_label.setText(
            f"Key type: {markup.escape(info.key_type)}<br>"
            f"Remembered in: {markup.escape(str(info.known_hosts))}")
        style.set_role(self.ui.details_label, "muted")
        self.ui.advice_label.setText(
            "If you expected to know this host already, its key may have changed: reject it "
            "and ask why.")
        style.set_role(self.ui.advice_label, "note")
        self.ui.reject_button.clicked.connect(self.reject)
        self.ui.once_button.clicked.connect(lambda: self._answer(HostKeyDecision.ACCEPT_ONCE))
        self.ui.remember_button.clicked.connect(
            lambda: self._answer(HostKeyDecision.ACCEPT_AND_REMEMBER))
        self.ui.reject_button.setFocus()

    def _answer(self, decision: HostKeyDecision) -> None:
        self.decision = decision
        self.accept()

    def reject(self) -> None:
        self.decision = HostKeyDecision.REJECT
        super().reject()
