"""The history is private: its folder 0700, its files 0600, existing ones tightened."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from zmigrate.engine.history import DATA_DIR_ENV, History


def _mode(p: Path) -> int:
    return stat.S_IMODE(p.stat().st_mode)


def test_a_new_history_is_private(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(DATA_DIR_ENV, str(tmp_path / "data"))
    with History() as h:
        h.jobs()
        path = h.path
    assert _mode(path.parent) == 0o700
    files = [f for f in path.parent.iterdir() if f.name.startswith(path.name)]
    assert files and all(_mode(f) == 0o600 for f in files), [(f, oct(_mode(f))) for f in files]


def test_an_existing_open_history_is_tightened(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(DATA_DIR_ENV, raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "share"))
    monkeypatch.setenv("HOME", str(tmp_path))
    with History() as h:
        path = h.path
    path.parent.chmod(0o755)
    path.chmod(0o644)
    with History() as h:
        h.jobs()
    assert _mode(path.parent) == 0o700 and _mode(path) == 0o600


def test_a_chosen_shared_folder_is_left_alone(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o1777)
    shared.chmod(0o1777)
    monkeypatch.setenv(DATA_DIR_ENV, str(shared))
    with History() as h:
        h.jobs()
        path = h.path
    assert _mode(shared) == 0o1777 and _mode(path) == 0o600
