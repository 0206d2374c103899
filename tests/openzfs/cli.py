"""The lane's one way to run the CLI: `zmigrate ...` against the guest, through the lab's
`zmigrate` / `start` (tests/lab/util.py), with the guest's ssh_config (or `two_hosts_config`'s)
and known_hosts, and a history of its own only when asked for."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from lab.util import Event, Run, Sink, start, zmigrate

from .vm import Vm

Events = list[Event]


def two_hosts_config(vm: Vm, tmp_path: Path) -> Path:
    """The VM's ssh_config plus the alias `openzfs-dst`: the same guest as a second host."""
    config = tmp_path / "ssh_config"
    config.write_text(vm.ssh_config.read_text() + f"\nHost openzfs-dst\n  HostName 127.0.0.1\n"
                      f"  Port {vm.port}\n  User root\n  IdentityFile {vm.key}\n")
    return config


def guest_env(vm: Vm, config: Path | None = None, data: Path | None = None) -> dict[str, str]:
    """os.environ for the CLI: `config` (default: the VM's ssh_config), the VM's known_hosts,
    no agent, and ZMIGRATE_DATA_DIR=`data` if given."""
    env = {**os.environ, "ZMIGRATE_SSH_CONFIG": str(config or vm.ssh_config),
           "ZMIGRATE_KNOWN_HOSTS": str(vm.known_hosts)}
    env.pop("SSH_AUTH_SOCK", None)
    if data is not None:
        env["ZMIGRATE_DATA_DIR"] = str(data)
    return env


def cli(vm: Vm, *args: str, config: Path | None = None, data: Path | None = None,
        timeout: float = 300) -> Run:
    """`zmigrate ARGS` against the guest, to its end."""
    return zmigrate(guest_env(vm, config, data), *args, timeout=timeout)


def _send_args(args: tuple[str, ...], history: bool) -> tuple[str, ...]:
    # Two "hosts" on one guest: the tcp stream is between the guest and itself, on loopback.
    return ("send", *args, "--json", *(() if history else ("--no-history",)), "--buffer", "16M",
            "--connect-address", "127.0.0.1", "--allow-address", "127.0.0.1")


def send(vm: Vm, config: Path, *args: str, timeout: float = 420, history: bool = False) -> Run:
    """`zmigrate send ARGS --json ...` to its end; recorded in the history (ZMIGRATE_DATA_DIR's)
    only with `history`."""
    return zmigrate(guest_env(vm, config), *_send_args(args, history), timeout=timeout)


def send_ok(vm: Vm, config: Path, *args: str, timeout: float = 420,
            history: bool = False) -> Events:
    """The events of a `send` that must succeed."""
    r = send(vm, config, *args, timeout=timeout, history=history)
    if r.returncode != 0:
        raise AssertionError(r.stderr + str(r.events[-3:]))
    return r.events


def start_send(vm: Vm, config: Path, *args: str, stdout: Sink = subprocess.PIPE,
               data: Path | None = None) -> subprocess.Popen[str]:
    """`send` started in the background, its stdout to `stdout`, for a test that kills it (or
    reads it as it goes); recorded in the history of `data` (ZMIGRATE_DATA_DIR) if given."""
    return start(guest_env(vm, config, data), *_send_args(args, data is not None),
                 stdout=stdout)
