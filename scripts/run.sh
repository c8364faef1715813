#!/usr/bin/env bash
# Install si_agent into .venv and start it on its embedded defaults:
# gunicorn, rule engine, SQLite sessions, the built-in demo backend, a Milvus Lite
# knowledge base built in the background on first start (from the shipped vectors),
# the photo steps (ID-card OCR, face match) with their models from the wheels,
# Playwright for the web-form examples (examples/portal, with Debian's chromium);
# no API key, no external service.
# Usage: scripts/run.sh [si-agent arguments...]  (any si-agent command, run from .venv)
#   default: serve the web page and API on http://127.0.0.1:8000/
#   scripts/run.sh chat                    chat in the terminal instead
#   scripts/run.sh validate [DIR]          check business YAML (default: businesses/)
#   scripts/run.sh replay tests/dialogues  replay dialogue transcripts
#   scripts/run.sh portal                  the demo government portal (docs/demo-portal.md)
# The command runs in the directory it was called from, as si-agent itself would:
# relative paths (DIR, transcripts, SI_BUSINESS_DIR=...) are the caller's. The data
# directory stays the repository's data/ unless SI_DATA_DIR says otherwise.
set -euo pipefail
caller=$PWD
cd "$(dirname "$0")/.."
repo=$PWD

. scripts/venv.sh
ensure_venv run rag,dates,photo,ocr,rpa,voice
keep_bytecode
export SI_SESSION_STORE=${SI_SESSION_STORE:-sqlite}
export SI_DATA_DIR=${SI_DATA_DIR:-$repo/data}
if [ "$#" -eq 0 ]; then
  set -- serve
fi
cd "$caller"
exec "$repo/.venv/bin/si-agent" "$@"
