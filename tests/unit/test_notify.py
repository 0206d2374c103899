"""notify(): the notify-send argv, and failing soft when it is missing or broken."""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

import pytest

from zmigrate.gui import notify_send as notify

FAKE = """#!/bin/sh
for a in "$@"; do printf '%s\\n' "$a"; done > "{out}"
exit {status}
"""


def fake_notify_send(bin_dir: Path, out: Path, status: int = 0) -> Path:
    exe = bin_dir / "notify-send"
    exe.write_text(FAKE.format(out=out, status=status))
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    return exe


def test_argv_is_a_list_with_options_then_text() -> None:
    argv = notify.notify_argv("/usr/bin/notify-send", "Transfer done", "10 GiB in 2:00",
                              urgency="low", expire_ms=5000)
    assert argv == ["/usr/bin/notify-send", "--app-name=zmigrate", "--urgency=low",
                    "--icon=io.github.zmigrate.Zmigrate", "--expire-time=5000", "--",
                    "Transfer done", "10 GiB in 2:00"]


def test_text_is_never_an_option_or_shell() -> None:
    argv = notify.notify_argv("notify-send", "-u critical", "$(rm -rf /); `x`", icon=None)
    assert argv[-3:] == ["--", "-u critical", "$(rm -rf /); `x`"]
    assert not any(a.startswith("--icon") for a in argv)
    with pytest.raises(ValueError, match="urgency"):
        notify.notify_argv("notify-send", "t", "b", urgency="loud")


def test_missing_notify_send_fails_soft(monkeypatch: pytest.MonkeyPatch,
                                        tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    assert notify.notify("t", "b") is False
    assert notify.notify("t", "b", wait=False) is False


def test_runs_notify_send_from_path(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    out = tmp_path / "args.txt"
    fake_notify_send(tmp_path, out)
    monkeypatch.setenv("PATH", str(tmp_path) + os.pathsep + os.environ.get("PATH", ""))
    assert notify.notify("Transfer done", "it's $HOME; `id`") is True
    assert out.read_text().splitlines() == [
        "--app-name=zmigrate", "--urgency=normal", "--icon=io.github.zmigrate.Zmigrate", "--",
        "Transfer done", "it's $HOME; `id`"]


def test_failing_notify_send_fails_soft(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    fake_notify_send(tmp_path, tmp_path / "args.txt", status=1)
    monkeypatch.setenv("PATH", str(tmp_path))
    assert notify.notify("t", "b") is False


def test_background_send(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    out = tmp_path / "args.txt"
    fake_notify_send(tmp_path, out)
    monkeypatch.setenv("PATH", str(tmp_path))
    assert notify.notify("t", "b", wait=False) is True
    for t in threading.enumerate():
        if t.name == "zmigrate-notify":
            t.join(10)
    assert out.read_text().splitlines()[-2:] == ["t", "b"]


def test_the_notify_send_path_needs_no_qt() -> None:
    """It is the fallback where Qt has no tray: its own imports name no Qt module."""
    import ast

    tree = ast.parse(Path(notify.__file__).read_text())
    names = [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
    names += [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
    assert names and not [m for m in names if m.startswith(("PySide6", "pyqtgraph", "superqt"))]
