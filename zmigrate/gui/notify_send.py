"""Desktop notifications through `notify-send`, failing soft where there is none.

No Qt here: the GUI adds its QSystemTrayIcon on top; this is the path that needs nothing but
libnotify's command-line tool (package libnotify-bin on Debian).
"""

from __future__ import annotations

import logging
import shutil
import subprocess
import threading
from collections.abc import Sequence
from typing import Final

log = logging.getLogger(__name__)

APP_NAME: Final = "zmigrate"
ICON: Final = "io.github.zmigrate.Zmigrate"
URGENCIES: Final = ("low", "normal", "critical")
TIMEOUT: Final = 5.0


def notify_argv(exe: str, title: str, body: str, *, icon: str | None = ICON,
                urgency: str = "normal", app_name: str = APP_NAME,
                expire_ms: int | None = None) -> list[str]:
    """The notify-send command line; `--` keeps a title starting with '-' from being an option."""
    if urgency not in URGENCIES:
        raise ValueError(f"urgency must be one of {', '.join(URGENCIES)}, not {urgency!r}")
    argv = [exe, f"--app-name={app_name}", f"--urgency={urgency}"]
    if icon:
        argv.append(f"--icon={icon}")
    if expire_ms is not None:
        argv.append(f"--expire-time={int(expire_ms)}")
    argv += ["--", title, body]
    return argv


def _run(argv: Sequence[str]) -> bool:
    try:
        proc = subprocess.run(list(argv), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, timeout=TIMEOUT, check=False)
    except (OSError, subprocess.SubprocessError) as exc:
        log.info("notify-send failed: %s", exc)
        return False
    if proc.returncode != 0:
        log.info("notify-send exited %d: %s", proc.returncode,
                 proc.stderr.decode("utf-8", "replace").strip())
        return False
    return True


def notify(title: str, body: str, *, icon: str | None = ICON, urgency: str = "normal",
           expire_ms: int | None = None, wait: bool = True) -> bool:
    """Show a desktop notification; False (never an exception) when it cannot be shown.

    Args:
        title, body: the notification's text (passed as argv, never through a shell).
        icon: an icon name from the theme or a file path; None for none.
        urgency: "low", "normal" or "critical".
        expire_ms: how long it stays, if the notification server honours it.
        wait: False runs notify-send on a background thread and returns True at once
            (for a GUI thread that must not block on a slow notification daemon).
    """
    exe = shutil.which("notify-send")
    if exe is None:
        log.info("notify-send is not installed: no desktop notification")
        return False
    argv = notify_argv(exe, title, body, icon=icon, urgency=urgency, expire_ms=expire_ms)
    if not wait:
        threading.Thread(target=_run, args=(argv,), name="zmigrate-notify", daemon=True).start()
        return True
    return _run(argv)
