"""Logging in as users do, on the lab's sshd: a key only in the SSH agent, hashed known_hosts
entries (`|1|...`), HostKeyAlias and UserKnownHostsFile from the SSH config (as `ssh -G` reads
them), and IdentitiesOnly."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from lab.plugin import PASSWORD, Lab, LabHost
from lab.util import run, wait_until, zmigrate
from lab.zfsfuse import Pool

from zmigrate.engine.errors import AuthError, HostKeyError
from zmigrate.engine.hosts.login import HostKeyDecision, HostKeyInfo, HostSpec, Prompts, connect

pytestmark = [pytest.mark.lab, pytest.mark.timeout(120)]


class Recording(Prompts):
    def __init__(self, decision: HostKeyDecision = HostKeyDecision.REJECT) -> None:
        self.decision = decision
        self.asked: list[HostKeyInfo] = []

    def unknown_host_key(self, info: HostKeyInfo) -> HostKeyDecision:
        self.asked.append(info)
        return self.decision


def _config(path: Path, lab: Lab, *lines: str) -> Path:
    path.write_text(f"Host target\n    HostName 127.0.0.1\n    Port {lab.src.port}\n"
                    "    User root\n" + "".join(f"    {x}\n" for x in lines))
    return path


@pytest.fixture
def agent(tmp_path: Path) -> Iterator[dict[str, str]]:
    """An ssh-agent of this test (its socket in tmp_path), stopped after it."""
    sock = tmp_path / "agent.sock"
    proc = subprocess.Popen(["ssh-agent", "-D", "-a", str(sock)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    try:
        assert wait_until(sock.exists, 10)
        yield {"SSH_AUTH_SOCK": str(sock)}
    finally:
        proc.terminate()
        proc.wait(10)


def test_a_key_held_only_by_the_agent(lab_env: Lab, tmp_path: Path, agent: dict[str, str],
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    # The config names no key, and there is none in ~/.ssh that sshd takes: only the agent has it.
    monkeypatch.setenv("ZMIGRATE_SSH_CONFIG", str(_config(tmp_path / "config", lab_env)))
    with pytest.raises(AuthError):
        connect(HostSpec("target"), timeout=10)
    subprocess.run(["ssh-add", str(lab_env.identity)], env={**os.environ, **agent},
                   check=True, capture_output=True, timeout=30)
    monkeypatch.setenv("SSH_AUTH_SOCK", agent["SSH_AUTH_SOCK"])
    with connect(HostSpec("target")) as host:
        assert host.run("id -u").stdout.strip() == "0"


def test_identities_only_keeps_the_agent_out(lab_env: Lab, tmp_path: Path,
                                             agent: dict[str, str],
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    other = tmp_path / "other_key"
    run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(other)])
    subprocess.run(["ssh-add", str(lab_env.identity)], env={**os.environ, **agent}, check=True,
                   capture_output=True, timeout=30)
    monkeypatch.setenv("SSH_AUTH_SOCK", agent["SSH_AUTH_SOCK"])
    # IdentitiesOnly with a key sshd does not take: the agent's good key must not be tried.
    monkeypatch.setenv("ZMIGRATE_SSH_CONFIG", str(_config(
        tmp_path / "config", lab_env, f"IdentityFile {other}", "IdentitiesOnly yes")))
    with pytest.raises(AuthError):
        connect(HostSpec("target"), timeout=10)
    monkeypatch.setenv("ZMIGRATE_SSH_CONFIG", str(_config(
        tmp_path / "config", lab_env, f"IdentityFile {other}", "IdentitiesOnly no")))
    with connect(HostSpec("target")) as host:
        assert host.run("true").ok


def test_hashed_known_hosts(lab_env: Lab, tmp_path: Path,
                            monkeypatch: pytest.MonkeyPatch) -> None:
    known = tmp_path / "known_hosts"
    known.write_text(lab_env.src.known_hosts_line + "\n")
    run(["ssh-keygen", "-H", "-f", str(known)])
    assert known.read_text().startswith("|1|")
    monkeypatch.setenv("ZMIGRATE_KNOWN_HOSTS", str(known))
    prompts = Recording()
    with connect(HostSpec("lab-src"), prompts) as host:
        assert host.run("true").ok
    assert prompts.asked == []
    # A changed key under a hashed name is refused, and its line is found.
    known.write_text(f"[127.0.0.1]:{lab_env.src.port} {lab_env.dst.public_key}\n")
    run(["ssh-keygen", "-H", "-f", str(known)])
    with pytest.raises(HostKeyError) as info:
        connect(HostSpec("lab-src"), Recording(HostKeyDecision.ACCEPT_AND_REMEMBER))
    assert "changed" in info.value.message and "line 1" in info.value.message


def test_host_key_alias_and_user_known_hosts_file_from_the_config(
        lab_env: Lab, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    known = tmp_path / "kh_from_config"
    key = lab_env.src.public_key
    known.write_text(f"zmh-alias {key}\n")
    monkeypatch.delenv("ZMIGRATE_KNOWN_HOSTS", raising=False)
    monkeypatch.setenv("ZMIGRATE_SSH_CONFIG", str(_config(
        tmp_path / "config", lab_env, f"IdentityFile {lab_env.identity}",
        "HostKeyAlias zmh-alias", f"UserKnownHostsFile {known}")))
    prompts = Recording()
    with connect(HostSpec("target"), prompts) as host:
        assert host.run("true").ok
    assert prompts.asked == []
    # Unknown under the alias: the prompt names the alias (no port), remembered in that file.
    known.write_text("")
    remember = Recording(HostKeyDecision.ACCEPT_AND_REMEMBER)
    with connect(HostSpec("target"), remember) as host:
        assert host.run("true").ok
    assert [a.entry for a in remember.asked] == ["zmh-alias"]
    assert known.read_text() == f"zmh-alias {key}\n"


def test_without_an_openssh_client_the_fallback_parser_is_used_and_named(
        lab: Lab, tmp_path: Path, pools: tuple[Pool, Pool]) -> None:
    """No `ssh` on the PATH: paramiko's parser reads the lab config (the host is reached all
    the same) and `zmigrate list` says which parser read it."""
    empty = tmp_path / "no-ssh-bin"
    empty.mkdir()
    env = {**lab.env(), "PATH": str(empty)}
    where = f"lab-src:{pools[0].name}"
    r = zmigrate(env, "list", where, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "# lab-src: ssh config read by paramiko's parser (no OpenSSH client" in r.stdout
    with_ssh = lab.zmigrate("list", where, timeout=120)
    assert with_ssh.returncode == 0 and "ssh config read by" not in with_ssh.stdout


class Answering(Prompts):
    """Accepts nothing new; answers every secret with `answer` and records the questions."""

    def __init__(self, answer: str | None) -> None:
        self.answer = answer
        self.questions: list[str] = []

    def secret(self, prompt: str) -> str | None:
        self.questions.append(prompt)
        return self.answer


def test_password_login(password_host: LabHost, lab_env: Lab) -> None:
    # Given up front (the GUI's password field, never stored).
    with connect(HostSpec("lab-pw", password=PASSWORD)) as host:
        assert host.run("id -u").stdout.strip() == "0"
    # Asked for when no key gets in.
    asked = Answering(PASSWORD)
    with connect(HostSpec("lab-pw"), asked) as host:
        assert host.run("true").ok
    assert asked.questions == ["Password for root@127.0.0.1"]
    # A wrong one, or none, is an AuthError.
    with pytest.raises(AuthError):
        connect(HostSpec("lab-pw"), Answering("wrong"))
    with pytest.raises(AuthError):
        connect(HostSpec("lab-pw"), Answering(None))
