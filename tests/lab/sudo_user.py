"""A real non-root user on the lab machine with exactly the sudoers line docs/permissions.md
recommends (zfs, pkill and pgrep without a password, nothing else), for tests of the
`--sudo` logins."""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass
from pathlib import Path

from .util import SETUP_HINT, run
from .zfsfuse import LabUnavailableError, require_programs, require_root

DOCS = Path(__file__).resolve().parents[2] / "docs" / "permissions.md"
SUDOERS_DIR = Path("/etc/sudoers.d")


def documented_line() -> str:
    """The sudoers line of docs/permissions.md, for user `zmigrate` (as the docs spell it)."""
    m = re.search(r"`(zmigrate ALL=\(root\) NOPASSWD: [^`]+)`", DOCS.read_text())
    if m is None:
        raise LabUnavailableError(f"no sudoers line found in {DOCS}")
    return m.group(1)


@dataclass(frozen=True, slots=True)
class SudoUser:
    """A user made for this test session, and the sudoers file that grants it the line."""

    name: str
    home: Path
    sudoers: Path
    line: str


def make_sudo_user() -> SudoUser:
    """A fresh user `zms<6 hex>` (home, no password, key logins only) with the documented
    sudoers line for it in /etc/sudoers.d."""
    require_root("the sudo user of the lab")
    require_programs("the sudo user of the lab", "/usr/bin/sudo", "/usr/sbin/useradd",
                     "/usr/sbin/visudo")
    name = f"zms{secrets.token_hex(3)}"
    line = documented_line().replace("zmigrate ALL=", f"{name} ALL=", 1)
    run(["useradd", "-m", "-s", "/bin/bash", name])
    run(["usermod", "-p", "*", name])  # not locked (sshd without PAM refuses locked ones)
    sudoers = SUDOERS_DIR / f"zmigrate-lab-{name}"
    sudoers.write_text(line + "\n")
    sudoers.chmod(0o440)
    check = run(["visudo", "-c", "-f", str(sudoers)], check=False)
    if check.returncode != 0:
        remove_sudo_user(SudoUser(name, Path(f"/home/{name}"), sudoers, line))
        raise LabUnavailableError(f"visudo rejects {line!r}: {check.stderr.strip()}; "
                                  f"{SETUP_HINT}")
    return SudoUser(name, Path(f"/home/{name}"), sudoers, line)


def remove_sudo_user(user: SudoUser) -> None:
    """The sudoers file, the user and its home, gone."""
    user.sudoers.unlink(missing_ok=True)
    run(["userdel", "-r", user.name], check=False)
