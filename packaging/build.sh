#!/usr/bin/env bash
# Freeze zmigrate with PyInstaller into dist/zmigrate/ from pinned versions, then smoke-test the
# frozen app: `--version` and an offscreen `--self-test` (window shown, plot drawn) must both
# succeed. Prints the bundle's size.
#
#   packaging/build.sh            the pinned build (what CI and the .deb ship)
#   PYTHON=.venv/bin/python packaging/build.sh
#                                 freeze from an existing environment as it is (a quick try;
#                                 not the pinned versions)
#
# The pinned build runs in build/package-venv, made from requirements/package.txt (every
# version and file hash; packaging/lock.sh regenerates it on purpose) and remade whenever the
# lock files change. numpy is built there from its source without OpenBLAS (-Dblas=none
# -Dlapack=none: numpy's own small fallback routines): the plots never multiply a matrix, and
# the wheel's OpenBLAS and gfortran were 28 MB of the bundle. Its build tools are pinned too
# (requirements/build.txt, no build isolation). The first build compiles numpy (minutes); pip
# keeps the wheel in its cache for the next.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"

# objdump, strip: the spec's pruning and stripping; icupkg, cc: packaging/trim_icu.py;
# g++ and the Python headers: numpy's source build.
bash packaging/need-debs.sh build.sh binutils gcc g++ icu-devtools python3-venv python3-dev

PY="${PYTHON:-}"
if [ -n "$PY" ]; then
  echo "== build.sh: freezing with $PY as it is (PYTHON is set): not the pinned versions"
else
  venv=build/package-venv
  lock="$(cat requirements/package.txt requirements/build.txt | sha256sum | cut -c1-16)"
  if [ ! -f "$venv/.lock-$lock" ]; then
    echo "== build.sh: $venv from requirements/package.txt (numpy from source, no OpenBLAS)"
    rm -rf "$venv"
    /usr/bin/python3 -m venv "$venv"
    "$venv/bin/python" -m pip install -q --require-hashes --no-deps -r requirements/build.txt
    PATH="$root/$venv/bin:$PATH" "$venv/bin/python" -m pip install -q --require-hashes \
      --no-deps --no-build-isolation --no-binary numpy \
      --config-settings=setup-args=-Dblas=none --config-settings=setup-args=-Dlapack=none \
      -r requirements/package.txt
    touch "$venv/.lock-$lock"
  fi
  PY="$venv/bin/python"
  # pip's wheel cache might hand back a numpy built elsewhere with OpenBLAS: refuse that one.
  if ! "$PY" -c "import numpy, pathlib, sys
sys.exit(pathlib.Path(numpy.__file__).parent.with_name('numpy.libs').exists())"; then
    echo "build.sh: $venv has a numpy with OpenBLAS (numpy.libs); rm -rf $venv and" \
      "clear it from pip's cache (pip cache remove numpy)" >&2
    exit 1
  fi
fi
if ! "$PY" -c "import PyInstaller" 2>/dev/null; then
  echo "build.sh: PyInstaller is missing from $PY" >&2
  exit 1
fi

rm -rf dist/zmigrate
# zmigrate itself is frozen from this checkout (the spec puts it on the path).
# A fixed hash seed: the same module order in base_library.zip on every build.
PYTHONHASHSEED=0 PYTHONPATH="$root" "$PY" -m PyInstaller --noconfirm --clean --log-level WARN \
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

bytes="$(du -sb dist/zmigrate | cut -f1)"
files="$(find dist/zmigrate -type f | wc -l)"
echo "== built dist/zmigrate/: $((bytes / 1000000)) MB unpacked ($bytes bytes, $files files)"
