"""What is lost: a `Loss` (host side, kind, full ZFS name, detail) and its kinds."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import Enum
from typing import Any

DESTINATION = "destination"
SOURCE = "source"
NEWER = "newer than @"  # the detail of a snapshot a rollback to the base destroys
JUDGED_EMPTY = "judged empty"  # the detail of content replaced without --force


class LossKind(str, Enum):
    """What is lost."""

    DATASET = "dataset"  # destroyed, with everything in it
    SNAPSHOT = "snapshot"  # destroyed
    CONTENT = "content"  # the dataset's files, replaced by the copy (zfs receive -F into it)
    PARTIAL = "partial"  # the data of an interrupted receive (zfs receive -A)
    # Hidden, not destroyed:
    UNMOUNTED = "unmounted"  # a dataset unmounted: its files stay in it, no longer served
    HIDDEN = "hidden"  # a folder's files, covered by a dataset mounted over it (name: the path)


HIDING = (LossKind.UNMOUNTED, LossKind.HIDDEN)  # the kinds that hide rather than destroy


@dataclass(frozen=True, slots=True)
class Loss:
    """One thing a plan destroys or replaces: on which host (`host_side`: "destination" or
    "source"), what (`kind`), its full ZFS name, and why (`detail`)."""

    host_side: str
    kind: LossKind
    name: str
    detail: str = ""

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.host_side, self.kind.value, self.name)

    def to_json(self) -> dict[str, Any]:
        return {"host_side": self.host_side, "kind": self.kind.value, "name": self.name,
                "detail": self.detail}


def unique(losses: Iterable[Loss]) -> tuple[Loss, ...]:
    """`losses` without repeats (by host, kind and name), in their first order."""
    seen: set[tuple[str, str, str]] = set()
    out: list[Loss] = []
    for loss in losses:
        if loss.key not in seen:
            seen.add(loss.key)
            out.append(loss)
    return tuple(out)
