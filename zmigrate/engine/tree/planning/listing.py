"""A tree's commands before it runs: each dataset's exact commands, or why it has none yet.
One listing, that `--dry-run` prints and the Review page shows, each in its own words."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Protocol

from ...errors import ZmigrateError
from ...plan import Plan
from .entry import TreeEntry
from .plan import TreePlan


class Listed(Enum):
    """What a dataset's row of the listing holds."""

    COMMANDS = "commands"  # its exact commands
    SKIPPED = "skipped"  # nothing to send (its entry's reason says why)
    CARRIED = "carried"  # arrives in the stream of `entry.carried_by`
    LATER = "later"  # past the listing's limit: planned when it runs
    UNDECIDED = "undecided"  # planning it now was refused (`error`): decided again when it runs


@dataclass(frozen=True, slots=True)
class DatasetCommands:
    """One dataset of the listing. `ahead`: the tree's snapshot the commands were planned as
    if it existed (it is taken first, before any of them runs); None when it exists."""

    entry: TreeEntry
    listed: Listed
    commands: tuple[tuple[str, str], ...] = ()  # (host, command line)
    ahead: str | None = None
    error: ZmigrateError | None = None


class PlansDatasets(Protocol):
    """A prepared tree job: one dataset's plan as it will run (TreeJob.dataset_plan)."""

    def dataset_plan(self, entry: TreeEntry) -> Plan: ...


def list_commands(job: PlansDatasets, plan: TreePlan,
                  limit: int | None = None) -> list[DatasetCommands]:
    """Every dataset of `plan` in order with its exact commands (planned as if the tree's
    snapshot existed when it is still to be taken), or why it has none; the first `limit`
    datasets planned (None: all), since each is a preflight of its own."""
    ahead = plan.snapshot if plan.snapshot_command else None
    out: list[DatasetCommands] = []
    for i, entry in enumerate(plan.entries):
        if entry.action == "skip":
            out.append(DatasetCommands(entry, Listed.SKIPPED))
        elif entry.carried_by is not None:
            out.append(DatasetCommands(entry, Listed.CARRIED))
        elif limit is not None and i >= limit:
            out.append(DatasetCommands(entry, Listed.LATER))
        else:
            try:
                commands = tuple(job.dataset_plan(entry).commands())
            except ZmigrateError as exc:
                out.append(DatasetCommands(entry, Listed.UNDECIDED, error=exc))
            else:
                out.append(DatasetCommands(entry, Listed.COMMANDS, commands, ahead))
    return out
