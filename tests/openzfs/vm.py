"""The OpenZFS guest as the lane's tests see it (see conftest.py)."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

from zmigrate.engine import zfs
from zmigrate.engine.hosts import Host
from zmigrate.engine.hosts.login import HostSpec, connect


@dataclass(frozen=True)
class Vm:
    """A running guest: how to reach it."""

    dir: Path
    work: Path
    port: int
    ssh_config: Path
    known_hosts: Path
    key: Path

    def ssh(self, line: str, *, user: str = "root", timeout: float = 120,
            check: bool = True) -> subprocess.CompletedProcess[str]:
        """Run `line` in the guest through the system ssh (for set-up, not the code under test)."""
        target = "openzfs-vm" if user == "root" else f"{user}@openzfs-vm"
        r = subprocess.run(["ssh", "-F", str(self.ssh_config), target, line],
                           capture_output=True, text=True, timeout=timeout,
                           stdin=subprocess.DEVNULL)
        if check and r.returncode != 0:
            raise AssertionError(f"guest command failed ({r.returncode}): {line}\n{r.stderr}")
        return r


@dataclass
class Pair:
    """Two control sessions into the guest, probed once."""

    src: Host
    dst: Host
    src_caps: zfs.Capabilities
    dst_caps: zfs.Capabilities


# The guest runs under TCG, beside other work: a login (key exchange) that takes 1-2 s alone
# took over 15 s (zmigrate's default) under load, and a session fixture's one failure errors
# every test that uses it.
LOGIN_TIMEOUT = 60.0


def connect_src(user: str | None = None) -> Host:
    """A session through the alias `openzfs-vm` (the source "host")."""
    return connect(HostSpec("openzfs-vm", user=user), timeout=LOGIN_TIMEOUT)


def connect_dst(vm: Vm, user: str = "root") -> Host:
    """A session labelled `user@127.0.0.1` (a different "host" than the alias)."""
    return connect(HostSpec("127.0.0.1", user=user, port=vm.port, identity=str(vm.key)),
                   timeout=LOGIN_TIMEOUT)
