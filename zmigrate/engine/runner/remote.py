"""A runner on another machine (`send --detach --runner HOST`): zmigrate's command line there,
reached over SSH through the login code, starts the job detached the way it does here and
reaches the two hosts with HOST's own ssh config and keys. This side keeps only a pointer per
job (its id -> the runner host) in `remote/` of its jobs directory, and follows, lists and
stops the job by running zmigrate on HOST (every line built from validated names, quoted)."""

from __future__ import annotations

import json
import os
import queue
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Final

from .. import cmdline
from ..errors import ZmigrateError
from ..hosts import Host
from ..hosts.login import HostSpec, Prompts, connect
from ..hosts.remembered import SecretMemory, connect_remembering
from ..remedies import Remedy
from .place import jobs_root, valid_id

POINTERS: Final = "remote"
# Where the command line is on HOST: its login shell's PATH, else pipx's default place (a
# non-interactive ssh session often lacks ~/.local/bin on its PATH).
_FIND = ('command -v zmigrate || { test -x "$HOME/.local/bin/zmigrate" && '
         'echo "$HOME/.local/bin/zmigrate"; }')
INSTALL_FIX: Final = ("install the command line there: `pipx install zmigrate` (from a "
                      "checkout: `pipx install .`), then run this again")


class RemoteRunnerError(ZmigrateError):
    """The runner host cannot run or answer for the job."""


@dataclass(frozen=True, slots=True)
class Pointer:
    """This side's note of a job that runs on `runner` (as the user named it here)."""

    id: str
    runner: str
    zmigrate: str  # the command line's path on the runner host
    what: str
    started: float

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Pointer:
        return cls(valid_id(str(data["id"])), str(data["runner"]), str(data["zmigrate"]),
                   str(data.get("what", "")), float(data.get("started", 0.0)))


def _pointer_dir() -> Path:
    return jobs_root() / POINTERS


def save_pointer(p: Pointer) -> None:
    jobs_root().mkdir(parents=True, exist_ok=True, mode=0o700)
    d = _pointer_dir()
    d.mkdir(exist_ok=True, mode=0o700)
    tmp = d / f".{p.id}.{os.getpid()}"
    tmp.write_text(json.dumps(asdict(p), sort_keys=True))
    os.replace(tmp, d / f"{p.id}.json")


def pointer(job_id: str) -> Pointer | None:
    """The pointer of `job_id`, or None when it is not a remote job known here."""
    path = _pointer_dir() / f"{valid_id(job_id)}.json"
    try:
        return Pointer.from_json(json.loads(path.read_text()))
    except (OSError, ValueError, KeyError):
        return None


def pointers() -> list[Pointer]:
    """Every remote job known here, newest first."""
    d = _pointer_dir()
    out = []
    for path in sorted(d.glob("*.json"), reverse=True) if d.is_dir() else []:
        try:
            out.append(Pointer.from_json(json.loads(path.read_text())))
        except (OSError, ValueError, KeyError, ZmigrateError):
            continue
    return out


@dataclass(frozen=True, slots=True)
class Reach:
    """How the runner host logs in to one of the job's hosts (`_reach` on HOST says it)."""

    host: str
    ok: bool
    message: str = ""
    fix: str = ""
    login: str = ""  # user@hostname:port as HOST's ssh config resolves the name
    identities: tuple[str, ...] = ()  # its configured keys (none: agent and default keys)
    ssh_config: str = ""

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Reach:
        return cls(str(d["host"]), bool(d["ok"]), str(d.get("message") or ""),
                   str(d.get("fix") or ""), str(d.get("login") or ""),
                   tuple(str(i) for i in d.get("identities") or ()),
                   str(d.get("ssh_config") or ""))


class RemoteRunner:
    """An SSH session to the runner host and its zmigrate (`open` finds it, or says how to
    install it)."""

    def __init__(self, host: Host, name: str, zmigrate: str) -> None:
        self.host = host
        self.name = name
        self.zmigrate = zmigrate

    @classmethod
    def open(cls, name: str, prompts: Prompts | None = None, zmigrate: str = "",
             memory: SecretMemory | None = None) -> RemoteRunner:
        """Log in to the runner host `name` ([user@]host) and find zmigrate there (`zmigrate`
        given: the path a pointer noted); a secret `memory` holds for it is not asked again."""
        spec = HostSpec.parse(name)
        if spec.is_local:
            raise RemoteRunnerError(f"the runner host {name!r} is this computer",
                                    remedies=(Remedy.LOCAL_RUNNER,))
        try:
            host = (connect(spec, prompts) if memory is None
                    else connect_remembering(spec, prompts or Prompts(), memory))
        except ZmigrateError as exc:
            raise RemoteRunnerError(f"cannot log in to the runner host {name}: {exc.message}",
                                    fix=exc.said_fix, remedies=exc.remedies,
                                    figures=exc.figures) from exc
        try:
            return cls(host, name, zmigrate or _find(host, name))
        except BaseException:
            host.close()
            raise

    def close(self) -> None:
        self.host.close()

    def line(self, *args: str) -> str:
        return cmdline.join([self.zmigrate, *args])

    def reach(self, hosts: Sequence[tuple[str, bool]]) -> list[Reach]:
        """Whether the runner host logs in to each of `hosts` ((host text, sudo)), as it will."""
        args = ["_reach"]
        for text, sudo in hosts:
            args += [f"{text}{'+sudo' if sudo else ''}"]
        r = self.host.run(self.line(*args), timeout=120)
        if r.status != 0 or not r.stdout.strip():
            raise self._refused("could not check its logins", r.stderr)
        return [Reach.from_json(json.loads(line)) for line in r.stdout.splitlines()
                if line.startswith("{")]

    def start(self, argv: Sequence[str]) -> dict[str, Any]:
        """`send ARGV --detach --json` on the runner host: the job's first status there."""
        args = [a for a in argv if a != "--json"]
        r = self.host.run(self.line(*args, "--detach", "--json"), timeout=120)
        for line in r.stdout.splitlines():
            data = json.loads(line) if line.startswith("{") else {}
            if data.get("event") == "job":
                return data
            if data.get("event") == "error":
                raise RemoteRunnerError(f"the runner host {self.name} refused the job: "
                                        f"{data.get('message', '')}", fix=data.get("fix"))
        raise self._refused("did not start the job", r.stderr)

    def run(self, *args: str, timeout: float = 300) -> tuple[int, str, str]:
        """zmigrate ARGS on the runner host: its exit status, stdout and stderr."""
        r = self.host.run(self.line(*args), timeout=timeout)
        if r.status == -1:
            raise RemoteRunnerError(f"lost the runner host {self.name} while it answered",
                                    fix="check the network; the job goes on there")
        return r.status, r.stdout, r.stderr

    def stream(self, *args: str) -> Iterator[str]:
        """zmigrate ARGS on the runner host, its output's lines as they come (the remote
        command ends with the session: closing it, or this process dying, stops it)."""
        lines: queue.Queue[str | None] = queue.Queue()
        partial = bytearray()

        def feed(data: bytes) -> None:
            partial.extend(data)
            *whole, rest = bytes(partial).split(b"\n")
            partial[:] = rest
            for one in whole:
                lines.put(one.decode("utf-8", "replace"))

        errors: list[bytes] = []
        proc = self.host.spawn(self.line(*args), on_stdout=feed, on_stderr=errors.append,
                               on_stdout_end=lambda: lines.put(None))
        while (item := lines.get()) is not None:
            yield item
        status = proc.wait(30)
        if status is None or status < 0 or not self.host.alive():
            raise RemoteRunnerError(f"lost the runner host {self.name} while following the job",
                                    fix="the job goes on there: `zmigrate attach ID` again "
                                    "once the network is back")

    def _refused(self, what: str, stderr: str) -> RemoteRunnerError:
        tail = stderr.strip().splitlines()[-1:] or ["no output"]
        if "invalid choice" in stderr:
            return RemoteRunnerError(f"zmigrate on {self.name} ({self.zmigrate}) is too old "
                                     "to run jobs for another computer",
                                     fix="upgrade it there: `pipx upgrade zmigrate`")
        return RemoteRunnerError(f"zmigrate on {self.name} {what}: {tail[0]}",
                                 fix=f"run `{self.zmigrate} --help` on {self.name} to see "
                                 "whether it works there")


def _find(host: Host, name: str) -> str:
    r = host.run(_FIND, timeout=30)
    path = r.stdout.strip().splitlines()[-1:] if r.status == 0 else []
    if not path or not path[0].startswith("/"):
        raise RemoteRunnerError(
            f"zmigrate is not installed on {name} (its login shell finds no `zmigrate` on "
            "its PATH, nor ~/.local/bin/zmigrate)", fix=INSTALL_FIX)
    return path[0]


def check_reach(text: str, timeout: float = 15.0) -> Reach:
    """On the runner host (`_reach`): log in to `text` ([user@]host, `+sudo` for sudo) as a
    job would, with this machine's ssh config and keys, asking nobody (no terminal here)."""
    from ..hosts.login import resolve, ssh_config_path

    name = text.removesuffix("+sudo")
    spec = HostSpec.parse(name, sudo=text.endswith("+sudo"))
    if spec.is_local:
        return Reach(name, True, login="this machine")
    try:
        r = resolve(spec)
        login = f"{r.user}@{r.hostname}:{r.port}"
        host = connect(spec, Prompts(), timeout=timeout)
    except ZmigrateError as exc:
        return Reach(name, False, exc.message, exc.fix or "", ssh_config=str(ssh_config_path()))
    host.close()
    return Reach(name, True, login=login, identities=r.identities,
                 ssh_config=str(ssh_config_path()))
