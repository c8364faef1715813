#!/usr/bin/env bash
# Install si_agent into .venv and start it on its embedded defaults:
# gunicorn, rule engine, SQLite sessions, the built-in demo backend, a Milvus Lite
# knowledge base built in the background on first start (from the shipped vectors), the photo steps (ID-card OCR, face match) with
# their models from the wheels; no API key, no external service.
# Usage: scripts/run.sh [si-agent arguments...]
#   default: serve the web page and API on http://127.0.0.1:8000/
#   scripts/run.sh chat     chat in the terminal instead
set -euo pipefail
cd "$(dirname "$0")/.."

. scripts/venv.sh
ensure_venv run rag,dates,photo,ocr
export SI_SESSION_STORE=${SI_SESSION_STORE:-sqlite}
if [ "$#" -eq 0 ]; then
  set -- serve
fi
exec .venv/bin/si-agent "$@"
