"""One transfer of one dataset: read both hosts (`preflight`), plan, check, then run its stream
(`pipeline`, watched by `stream_watch` and `stall_watch`) and verify it (`checks`)."""

from .job import (
    Job as Job,
)
from .job import (
    Request as Request,
)
from .job import (
    discard_partial as discard_partial,
)
from .job import (
    partial_receive as partial_receive,
)
from .job import (
    within as within,
)
from .preflight import (
    Known as Known,
)
from .preflight import (
    default_transport as default_transport,
)
from .preflight import (
    read_settled as read_settled,
)
