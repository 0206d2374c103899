"""The hosts a job runs on: this computer (`local`) or an SSH host (`ssh_host`, logged in by
`login`), each pipeline in a process group of its own (`groups`), a shell kept open
(`kept_shell`), sessions opened ahead (`launcher`), the userland (`tools`), both ends at once
(`pair`: connected; `at_once`: two remote calls together), whether both ends are one machine
(`same`), what earlier runs left (`leftovers`) and where a private step's keys live on a host
(`key_dirs`)."""

from .base import HEARTBEAT, CommandResult, Host, Process
from .groups import wrap_in_group
from .local import LocalHost
from .same import one_connection, same_host
from .ssh_host import SshHost

__all__ = ["HEARTBEAT", "CommandResult", "Host", "LocalHost", "Process", "SshHost",
           "one_connection", "same_host", "wrap_in_group"]
