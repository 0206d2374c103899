"""The ssh transport to a destination behind a jump host: lab-src's own ssh cannot reach
lab-behind directly, so it goes through lab-jump as this computer's ProxyJump says - with the
--ssh-option values on the jump hop too (OpenSSH's -J would give that hop none of them). When the
source lacks what a hop needs, the error names the hop, the cause and the fix, in seconds."""

from __future__ import annotations

import socket
import time
from pathlib import Path

import pytest
from lab.netns import JumpLab
from lab.util import (
    Run,
    dataset_exists,
    run,
    snapshot_guid,
    write_random_files,
    zfs,
    zfs_processes_naming,
    zmigrate,
)
from lab.zfsfuse import Pool

pytestmark = [pytest.mark.lab, pytest.mark.timeout(300)]


def _send(env: dict[str, str], *args: str) -> Run:
    return zmigrate(env, "send", *args, "--transport", "ssh", "--json", "--no-history",
                    timeout=240)


def _options(identity: Path, known_hosts: Path) -> list[str]:
    """--ssh-option values with which lab-src's own ssh logs in to the jump lab's hosts."""
    return [f"--ssh-option=IdentityFile={identity}",
            f"--ssh-option=UserKnownHostsFile={known_hosts}",
            "--ssh-option=IdentitiesOnly=yes"]


def _dataset(pool: Pool, name: str, mb: int) -> str:
    ds = f"{pool.name}/{name}"
    zfs("create", ds)
    write_random_files(pool.mountpoint / name, mb, files=4)
    zfs("snapshot", f"{ds}@s")
    return ds


@pytest.mark.parametrize("chain", ["lab-jump", "lab-jump,lab-jump-b"])
def test_ssh_transport_through_the_jump_host(chain: str, jump_lab: JumpLab,
                                             pools: tuple[Pool, Pool], tmp_path: Path) -> None:
    """One jump host, or two (lab-jump then lab-jump-b, the same host under another alias:
    the second hop's ProxyCommand nests inside the first's)."""
    assert jump_lab.jump is not None and jump_lab.behind is not None
    env = jump_lab.env()
    config = tmp_path / "ssh_config"
    config.write_text(jump_lab.config_text(jump_line=f"ProxyJump {chain}"))
    env["ZMIGRATE_SSH_CONFIG"] = str(config)
    behind, jump = jump_lab.behind.address, jump_lab.jump.address
    options = _options(jump_lab.lab.identity, jump_lab.known_hosts)
    # lab-src is this machine's network: neither a socket nor its ssh reaches lab-behind.
    with pytest.raises(OSError):
        socket.create_connection((behind, 22), timeout=3).close()
    direct = run(["ssh", "-o", "BatchMode=yes", "-o", "ConnectTimeout=3",
                  "-o", f"IdentityFile={jump_lab.lab.identity}",
                  "-o", f"UserKnownHostsFile={jump_lab.known_hosts}", f"root@{behind}", "true"],
                 check=False, timeout=30)
    assert direct.returncode == 255 and f"connect to host {behind} port 22" in direct.stderr, \
        direct
    src, dst = pools
    ds = _dataset(src, "far", 8)
    dest = f"{dst.name}/far"
    r = _send(env, f"lab-src:{ds}@s", f"lab-behind:{dest}", *options)
    assert r.returncode == 0, r.stderr + r.stdout
    events = r.events
    plan = next(e for e in events if e["event"] == "plan")
    assert plan["transport"] == "ssh"
    hops = ", ".join(f"root@{jump}" for _ in chain.split(","))
    assert f"via the jump host(s) {hops}," in plan["description"]
    [(host, command)] = [(c["host"], c["command"]) for c in plan["commands"]]
    assert host == "lab-src" and " -J " not in command
    assert command.count("ProxyCommand=ssh") == len(chain.split(","))
    assert f"-W {behind}:22 root@{jump}" in command
    done = next(e for e in events if e["event"] == "done")
    assert done["verified"] is True
    assert snapshot_guid(f"{dest}@s") == snapshot_guid(f"{ds}@s") == done["source_guid"]


@pytest.mark.parametrize("lacks", ["jump key", "jump host key", "destination host key"])
def test_what_the_source_lacks_is_named_with_its_fix(lacks: str, jump_lab: JumpLab,
                                                     pools: tuple[Pool, Pool],
                                                     tmp_path: Path) -> None:
    assert jump_lab.jump is not None and jump_lab.behind is not None
    identity, known = jump_lab.lab.identity, tmp_path / "known_hosts"
    leave_out = {"jump host key": jump_lab.jump.address,
                 "destination host key": jump_lab.behind.address}.get(lacks)
    known.write_text("".join(x + "\n" for x in jump_lab.known_hosts.read_text().splitlines()
                             if leave_out is None or not x.startswith(leave_out + " ")))
    if lacks == "jump key":
        identity = tmp_path / "id_other"  # a key no lab host takes
        run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(identity)])
    src, dst = pools
    ds = _dataset(src, "nope", 2)
    t0 = time.monotonic()
    r = _send(jump_lab.env(), f"lab-src:{ds}@s", f"lab-behind:{dst.name}/nope",
              *_options(identity, known))
    took = time.monotonic() - t0
    assert r.returncode != 0
    error = next(e for e in r.events if e["event"] == "error")
    hop, cause, fix = {
        "jump key": (f"the jump host root@{jump_lab.jump.address}", "refused the login",
                     "--ssh-option IdentityFile=PATH (each --ssh-option applies to every hop)"),
        "jump host key": (f"the jump host root@{jump_lab.jump.address}",
                          "does not know the host key", "--ssh-option UserKnownHostsFile=PATH"),
        "destination host key": (f"the destination root@{jump_lab.behind.address}",
                                 "does not know the host key",
                                 "--ssh-option UserKnownHostsFile=PATH"),
    }[lacks]
    assert f"{cause} of {hop}" in error["message"] or f"{hop} {cause}" in error["message"], error
    assert fix in error["fix"] and "--transport relay" in error["fix"], error
    assert error["host"] == "lab-src"
    assert took < 60, took  # connecting, the failed send, the hop-by-hop check, cleanup
    assert not dataset_exists(f"{dst.name}/nope")
    assert zfs_processes_naming(src.name, dst.name, "mbuffer") == []
