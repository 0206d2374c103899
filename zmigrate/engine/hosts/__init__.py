"""The hosts a job runs on: this computer or an SSH host (`login`), commands in process groups,
a shell kept open (`kept_shell`), sessions opened ahead (`launcher`), the userland (`tools`), both
ends at once (`pair`) and what earlier runs left (`leftovers`)."""

from .host import (
    HEARTBEAT as HEARTBEAT,
)
from .host import (
    CommandResult as CommandResult,
)
from .host import (
    Host as Host,
)
from .host import (
    LocalHost as LocalHost,
)
from .host import (
    Process as Process,
)
from .host import (
    SshHost as SshHost,
)
from .host import (
    wrap_in_group as wrap_in_group,
)
