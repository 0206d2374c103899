#!/usr/bin/env bash
# Regenerate the lock files the shipped builds install from. Run it on purpose and commit the
# result: a new PySide6, numpy or PyInstaller release changes the frozen app and the .deb only
# through such a commit.
#
#   requirements/package.txt   zmigrate's runtime with the gui extra, and PyInstaller: every
#                              version and every file's sha256 (pip --require-hashes)
#   requirements/build.txt     what numpy's source build needs (meson-python, Cython, ninja)
#
#   packaging/lock.sh                          keep the pins, add what is new (hashes too)
#   packaging/lock.sh --upgrade                move every pin to the newest release allowed
#   packaging/lock.sh --upgrade-package NAME   move one
set -euo pipefail
cd "$(dirname "$0")/.."

venv=build/lock-venv
if [ ! -x "$venv/bin/pip-compile" ]; then
  /usr/bin/python3 -m venv "$venv"
  "$venv/bin/pip" install -q "pip-tools>=7.4"
fi
opts=(--quiet --generate-hashes --allow-unsafe --strip-extras --no-emit-index-url
  --no-emit-find-links --no-emit-trusted-host)
"$venv/bin/pip-compile" "${opts[@]}" --extra gui --extra package \
  -o requirements/package.txt "$@" pyproject.toml
"$venv/bin/pip-compile" "${opts[@]}" -o requirements/build.txt "$@" requirements/build.in
echo "lock.sh: requirements/package.txt and requirements/build.txt written; review and commit"
