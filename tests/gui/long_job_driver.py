"""Run by test_long_job_lab.py as a process of its own (so it can be SIGKILLed): the wizard
starts a tree transfer (handed to a runner), says the job's id once samples flow, and waits
to be killed.  argv: ROOT DESTINATION_PARENT SETTINGS_INI RATE"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable

os.environ["QT_QPA_PLATFORM"] = "offscreen"

from PySide6.QtCore import QSettings  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402
from wizard_driver import start_transfer, to_review, to_source, to_tree_destination  # noqa: E402

from zmigrate.gui.settings import Settings  # noqa: E402
from zmigrate.gui.wizard import MigrationWizard  # noqa: E402


class Bot:
    """What wizard_driver asks of pytest-qt's QtBot: wait, with the events flowing."""

    def waitUntil(self, done: Callable[[], object], timeout: int = 5000) -> None:  # noqa: N802
        deadline = time.monotonic() + timeout / 1000
        while not done():
            if time.monotonic() > deadline:
                raise TimeoutError("the wizard did not get there in time")
            QApplication.processEvents()
            time.sleep(0.02)


def main() -> None:
    root, parent, ini, rate = sys.argv[1:5]
    app = QApplication([])
    w = MigrationWizard(Settings(QSettings(ini, QSettings.Format.IniFormat)))
    w.show()
    bot = Bot()
    to_source(bot, w)  # type: ignore[arg-type]
    to_tree_destination(bot, w, root, parent=parent, name="copy")  # type: ignore[arg-type]
    to_review(bot, w, rate_limit=rate)  # type: ignore[arg-type]
    start_transfer(w)
    s = w.session
    bot.waitUntil(lambda: s.store is not None and s.store.version > 6, timeout=120_000)
    print(f"JOB {s.attached}", flush=True)
    while True:  # until killed
        app.processEvents()
        time.sleep(0.05)


if __name__ == "__main__":
    main()
