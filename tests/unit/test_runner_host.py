"""The runner host's side of `--runner`, on this machine's real shell (a LocalHost standing
for the SSH session): zmigrate found there or the install fix, its logins checked, the record
streamed back line for line by `attach --record`, names quoted, the local pointers."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from test_event_json import EXAMPLES

from zmigrate.cli.remote_jobs import remote_argv
from zmigrate.engine.hosts.local import LocalHost
from zmigrate.engine.runner import JobState, Status, Writer, record, remote
from zmigrate.engine.runner.remote import Pointer, RemoteRunner, RemoteRunnerError

ID = "20261127-020000-abcdef"
REPO = Path(__file__).resolve().parents[2]


def _wrapper(directory: Path, body: str | None = None) -> Path:
    """A `zmigrate` on a PATH: this checkout's CLI (or `body`, a stand-in)."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "zmigrate"
    path.write_text(body or f"#!/bin/sh\nPYTHONPATH={REPO} exec {sys.executable} -m zmigrate "
                    '"$@"\n')
    path.chmod(0o755)
    return path


@pytest.fixture
def jobs_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("ZMIGRATE_JOBS_DIR", str(tmp_path / "jobs"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    return tmp_path / "jobs"


def test_send_arguments_lose_only_runner_and_detach() -> None:
    argv = ["send", "lab-src:p/x@s", "lab-dst:p/y", "--runner", "nas", "--detach", "-o",
            "comment=--runner", "--bwlimit", "1M", "--runner=nas", "--ru", "nas", "--det"]
    assert remote_argv(argv) == ["send", "lab-src:p/x@s", "lab-dst:p/y", "-o",
                                 "comment=--runner", "--bwlimit", "1M"]


def test_zmigrate_is_found_on_the_path_or_in_pipx_place_else_the_fix_is_named(
        tmp_path: Path, jobs_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    with pytest.raises(RemoteRunnerError) as exc:
        remote._find(LocalHost(), "nas")
    assert exc.value.message.startswith("zmigrate is not installed on nas")
    assert "pipx install zmigrate" in (exc.value.fix or "")
    pipx = _wrapper(tmp_path / "home" / ".local" / "bin")
    assert remote._find(LocalHost(), "nas") == str(pipx)
    on_path = _wrapper(tmp_path / "bin")
    monkeypatch.setenv("PATH", f"{on_path.parent}:/usr/bin:/bin")
    assert remote._find(LocalHost(), "nas") == str(on_path)


def test_commands_are_quoted_and_an_old_zmigrate_is_named_too_old(tmp_path: Path,
                                                                  jobs_dir: Path) -> None:
    old = _wrapper(tmp_path / "old", "#!/bin/sh\necho \"zmigrate: error: argument command: "
                   "invalid choice: '$1'\" >&2\nexit 2\n")
    rr = RemoteRunner(LocalHost(), "nas", str(old))
    assert rr.line("send", "p/x y;rm -rf /") == f"{old} send 'p/x y;rm -rf /'"
    with pytest.raises(RemoteRunnerError) as exc:
        rr.reach([("lab-src", False)])
    assert "too old" in exc.value.message and "pipx upgrade" in (exc.value.fix or "")


def test_the_runner_checks_its_own_logins_and_says_how_it_logs_in(
        tmp_path: Path, jobs_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path / "ssh_config"
    config.write_text("Host gone\n    HostName 127.0.0.1\n    Port 9\n    User backup\n"
                      f"    IdentityFile {tmp_path}/id_backup\n    ConnectTimeout 3\n")
    monkeypatch.setenv("ZMIGRATE_SSH_CONFIG", str(config))
    rr = RemoteRunner(LocalHost(), "nas", str(_wrapper(tmp_path / "bin")))
    here, gone = rr.reach([("local", False), ("gone", True)])
    assert here.ok and here.login == "this machine"
    assert not gone.ok and gone.host == "gone" and gone.message
    assert gone.ssh_config == str(config)


def test_attach_record_streams_the_record_line_for_line(tmp_path: Path,
                                                        jobs_dir: Path) -> None:
    directory = jobs_dir / ID
    directory.mkdir(parents=True)
    w = Writer(directory, Status(id=ID, what="a -> b", request={"argv": []}, started=1.0,
                                 state=JobState.RUNNING, pid=os.getpid()))
    for e in EXAMPLES:
        w(e)
    w.update(state=JobState.FINISHED)
    w.close()
    rr = RemoteRunner(LocalHost(), "nas", str(_wrapper(tmp_path / "bin")))
    lines = list(rr.stream("attach", "--record", ID))
    assert [record.decode(x) for x in lines[:-1]] == record.read_events(directory)
    assert json.loads(lines[-1])["event"] == "job"
    assert json.loads(lines[-1])["state"] == "finished"
    code, out, _ = rr.run("jobs", "--json", "--no-scan")
    assert code == 0 and json.loads(out)["id"] == ID


def test_pointers_come_back_newest_first_and_a_bad_one_is_left_out(jobs_dir: Path) -> None:
    older = Pointer("20261126-010000-aaaaaa", "nas", "/usr/bin/zmigrate", "a -> b", 1.0)
    newer = Pointer("20261127-010000-bbbbbb", "root@nas", "/x/zmigrate", "c -> d", 2.0)
    remote.save_pointer(older)
    remote.save_pointer(newer)
    (jobs_dir / "remote" / "20261127-020000-cccccc.json").write_text(
        json.dumps({"id": "../../etc", "runner": "x", "zmigrate": "y"}))
    assert remote.pointers() == [newer, older]
    assert remote.pointer(older.id) == older
    assert remote.pointer("20261127-030000-dddddd") is None
    assert oct(os.stat(jobs_dir / "remote").st_mode & 0o777) == "0o700"


def test_runner_needs_detach_and_valid_host_names_before_any_login(jobs_dir: Path) -> None:
    from io import StringIO

    from zmigrate.cli.main import main

    for argv, said in ((["send", "a:p/x@s", "b:p/y", "--runner", "nas"], "add --detach"),
                       (["send", "a;b:p/x@s", "b:p/y", "--detach", "--runner", "nas"],
                        "host name 'a;b' is not valid")):
        out, err = StringIO(), StringIO()
        assert main(argv, out, err) == 2
        assert said in err.getvalue()
    assert not jobs_dir.exists()
