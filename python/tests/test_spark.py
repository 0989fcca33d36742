"""Spark in local mode against the command line on the demo history: the same events from
`leastgrant.spark.ingest`, the same files (byte for byte) and tables from
`leastgrant.spark.simulate` and `python -m leastgrant.spark simulate`, without rules and with
the hook's rules and grants or named rules files (read on the driver, shipped to executors
that do not hold them).

PySpark is an optional dependency: without it these tests skip with the reason — unless
`LEASTGRANT_REQUIRE_SPARK=1` (CI), where its absence fails.
"""

from __future__ import annotations

import filecmp
import json
import os
import shutil
import subprocess
import sys

import polars as pl
import pytest

import leastgrant
from test_package import assert_same_results
from test_rules import RULES, busiest_project_command, cli_with_team_rules, counts, machine  # noqa: F401 (a fixture)

try:
    import pyspark  # noqa: F401
    from pyspark.sql import SparkSession
except ImportError as error:  # pragma: no cover - depends on the machine
    if os.environ.get("LEASTGRANT_REQUIRE_SPARK") == "1":
        raise
    pytest.skip(f"pyspark is not installed ({error}): the Spark tests skip", allow_module_level=True)

import leastgrant.spark as lspark


@pytest.fixture(scope="module")
def spark():
    session = (
        SparkSession.builder.master("local[2]")
        .appName("leastgrant tests")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "4")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


def same_files(a, b):
    names = sorted(os.listdir(a))
    assert names == sorted(os.listdir(b))
    return [name for name in names if not filecmp.cmp(a / name, b / name, shallow=False)]


def test_spark_simulate_writes_the_cli_files_byte_for_byte(spark, demo, tmp_path):
    # Three parts: several projects per executor task, and more than one task.
    results = lspark.simulate(
        spark, lspark.read_events_table(spark, demo["data"]), out=tmp_path / "out", partitions=3, no_rules=True
    )
    assert same_files(tmp_path / "out", demo["replay"]) == []
    expected = leastgrant.read_results(demo["replay"])
    for name in leastgrant.TABLES:
        assert results.tables()[name].equals(expected.tables()[name]), name
    assert results.summary == json.loads((demo["replay"] / "summary.json").read_text())


def test_spark_ingest_reads_what_the_cli_ingests_copies_once_counts_bad_input(spark, demo, tmp_path):
    copy = tmp_path / "copy"
    first = sorted(p for p in demo["transcripts"].iterdir() if p.is_dir())[0]
    shutil.copytree(first, copy / first.name)
    # Input a reader cannot use: counted by reason, as the command line counts it, never fatal.
    (copy / first.name / "damaged.jsonl").write_bytes(b'{"type": "assistant", "message": \n\x00\x00garbage\n[1, 2\n')
    places = {"claude": [str(demo["transcripts"]), str(copy)]}
    cli = json.loads(demo["cli"](
        "ingest", "--claude", str(demo["transcripts"]), "--claude", str(copy), "--out", str(tmp_path / "cli"), "--json"
    ))
    assert cli["bad_lines"], "the damaged file should count as bad input"
    assert lspark.bad_input(spark, places) == cli["bad_lines"]
    frame = lspark.ingest(spark, places)
    assert frame.columns == leastgrant.events_schema().names
    got = pl.from_arrow(frame.toArrow())
    expected = leastgrant.read_events(demo["data"])
    assert got.height == expected.height == demo["events"]
    columns = ["event_id", "outcome", "project_key", "project_root", "session_id", "source", "tool_input"]
    assert got.select(columns).sort("event_id").equals(expected.select(columns).sort("event_id"))
    # And the Spark events replay to the command line's tables.
    results = lspark.simulate(spark, frame, partitions=2, no_rules=True)
    for name in leastgrant.TABLES:
        assert results.tables()[name].equals(leastgrant.read_results(demo["replay"]).tables()[name]), name


def test_the_module_command_writes_the_cli_files(demo, tmp_path):
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable}
    done = subprocess.run(
        [sys.executable, "-m", "leastgrant.spark", "--master", "local[2]", "simulate",
         "--events", str(demo["data"]), "--out", str(tmp_path / "out"), "--partitions", "2", "--no-rules", "--json"],
        capture_output=True, text=True, env=env,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(done.stdout) == json.loads((demo["replay"] / "summary.json").read_text())
    assert same_files(tmp_path / "out", demo["replay"]) == []


def test_a_project_too_large_for_an_executor_is_refused_by_name(spark, demo):
    frame = lspark.read_events_table(spark, demo["data"])
    largest = pl.from_arrow(frame.groupBy("project_key").count().toArrow()).sort(["count", "project_key"])[-1]
    with pytest.raises(ValueError, match=f"the project `{largest['project_key'][0]}` has {largest['count'][0]} events"):
        lspark.simulate(spark, frame, max_project_events=int(largest["count"][0]) - 1)


def test_spark_with_the_hooks_rules_and_a_grant_writes_the_cli_files(spark, demo, machine, tmp_path):
    # The rules and the grant live in this (driver) process's state directory only: the Spark
    # session's Python workers were started before it existed, with another HOME.
    cli = machine
    (cli.home / ".leastgrant" / "rules.json").write_text(json.dumps(RULES))
    (cli.home / ".leastgrant" / "rules.json").chmod(0o600)
    root, command = busiest_project_command(demo["data"])
    cli("allow", command, "--project", root, "--cwd", root, "--note", "the test's grant")
    expected = tmp_path / "cli"
    cli("simulate", "--events", str(demo["data"]), "--out", str(expected), "--json")
    results = lspark.simulate(spark, demo["data"], out=tmp_path / "out", partitions=3)
    assert same_files(tmp_path / "out", expected) == []
    assert_same_results(results, expected)
    assert "rules.json" in results.summary["assumptions"]["rules"]
    # The rules and the grant changed the replay: the comparison can fail.
    assert counts(results.summary) != counts(json.loads((demo["replay"] / "summary.json").read_text()))


def test_spark_with_named_rules_files_writes_the_cli_files(spark, demo, machine, tmp_path):
    cli = machine
    rules, expected = cli_with_team_rules(cli, demo, tmp_path)
    frame = lspark.read_events_table(spark, demo["data"])
    results = lspark.simulate(spark, frame, out=tmp_path / "out", partitions=2, rules=[rules], miss_budget_on="risky")
    assert same_files(tmp_path / "out", expected) == []
    assert_same_results(results, expected)
    assert str(rules) in results.summary["assumptions"]["rules"]
    assert counts(results.summary) != counts(json.loads((demo["replay"] / "summary.json").read_text()))


def test_the_module_command_with_a_rules_file_writes_the_cli_files(demo, machine, tmp_path):
    # The scheduled-job entry replays with a named rules file exactly as `leastgrant simulate`
    # does, and refuses `--rules` with `--no-rules` as the command line refuses it.
    cli = machine
    rules, expected = cli_with_team_rules(cli, demo, tmp_path)
    command = [sys.executable, "-m", "leastgrant.spark", "--master", "local[2]", "simulate",
               "--events", str(demo["data"]), "--out", str(tmp_path / "out"), "--partitions", "2",
               "--rules", str(rules), "--miss-budget-on", "risky", "--json"]
    env = {**cli.env, "PYSPARK_PYTHON": sys.executable}
    done = subprocess.run(command, capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    summary = json.loads(done.stdout)
    assert summary == json.loads((expected / "summary.json").read_text())
    assert str(rules) in summary["assumptions"]["rules"]
    assert counts(summary) != counts(json.loads((demo["replay"] / "summary.json").read_text()))
    assert same_files(tmp_path / "out", expected) == []
    refused = subprocess.run(command + ["--no-rules"], capture_output=True, text=True, env=env)
    assert refused.returncode != 0
    assert "--rules and --no-rules exclude each other" in refused.stderr
