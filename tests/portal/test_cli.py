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
