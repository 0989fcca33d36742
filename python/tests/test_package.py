"""The package against the command line on the demo history: the same events, the same
tables row for row, the same summary, the same check verdicts."""

from __future__ import annotations

import json
import shutil

import polars as pl
import pyarrow as pa
import pytest

import leastgrant
from leastgrant import _native


def cli_tables(replay):
    return {
        name: pl.read_parquet(replay / f"{name}.parquet") if (replay / f"{name}.parquet").exists() else pl.DataFrame()
        for name in leastgrant.TABLES
    }


def assert_same_results(results, replay):
    expected = cli_tables(replay)
    for name in leastgrant.TABLES:
        got = results.tables()[name]
        assert got.columns == expected[name].columns, name
        assert got.height == expected[name].height, name
        assert got.equals(expected[name]), f"{name} differs from the command line's"
    assert results.summary == json.loads((replay / "summary.json").read_text())


def test_read_events_is_the_table_the_cli_wrote(demo):
    events = leastgrant.read_events(demo["data"])
    assert events.height == demo["events"]
    # An independent reader of the same files: polars over the Parquet fragments.
    fragments = pl.read_parquet(demo["data"] / "events" / "**" / "*.parquet", hive_partitioning=False)
    assert events.sort("event_id").equals(fragments.select(events.columns).sort("event_id"))
    assert events.schema["seq"] == pl.UInt32
    assert str(events.schema["ts"]) == str(pl.Datetime("us", "UTC"))


def test_ingest_reads_what_the_cli_ingests(demo, tmp_path):
    events, summary = leastgrant.ingest_table(claude=demo["transcripts"], table=tmp_path / "table")
    assert summary["events"] == demo["events"]
    assert events.sort("event_id").equals(leastgrant.read_events(demo["data"]).sort("event_id"))
    # The table is kept where asked, and a second run reads nothing again.
    again, summary = leastgrant.ingest_table({"claude-jsonl": [demo["transcripts"]]}, table=tmp_path / "table")
    assert summary["files"] == 0 and summary["files_unchanged"] > 0
    assert again.height == events.height


def test_ingest_keeps_a_copied_call_once_as_the_cli_does(demo, tmp_path):
    copy = tmp_path / "copy"
    first = sorted(p for p in demo["transcripts"].iterdir() if p.is_dir())[0]
    shutil.copytree(first, copy / first.name)
    events = leastgrant.ingest(claude=[demo["transcripts"], copy])
    cli_out = demo["base"] / "data-copy"
    demo["cli"]("ingest", "--claude", str(demo["transcripts"]), "--claude", str(copy), "--out", str(cli_out), "--json")
    expected = leastgrant.read_events(cli_out)
    assert events.height == demo["events"] == expected.height
    assert events.sort("event_id").equals(expected.sort("event_id"))


def test_simulate_a_table_gives_the_cli_tables_and_summary(demo):
    results = leastgrant.simulate(demo["data"], no_rules=True)
    assert_same_results(results, demo["replay"])
    recommended = results.settings.filter(pl.col("recommended"))["setting_id"].to_list()
    assert recommended == ([results.recommended] if results.recommended else [])


def test_simulate_a_frame_in_any_row_order_gives_the_cli_tables(demo):
    events = leastgrant.read_events(demo["data"]).sample(fraction=1.0, shuffle=True, seed=7)
    assert_same_results(leastgrant.simulate(events, no_rules=True), demo["replay"])
    # pyarrow (its schema cast from polars' string views) is an events source too.
    assert_same_results(leastgrant.simulate(events.to_arrow(), no_rules=True), demo["replay"])


def test_a_grid_replays_as_the_cli_flags_do(demo):
    out = demo["base"] / "replay-grid"
    demo["cli"](
        "simulate", "--events", str(demo["data"]), "--out", str(out), "--no-rules", "--json",
        "--posture", "assist,autopilot", "--min-sessions", "1,2", "--confidence", "0.5,0.9",
        "--miss-budget", "0.2",
    )
    results = leastgrant.simulate(
        demo["data"],
        grid={"posture": ["assist", "autopilot"], "min_sessions": [1, 2], "confidence": [0.5, 0.9]},
        miss_budget=0.2,
        no_rules=True,
    )
    assert_same_results(results, out)
    # The settings themselves replay the same run.
    described = [s for s in json.loads((out / "summary.json").read_text())["settings"]]
    assert len(described) == results.settings.height


def test_tables_leave_rust_without_a_copy(demo):
    native = _native.read_events(str(demo["data"]))
    first, second = pa.table(native), pa.table(native)
    address = lambda t: t.column("event_id").chunk(0).buffers()[2].address  # noqa: E731
    assert address(first) == address(second)
    assert len(native) == demo["events"]


def test_bad_input_is_refused_with_what_is_wrong(demo, tmp_path):
    events = leastgrant.read_events(demo["data"]).drop("outcome")
    with pytest.raises(ValueError, match="outcome"):
        leastgrant.simulate(events)
    with pytest.raises(ValueError, match="holds no events table"):
        leastgrant.simulate(tmp_path)
    with pytest.raises(ValueError, match="unattended"):
        leastgrant.simulate(demo["data"], unattended="sometimes")
    with pytest.raises(ValueError, match="exclude each other"):
        leastgrant.simulate(demo["data"], rules=[tmp_path / "rules.json"], no_rules=True)
    with pytest.raises(ValueError, match="not a source kind"):
        leastgrant.ingest(nonsense=tmp_path)
    with pytest.raises(ValueError, match="no such file"):
        leastgrant.ingest(claude=tmp_path / "absent")
