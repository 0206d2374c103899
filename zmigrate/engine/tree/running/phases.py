"""Where a tree run's time went, phase by phase: what a final sync's read-only window is
predicted from (golive/readonly_window.py), kept in the history with the run's summary.

The phases: `readonly` (a final sync's `zfs set readonly=on`, one command a dataset),
`snapshot` (the snapshot command(s), also when taken ahead while the trees were read), `read`
(both trees read: the plan's read, or the read again once a final sync's snapshot is taken),
`send` (every stream, start to end) and `check` (the copy checked).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager


def commands_in(line: str | None) -> int:
    """How many zfs commands `line` (a tree plan's `a && b && c`) runs; 0 for None."""
    return 0 if not line else line.count(" && ") + 1


class Phases:
    """Seconds each phase took (the last time it ran), and the zfs commands it ran."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self.commands: dict[str, int] = {}  # phase -> zfs commands it ran (readonly, snapshot)

    @contextmanager
    def timed(self, name: str, command: str | None = None) -> Iterator[None]:
        """Time the block as phase `name` (it ran `command`, when given), also when it fails."""
        began = time.monotonic()
        try:
            yield
        finally:
            self.seconds[name] = round(time.monotonic() - began, 3)
            if command is not None:
                self.commands[name] = commands_in(command)
