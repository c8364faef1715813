#!/usr/bin/env bash
# Install the test dependencies into .venv and run every test: lint, config validation,
# unit, Redis, dialogue and model-mode replays, knowledge base, API fuzzing, gunicorn, browser.
# Usage: scripts/test.sh [pytest args...]
set -euo pipefail
cd "$(dirname "$0")/.."

. scripts/venv.sh
ensure_venv test test,rag
# Test processes (gunicorn, the CLI, replays) import the whole package again each: keep
# their bytecode (on this machine a CLI test file took 43 s recompiling, 25 s with it).
keep_bytecode

# The Redis tests run for real: start a server when nothing answers on 6379.
redis_up() {
  (exec 3<>/dev/tcp/127.0.0.1/6379 && printf 'PING\r\n' >&3 && timeout 2 head -c 5 <&3 | grep -q PONG) 2>/dev/null
}
# The fault and rate-limit tests also start (and kill) redis-servers of their own: the
# program must be installed even where a Redis already answers.
if ! command -v redis-server >/dev/null 2>&1; then
  echo "installing redis-server" >&2
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >/dev/null
fi
if ! redis_up; then
  redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no \
    --logfile /tmp/si-agent-redis.log
  for _ in $(seq 1 50); do redis_up && break; sleep 0.1; done
  redis_up || { echo "redis-server did not start" >&2; exit 1; }
fi

# Browser tests drive Debian's Chromium through Playwright (no browser download).
if [ ! -x /usr/bin/chromium ]; then
  echo "installing chromium" >&2
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium fonts-noto-cjk >/dev/null
fi
export SI_REQUIRE_BROWSER=1
# The accessibility tests load axe-core into the page: the npm package, pinned (with its
# hash) by tests/browser/axe/package-lock.json.
if ! command -v npm >/dev/null 2>&1; then
  echo "installing npm" >&2
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null
fi
npm ci --prefix tests/browser/axe --ignore-scripts --no-audit --no-fund --loglevel=error

# The API benchmark's test drives gunicorn with wrk (scripts/wrk_dialogue.lua).
if ! command -v wrk >/dev/null 2>&1; then
  echo "installing wrk" >&2
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >/dev/null
fi
export SI_REQUIRE_WRK=1

# The ID-card OCR tests render synthetic cards with Debian's Noto CJK fonts.
if [ ! -e /usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc ]; then
  echo "installing fonts-noto-cjk" >&2
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq fonts-noto-cjk >/dev/null
fi

.venv/bin/ruff check si_agent rag tests scripts
# Layer rules ([tool.importlinter] in pyproject.toml) and types ([tool.mypy]: core, flow,
# engine, executor, jobs).
.venv/bin/lint-imports
.venv/bin/mypy
.venv/bin/si-agent validate businesses
.venv/bin/python -m pytest "$@"
