"""Compare date parsers on colloquial Chinese dates: coverage, import time, memory.

    PYTHONPATH=. python scripts/bench_dates.py [--runs 3]

Candidates, each run in fresh subprocesses:

- ``regex``: the hand-written regexes of ``si_agent.validators.dates`` alone
  (``_parse_date``, the code before relative dates, now the fast path);
- ``jionlp``: ``jionlp.parse_time`` on the whole expression;
- ``dateparser``: ``dateparser.parse(languages=["zh"])`` with today as the
  relative base;
- ``si_agent``: ``check("date", ...)`` as shipped (regex fast path, then
  jionlp), its span read with ``date_span="start"`` and ``"end"``.

Every corpus entry says what a correct reading is, relative to TODAY: one
exact day; a span (several days) inside a window; any reading inside a
window (for vague words such as "三个月前"); or no date at all (durations,
ages). Import time is the median of ``--runs`` fresh interpreters timing the
import; memory is the growth of peak RSS from before the import to after
parsing the whole corpus. Prints a markdown table.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from datetime import date

TODAY = date(2026, 12, 1)  # a Tuesday


def day(iso: str) -> tuple:
    return ("day", iso)


def span(first: str, last: str) -> tuple:
    """A reading of several days, all inside [first, last]."""
    return ("span", first, last)


def within(first: str, last: str) -> tuple:
    """Any reading (a day or a span) inside [first, last]."""
    return ("within", first, last)


NOT_A_DATE = ("none",)

# expression -> acceptable readings (any one of them)
CORPUS: dict[str, tuple[tuple, ...]] = {
    # Absolute forms: the regexes already read these.
    "2024-03-05": (day("2024-03-05"),),
    "2024/3/5": (day("2024-03-05"),),
    "2024.3.5": (day("2024-03-05"),),
    "20240305": (day("2024-03-05"),),
    "2024年3月5日": (day("2024-03-05"),),
    "2024年03月05号": (day("2024-03-05"),),
    "二〇二四年三月五日": (day("2024-03-05"),),
    "24年3月5日": (day("2024-03-05"),),
    "2023年十月二十日": (day("2023-10-20"),),
    "今天": (day("2026-12-01"),),
    "昨天": (day("2026-11-30"),),
    "前天": (day("2026-11-29"),),
    "去年6月30号": (day("2025-06-30"),),
    "6月30号": (day("2026-06-30"), day("2027-06-30")),
    "上个月15号": (day("2026-11-15"),),
    "下个月15号": (day("2027-01-15"),),
    # Days relative to today.
    "明天": (day("2026-12-02"),),
    "后天": (day("2026-12-03"),),
    "大前天": (day("2026-11-28"),),
    "大后天": (day("2026-12-04"),),
    "三天前": (day("2026-11-28"),),
    "3天前": (day("2026-11-28"),),
    "十天前": (day("2026-11-21"),),
    # Weeks.
    "下周一": (day("2026-12-07"),),
    "上周三": (day("2026-11-25"),),
    "这周五": (day("2026-12-04"),),
    "本周一": (day("2026-11-30"),),
    "上上周五": (day("2026-11-20"),),
    "下下周三": (day("2026-12-16"),),
    "上星期五": (day("2026-11-27"),),
    "上礼拜五": (day("2026-11-27"),),
    "周一": (day("2026-11-30"), day("2026-12-07")),
    "上周末": (within("2026-11-28", "2026-11-29"),),
    # Parts of a month: the end is its last day, the rest are spans.
    "月底": (day("2026-12-31"), span("2026-12-21", "2026-12-31")),
    "本月底": (day("2026-12-31"), span("2026-12-21", "2026-12-31")),
    "上月底": (day("2026-11-30"), span("2026-11-21", "2026-11-30")),
    "上个月底": (day("2026-11-30"), span("2026-11-21", "2026-11-30")),
    "上月末": (day("2026-11-30"), span("2026-11-21", "2026-11-30")),
    "下个月底": (day("2027-01-31"), span("2027-01-21", "2027-01-31")),
    "去年11月底": (day("2025-11-30"), span("2025-11-21", "2025-11-30")),
    "月初": (span("2026-12-01", "2026-12-10"),),
    "上个月初": (span("2026-11-01", "2026-11-10"),),
    "下个月初": (span("2027-01-01", "2027-01-10"),),
    "上旬": (span("2026-12-01", "2026-12-10"),),
    "中旬": (span("2026-12-11", "2026-12-20"),),
    "下旬": (span("2026-12-21", "2026-12-31"),),
    "上个月中旬": (span("2026-11-11", "2026-11-20"),),
    "11月上旬": (span("2026-11-01", "2026-11-10"),),
    # Parts of a year.
    "年初": (span("2026-01-01", "2026-03-31"),),
    "今年年初": (span("2026-01-01", "2026-03-31"),),
    "去年年初": (span("2025-01-01", "2025-03-31"),),
    "年底": (span("2026-10-01", "2026-12-31"),),
    "去年年底": (span("2025-10-01", "2025-12-31"),),
    "去年底": (span("2025-10-01", "2025-12-31"),),
    "前年年底": (span("2024-10-01", "2024-12-31"),),
    "上半年": (span("2026-01-01", "2026-06-30"),),
    # Vague distances back.
    "三个月前": (within("2026-08-01", "2026-09-30"),),
    "一个月前": (within("2026-10-01", "2026-11-30"),),
    "两周前": (within("2026-11-13", "2026-11-22"),),
    "一周前": (within("2026-11-20", "2026-11-29"),),
    "半年前": (within("2026-05-01", "2026-07-31"),),
    "前两天": (within("2026-11-24", "2026-11-30"),),
    "前几天": (within("2026-11-20", "2026-11-30"),),
    # Festivals.
    "春节后": (span("2026-02-17", "2026-12-01"), span("2026-02-18", "2026-12-01")),
    "国庆节后": (span("2026-10-01", "2026-12-01"), span("2026-10-02", "2026-12-01")),
    "去年国庆": (day("2025-10-01"),),
    "国庆节": (day("2026-10-01"),),
    "清明节": (day("2026-04-05"),),
    "去年春节": (day("2025-01-29"),),
    "元旦": (day("2026-01-01"), day("2027-01-01")),
    "去年元旦": (day("2025-01-01"),),
    "五一": (day("2026-05-01"),),
    "去年中秋节": (day("2025-10-06"),),
    "端午节": (day("2026-06-19"),),
    # Not dates.
    "缴费15年": (NOT_A_DATE,),
    "干了三个月": (NOT_A_DATE,),
    "60岁": (NOT_A_DATE,),
    "三个月": (NOT_A_DATE,),
    "每月2000元": (NOT_A_DATE,),
    "住15号楼": (NOT_A_DATE,),
    "2024-3/5": (NOT_A_DATE,),
    "hello": (NOT_A_DATE,),
}

CANDIDATES = ("regex", "jionlp", "dateparser", "si_agent")

_IMPORT = {
    "regex": "from si_agent.validators import dates",
    "jionlp": "import jionlp",
    "dateparser": "import dateparser",
    "si_agent": "from si_agent.validators import check",
}


def _reader(name: str):
    """A function text -> (first ISO day, last ISO day) or None, for one candidate."""
    if name == "regex":
        from si_agent.validators import dates

        def read(text):
            value, error = dates._parse_date(text, TODAY)
            return None if error else (value.isoformat(), value.isoformat())
        return read
    if name == "jionlp":
        import jionlp
        base = {"year": TODAY.year, "month": TODAY.month, "day": TODAY.day}

        def read(text):
            try:
                result = jionlp.parse_time(text, time_base=base)
            except Exception:  # "can not parse": no reading
                return None
            if result["type"] not in ("time_point", "time_span"):
                return None
            first, last = result["time"]
            if "inf" in (first.lstrip("-"), last.lstrip("-")):
                return None
            return first[:10], last[:10]
        return read
    if name == "dateparser":
        from datetime import datetime

        import dateparser
        settings = {"RELATIVE_BASE": datetime(TODAY.year, TODAY.month, TODAY.day)}

        def read(text):
            value = dateparser.parse(text, languages=["zh"], settings=settings)
            return None if value is None else (value.date().isoformat(),) * 2
        return read
    if name == "si_agent":
        from si_agent.validators import check

        def read(text):
            first = check("date", text, today=TODAY, date_span="start")
            last = check("date", text, today=TODAY, date_span="end")
            return (first.value, last.value) if first.ok and last.ok else None
        return read
    raise SystemExit(f"unknown candidate {name!r}; valid: {', '.join(CANDIDATES)}")


def _rss_kb() -> int:
    import resource
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def worker(name: str) -> None:
    """Run in a fresh interpreter: import, read the corpus, print JSON."""
    import contextlib
    import io
    import time
    rss_before = _rss_kb()
    started = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):  # jionlp prints a banner
        exec(_IMPORT[name], {})
    import_s = time.perf_counter() - started
    with contextlib.redirect_stdout(io.StringIO()):
        read = _reader(name)
        started = time.perf_counter()
        readings = {text: read(text) for text in CORPUS}
    parse_s = time.perf_counter() - started
    print(json.dumps({"import_s": import_s, "parse_s": parse_s,
                      "rss_mb": (_rss_kb() - rss_before) / 1024, "readings": readings}))


def correct(reading, accepted: tuple[tuple, ...]) -> bool:
    for kind, *bounds in accepted:
        if kind == "none":
            if reading is None:
                return True
            continue
        if reading is None:
            continue
        first, last = reading
        if kind == "day" and first == last == bounds[0]:
            return True
        if kind == "span" and first < last and bounds[0] <= first and last <= bounds[1]:
            return True
        if kind == "within" and bounds[0] <= first <= last <= bounds[1]:
            return True
    return False


def _run(name: str) -> dict | None:
    out = subprocess.run([sys.executable, __file__, "--worker", name],
                         capture_output=True, text=True)
    if out.returncode != 0:
        print(f"{name}: failed (installed? pip install dateparser for the comparison)\n"
              f"{out.stderr.strip().splitlines()[-1]}", file=sys.stderr)
        return None
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--runs", type=int, default=3, help="fresh interpreters per candidate")
    parser.add_argument("--misses", action="store_true", help="list each candidate's misses")
    args = parser.parse_args()
    if args.worker:
        worker(args.worker)
        return
    print(f"today = {TODAY.isoformat()}, {len(CORPUS)} expressions\n")
    print("| candidate | coverage | import (s) | parse corpus (s) | RSS growth (MB) |")
    print("|---|---|---|---|---|")
    misses = {}
    for name in CANDIDATES:
        runs = [_run(name) for _ in range(args.runs)]
        if None in runs:
            print(f"| {name} | n/a | n/a | n/a | n/a |")
            continue
        readings = runs[0]["readings"]
        good = sum(correct(readings[t], accepted) for t, accepted in CORPUS.items())
        misses[name] = [(t, readings[t]) for t, accepted in CORPUS.items()
                        if not correct(readings[t], accepted)]
        median = {k: statistics.median(r[k] for r in runs) for k in ("import_s", "parse_s", "rss_mb")}
        print(f"| {name} | {good}/{len(CORPUS)} ({good / len(CORPUS):.0%}) "
              f"| {median['import_s']:.3f} | {median['parse_s']:.3f} | {median['rss_mb']:.1f} |")
    if args.misses:
        for name, missed in misses.items():
            print(f"\n{name} misses: " + "; ".join(f"{t} -> {r}" for t, r in missed))


if __name__ == "__main__":
    main()
