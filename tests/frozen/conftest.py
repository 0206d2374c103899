"""The frozen-app lane: the app packaging/build.sh froze, run on the lab.

Collected only when asked for (env ZMIGRATE_FROZEN_APP=1, as .ci/run does after build.sh): a
plain run has no frozen app to test and says so at the end instead of skipping."""

from __future__ import annotations

import os

from lane_gate import lane_gate

pytest_ignore_collect, pytest_terminal_summary = lane_gate(
    "frozen-app lane", lambda _config: os.environ.get("ZMIGRATE_FROZEN_APP") == "1",
    lambda files: f"{', '.join(files)} tests the app packaging/build.sh freezes: build it, then "
    "run ZMIGRATE_FROZEN_APP=1 pytest tests/frozen (.ci/run does both).")
