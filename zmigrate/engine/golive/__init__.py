"""Cut over: the final sync's read-only window (`readonly_window`, `final_sync`), going live and
back (`cutover`, `checks`) and their record (`record`)."""

from .cutover import (
    GoLivePlan as GoLivePlan,
)
from .cutover import (
    Prop as Prop,
)
from .cutover import (
    Props as Props,
)
from .cutover import (
    Step as Step,
)
from .cutover import (
    parse_props as parse_props,
)
from .cutover import (
    plan_go_live as plan_go_live,
)
