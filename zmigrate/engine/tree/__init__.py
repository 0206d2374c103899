"""Move a dataset tree: plan it, copy it dataset by dataset (a `Job` each), catch up, cut over.

`job.TreeJob` runs it; `plan` decides each dataset's fate; `schedule` orders the streams; the
rest are the checks, states and summary around them."""

from .entry import SMALL as SMALL
from .entry import TreeEntry as TreeEntry
from .job import TreeJob as TreeJob
from .plan import (
    SNAPSHOT_PREFIX as SNAPSHOT_PREFIX,
)
from .plan import (
    TreePlan as TreePlan,
)
from .plan import (
    TreePlanReady as TreePlanReady,
)
from .plan import (
    TreeRequest as TreeRequest,
)
from .plan import (
    destination_name as destination_name,
)
from .plan import (
    pick as pick,
)
from .plan import (
    plan_tree as plan_tree,
)
from .plan import (
    snapshot_name as snapshot_name,
)
from .plan import (
    unused_snapshot_name as unused_snapshot_name,
)
from .states import (
    FAILED as FAILED,
)
from .states import (
    RECEIVED as RECEIVED,
)
from .states import (
    SENDING as SENDING,
)
from .states import (
    SKIPPED as SKIPPED,
)
from .states import (
    VERIFIED as VERIFIED,
)
from .states import (
    WAITING as WAITING,
)
from .summary import (
    describe_summary as describe_summary,
)
from .summary import (
    own_roots_advice as own_roots_advice,
)
from .summary import (
    own_roots_lines as own_roots_lines,
)
