"""What every page shares: the wizard's Session and Settings, and the page ids."""

from __future__ import annotations

from enum import IntEnum

from PySide6.QtWidgets import QWidget, QWizardPage

from ..session import Session
from ..settings import Settings


class PageId(IntEnum):
    HOSTS = 0
    SOURCE = 1
    DESTINATION = 2
    TRANSPORT = 3
    REVIEW = 4
    TRANSFER = 5
    DONE = 6


class Page(QWizardPage):
    """A wizard page that reads and writes the shared session."""

    def __init__(self, session: Session, settings: Settings,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self.settings = settings
        self._complete_said: bool | None = None

    def complete_changed(self) -> None:
        """`completeChanged`, only when the answer did change: each one has the wizard lay its
        buttons and the page out again, which takes tens of ms beside a tree of thousands of
        rows (a big pool's Source and Destination pages)."""
        now = self.isComplete()
        if now is not self._complete_said:
            self._complete_said = now
            self.completeChanged.emit()

    def forget_complete(self) -> None:
        """The page is shown again: the wizard asks isComplete itself, the next answer is said."""
        self._complete_said = None
