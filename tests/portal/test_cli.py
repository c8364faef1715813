"""``si-agent portal`` is wired and the portal's database lives in the data directory."""

from __future__ import annotations

import pytest

from si_agent.cli import main
from si_agent.config.settings import Settings


def test_portal_help(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["portal", "--help"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    assert "--host" in out and "--port" in out


def test_the_database_defaults_to_the_data_dir(tmp_path):
    assert Settings(data_dir=tmp_path).demo_portal_db == tmp_path / "demo_portal.db"


def test_the_portal_runs_under_gunicorn_without_the_development_server_warning(tmp_path):
    import os

    import httpx

    from si_agent.testing.processes import free_port, start_cli, stop, wait_until_up

    port, log = free_port(), tmp_path / "portal.log"
    proc = start_cli({**os.environ, "SI_DATA_DIR": str(tmp_path)}, "portal", "--port",
                     str(port), log=log)
    try:
        wait_until_up(f"http://127.0.0.1:{port}/login", proc)
        assert httpx.get(f"http://127.0.0.1:{port}/login").status_code == 200
    finally:
        stop(proc, timeout=10)
    text = log.read_text("utf-8")
    assert f"demo portal on http://127.0.0.1:{port}/ (Ctrl-C to stop)" in text
    assert "Starting gunicorn" in text
    assert "development server" not in text and "Traceback" not in text


def test_version(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert exit_info.value.code == 0
    from si_agent import __version__

    assert capsys.readouterr().out == f"si-agent {__version__}\n"
