"""Which folders a mount would hide something at, as the login sees them (never through sudo):
one that lists entries holds files; one the login cannot list, or cannot even see into, may
hold files and counts as in use too (a sudo login mounting a copy over a user's 0700 home would
hide it); a free or absent path is free."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from zmigrate.engine import cmdline
from zmigrate.engine.destination import mounts
from zmigrate.engine.hosts.base import CommandResult
from zmigrate.engine.hosts.local import LocalHost

NOBODY = 65534


class Login(LocalHost):
    """This machine as an unprivileged login: root's lines run as nobody (setpriv), so a
    folder mode 0700 is one it cannot list, as for a sudo login on a NAS."""

    def run(self, line: str, *, timeout: float = 120.0,
            stdin: bytes | None = None) -> CommandResult:
        if os.geteuid() == 0:
            line = cmdline.join(["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}",
                                 "--clear-groups", "sh", "-c", line])
        return super().run(line, timeout=timeout, stdin=stdin)


@pytest.fixture
def tree() -> Iterator[Path]:
    """A folder every login can search (pytest's tmp_path is root's alone), with: `empty/`,
    `full/` (a file), `closed/` (a file, mode 0700: not the login's when root runs this; mode
    0 otherwise), `closed/deep` below it, and `a file`."""
    root = Path(tempfile.mkdtemp(prefix="zm-held-"))
    root.chmod(0o755)
    (root / "empty").mkdir(mode=0o755)
    (root / "full").mkdir(mode=0o755)
    (root / "full" / "photo.jpg").write_bytes(b"x")
    (root / "closed").mkdir()
    (root / "closed" / "deep").mkdir()
    (root / "closed" / "secret").write_bytes(b"x")
    (root / "with space").mkdir(mode=0o755)
    (root / "with space" / "f").write_bytes(b"x")
    (root / "a file").write_bytes(b"x")
    (root / "closed").chmod(0o700 if os.geteuid() == 0 else 0)
    try:
        yield root
    finally:
        (root / "closed").chmod(0o700)
        shutil.rmtree(root)


def test_each_folder_is_told_as_the_login_sees_it(tree: Path) -> None:
    paths = [str(tree / n) for n in ("empty", "full", "closed", "closed/deep", "absent",
                                     "absent/below", "a file", "with space")]
    assert mounts.folders_in_use(Login(), paths) == {
        str(tree / "full"): mounts.HOLDS_FILES,
        str(tree / "with space"): mounts.HOLDS_FILES,
        str(tree / "closed"): mounts.UNLISTED,
        str(tree / "closed/deep"): mounts.UNLISTED,  # exists, but the login cannot see it
    }


def test_a_chosen_mountpoint_is_covered_as_the_login_sees_it(tree: Path) -> None:
    host = Login()
    assert mounts.covered_folder(host, "pool/copy", str(tree / "closed")) == \
        (str(tree / "closed"), mounts.UNLISTED)
    assert mounts.covered_folder(host, "pool/copy", str(tree / "full")) == \
        (str(tree / "full"), mounts.HOLDS_FILES)
    assert mounts.covered_folder(host, "pool/copy", str(tree / "empty")) is None
    assert mounts.covered_folder(host, "pool/copy", "none") is None
