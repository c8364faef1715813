#!/usr/bin/env bash
# Refresh the dependency locks: requirements/NAME.lock for every `ensure_venv NAME EXTRAS`
# in scripts/*.sh, and for each `lock NAME EXTRAS` line below (installs outside the
# scripts: the container image of deploy/Dockerfile), resolved from pyproject.toml for Python 3.11 on linux x86_64 with a
# sha256 hash for every file (scripts/venv.sh installs them with --require-hashes).
# Versions already in a lock are kept while they still satisfy pyproject.toml; pass
# --upgrade to move everything to the newest allowed, or --upgrade-package NAME for one.
# Runs uv (pinned below) from its own virtual environment under ~/.cache; takes ~10 s
# with a warm cache, about a minute on a fresh machine.
# Usage: scripts/lock.sh [--upgrade | --upgrade-package NAME ...]
set -euo pipefail
cd "$(dirname "$0")/.."

UV_VERSION=0.13.9
PYTHON_VERSION=3.11
PLATFORM=x86_64-manylinux_2_28

tools=${XDG_CACHE_HOME:-$HOME/.cache}/si-agent/uv-$UV_VERSION
if [ ! -x "$tools/bin/uv" ]; then
  "${PYTHON:-python3}" -m venv "$tools"
  "$tools/bin/python" -m pip install --quiet --disable-pip-version-check "uv==$UV_VERSION"
fi

mkdir -p requirements
# Installs outside scripts/*.sh (tests/packaging/test_locks.py reads these lines too):
# lock deploy server,rag,llm,dates,jobs,rpa
sets=$( { grep -ho '^[[:space:]]*ensure_venv [a-z0-9_-]\+ [a-z0-9_,-]\+' scripts/*.sh
          grep -o '^# lock [a-z0-9_-]\+ [a-z0-9_,-]\+' "$0" | sed 's/^# lock/ensure_venv/'; } | sort -u)
[ -n "$sets" ] || { echo "no 'ensure_venv NAME EXTRAS' call in scripts/*.sh" >&2; exit 1; }
while read -r _ name extras; do
  lock=requirements/$name.lock
  args=()
  for extra in ${extras//,/ }; do args+=(--extra "$extra"); done
  echo "locking $lock (extras: $extras)" >&2
  "$tools/bin/uv" pip compile pyproject.toml "${args[@]}" "$@" \
    --generate-hashes --python-version "$PYTHON_VERSION" --python-platform "$PLATFORM" \
    --custom-compile-command "scripts/lock.sh" --quiet --output-file "$lock"
  # venv.sh checks this line: a lock is used only for the extras it was made for.
  { echo "# extras: $extras"; grep -v '^# extras: ' "$lock"; } > "$lock.tmp"
  mv "$lock.tmp" "$lock"
done <<< "$sets"
# The installer scripts/venv.sh puts into each .venv first (this same uv), pinned by hash.
echo "locking requirements/uv.lock (uv $UV_VERSION)" >&2
echo "uv==$UV_VERSION" | "$tools/bin/uv" pip compile - --generate-hashes \
  --custom-compile-command "scripts/lock.sh" --quiet --output-file requirements/uv.lock
