"""What a plan destroys, replaces or hides on each host, by name: computed from what both
hosts were read to hold (`compute`), shown before anything runs, and checked again before the first
destructive command (`grown`: what appeared since the plan's read would be lost unseen).
Going live and back hide, never destroy (`golive`: the datasets they unmount).

Every loss is data (`kinds`: a kind and a name, with a short detail); each face words the list
(plain_words.losses_by_host).
"""

from .compute import (
    content_replaced as content_replaced,
)
from .compute import (
    discarded as discarded,
)
from .compute import (
    grown as grown,
)
from .compute import (
    names as names,
)
from .compute import (
    replication_pruned as replication_pruned,
)
from .compute import (
    rolled_back as rolled_back,
)
from .compute import (
    seen as seen,
)
from .compute import (
    written_since as written_since,
)
from .golive import (
    going_back as going_back,
)
from .golive import (
    going_live as going_live,
)
from .kinds import (
    DESTINATION as DESTINATION,
)
from .kinds import (
    HIDING as HIDING,
)
from .kinds import (
    JUDGED_EMPTY as JUDGED_EMPTY,
)
from .kinds import (
    NEWER as NEWER,
)
from .kinds import (
    SOURCE as SOURCE,
)
from .kinds import (
    Loss as Loss,
)
from .kinds import (
    LossKind as LossKind,
)
from .kinds import (
    unique as unique,
)
