"""Benchmark the rpa executor on generated variants of the demo portal's web forms.

Starts the demo portal (``si-agent portal``) in a subprocess on a free port with
its own data dir, draws ``--variants`` form variants (``?variant=<seed>``, see
``si_agent/demo_portal/variants.py``) round-robin over the four web-form
businesses of ``examples/portal/businesses`` (valid demo data: 张伟, with options,
cities and dates drawn per case), and runs the rpa executor directly on each, one
``RpaExecutor`` with one reused Chromium, twice:

- clean: success means the executor returned a 受理编号 and the portal stored that
  application with the values sent (by business key, options as the option);
- injected (``&inject=<a business field>``, drawn per case): correct means the
  executor raised the per-field error for exactly that field with the portal's
  own reason, and its per-field table (trace ``fields.json``) marks that field,
  and only it, 填写失败 with that reason.

Then, unless ``--no-celery``, the throughput of Celery workers: ``si-agent
worker`` subprocesses (``SI_JOB_BACKEND=celery``) on Redis (sessions and jobs in
``--redis-url``, broker in ``--broker-db``, a fresh key prefix), 1 and then 2 of
them; ``--jobs`` dialogues are brought up to 确认 through a controller in this
process, then all confirmed at once, timed until every session has left
``executing``. Each worker count first runs one warm-up job per worker.

Prints markdown tables; failing cases are listed with their trace directory
(``actions.log``, ``fields.json``, screenshots) under the printed data dir.

    PYTHONPATH=. python scripts/bench_rpa.py [--variants 50] [--seed 7] [--no-celery]
        [--jobs 12] [--redis-url redis://127.0.0.1:6379/13] [--broker-db 12]
        [--data-dir DIR] [--chromium /usr/bin/chromium]
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import random
import statistics
import sys
import tempfile
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx

from si_agent.config.loader import load_businesses
from si_agent.config.model import Business
from si_agent.config.settings import Settings
from si_agent.demo_backend import clock
from si_agent.demo_portal.forms import CARD_BANKS, TRANSFER_CITIES, Form, find_form
from si_agent.demo_portal.variants import injected_message, variant_form
from si_agent.errors import ExecutorError
from si_agent.executor import Executors, JobContext
from si_agent.executor.rpa import RpaExecutor
from si_agent.executor.rpa.form import normalize, synonyms
from si_agent.testing.processes import PORTAL_PASSWORD, PORTAL_USER, demo_portal, start_cli, stop

ROOT = Path(__file__).resolve().parents[1]
BUSINESSES = ROOT / "examples" / "portal" / "businesses"
BUSINESS_IDS = ("social_transfer", "card_apply", "unemployment_benefit", "medical_filing")
ZHANG = {"name": "张伟", "id_number": "330122196303150178", "phone": "13800138001"}
OPEN_CITIES = [c for c in TRANSFER_CITIES if c not in ("拉萨市", "西宁市")]
MEDICAL_CITIES = ("杭州市", "北京市", "上海市", "苏州市", "南京市", "广州市", "成都市", "武汉市")
ADDRESSES = ("浙江省杭州市西湖区文三路100号", "江苏省苏州市工业园区星湖街1号")
BANK_CARDS = ("6222021202004568821",)
FAILED = "填写失败"


@dataclass
class Case:
    business_id: str
    seed: int  # the variant's
    values: dict[str, Any]
    inject: str

    @property
    def form(self) -> Form:
        return variant_form(find_form(self.business_id, 1), self.seed)


@dataclass
class Run:
    case: Case
    injected: bool
    seconds: float
    ok: bool
    detail: str = ""
    trace: Path | None = None


@dataclass
class Throughput:
    workers: int
    jobs: int
    done: int
    seconds: float
    states: Counter = field(default_factory=Counter)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--variants", type=int, default=50, help="form variants (cases)")
    ap.add_argument("--seed", type=int, default=7, help="draws the variants, values, injections")
    ap.add_argument("--no-celery", action="store_true", help="skip the Celery throughput")
    ap.add_argument("--jobs", type=int, default=12, help="timed jobs per worker count")
    ap.add_argument("--redis-url", default="redis://127.0.0.1:6379/13")
    ap.add_argument("--broker-db", type=int, default=12)
    ap.add_argument("--data-dir", type=Path, default=None, help="default: a new temporary dir")
    ap.add_argument("--chromium", default=os.environ.get("SI_RPA_CHROMIUM", "/usr/bin/chromium"))
    args = ap.parse_args()
    logging.basicConfig(level=logging.ERROR)

    data_dir = args.data_dir or Path(tempfile.mkdtemp(prefix="si-bench-rpa-"))
    settings = Settings(business_dir=BUSINESSES, data_dir=data_dir / "direct",
                        session_store="memory", knowledge="none", rpa_chromium=args.chromium)
    catalog = load_businesses(BUSINESSES)
    cases = draw_cases(catalog, args.variants, args.seed)
    with demo_portal(data_dir / "portal") as portal:
        os.environ.update(SI_PORTAL_URL=portal, SI_PORTAL_USER=PORTAL_USER,
                          SI_PORTAL_PASSWORD=PORTAL_PASSWORD)
        runs = run_direct(settings, catalog, cases, portal)
        throughput = [] if args.no_celery else run_celery(args, data_dir, portal)
    report(args, data_dir, runs, throughput)
    return 0


# -- cases --------------------------------------------------------------------------


def draw_cases(catalog: dict[str, Business], count: int, seed: int) -> list[Case]:
    """``count`` variants round-robin over the businesses, with valid values and an
    injected field each."""
    rng = random.Random(seed)
    today = clock.today()
    cases = []
    for i in range(count):
        business_id = BUSINESS_IDS[i % len(BUSINESS_IDS)]
        business = catalog[business_id]
        values = _values(business, rng, today)
        cases.append(Case(business_id, rng.randrange(1_000_000), values,
                          rng.choice([f.key for f in business.fields])))
    return cases


def _values(business: Business, rng: random.Random, today) -> dict[str, Any]:
    """Valid values of every field of ``business``, as a dialogue would collect them."""
    from_city, to_city = rng.sample(OPEN_CITIES, 2)
    insured, destination = rng.sample(MEDICAL_CITIES, 2)
    drawn = {
        **ZHANG, "from_city": from_city, "to_city": to_city, "insured_city": insured,
        "destination_city": destination, "bank": rng.choice(CARD_BANKS),
        "mailing_address": rng.choice(ADDRESSES), "bank_card": rng.choice(BANK_CARDS),
        "separation_date": (today - timedelta(days=rng.randint(1, 90))).isoformat(),
        "start_date": (today + timedelta(days=rng.randint(0, 30))).isoformat(),
    }
    values = {}
    for f in business.fields:
        values[f.key] = rng.choice(f.options).value if f.options else drawn[f.key]
    return values


# -- the executor, directly ---------------------------------------------------------------


def run_direct(settings: Settings, catalog: dict[str, Business], cases: list[Case],
               portal: str) -> list[Run]:
    executor = RpaExecutor(settings.data_dir / "rpa", chromium=settings.rpa_chromium)
    executors = Executors(settings)
    runs = []
    try:
        for n, case in enumerate(cases, start=1):
            for injected in (False, True):
                runs.append(_one(executor, executors, catalog[case.business_id], case,
                                 injected, portal))
            print(f"case {n}/{len(cases)} {case.business_id} v{case.seed}: "
                  + ", ".join("ok" if r.ok else "FAILED" for r in runs[-2:]), file=sys.stderr)
    finally:
        executor.close()
    return runs


def _one(executor: RpaExecutor, executors: Executors, business: Business, case: Case,
         injected: bool, portal: str) -> Run:
    query = f"?variant={case.seed}" + (f"&inject={case.inject}" if injected else "")
    options = executors.options(business).model_copy(
        update={"url": f"{portal}/forms/{case.business_id}{query}"})
    job_id = f"{case.business_id}-v{case.seed}-{'inject' if injected else 'clean'}"
    trace = executor.trace_dir / job_id
    started = time.perf_counter()
    result, error = None, None
    try:
        result = executor.run(business, case.values, idempotency_key=uuid.uuid4().hex,
                              options=options, job=JobContext(id=job_id))
    except ExecutorError as exc:
        error = exc
    seconds = time.perf_counter() - started
    if injected:
        ok, detail = _check_injected(case, error, trace)
    else:
        ok, detail = _check_clean(case, result, error, portal)
    return Run(case, injected, seconds, ok, detail, trace)


def _check_clean(case: Case, result: dict | None, error: ExecutorError | None,
                 portal: str) -> tuple[bool, str]:
    if error is not None:
        return False, _error_text(error)
    number = result.get("application_no")
    stored = next((a for a in httpx.get(portal + "/_admin/applications").json()
                   if a["application_no"] == number), None)
    if stored is None:
        return False, f"no application {number} at the portal"
    wrong = {k: stored["values"].get(k) for k, v in case.values.items()
             if stored["values"].get(k) != v}
    if wrong:
        return False, "stored differently: " + json.dumps(wrong, ensure_ascii=False)
    return True, ""


def _check_injected(case: Case, error: ExecutorError | None, trace: Path) -> tuple[bool, str]:
    if error is None:
        return False, "submitted: the injected refusal was not seen"
    reason = injected_message(case.form, case.inject)
    problems = []
    if error.field_errors != {case.inject: reason}:
        problems.append(_error_text(error))
    table = json.loads((trace / "fields.json").read_text("utf-8"))
    failed = [(f["key"], f["reason"]) for f in table if f["status"] == FAILED]
    if failed != [(case.inject, reason)]:
        problems.append("fields.json 填写失败: " + json.dumps(failed, ensure_ascii=False))
    return not problems, "; ".join(problems)


def _error_text(error: ExecutorError) -> str:
    fields = json.dumps(error.field_errors, ensure_ascii=False) if error.field_errors else ""
    return f"{error.message} {fields}".strip()


def unknown_labels(case: Case) -> list[str]:
    """Labels of the variant that the executor knows neither as the field's label
    nor as a synonym (a hint for a failure, not a verdict)."""
    catalog_label = {f.key: f.label for f in load_businesses(BUSINESSES)[case.business_id].fields}
    out = []
    for f in case.form.fields:
        if f.key in catalog_label:
            known = {normalize(catalog_label[f.key]), *synonyms().get(f.key, ())}
            if normalize(f.label) not in known:
                out.append(f"{f.key}={f.label}")
    return out


# -- Celery ---------------------------------------------------------------------------


def dialogues() -> dict[str, list[str]]:
    """Rule-engine dialogues of each business up to the confirmation (as in tests/rpa)."""
    ago, ahead = (clock.today() + timedelta(days=d) for d in (-30, 10))
    return {
        "social_transfer": ["我要把社保从杭州转到苏州", ZHANG["id_number"], "张伟"],
        "card_apply": ["我要申请社保卡", "张伟", ZHANG["id_number"], "13800138001", "建行",
                       "浙江省杭州市西湖区文三路100号"],
        "unemployment_benefit": ["我要申领失业金", ZHANG["id_number"], "张伟", "13800138001",
                                 ago.isoformat(), "合同到期", "6222021202004568821"],
        "medical_filing": ["我要办异地就医备案", ZHANG["id_number"], "张伟", "杭州", "北京",
                           "临时外出就医", ahead.isoformat()],
    }


def run_celery(args: argparse.Namespace, data_dir: Path, portal: str) -> list[Throughput]:
    import redis

    from si_agent.app import build_controller
    from si_agent.session.redis import redis_reachable

    if not redis_reachable(args.redis_url, timeout=1.0):
        print(f"Redis at {args.redis_url} does not answer: no Celery numbers", file=sys.stderr)
        return []
    prefix = f"si_agent:bench_rpa:{uuid.uuid4().hex[:10]}:"
    broker = args.redis_url.rsplit("/", 1)[0] + f"/{args.broker_db}"
    env = {**os.environ, "SI_BUSINESS_DIR": str(BUSINESSES), "SI_DATA_DIR": str(data_dir / "celery"),
           "SI_SESSION_STORE": "redis", "SI_REDIS_URL": args.redis_url,
           "SI_REDIS_PREFIX": prefix + "session:", "SI_JOB_BACKEND": "celery",
           "SI_CELERY_BROKER": broker, "SI_KNOWLEDGE": "none", "SI_RPA_CHROMIUM": args.chromium}
    redis.Redis.from_url(broker).flushdb()
    ctl = build_controller(Settings.from_env(env), engine="rules")
    results = []
    try:
        for workers in (1, 2):
            procs = [start_cli(env, "worker", "--loglevel", "warning",
                               log=data_dir / f"worker-{workers}-{i}.log")
                     for i in range(workers)]
            try:
                _confirm_all(ctl, [f"warm-{workers}-{i}" for i in range(workers)], timeout=120)
                users = [f"bench-{workers}-{i}" for i in range(args.jobs)]
                results.append(_confirm_all(ctl, users, workers=workers))
            finally:
                for proc in procs:
                    stop(proc)
    finally:
        client = redis.Redis.from_url(args.redis_url)
        keys = list(client.scan_iter(match=prefix + "*"))
        if keys:
            client.delete(*keys)
        redis.Redis.from_url(broker).flushdb()
    return results


def _confirm_all(ctl: Any, users: list[str], *, workers: int = 0,
                 timeout: float = 600.0) -> Throughput:
    """Bring each user's dialogue up to 确认, then confirm all and time until done."""
    scripts = list(dialogues().values())
    for i, user in enumerate(users):
        for text in scripts[i % len(scripts)]:
            ctl.handle(user, text)
    started = time.perf_counter()
    for user in users:
        turn = ctl.handle(user, "确认")
        if turn.state != "executing":
            raise RuntimeError(f"{user}: 确认 gave {turn.state}: {turn.reply}")
    states: dict[str, str] = {}
    deadline = time.monotonic() + timeout
    while len(states) < len(users) and time.monotonic() < deadline:
        for user in users:
            if user not in states:
                turn = ctl.current(user)
                if turn.state != "executing":
                    states[user] = turn.state
        time.sleep(0.1)
    seconds = time.perf_counter() - started
    counted = Counter(states.values())
    counted["still executing"] = len(users) - len(states)
    return Throughput(workers, len(users), counted["done"], seconds, +counted)


# -- the report ----------------------------------------------------------------------


def report(args: argparse.Namespace, data_dir: Path, runs: list[Run],
           throughput: list[Throughput]) -> None:
    clean = [r for r in runs if not r.injected]
    injected = [r for r in runs if r.injected]
    print(f"# rpa executor on {len(clean)} form variants (seed {args.seed})\n")
    print(f"Data dir (portal DB, traces under direct/rpa/<business>-v<seed>-<clean|inject>/): "
          f"`{data_dir}`; Chromium `{args.chromium}`, one browser reused, a context per job; "
          f"{os.cpu_count()} CPUs.\n")
    print("| Business | Variants | Two-page | Clean: submitted and stored | "
          "Injected: exactly that field 填写失败 with the portal's reason | Mean s/job |")
    print("|---|---:|---:|---:|---:|---:|")
    for business_id in BUSINESS_IDS:
        mine = [r for r in runs if r.case.business_id == business_id]
        c = [r for r in mine if not r.injected]
        i = [r for r in mine if r.injected]
        two = sum(len(r.case.form.pages) == 2 for r in c)
        print(f"| {business_id} | {len(c)} | {two} | {_ratio(c)} | {_ratio(i)} | "
              f"{statistics.mean(r.seconds for r in mine):.2f} |")
    print(f"| **all** | {len(clean)} | {sum(len(r.case.form.pages) == 2 for r in clean)} | "
          f"**{_ratio(clean)}** (target ≥ 95%) | **{_ratio(injected)}** (target 100%) | "
          f"{statistics.mean(r.seconds for r in runs):.2f} |\n")

    print("| Seconds per job | Jobs | Mean | p50 | p95 | Max |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, group in (("clean (submitted)", clean), ("injected (refused)", injected),
                        ("all", runs)):
        s = sorted(r.seconds for r in group)
        print(f"| {name} | {len(s)} | {statistics.mean(s):.2f} | {_pct(s, 50):.2f} | "
              f"{_pct(s, 95):.2f} | {s[-1]:.2f} |")
    print()

    if throughput:
        print("| Celery workers | Jobs | Done | Seconds | Jobs per minute | Outcomes |")
        print("|---:|---:|---:|---:|---:|---|")
        for t in throughput:
            outcomes = ", ".join(f"{k} {v}" for k, v in t.states.items())
            print(f"| {t.workers} | {t.jobs} | {t.done} | {t.seconds:.1f} | "
                  f"{t.done / t.seconds * 60:.1f} | {outcomes} |")
        print("\n(Jobs are whole dialogues confirmed at once through a controller with "
              "Redis sessions; the four default forms round-robin; one warm-up job per "
              "worker first.)\n")
    elif not args.no_celery:
        print("Celery: not measured (Redis did not answer).\n")

    failed = [r for r in runs if not r.ok]
    if failed:
        print("| Failed run | Injected field | What happened | Labels the executor does not "
              "know | Trace |")
        print("|---|---|---|---|---|")
        for r in failed:
            inject = r.case.inject if r.injected else "-"
            print(f"| {r.case.business_id} variant {r.case.seed} "
                  f"({'injected' if r.injected else 'clean'}) | {inject} | {r.detail} | "
                  f"{', '.join(unknown_labels(r.case)) or '-'} | `{r.trace}` |")
    else:
        print("No failed runs.")


def _ratio(runs: list[Run]) -> str:
    ok = sum(r.ok for r in runs)
    return f"{ok}/{len(runs)} ({100 * ok / len(runs):.0f}%)" if runs else "-"


def _pct(sorted_values: list[float], pct: int) -> float:
    """Nearest-rank percentile of sorted values."""
    rank = max(1, -(-pct * len(sorted_values) // 100))
    return sorted_values[rank - 1]


if __name__ == "__main__":
    sys.exit(main())
