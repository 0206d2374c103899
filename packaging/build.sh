#!/usr/bin/env bash
# Freeze zmigrate with PyInstaller into dist/zmigrate/, then smoke-test the frozen app:
# `--version` and an offscreen `--self-test` (window shown, plot drawn) must both succeed.
#
#   packaging/build.sh            uses .venv/bin/python if present, else python3 (or $PYTHON)
set -euo pipefail
cd "$(dirname "$0")/.."

PY="${PYTHON:-}"
if [ -z "$PY" ]; then
  if [ -x .venv/bin/python ]; then PY=.venv/bin/python; else PY=python3; fi
fi
if ! "$PY" -c "import PyInstaller" 2>/dev/null; then
  echo "build.sh: PyInstaller is missing: $PY -m pip install -e '.[package]'" >&2
  exit 1
fi

rm -rf dist/zmigrate
"$PY" -m PyInstaller --noconfirm --clean --log-level WARN \
  --distpath dist --workpath build/pyinstaller packaging/zmigrate.spec

app=dist/zmigrate/zmigrate
[ -x "$app" ] || { echo "build.sh: $app was not built" >&2; exit 1; }

echo "== $app --version"
version="$("$app" --version)"
echo "$version"
case "$version" in
  "zmigrate "[0-9]*) ;;
  *) echo "build.sh: unexpected --version output: $version" >&2; exit 1 ;;
esac

echo "== QT_QPA_PLATFORM=offscreen $app --self-test"
out="$(QT_QPA_PLATFORM=offscreen timeout 120 "$app" --self-test 2>&1)" || {
  echo "$out" >&2
  echo "build.sh: the frozen app's --self-test failed" >&2
  exit 1
}
echo "$out"
if grep -qE "ImportError|ModuleNotFoundError|Fatal Python error|could not load the Qt platform" \
    <<<"$out"; then
  echo "build.sh: the self-test printed a fatal marker" >&2
  exit 1
fi
grep -qx "self-test ok" <<<"$out" || { echo "build.sh: no 'self-test ok' line" >&2; exit 1; }

echo "== built $(du -sh dist/zmigrate | cut -f1) in dist/zmigrate/"
