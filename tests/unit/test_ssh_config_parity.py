"""~/.ssh/config read as OpenSSH reads it: on a set of configs with Include (relative glob), Host
patterns and negations, Match originalhost/host/user and %-tokens, zmigrate's resolution by
`ssh -G` and its fallback parser (paramiko's, Includes inlined) both give OpenSSH's HostName,
Port, User, IdentityFile list and ProxyJump - and a few are pinned to known values so the
comparison cannot pass by both being wrong the same way."""

from __future__ import annotations

import os
import pwd
import secrets
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from zmigrate.engine.errors import ConnectError
from zmigrate.engine.hosts import login as essh
from zmigrate.engine.hosts.login import (
    HostSpec,
    expand_tokens,
    parse_proxy_jump,
    resolve,
    resolve_openssh,
    resolve_paramiko,
)

SSH = shutil.which("ssh")
HOME = pwd.getpwuid(os.getuid()).pw_dir


@pytest.fixture
def include_dir() -> Iterator[str]:
    """A directory under ~/.ssh (where OpenSSH looks for relative Includes of a user config),
    unique to this test and removed after it."""
    name = f"zmh-parity-{secrets.token_hex(4)}"
    path = Path(HOME) / ".ssh" / name
    path.mkdir(parents=True)
    try:
        yield name
    finally:
        shutil.rmtree(path, ignore_errors=True)


CONFIGS: dict[str, tuple[str, dict[str, str], list[str]]] = {
    # name: (config text with {inc} for the include dir, {file: text} in it, hosts to resolve)
    "include": (
        "Include {inc}/*.conf\n"
        "Host *.lab !bad.lab\n    User labuser\n    Port 2201\n"
        "Host bad.lab\n    User nobody\n"
        "Host *\n    IdentityFile ~/.ssh/id_%h_%r\n",
        {
            "10-alpha.conf": "Host alpha\n    HostName alpha.example.net\n    Port 2222\n"
                             "    User alice\n    ProxyJump bastion\n",
            "20-beta.conf": "Host beta beta2\n    HostName %h.internal\n"
                            "    IdentityFile ~/.ssh/beta_key\n    IdentitiesOnly yes\n",
            "not-included.txt": "Host alpha\n    Port 1\n",
        },
        ["alpha", "beta", "beta2", "x.lab", "bad.lab", "plain"],
    ),
    "match": (
        "Host web\n    HostName web.prod.example.com\n"
        "Match originalhost web\n    User deploy\n"
        "Match host *.prod.example.com\n    Port 2022\n"
        "Match user deploy\n    IdentityFile ~/.ssh/deploy_%u\n"
        "Match host web\n    Port 9999\n"
        "Host db\n    HostName 10.0.0.5\n    User dba\n"
        "Match user dba host 10.0.0.*\n    ProxyJump u1@j1.example.com:2201,j2\n"
        "Match originalhost other\n    HostName other.prod.example.com\n",
        {},
        ["web", "db", "other", "web.prod.example.com"],
    ),
    "patterns": (
        "Host !skip.example.org *.example.org\n    User orguser\n"
        "Host foo.example.org\n    User overridden\n    Port 2200\n"
        "Host short-?\n    HostName %h.corp.example\n    IdentityFile %d/.ssh/%r@%h\n"
        "Host *\n    Port 2022\n    User fallback\n",
        {},
        ["foo.example.org", "skip.example.org", "short-a", "short-ab", "other"],
    ),
}


def _compare(spec: HostSpec) -> tuple[essh.Resolved, essh.Resolved]:
    assert SSH is not None
    g = resolve_openssh(spec, SSH)
    p = resolve_paramiko(spec)
    for field in ("hostname", "port", "user", "identities", "proxy_jump"):
        assert getattr(p, field) == getattr(g, field), (spec.host, field)
    return g, p


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_fallback_parser_agrees_with_ssh_G(name: str, include_dir: str, tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    assert SSH is not None, "the OpenSSH client (ssh) is needed for the parity tests"
    text, files, hosts = CONFIGS[name]
    for fname, body in files.items():
        (Path(HOME) / ".ssh" / include_dir / fname).write_text(body)
    config = tmp_path / "config"
    config.write_text(text.format(inc=include_dir))
    monkeypatch.setenv("ZMIGRATE_SSH_CONFIG", str(config))
    results = {h: _compare(HostSpec(h))[0] for h in hosts}
    assert all(r.source == "ssh -G" for r in results.values())
    if name == "include":
        a = results["alpha"]
        assert (a.hostname, a.port, a.user, a.proxy_jump) == (
            "alpha.example.net", 2222, "alice", "bastion")
        assert a.identities == (f"{HOME}/.ssh/id_alpha.example.net_alice",)
        b = results["beta2"]
        assert b.hostname == "beta2.internal" and b.identities_only
        assert b.identities == (f"{HOME}/.ssh/beta_key", f"{HOME}/.ssh/id_beta2.internal_root")
        assert (results["x.lab"].user, results["x.lab"].port) == ("labuser", 2201)
        assert (results["bad.lab"].user, results["bad.lab"].port) == ("nobody", 22)
    elif name == "match":
        w = results["web"]
        assert (w.hostname, w.port, w.user) == ("web.prod.example.com", 2022, "deploy")
        assert w.identities == (f"{HOME}/.ssh/deploy_root",)
        # `Match originalhost web` is not `Match host`: typed in full, the user stays ours.
        assert results["web.prod.example.com"].user == "root"
        assert results["db"].proxy_jump == "u1@j1.example.com:2201,j2"
        assert results["other"].hostname == "other.prod.example.com"
        assert results["other"].port == 22  # HostName set by a Match after the host Match
    else:
        assert (results["foo.example.org"].user, results["foo.example.org"].port) == (
            "orguser", 2200)
        assert results["skip.example.org"].user == "fallback"
        s = results["short-a"]
        assert s.hostname == "short-a.corp.example"
        assert s.identities == (f"{HOME}/.ssh/fallback@short-a.corp.example",)
        assert results["short-ab"].hostname == "short-ab"


def test_user_and_port_given_count_like_ssh_l_and_p(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    assert SSH is not None
    config = tmp_path / "config"
    config.write_text("Host h\n    HostName h.example\n    User cfg\n    Port 2\n"
                      "Match user given\n    IdentityFile ~/.ssh/given_%r\n")
    monkeypatch.setenv("ZMIGRATE_SSH_CONFIG", str(config))
    r = resolve_openssh(HostSpec("h", user="given", port=2300), SSH)
    assert (r.user, r.port, r.identities) == ("given", 2300, (f"{HOME}/.ssh/given_given",))


def test_without_an_openssh_client_the_fallback_says_so(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path / "config"
    config.write_text("Host a\n    HostName a.example\n")
    monkeypatch.setenv("ZMIGRATE_SSH_CONFIG", str(config))
    assert resolve(HostSpec("a")).source == "ssh -G"
    monkeypatch.setattr(essh, "openssh_client", lambda: None)
    r = resolve(HostSpec("a"))
    assert r.hostname == "a.example" and r.source.startswith("paramiko")
    assert "no OpenSSH client" in r.source


def test_a_config_ssh_refuses_is_refused_with_its_message(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    assert SSH is not None
    config = tmp_path / "config"
    config.write_text("Host a\n    NoSuchOption yes\n")
    monkeypatch.setenv("ZMIGRATE_SSH_CONFIG", str(config))
    with pytest.raises(ConnectError) as info:
        resolve_openssh(HostSpec("a"), SSH)
    assert "NoSuchOption" in info.value.message or "Bad configuration" in info.value.message


def test_tokens() -> None:
    out = expand_tokens("~/k/%h-%p-%r-%n-%%-%u", host="h.x", original="h", port=22, user="bob")
    assert out == f"{HOME}/k/h.x-22-bob-h-%-{pwd.getpwuid(os.getuid()).pw_name}"


def test_proxy_jump_hops() -> None:
    hops = parse_proxy_jump("u1@j1.example.com:2201,j2,ssh://u3@[::1]:2203")
    assert [(h.user, h.host, h.port) for h in hops] == [
        ("u1", "j1.example.com", 2201), (None, "j2", None), ("u3", "::1", 2203)]


@pytest.mark.parametrize(("lines", "alive"), [
    ("", (3.0, 15.0)),  # zmigrate's own: asked every 3 s, lost after 15 s
    ("    ServerAliveInterval 1\n    ServerAliveCountMax 2\n", (1.0, 2.0)),
    ("    ServerAliveInterval 2\n", (2.0, 6.0)),  # OpenSSH's default count: 3
    ("    ServerAliveInterval 60\n", (3.0, 15.0)),  # longer than zmigrate's: not taken
    ("    ServerAliveInterval 10\n    ServerAliveCountMax 1\n", (3.0, 10.0)),
    ("    ServerAliveInterval 1\n    ServerAliveCountMax 0\n", (3.0, 15.0)),  # no deadline
])
def test_server_alive_settings_shorten_the_session_loss_deadline_never_lengthen_it(
        lines: str, alive: tuple[float, float], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path / "config"
    config.write_text(f"Host a\n    HostName a.example\n{lines}")
    monkeypatch.setenv("ZMIGRATE_SSH_CONFIG", str(config))
    assert resolve_paramiko(HostSpec("a")).alive == alive
    assert SSH is not None
    assert resolve_openssh(HostSpec("a"), SSH).alive == alive
