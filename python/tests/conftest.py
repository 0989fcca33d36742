"""Shared fixtures: the demo history, ingested and replayed by the `leastgrant` command line,
which every test compares the package with.

The demo size is `LEASTGRANT_DEMO_PROJECTS` (default 200, the issue's size). The command line is
`$LEASTGRANT_BIN`, else the workspace's `target/debug/leastgrant` (CI builds it first); without
one the tests fail rather than skip, since a comparison with nothing would prove nothing.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PROJECTS = int(os.environ.get("LEASTGRANT_DEMO_PROJECTS", "200"))


def binary() -> str:
    found = os.environ.get("LEASTGRANT_BIN") or str(ROOT / "target" / "debug" / "leastgrant")
    if not Path(found).is_file():
        pytest.fail(f"no leastgrant binary at {found}: run `cargo build` first or set LEASTGRANT_BIN")
    return found


class Cli:
    """The command line, run with a private HOME and state directory."""

    def __init__(self, home: Path):
        self.home = home
        self.env = {**os.environ, "HOME": str(home), "LEASTGRANT_HOME": str(home / ".leastgrant")}
        self.env.pop("LEASTGRANT_BIN", None)

    def __call__(self, *args: str) -> str:
        done = subprocess.run([binary(), *args], env=self.env, capture_output=True, text=True)
        assert done.returncode == 0, f"leastgrant {' '.join(args)} failed: {done.stderr}"
        return done.stdout


@pytest.fixture(scope="session")
def demo(tmp_path_factory):
    """The demo history, the CLI's events table of it, and the CLI's replay (no rules: the
    package replays learning and floors only)."""
    base = tmp_path_factory.mktemp("demo")
    home = base / "home"
    home.mkdir()
    cli = Cli(home)
    cli("demo", "--projects", str(PROJECTS), "--out", str(base / "history"), "--json")
    transcripts = base / "history" / "projects"
    ingest = json.loads(cli("ingest", "--claude", str(transcripts), "--out", str(base / "data"), "--json"))
    assert ingest["events"] > 0
    cli("simulate", "--events", str(base / "data"), "--out", str(base / "replay"), "--no-rules", "--json")
    return {
        "base": base,
        "home": home,
        "cli": cli,
        "transcripts": transcripts,
        "data": base / "data",
        "replay": base / "replay",
        "events": ingest["events"],
    }
