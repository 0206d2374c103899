"""The frozen-app lane: the app packaging/build.sh froze, run on the lab.

Collected only when asked for (env ZMIGRATE_FROZEN_APP=1, as .ci/run does after build.sh): a
plain run has no frozen app to test and says so at the end instead of skipping."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

NOT_RUN = pytest.StashKey[list[str]]()


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    if collection_path.name.startswith("test_") and os.environ.get("ZMIGRATE_FROZEN_APP") != "1":
        config.stash.setdefault(NOT_RUN, []).append(collection_path.name)
        return True
    return None


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter,
                            config: pytest.Config) -> None:
    files = config.stash.get(NOT_RUN, [])
    if files:
        terminalreporter.write_sep("=", "frozen-app lane NOT RUN", yellow=True)
        terminalreporter.write_line(
            f"{', '.join(sorted(files))} tests the app packaging/build.sh freezes: build it, then "
            "run ZMIGRATE_FROZEN_APP=1 pytest tests/frozen (.ci/run does both).")
