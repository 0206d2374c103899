"""Move a dataset tree: plan it, copy it dataset by dataset (a `Job` each), catch up, cut over.

`job.TreeJob` runs it; `plan` decides each dataset's fate; `schedule` orders the streams; the
rest are the checks, states and summary around them."""

from .entry import SMALL, TreeEntry
from .job import TreeJob
from .plan import (
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
from .states import FAILED, RECEIVED, SENDING, SKIPPED, VERIFIED, WAITING
from .summary import describe_summary, own_roots_advice, own_roots_lines

__all__ = [
    "FAILED", "RECEIVED", "SENDING", "SKIPPED", "SMALL", "SNAPSHOT_PREFIX", "TreeEntry", "TreeJob",
    "TreePlan", "TreePlanReady", "TreeRequest", "VERIFIED", "WAITING", "describe_summary",
    "destination_name", "own_roots_advice", "own_roots_lines", "pick", "plan_tree", "snapshot_name",
    "unused_snapshot_name",
]
