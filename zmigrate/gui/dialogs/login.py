"""The dialogs a login asks from the GUI thread: an unknown host key, a password.

The connecting thread asks through a `PromptRelay`; each question opens a dialog (modal to its
panel, never blocking the event loop) whose answer completes the thread's future. The window's
own logins (runner hosts) ask through `WindowLogins`, over the window.
"""

from __future__ import annotations

from concurrent.futures import Future

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QInputDialog, QLineEdit, QWidget

from zmigrate.engine.hosts.login import HostKeyDecision, HostKeyInfo
from zmigrate.engine.hosts.remembered import SecretMemory, SessionLogins

from .. import words
from ..prompts import GuiPrompts, PromptRelay
from .host_key_dialog import HostKeyDialog


class LoginDialogs(QObject):
    """Opens a panel's login dialogs and hands their answers back."""

    def __init__(self, parent: QWidget, relay: PromptRelay) -> None:
        super().__init__(parent)
        self.parent_widget = parent
        self.host_key_dialog: HostKeyDialog | None = None
        self.secret_dialog: QInputDialog | None = None
        relay.host_key_asked.connect(self._on_host_key_asked)
        relay.secret_asked.connect(self._on_secret_asked)

    def _on_host_key_asked(self, info: HostKeyInfo, fut: Future[object]) -> None:
        dialog = HostKeyDialog(info, self.parent_widget)
        self.host_key_dialog = dialog

        def done(_result: int) -> None:
            if not fut.done():
                fut.set_result(dialog.decision)
            self.host_key_dialog = None
            dialog.deleteLater()

        dialog.finished.connect(done)
        dialog.open()

    def _on_secret_asked(self, prompt: str, fut: Future[object]) -> None:
        dialog = QInputDialog(self.parent_widget)
        self.secret_dialog = dialog
        dialog.setWindowTitle("Password needed")
        dialog.setLabelText(f"{prompt}\n{words.SECRET_KEPT}")
        dialog.setTextEchoMode(QLineEdit.EchoMode.Password)
        dialog.setAccessibleName(prompt)

        def done(result: int) -> None:
            if not fut.done():
                fut.set_result(dialog.textValue() if result else None)
            if self.secret_dialog is dialog:
                self.secret_dialog = None
            dialog.deleteLater()

        dialog.finished.connect(done)
        dialog.open()

    def close(self) -> None:
        """Reject the open dialogs: the wizard is closing."""
        if self.host_key_dialog is not None:
            self.host_key_dialog.reject()
        if self.secret_dialog is not None:
            self.secret_dialog.reject()

    # for tests and callers that know better
    def answer_host_key(self, decision: HostKeyDecision) -> None:
        """Answer the open host key dialog (keyboard users click; tests call this)."""
        dialog = self.host_key_dialog
        if dialog is None:
            return
        if decision is HostKeyDecision.REJECT:
            dialog.reject()
        elif decision is HostKeyDecision.ACCEPT_ONCE:
            dialog.ui.once_button.click()
        else:
            dialog.ui.remember_button.click()

    def answer_secret(self, secret: str | None) -> None:
        """Answer the open password dialog: type and OK, or Cancel for None."""
        dialog = self.secret_dialog
        if dialog is None:
            return
        if secret is None:
            dialog.reject()
        else:
            dialog.setTextValue(secret)
            dialog.accept()


class WindowLogins(QObject):
    """The window's logins to runner hosts: asked in dialogs over `parent`, answered once
    this session (`memory`, which the Hosts page shares: a runner host that is also one of
    the transfer's is not asked about twice). `logins` hands both to the engine."""

    def __init__(self, parent: QWidget, memory: SecretMemory) -> None:
        super().__init__(parent)
        self.relay = PromptRelay(self)
        self.prompts = GuiPrompts(self.relay)
        self.dialogs = LoginDialogs(parent, self.relay)
        self.logins = SessionLogins(self.prompts, memory)

    def close(self) -> None:
        """Answer open questions with "no", and ask none again: the window is closing."""
        self.prompts.close()
        self.dialogs.close()
