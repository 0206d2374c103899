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
