"""The Transfer page's stage line: the job's stage; while the session to a remote job's runner
host is lost, that instead (for how long, refreshed by the page's second tick), the stage
kept for when touch is back."""

from __future__ import annotations

import time

from PySide6.QtWidgets import QLabel

from ...engine import plain_words
from ...engine.events import OutOfTouch


class StageLine:
    def __init__(self, label: QLabel) -> None:
        self.label = label
        self.stage = ""  # what the line says, or will again once touch is back
        self.lost: OutOfTouch | None = None

    def reset(self, text: str) -> None:
        """A new job followed: its first words, in touch."""
        self.lost = None
        self.show(text)

    def show(self, text: str) -> None:
        self.stage = text
        if self.lost is None:
            self.label.setText(text)

    def touch(self, e: OutOfTouch) -> str:
        """Touch lost (each failed try) or back: the line says so; the log's line (with the
        failed try's reason, which would make the stage line long)."""
        self.lost = None if e.back else e
        self.tick()
        return plain_words.out_of_touch(e, time.time())

    def tick(self) -> None:
        """Once a second: how long touch has been lost."""
        lost = self.lost
        self.label.setText(self.stage if lost is None
                           else plain_words.out_of_touch(lost, time.time(), why=False))
