"""The Transfer page's stage line: the job's stage; while the session to a remote job's runner
host is lost, that instead (for how long, refreshed by the page's second tick), the stage
kept for when touch is back."""

from __future__ import annotations

import time

from PySide6.QtWidgets import QLabel

from ...engine import plain_words
from ...engine.events import OutOfTouch
from .. import style


class StageLine:
    def __init__(self, label: QLabel) -> None:
        self.label = label
        self.stage = ""  # what the line says, or will again once touch is back
        self.lost: OutOfTouch | None = None

    def reset(self, text: str) -> None:
        """A new job followed, or the job's end: these words, in touch."""
        self._lose(None)
        self.show(text)

    def show(self, text: str) -> None:
        self.stage = text
        if self.lost is None:
            self.label.setText(text)

    def touch(self, e: OutOfTouch) -> str:
        """Touch lost (each failed try) or back: the line says so; the log's line (with the
        failed try's reason, which would make the stage line long)."""
        self._lose(None if e.back else e)
        self._show()
        return plain_words.out_of_touch(e, time.time())

    def _lose(self, e: OutOfTouch | None) -> None:
        if (e is None) != (self.lost is None):
            style.set_role(self.label, "value" if e is None else "alert")  # amber while lost
        self.lost = e

    def tick(self) -> None:
        """Once a second: how long touch has been lost."""
        if self.lost is not None:
            self._show()

    def _show(self) -> None:
        lost = self.lost
        self.label.setText(self.stage if lost is None
                           else plain_words.out_of_touch(lost, time.time(), why=False))
