"""A tree over `--transport private` on a real OpenZFS 2.3 host (issue 33).

The guest is built without socat and the `openssl` program (only the libssl3 library ssh
needs), so as it is the job must refuse before anything runs (no snapshot taken), naming the
host and what to install there.
Then the test lends the guest this machine's OpenSSL 3 program (both are Debian 12, same
libssl3 ABI) as /usr/local/bin/openssl for the one transfer (the openssl s_server/s_client
ends; socat stays absent), and removes it afterwards: the tree
goes over TLS between the guest's two pools as two hosts, verified, and no key is left.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from lab.util import Run, zmigrate

from zmigrate.engine.errors import PreflightReason

from .test_openzfs import _guid, _leftovers, _prop
from .vm import Vm

pytestmark = pytest.mark.openzfs
CHILDREN = ("", "/a", "/a/x", "/b")
LENT = "/usr/local/bin/openssl"


def _send(vm: Vm, config: Path, root: str, tag: str, *extra: str) -> Run:
    env = {**os.environ, "ZMIGRATE_SSH_CONFIG": str(config),
           "ZMIGRATE_KNOWN_HOSTS": str(vm.known_hosts)}
    env.pop("SSH_AUTH_SOCK", None)
    return zmigrate(env, "send", "-r", f"openzfs-vm:{root}", f"openzfs-dst:dstpool/{tag}",
                    "--transport", "private", "--json", "--no-history", "--buffer", "16M",
                    "--connect-address", "127.0.0.1", "--allow-address", "127.0.0.1", *extra,
                    timeout=420)


def _config(vm: Vm, tmp_path: Path) -> Path:
    """The VM's ssh_config plus `openzfs-dst`: the same guest as a second host."""
    config = tmp_path / "ssh_config"
    config.write_text(vm.ssh_config.read_text() + f"\nHost openzfs-dst\n  HostName 127.0.0.1\n"
                      f"  Port {vm.port}\n  User root\n  IdentityFile {vm.key}\n")
    return config


def _keys_left(vm: Vm) -> list[str]:
    return vm.ssh("ls -d /tmp/zmigrate-tls-* 2>/dev/null; true").stdout.split()


def _tree(vm: Vm, root: str) -> None:
    vm.ssh(" && ".join(f"zfs create {root}{c} && head -c 2M /dev/urandom > /{root}{c}/f0"
                       for c in CHILDREN))


@pytest.fixture
def lent_openssl(vm: Vm) -> Iterator[str]:
    """This machine's `openssl` in the guest at LENT for one test; removed afterwards."""
    program = shutil.which("openssl")
    assert program is not None, "this machine has no openssl to lend the guest"
    data = Path(program).read_bytes()
    subprocess.run(["ssh", "-F", str(vm.ssh_config), "openzfs-vm",
                    f"cat > {LENT}.part && chmod 755 {LENT}.part && mv {LENT}.part {LENT}"],
                   input=data, capture_output=True, timeout=120, check=True)
    try:
        assert vm.ssh(f"sha256sum {LENT}").stdout.split()[0] == hashlib.sha256(data).hexdigest()
        yield vm.ssh("openssl version").stdout.strip()
    finally:
        vm.ssh(f"rm -f {LENT} {LENT}.part", check=False)


def test_a_tree_over_private_is_refused_where_openssl_is_missing(vm: Vm, tree: str,
                                                                 tmp_path: Path) -> None:
    tag = tree
    root = f"srcpool/{tag}"
    have = vm.ssh("command -v openssl socat", check=False)
    assert have.stdout == "", f"the guest was meant to lack openssl and socat: {have.stdout}"
    _tree(vm, root)
    r = _send(vm, _config(vm, tmp_path), root, tag, "--snapshot")
    assert r.returncode == 1, r.stdout + r.stderr
    error = r.of("error")[-1]
    assert error["reason"] == PreflightReason.MISSING_TOOL.value, error
    assert "OpenSSL 3.0" in error["message"], error
    assert "has neither socat nor openssl" in error["message"], error
    assert error["host"] in ("openzfs-vm", "openzfs-dst"), error
    assert "apt install socat" in error["fix"] and "apt install openssl" in error["fix"], error
    assert "--transport ssh" in error["fix"], error
    print(f"\nPRIVATE REFUSED: {error['message']}; fix: {error['fix']}")
    # Refused before anything ran: no snapshot taken, nothing created, no key handed over.
    assert vm.ssh(f"zfs list -H -t snapshot -r {root}").stdout == ""
    assert vm.ssh(f"zfs list dstpool/{tag}", check=False).returncode != 0
    assert _keys_left(vm) == []


def test_a_tree_over_private_arrives_verified(vm: Vm, tree: str, tmp_path: Path,
                                             lent_openssl: str) -> None:
    tag = tree
    root = f"srcpool/{tag}"
    _tree(vm, root)
    vm.ssh(f"zfs snapshot -r {root}@s1")
    r = _send(vm, _config(vm, tmp_path), root + "@s1", tag)
    assert r.returncode == 0, r.stdout + r.stderr
    plans = r.of("plan")
    assert plans and all(p["transport"] == "private" for p in plans), plans
    commands = " ".join(c["command"] for p in plans for c in p["commands"])
    assert "openssl s_server" in commands and "openssl s_client" in commands
    done = r.of("done")[-1]
    assert done["verified"] is True
    assert set(done["datasets"].values()) == {"verified"}, done["datasets"]
    for c in CHILDREN:  # (the copy is received unmounted: its snapshots are compared)
        src, dst = f"{root}{c}@s1", f"dstpool/{tag}{c}@s1"
        assert _guid(vm, src) == _guid(vm, dst), c
        assert _prop(vm, src, "referenced") == _prop(vm, dst, "referenced"), c
    assert _keys_left(vm) == []
    assert _leftovers(vm, tag) == []
    print(f"\nPRIVATE TREE (OpenZFS, {lent_openssl} lent): {len(CHILDREN)} datasets verified, "
          f"{done['bytes']} B in {done['seconds']:.1f} s")
