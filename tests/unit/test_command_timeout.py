"""A command that outlasts its timeout fails with a cause and a way out the user can follow on
the host it names (errors.timed_out), here through a real local `sh`."""

from __future__ import annotations

import time

import pytest

from zmigrate.engine.errors import CommandError
from zmigrate.engine.hosts.local import LocalHost


def test_a_command_past_its_timeout_names_the_host_and_what_to_look_at() -> None:
    host = LocalHost()
    t0 = time.monotonic()
    with pytest.raises(CommandError) as caught:
        host.run("sleep 5", timeout=1.0)
    assert time.monotonic() - t0 < 4
    error = caught.value
    assert error.message == "command did not finish within 1 s", error.message
    assert error.command == "sleep 5" and error.host == host.label
    assert error.fix is not None and f"{host.label} may be short of CPU" in error.fix
    assert "uptime" in error.fix
