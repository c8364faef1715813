#!/usr/bin/env bash
# Install si_agent into .venv and start it on its embedded defaults:
# rule engine, SQLite sessions, the built-in demo backend; no API key, no service.
# Usage: scripts/run.sh [si-agent arguments...]
#   default: serve the web page and API on http://127.0.0.1:8000/
#   scripts/run.sh chat     chat in the terminal instead
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --disable-pip-version-check -e '.[rag]'
export SI_SESSION_STORE=${SI_SESSION_STORE:-sqlite}
if [ "$#" -eq 0 ]; then
  set -- serve
fi
exec .venv/bin/si-agent "$@"
