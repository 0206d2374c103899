"""Move a dataset tree: plan it, copy it dataset by dataset (a `Job` each), catch up, cut over.

Three rooms, in the order a run goes through them: `planning` (each dataset's fate, decided
from the two inventories), `preflight` (read both trees, decide, check before anything runs)
and `running` (`running.job.TreeJob` and what it does as the streams flow and after)."""

from .planning.entry import SMALL, TreeEntry
from .planning.plan import (
    SNAPSHOT_PREFIX,
    TreePlan,
    TreePlanReady,
    TreeRequest,
    destination_name,
    pick,
    plan_tree,
    snapshot_name,
    unused_snapshot_name,
)
from .running.job import TreeJob
from .running.states import FAILED, RECEIVED, SENDING, SKIPPED, VERIFIED, WAITING
from .running.summary import describe_summary, own_roots_advice, own_roots_lines

__all__ = [
    "FAILED", "RECEIVED", "SENDING", "SKIPPED", "SMALL", "SNAPSHOT_PREFIX", "TreeEntry", "TreeJob",
    "TreePlan", "TreePlanReady", "TreeRequest", "VERIFIED", "WAITING", "describe_summary",
    "destination_name", "own_roots_advice", "own_roots_lines", "pick", "plan_tree", "snapshot_name",
    "unused_snapshot_name",
]
