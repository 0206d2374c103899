"""Credentials on a real sshd: an encrypted key asks for its passphrase through the callback."""

from __future__ import annotations

import os
import pty
from collections.abc import Iterator
from pathlib import Path

import pytest
from lab.prompts import PASSPHRASE, Answers, locked_key
from lab.sshd import Lab
from lab.util import finish, start, write_random_files, zfs
from lab.zfsfuse import Pool

from zmigrate.engine.errors import AuthError
from zmigrate.engine.hosts.login import HostSpec, connect
from zmigrate.engine.hosts.remembered import SecretMemory, connect_remembering, login_of

pytestmark = pytest.mark.lab


@pytest.fixture
def encrypted_key(lab_env: Lab, tmp_path: Path) -> Iterator[Path]:
    with locked_key(tmp_path / "id_locked", lab_env.ssh_config.parent / "authorized_keys") as key:
        yield key


def test_key_passphrase_is_asked_through_the_callback(encrypted_key: Path) -> None:
    prompts = Answers(PASSPHRASE)
    host = connect(HostSpec("lab-src", identity=str(encrypted_key)), prompts)
    try:
        assert host.run("id -u").stdout.strip() == "0"
    finally:
        host.close()
    assert len(prompts.asked) == 1 and "Passphrase" in prompts.asked[0]


def test_no_passphrase_given_is_an_auth_error(encrypted_key: Path) -> None:
    with pytest.raises(AuthError, match="passphrase"):
        connect(HostSpec("lab-src", identity=str(encrypted_key)), Answers(None))


def test_a_wrong_passphrase_is_an_auth_error_not_an_unreachable_host(
        encrypted_key: Path) -> None:
    with pytest.raises(AuthError, match="does not open the key") as caught:
        connect(HostSpec("lab-src", identity=str(encrypted_key)), Answers("not it"))
    assert "ssh-keygen -y" in (caught.value.fix or "")


def test_a_passphrase_given_once_is_not_asked_again_this_session(encrypted_key: Path) -> None:
    """connect_remembering (the window's reconnects, a follower's logins again): a second
    login asks nothing; a remembered passphrase the key no longer takes is forgotten and asked
    once more."""
    prompts, memory = Answers(PASSPHRASE), SecretMemory()
    spec = HostSpec("lab-src", identity=str(encrypted_key))
    for _ in range(2):
        connect_remembering(spec, prompts, memory).close()
    assert len(prompts.asked) == 1 and len(memory) == 1
    key = (login_of(spec), prompts.asked[0])
    memory.put(key, "an old passphrase")  # the key's passphrase was changed since
    connect_remembering(spec, prompts, memory).close()
    assert len(prompts.asked) == 2 and memory.get(key) == PASSPHRASE


def test_cli_live_line_on_a_terminal(lab: Lab, pools: tuple[Pool, Pool]) -> None:
    """On a terminal, `send` draws one live line: rate, both buffer fills, percent, ETA."""
    src, dst = pools
    zfs("create", f"{src.name}/ds")
    write_random_files(src.mountpoint / "ds", 24, files=4)
    zfs("snapshot", f"{src.name}/ds@t")
    leader, follower = pty.openpty()
    proc = start(lab.env(), "send", f"lab-src:{src.name}/ds@t", f"lab-dst:{dst.name}/t",
                 "--bwlimit", "8M", "--buffer", "16M", stderr=follower)
    os.close(follower)
    seen = b""
    while True:
        try:
            chunk = os.read(leader, 4096)
        except OSError:
            break
        if not chunk:
            break
        seen += chunk
    r = finish(proc, 120)
    os.close(leader)
    assert r.returncode == 0, seen.decode(errors="replace")
    text = seen.decode(errors="replace")
    assert "\r\x1b[K" in text and "buffers send" in text and "ETA" in text and "%" in text
    assert "done:" in r.stdout and "verified" in r.stdout
