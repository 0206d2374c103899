"""What going live and going back hide, by name, computed from their steps (no remote call).

Neither destroys anything: going live unmounts the source's datasets where old and new pool
share a host (their files stay in them, no longer served at their paths, until going back),
and going back unmounts the live copy (what was written to it while live is carried back to
the source first, or with --leave-writes stays on it only, under a named snapshot). The
mounts they make are on paths checked to be free (golive/checks.py), or the source's own
paths freed by those unmounts.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol

from .kinds import DESTINATION, SOURCE, Loss, LossKind


class _Step(Protocol):
    @property
    def side(self) -> str: ...

    @property
    def argv(self) -> tuple[str, ...]: ...

    @property
    def path(self) -> str | None: ...


def going_live(steps: Iterable[_Step]) -> list[Loss]:
    """The datasets going live unmounts (the source's, on one host), children first."""
    return [Loss(SOURCE if s.side == "source" else DESTINATION, LossKind.UNMOUNTED,
                 s.argv[-1], f"no longer served at {s.path or 'its mountpoint'}; its files "
                 "stay in it (going back mounts it again)")
            for s in steps if s.argv[:2] == ("zfs", "unmount")]


def going_back(steps: Iterable[_Step], *, leave_writes: bool,
               mounted_besides: Sequence[str] = ()) -> list[Loss]:
    """The live copy's datasets going back unmounts, children first: those going live
    mounted (`steps`: the steps that ran), and `mounted_besides` (children first), mounted
    though their own mount never ran (a go-live cut off after setting their mountpoint,
    which mounts them: golive/record.mounted_besides). What was written to them while live
    is carried back first, or left on them."""
    kept = ("what was written to it while live stays on it only, under a snapshot "
            "@zmigrate-left-..." if leave_writes else
            "what was written to it while live is carried back to the source first")
    besides = [Loss(DESTINATION, LossKind.UNMOUNTED, name, "the copy, mounted as going live "
                    f"set its mountpoint (cut off before mounting it), out of service; {kept}")
               for name in mounted_besides]
    return besides + [Loss(DESTINATION if s.side == "destination" else SOURCE,
                           LossKind.UNMOUNTED, s.argv[-1], f"the live copy, out of service; {kept}")
                      for s in reversed(list(steps)) if s.argv[:2] == ("zfs", "mount")]
