"""The starter lab (starter.py) for jobs kept in sync on a runner host: the runner host's
sessions and the starter's CLI both take the lowered floor of the catch-up interval
(ZMIGRATE_KEEP_SYNC_MIN), so a test repeats every few seconds, not every minute."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from .bring_up import running
from .sshd import Lab
from .starter import StarterLab

FLOOR = "1"  # seconds: the shortest --keep-syncing the tests' runner and starter accept


class KeepStarterLab(StarterLab):
    def _runner_env(self, alias: str) -> dict[str, str]:
        return {**super()._runner_env(alias), "ZMIGRATE_KEEP_SYNC_MIN": FLOOR}

    def env(self) -> dict[str, str]:
        return {**super().env(), "ZMIGRATE_KEEP_SYNC_MIN": FLOOR}


@contextmanager
def keep_starter(root: Path, lab: Lab) -> Iterator[KeepStarterLab]:
    """The lab's runner hosts up (a failure to bring them up fails the test, said), and
    stopped after with whatever runner they still run."""
    with running(KeepStarterLab(root, lab)) as s:
        yield s
