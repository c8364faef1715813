"""Benchmark both form fillers on the foreign-form suite (tests/forms_foreign/forms.yaml).

Serves the suite's pages (``tests/forms_foreign/server.py``) on a port of 18500-18599,
writes each form's business (``api: kind: rpa``: url, the consent as ``fixed``, the
button texts, the success pattern) and loads it with the project's loader, then runs on
every form:

- the rpa executor (``RpaExecutor``, one Chromium reused, a context per job), with the
  form's gold values;
- the browser agent (``DomPerception`` + ``FormPolicy``), given the values and labels
  the executor's hand-over would give it, in a context per form of one Chromium.

and compares what the site received with the manifest's expected values per control.
Prints markdown: values placed right per control kind, per form (right/values,
submitted, fully right, silent loss, steps, seconds), totals, and what went wrong.

    PYTHONPATH=. python scripts/bench_forms.py [--only rpa|agent] [--forms ID,ID]
        [--data-dir DIR] [--chromium /usr/bin/chromium] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.forms_foreign.manifest import load_forms  # noqa: E402
from tests.forms_foreign.runner import failures, run_suite, tables  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", choices=["rpa", "agent"], default=None)
    ap.add_argument("--forms", default="", help="comma-separated form ids (default: all)")
    ap.add_argument("--data-dir", type=Path, default=None, help="default: a new temporary dir")
    ap.add_argument("--chromium", default=os.environ.get("SI_RPA_CHROMIUM", "/usr/bin/chromium"))
    ap.add_argument("--json", type=Path, default=None, help="also write the runs as JSON")
    args = ap.parse_args()
    logging.basicConfig(level=logging.ERROR)
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    forms = load_forms()
    if args.forms:
        wanted = set(args.forms.split(","))
        forms = [f for f in forms if f.id in wanted]
    data_dir = args.data_dir or Path(tempfile.mkdtemp(prefix="si-bench-forms-"))
    fillers = (args.only,) if args.only else ("rpa", "agent")
    runs = run_suite(forms, data_dir, args.chromium, fillers, progress=True)
    sources = sum(f.source != "original" for f in forms)
    print(f"# Form fillers on {len(forms)} foreign forms ({sources} modelled on public forms)\n")
    print(
        f"Data dir (traces: si/rpa/<form>-<run>/, agent/<form>/): `{data_dir}`; "
        f"Chromium `{args.chromium}`; {os.cpu_count()} CPUs.\n"
    )
    print(tables(forms, runs))
    print("\n## Not fully right\n")
    print(failures(runs))
    if args.json:
        args.json.write_text(
            json.dumps(
                {f: [r.model_dump() for r in rs] for f, rs in runs.items()},
                ensure_ascii=False,
                indent=1,
            ),
            "utf-8",
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
