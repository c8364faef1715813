"""The dependency locks match pyproject.toml and the scripts that install them.

``scripts/venv.sh`` installs ``requirements/NAME.lock`` with ``--require-hashes`` for
each ``ensure_venv NAME EXTRAS`` in ``scripts/*.sh``. These tests fail when a lock is
missing, was made for other extras, lacks a hash, or no longer satisfies
``pyproject.toml`` (a dependency added or its range moved without ``scripts/lock.sh``).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import tomllib
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[2]
# The platform the locks are made for (scripts/lock.sh).
MARKER_ENV = {"python_version": "3.11", "python_full_version": "3.11.0",
              "sys_platform": "linux", "platform_system": "Linux",
              "platform_machine": "x86_64", "os_name": "posix",
              "implementation_name": "cpython", "platform_python_implementation": "CPython"}
_CALL = re.compile(r"^\s*ensure_venv ([a-z0-9_-]+) ([a-z0-9_,-]+)\s*$", re.M)
_PIN = re.compile(r"^([A-Za-z0-9_.\-]+)==([^\s;\\]+)")


_IMAGE = re.compile(r"^# lock ([a-z0-9_-]+) ([a-z0-9_,-]+)\s*$", re.M)


def _sets() -> dict[str, str]:
    """NAME → EXTRAS of every lock: the scripts' installs and lock.sh's own list (the
    container image)."""
    calls = {}
    found = [pair for script in sorted((ROOT / "scripts").glob("*.sh"))
             for pair in _CALL.findall(script.read_text("utf-8"))]
    found += _IMAGE.findall((ROOT / "scripts" / "lock.sh").read_text("utf-8"))
    for name, extras in found:
        assert calls.setdefault(name, extras) == extras, f"{name}: two sets of extras"
    return calls


def _requirements(extras: str) -> list[Requirement]:
    """pyproject's base dependencies plus those of ``extras`` (self-references expanded)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]
    optional = project["optional-dependencies"]
    found, todo, seen = [], extras.split(","), set()
    found += [Requirement(r) for r in project["dependencies"]]
    while todo:
        extra = todo.pop()
        if extra in seen:
            continue
        seen.add(extra)
        for text in optional[extra]:
            req = Requirement(text)
            if canonicalize_name(req.name) == canonicalize_name(project["name"]):
                todo += sorted(req.extras)
            else:
                found.append(req)
    return found


def _pins(lock: Path) -> dict[str, tuple[Version, int]]:
    """name → (pinned version, number of hashes)."""
    pins: dict[str, tuple[Version, int]] = {}
    current = None
    for line in lock.read_text("utf-8").splitlines():
        match = _PIN.match(line)
        if match:
            current = canonicalize_name(match[1])
            pins[current] = (Version(match[2]), 0)
        elif current and line.strip().startswith("--hash=sha256:"):
            version, hashes = pins[current]
            pins[current] = (version, hashes + 1)
    return pins


def test_every_install_in_the_scripts_has_a_lock():
    sets = _sets()
    assert {"run", "test", "deploy"} <= set(sets)
    for name, extras in sets.items():
        lock = ROOT / "requirements" / f"{name}.lock"
        assert lock.is_file(), f"{lock} missing: run scripts/lock.sh"
        assert lock.read_text("utf-8").splitlines()[0] == f"# extras: {extras}", (
            f"{lock} was made for other extras: run scripts/lock.sh")


@pytest.mark.parametrize("name", sorted(_sets()))
def test_lock_satisfies_pyproject_and_hashes_every_pin(name):
    pins = _pins(ROOT / "requirements" / f"{name}.lock")
    assert pins, name
    unhashed = [pkg for pkg, (_, hashes) in pins.items() if hashes == 0]
    assert not unhashed, f"pins without a hash: {unhashed}"
    stale = []
    for req in _requirements(_sets()[name]):
        if req.marker is not None and not req.marker.evaluate(MARKER_ENV):
            continue
        pin = pins.get(canonicalize_name(req.name))
        if pin is None or not req.specifier.contains(pin[0], prereleases=True):
            stale.append(f"{req} (locked: {pin[0] if pin else 'nothing'})")
    assert not stale, f"requirements/{name}.lock is stale, run scripts/lock.sh: {stale}"
    # No CUDA build of torch sneaks in (the machines have no GPU; wheels are CPU-only).
    assert not any(pkg.startswith("nvidia-") for pkg in pins), "CUDA packages in the lock"
