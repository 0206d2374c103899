"""A lane of tests collected only when asked for, and named as NOT RUN at the end otherwise
(never a skip): the OpenZFS guest's and the frozen app's."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

Requested = Callable[[pytest.Config], bool]
IgnoreCollect = Callable[[Path, pytest.Config], "bool | None"]
TerminalSummary = Callable[[pytest.TerminalReporter, pytest.Config], None]


def lane_gate(title: str, requested: Requested, how: Callable[[list[str]], str]
              ) -> tuple[IgnoreCollect, TerminalSummary]:
    """(pytest_ignore_collect, pytest_terminal_summary) for a conftest: its test files are left
    out unless `requested`, and then the summary says "`title` NOT RUN" and `how(files)`."""
    not_run = pytest.StashKey[list[str]]()

    def ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
        if collection_path.name.startswith("test_") and not requested(config):
            config.stash.setdefault(not_run, []).append(collection_path.name)
            return True
        return None

    def terminal_summary(terminalreporter: pytest.TerminalReporter,
                         config: pytest.Config) -> None:
        files = config.stash.get(not_run, [])
        if files:
            terminalreporter.write_sep("=", f"{title} NOT RUN", yellow=True)
            terminalreporter.write_line(how(sorted(files)))

    return ignore_collect, terminal_summary
