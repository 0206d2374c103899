"""The ssh transport's route: the source's ssh command line through jump hosts (every hop gets
the user's options, as `-J` would not give them) and what a failed login says about which hop."""

from __future__ import annotations

import shlex

import pytest

from zmigrate.engine.errors import InvalidNameError
from zmigrate.engine.transports.route import (
    CONNECT_TIMEOUT,
    Endpoint,
    SshRoute,
    explain,
    option_key,
    route_error,
)

OPTS = ("-oIdentityFile=/keys/id", "-oUserKnownHostsFile=/keys/known")
JUMP = Endpoint("admin", "203.0.113.5", 2222)
TARGET = Endpoint("root", "10.0.0.7")


def _proxy_words(words: list[str] | tuple[str, ...]) -> list[str]:
    """The ProxyCommand of an ssh word list, split as ssh's shell would (%% is ssh's %)."""
    [value] = [w.split("=", 1)[1] for w in words if w.startswith("ProxyCommand=")]
    return shlex.split(value.replace("%%", "%"))


def test_without_jump_hosts_the_options_go_to_the_one_ssh() -> None:
    target, opts = SshRoute(Endpoint("root", "tank.lan", 2200), (), OPTS).target_and_options()
    assert target == "root@tank.lan"
    assert opts == (*OPTS, "-o", f"ConnectTimeout={CONNECT_TIMEOUT}", "-p", "2200")


def test_a_jump_host_gets_the_same_options_through_a_proxy_command() -> None:
    target, opts = SshRoute(TARGET, (JUMP,), OPTS).target_and_options()
    assert target == "root@10.0.0.7"
    assert not any(o.startswith(("-J", "ProxyJump")) for o in opts)
    assert _proxy_words(opts) == [
        "ssh", "-o", "BatchMode=yes", *OPTS, "-o", f"ConnectTimeout={CONNECT_TIMEOUT}",
        "-p", "2222", "-W", "10.0.0.7:22", "admin@203.0.113.5"]


def test_two_jump_hosts_nest_first_hop_innermost() -> None:
    second = Endpoint("ops", "192.0.2.9")
    _, opts = SshRoute(TARGET, (JUMP, second), OPTS).target_and_options()
    outer = _proxy_words(opts)
    assert outer[-3:] == ["-W", "10.0.0.7:22", "ops@192.0.2.9"]
    inner = _proxy_words(outer)
    assert inner[-3:] == ["-W", "192.0.2.9:22", "admin@203.0.113.5"]
    assert "-p" in inner and not any(w.startswith("ProxyCommand=") for w in inner)


def test_a_percent_in_an_option_survives_the_token_expansion_of_each_level() -> None:
    route = SshRoute(TARGET, (JUMP, Endpoint("ops", "192.0.2.9")), ("-oIdentityFile=%d/k",))
    _, opts = route.target_and_options()
    # Each ssh expands its own ProxyCommand once: %%%% -> %% -> % for the innermost ssh.
    outer = [w for w in opts if w.startswith("ProxyCommand=")][0]
    assert "IdentityFile=%%d/k" in outer and "IdentityFile=%%%%d/k" in outer
    assert "-oIdentityFile=%d/k" in _proxy_words(_proxy_words(opts))


def test_an_ipv6_hop_is_forwarded_in_brackets() -> None:
    _, opts = SshRoute(Endpoint("root", "fd00::7"), (JUMP,), ()).target_and_options()
    assert _proxy_words(opts)[-3:-1] == ["-W", "[fd00::7]:22"]


def test_a_proxy_option_of_the_user_is_their_route() -> None:
    route = SshRoute(TARGET, (JUMP,), ("-oProxyJump=bastion",))
    assert route.user_routed and option_key("-oProxyJump=bastion") == "proxyjump"
    target, opts = route.target_and_options()
    assert target == "root@10.0.0.7"
    assert not any("ProxyCommand" in o for o in opts) and "-oProxyJump=bastion" in opts


@pytest.mark.parametrize(("user", "host"), [
    ("root", "-oProxyCommand=touch /tmp/x"), ("root", "a;b"), ("x y", "h"), ("root", "")])
def test_names_are_validated(user: str, host: str) -> None:
    with pytest.raises(InvalidNameError):
        Endpoint(user, host)


def test_the_route_is_described_with_its_jumps() -> None:
    assert SshRoute(TARGET, (JUMP,)).describe() == "root@10.0.0.7 via admin@203.0.113.5:2222"


# The stderr of OpenSSH 9.2's `ssh ... true` through a ProxyCommand: the inner ssh's words, then
# the outer's that say nothing of the cause.
CLOSED = ("kex_exchange_identification: Connection closed by remote host\n"
          "Connection closed by UNKNOWN port 65535\n")
ROUTE = SshRoute(TARGET, (JUMP,), OPTS)


@pytest.mark.parametrize(("index", "stderr", "cause", "fix"), [
    (0, "admin@203.0.113.5: Permission denied (publickey).\n" + CLOSED,
     "the jump host admin@203.0.113.5:2222 refused the login from src", "IdentityFile=PATH"),
    (0, "Host key verification failed.\n" + CLOSED,
     "src does not know the host key of the jump host", "UserKnownHostsFile=PATH"),
    (0, "ssh: connect to host 203.0.113.5 port 2222: Connection refused\n" + CLOSED,
     "src cannot reach the jump host admin@203.0.113.5:2222", "--transport relay"),
    (0, "ssh: Could not resolve hostname jump.lan: Name or service not known\n" + CLOSED,
     "src cannot resolve the name of the jump host", "HostName"),
    (1, "channel 0: open failed: connect failed: No route to host\nstdio forwarding failed\n"
     + CLOSED, "the jump host admin@203.0.113.5:2222 cannot reach root@10.0.0.7",
     "HostName and Port of the destination"),
    (1, "channel 0: open failed: administratively prohibited: open failed\n"
     "stdio forwarding failed\n" + CLOSED, "refuses to forward", "AllowTcpForwarding"),
    (1, "root@10.0.0.7: Permission denied (publickey).\n",
     "the destination root@10.0.0.7 refused the login from src", "authorized_keys"),
])
def test_a_failed_login_names_the_hop_the_cause_and_the_fix(index: int, stderr: str, cause: str,
                                                             fix: str) -> None:
    failure = explain(ROUTE, index, stderr, "src")
    assert failure.hop == ROUTE.hops[index]
    assert cause in failure.cause and fix in failure.fix
    assert "kex_exchange_identification" not in failure.cause


def test_a_failed_login_in_the_wizards_words_names_no_flag() -> None:
    """The command line's fix names --ssh-option and --transport relay; the wizard's names its
    Relayed choice and leaves the ssh option out (its ssh takes the source's configuration)."""
    from zmigrate.gui import words as gui_words

    failure = explain(ROUTE, 0, "admin@203.0.113.5: Permission denied (publickey).\n" + CLOSED,
                      "src")
    err = route_error(failure, ROUTE, "src")
    assert err.fix is not None
    assert "--ssh-option IdentityFile=PATH (each --ssh-option applies to every hop)" in err.fix
    assert err.fix.endswith("; or use --transport relay (the stream then goes through this "
                            "computer)"), err.fix
    shown = gui_words.error_fix(err)
    assert shown is not None and "--" not in shown, shown
    assert "in the source's ~/.ssh/config; or choose Relayed through this computer" in shown
