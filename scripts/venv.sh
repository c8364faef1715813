# Sourced by run.sh and test.sh: make .venv (once), install the locked dependencies of one
# set, then the project itself (editable, without dependencies); keep_bytecode.
# Usage: ensure_venv NAME EXTRAS, e.g. `ensure_venv test test,rag`: installs
# requirements/NAME.lock with --require-hashes (every file checked against the lock's
# sha256). scripts/lock.sh makes each lock from the EXTRAS named in these calls.
# The installer is uv (requirements/uv.lock, itself installed by pip with its hashes
# checked), several times faster than pip; it uses .venv's own Python (never downloads
# one). SI_INSTALLER=pip uses pip instead, as does a machine where uv cannot be installed.
ensure_venv() {
  local name=$1 extras=$2 python=${PYTHON:-python3}
  local lock=requirements/$name.lock pip_quiet=(--quiet --disable-pip-version-check)
  if ! grep -qx "# extras: $extras" "$lock" 2>/dev/null; then
    echo "$lock is missing or not made for the extras '$extras': run scripts/lock.sh" >&2
    return 1
  fi
  if [ ! -x .venv/bin/python ]; then
    "$python" -m venv .venv
  fi
  # Nothing to do when this same lock and pyproject.toml were the last installed (a
  # second start); another set (run after test) installs again.
  local stamp=.venv/.si-installed want
  want="$name $(cat "$lock" pyproject.toml | sha256sum | cut -d' ' -f1)"
  if [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
    return 0
  fi
  rm -f "$stamp"
  if [ "${SI_INSTALLER:-uv}" = uv ] && { [ -x .venv/bin/uv ] ||
       .venv/bin/python -m pip install "${pip_quiet[@]}" --require-hashes -r requirements/uv.lock; }; then
    local uv=(env UV_PYTHON_DOWNLOADS=never .venv/bin/uv pip install --quiet --python .venv/bin/python)
    "${uv[@]}" --require-hashes -r "$lock"
    "${uv[@]}" --no-deps -e .
  else
    [ "${SI_INSTALLER:-uv}" = pip ] || echo "uv could not be installed: installing with pip" >&2
    .venv/bin/python -m pip install "${pip_quiet[@]}" --require-hashes -r "$lock"
    .venv/bin/python -m pip install "${pip_quiet[@]}" --no-deps -e .
  fi
  echo "$want" > "$stamp"
}

# Keep Python's compiled bytecode between runs. With PYTHONDONTWRITEBYTECODE set (as in
# many containers, this machine's included) every start compiled again the ~1,600 modules
# a server imports: 4 s of CPU before the first knowledge answer on a 2-core machine
# (docs/performance.md, "Start-up"). The bytecode goes under .venv/pycache
# (PYTHONPYCACHEPREFIX), not next to the sources; a prefix already set is kept.
keep_bytecode() {
  if [ -n "${PYTHONDONTWRITEBYTECODE:-}" ]; then
    unset PYTHONDONTWRITEBYTECODE
    export PYTHONPYCACHEPREFIX=${PYTHONPYCACHEPREFIX:-$PWD/.venv/pycache}
  fi
}
