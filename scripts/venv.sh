# Sourced by run.sh and test.sh: make .venv (once) and install the project with
# the extras given, e.g. `ensure_venv rag` or `ensure_venv test,rag`.
ensure_venv() {
  local python=${PYTHON:-python3}
  if [ ! -x .venv/bin/python ]; then
    "$python" -m venv .venv
  fi
  .venv/bin/python -m pip install --quiet --disable-pip-version-check -e ".[$1]"
}
