"""What stopping leaves on the destination, as the Stop dialogs and the Done page say it: a
tree's datasets already received stay, and those in flight are kept to resume where the
destination keeps interrupted receives (OpenZFS), removed where it cannot (zfs-fuse)."""

from __future__ import annotations

import dataclasses

from tests.unit.test_readonly_window import _plan as tree_plan
from zmigrate.gui.dialogs.confirm import after_stop


def test_a_stopped_tree_keeps_what_arrived_and_says_what_the_next_run_does() -> None:
    plan = tree_plan()
    assert after_stop(plan) == ("the datasets already received stay; those in flight are "
                                "removed, and sending the tree again sends them whole")
    kept = after_stop(dataclasses.replace(plan, resumable=True))
    assert kept == ("the datasets already received stay; what arrived of those in flight is "
                    "kept, so sending the tree again resumes them")
    assert after_stop(None) == "a partly received dataset is removed"
