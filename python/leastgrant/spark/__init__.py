"""leastgrant on Apache Spark: the same ingest readers and the same replay, run in the executors.

- `ingest(spark, places)`: transcript files read as binary files, each parsed by the Rust reader
  of its source inside an executor; copies of a call de-duplicated as ``leastgrant ingest`` does
  (the first source in claim order — source kind, then path — owns an event id).
- `simulate(spark, events_df, …)`: the events repartitioned by project (a project is never
  split), each partition replayed by the Rust replay as one shard of the run (``mapInArrow``),
  and the shards merged once on the driver by ``leastgrant merge``'s code: the settings totals
  with their Wilson bounds, the bands, the recommendation and the frontier are computed once
  from the folded totals, and the files are byte for byte those of one ``leastgrant simulate``.

Nothing here counts, decides or folds: it moves events and bytes between Spark and the Rust
crates (``leastgrant._native``).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any, Iterator, Mapping, Optional, Sequence, Union

import pyarrow as pa

from .. import Results, _native, events_schema, read_results, run_config

__all__ = ["ingest", "bad_input", "simulate", "read_events_table"]

#: What a partition of the replay hands back: a shard's output files.
_FILES = "shard int, name string, bytes binary"

#: Where ingest's claim order puts each source kind (registry::SOURCES order).
_RANK = {kind: rank for rank, kind in enumerate(_native.SOURCE_KINDS)}


def _kind(name: str) -> str:
    """A source's stored kind from its kind or its `leastgrant ingest` flag."""
    for kind in _native.SOURCE_KINDS:
        if name == kind or kind.startswith(name.replace("_", "-") + "-") or name == kind.split("-")[0]:
            return kind
    raise ValueError(f"`{name}` is not a source kind (one of {', '.join(_native.SOURCE_KINDS)})")


def _events_only(table: pa.Table) -> pa.Table:
    """Spark's Arrow back in the events table's exact types (Spark has no unsigned integers and
    gives timestamps its session time zone)."""
    schema = events_schema()
    return table.select(schema.names).cast(schema)


def ingest(spark: Any, places: Mapping[str, Any], *, glob: Optional[str] = None) -> Any:
    """Reads transcript files into an events DataFrame with the events table's schema.

    ``places`` maps a source (``claude`` or ``claude-jsonl``, … — one file per source: Claude
    Code, Codex, Copilot CLI, Gemini CLI and SpecStory transcripts) to paths Spark can read
    (local, HDFS, object storage; directories are read recursively). Each file is parsed in an
    executor by the same Rust reader ``leastgrant ingest`` uses. The first source in claim order
    (the registry's source order, then the path) owns an event id, so a copied transcript's
    calls appear once. ``glob`` filters file names (default ``*.jsonl`` for JSONL sources,
    ``*.md`` for SpecStory, ``*.json*`` for Gemini)."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    files = _files(spark, places, glob)
    spark_schema = _spark_schema(spark, events_schema())
    widened = _widened(events_schema())

    def parse(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        from leastgrant import _native as native

        for batch in batches:
            for path, content, kind in zip(
                batch.column("path").to_pylist(),
                batch.column("content").to_pylist(),
                batch.column("kind").to_pylist(),
            ):
                table, _bad = native.read_bytes(kind, _local_path(path), content)
                events = pa.table(table).cast(widened)
                events = events.append_column("_rank", pa.array([_RANK[kind]] * events.num_rows, pa.int32()))
                for out in events.to_batches():
                    yield out

    parsed = files.mapInArrow(parse, _with_rank(spark_schema))
    first = Window.partitionBy("event_id").orderBy("_rank", "source")
    return (
        parsed.withColumn("_claim", F.row_number().over(first))
        .where(F.col("_claim") == 1)
        .drop("_claim", "_rank")
    )


def bad_input(spark: Any, places: Mapping[str, Any], *, glob: Optional[str] = None) -> "dict[str, int]":
    """What the readers could not use in the files `ingest` reads, counted by reason (the
    ``bad_lines`` of ``leastgrant ingest --json``): a Spark job of its own, so a retried task
    cannot count twice. A file's bad input never fails the job."""

    def count(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        from leastgrant import _native as native

        for batch in batches:
            reasons, counts = [], []
            for path, content, kind in zip(
                batch.column("path").to_pylist(),
                batch.column("content").to_pylist(),
                batch.column("kind").to_pylist(),
            ):
                _table, bad = native.read_bytes(kind, _local_path(path), content)
                for reason, n in json.loads(bad).items():
                    reasons.append(reason)
                    counts.append(int(n))
            yield pa.RecordBatch.from_pydict(
                {"reason": reasons, "count": counts},
                schema=pa.schema([("reason", pa.string()), ("count", pa.int64())]),
            )

    rows = (
        _files(spark, places, glob)
        .mapInArrow(count, "reason string, count long")
        .groupBy("reason")
        .sum("count")
        .collect()
    )
    return {row[0]: int(row[1]) for row in sorted(rows)}


def _files(spark: Any, places: Mapping[str, Any], glob: Optional[str]) -> Any:
    """The files of ``places`` as Spark's binary file rows (path, content) with their kind."""
    from pyspark.sql import functions as F

    frames = []
    for name, given in places.items():
        kind = _kind(name)
        if kind in ("cursor-vscdb", "ledger"):
            raise ValueError(
                f"`{kind}` sources are databases or rotated files read together; ingest them with "
                "`leastgrant ingest` and read the table with `leastgrant.spark.read_events_table`"
            )
        paths = [str(given)] if isinstance(given, (str, os.PathLike)) else [str(p) for p in given]
        pattern = glob or {"specstory": "*.md", "gemini-chats": "*.json*"}.get(kind, "*.jsonl")
        files = (
            spark.read.format("binaryFile")
            .option("recursiveFileLookup", "true")
            .option("pathGlobFilter", pattern)
            .load(paths)
            .select("path", "content")
            .withColumn("kind", F.lit(kind))
        )
        frames.append(files)
    if not frames:
        raise ValueError("no places to ingest")
    files = frames[0]
    for more in frames[1:]:
        files = files.unionByName(more)
    return files


def _local_path(url: str) -> str:
    """The path ``leastgrant ingest`` names a local file by (the ``source`` column), from the
    URL Spark's binary file reader gives; other schemes keep their URL."""
    from urllib.parse import unquote, urlparse

    parsed = urlparse(url)
    return unquote(parsed.path) if parsed.scheme in ("", "file") else url


def _spark_schema(spark: Any, schema: pa.Schema) -> Any:
    """The events table's schema as Spark types (unsigned integers widened)."""
    from pyspark.sql.pandas.types import from_arrow_schema

    return from_arrow_schema(_widened(schema))


def _widened(schema: pa.Schema) -> pa.Schema:
    """The events schema with Spark's types: unsigned integers widened to signed ones."""
    return pa.schema(
        [pa.field(f.name, pa.int64() if f.type == pa.uint32() else f.type, f.nullable) for f in schema]
    )


def _with_rank(spark_schema: Any) -> Any:
    from pyspark.sql.types import IntegerType, StructField, StructType

    return StructType(list(spark_schema.fields) + [StructField("_rank", IntegerType(), False)])


def read_events_table(spark: Any, table: Union[str, os.PathLike]) -> Any:
    """The events table ``leastgrant ingest`` wrote (``events/bucket=NN/*.parquet``) as a
    Spark DataFrame with the table's columns."""
    # A URL (s3a://, hdfs://) is joined as text: a Path would fold its double slash.
    frame = spark.read.parquet(f"{os.fspath(table).rstrip('/')}/events")
    return frame.select(*events_schema().names)


def simulate(
    spark: Any,
    events: Any,
    settings: Optional[Sequence[Mapping[str, Any]]] = None,
    grid: Union[None, str, Mapping[str, Any]] = None,
    *,
    out: Optional[Union[str, os.PathLike]] = None,
    partitions: Optional[int] = None,
    max_project_events: int = 20_000_000,
    **options: Any,
) -> Results:
    """Replays an events DataFrame on Spark: the same tables and summary as
    ``leastgrant simulate`` with the same options on the same events, row for row (the files in
    ``out`` are byte-identical to the command line's).

    Rules and grants as ``leastgrant simulate`` and `leastgrant.simulate` take them: by default
    the hook's (the state directory's ``rules.json`` and grants, ``$LEASTGRANT_HOME`` or
    ``~/.leastgrant``, and each project's ``.leastgrant/rules.json``), ``rules=[paths]`` as
    ``--rules``, ``no_rules=True`` as ``--no-rules``. They are read once, on the driver, for
    every project root of the events (the files the command line would read on this machine),
    and travel to the executors with the job as a value (a broadcast of the rules' JSON, each
    file once, and each project's grants): an executor compiles the same rules against the same
    roots and answers as the command line does, without holding the files.

    ``events`` is a DataFrame with the events table's columns (`ingest`,
    `read_events_table`) or an events table directory. The events are repartitioned by
    project into ``partitions`` parts (default: twice the default parallelism, at most one per
    project, about a million events each); each part is replayed in an executor by the Rust
    replay as one shard of the run, and the shards are merged on the driver. A project of more
    than ``max_project_events`` events is refused by name. Options as `leastgrant.simulate`.
    """
    if isinstance(events, (str, os.PathLike)):
        events = read_events_table(spark, events)
    config = run_config(settings, grid, **options)
    from pyspark.sql import functions as F

    counted = events.groupBy("project_key").agg(F.count("*"), F.collect_set("project_root")).collect()
    projects = [(row[0], int(row[1])) for row in counted]
    # A task holds its partition's events while it replays them: a project too large for one
    # executor is refused by name before any task runs, rather than failing one in the middle.
    too_large = sorted((rows, key) for key, rows in projects if rows > max_project_events)
    if too_large:
        rows, key = too_large[-1]
        raise ValueError(
            f"the project `{key}` has {rows} events, more than max_project_events={max_project_events} "
            "one executor is trusted to hold; raise it for executors with the memory (about 1 KB "
            "an event), or replay that project alone with `leastgrant simulate`"
        )
    # The rules and grants the command line would read here, for every project of the events,
    # read once and shipped with the job (docs/fleet.md).
    roots = sorted({root for row in counted for root in row[2] if root is not None})
    shipped = _native.read_answers(config, roots)
    if shipped is not None:
        config = json.dumps({**json.loads(config), "answers": json.loads(shipped)})
    try:
        shared = spark.sparkContext.broadcast(config)
        config_of = lambda: shared.value  # noqa: E731
    except Exception:  # Spark Connect has no broadcast: the config travels in the closure.
        config_of = lambda: config  # noqa: E731
    if partitions is None:
        # Enough parts to use every core, and about a million events per part at most.
        total = sum(rows for _, rows in projects)
        partitions = max(spark.sparkContext.defaultParallelism * 2, -(-total // 1_000_000))
    count = max(1, min(int(partitions), len(projects) or 1))

    def replay(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        from pyspark import TaskContext

        from leastgrant import _native as native

        shard = TaskContext.get().partitionId()
        received = list(batches)
        table = _events_only(pa.Table.from_batches(received)) if received else events_schema().empty_table()
        work = tempfile.mkdtemp(prefix="leastgrant-shard-")
        try:
            native.simulate_part(table, projects, shard, count, config_of(), os.path.join(work, "out"))
            for name in sorted(os.listdir(os.path.join(work, "out"))):
                data = Path(work, "out", name).read_bytes()
                yield pa.RecordBatch.from_pydict(
                    {"shard": [shard], "name": [name], "bytes": [data]},
                    schema=pa.schema([("shard", pa.int32()), ("name", pa.string()), ("bytes", pa.binary())]),
                )
        finally:
            shutil.rmtree(work, ignore_errors=True)

    # One partition is one shard: adaptive execution must not coalesce them after the shuffle.
    conf = spark.conf
    adaptive = conf.get("spark.sql.adaptive.enabled", "true")
    conf.set("spark.sql.adaptive.enabled", "false")
    try:
        parts = (
            events.repartition(count, "project_key")
            .sortWithinPartitions("project_key", "session_id", "seq")
            .mapInArrow(replay, _FILES)
            .collect()
        )
    finally:
        conf.set("spark.sql.adaptive.enabled", adaptive)

    work = tempfile.mkdtemp(prefix="leastgrant-merge-")
    try:
        dirs = []
        for shard in range(count):
            shard_dir = Path(work, f"shard-{shard}")
            shard_dir.mkdir()
            dirs.append(str(shard_dir))
        for row in parts:
            Path(work, f"shard-{row['shard']}", row["name"]).write_bytes(bytes(row["bytes"]))
        for shard, shard_dir in enumerate(dirs):
            # A partition Spark gave no task (no rows) is an empty shard of the same run.
            if not Path(shard_dir, "shard.json").exists():
                native_empty = events_schema().empty_table()
                _native.simulate_part(native_empty, projects, shard, count, config, shard_dir)
        target = Path(out) if out is not None else Path(work, "merged")
        _native.merge(dirs, str(target))
        return read_results(target)
    finally:
        shutil.rmtree(work, ignore_errors=True)
