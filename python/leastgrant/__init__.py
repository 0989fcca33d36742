"""leastgrant from Python: ingest agent histories, replay them under settings, check a call.

Every function calls the workspace's Rust crates through the native module ``_native`` (the
same ingest readers and the same replay as the ``leastgrant`` command line); tables cross from
Rust as Arrow streams (the Arrow C stream interface), read by pyarrow without a copy and handed
to polars. Nothing here decides, counts or folds anything itself.

    import leastgrant
    events = leastgrant.ingest(claude="~/.claude/projects")
    results = leastgrant.simulate(events)
    results.settings.sort("prompt_rate")
    results.recommended       # the recommended setting's id (summary.json's "recommended")

``leastgrant.spark`` runs the same ingest and replay on Apache Spark.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from datetime import date, datetime, timezone
from pathlib import Path
from typing import Any, Iterable, Mapping, Optional, Sequence, Union

import polars as pl
import pyarrow as pa

from . import _native

__all__ = [
    "TABLES",
    "SOURCE_KINDS",
    "Results",
    "CheckResult",
    "ingest",
    "read_events",
    "events_schema",
    "simulate",
    "read_results",
    "check",
]

#: The replay's output tables (docs/formats.md), in the order `Results` lists them.
TABLES = ("settings", "curves", "bands", "misses", "promotions", "friction", "capabilities", "projects")

#: The transcript sources ingest reads, by their stored kind name (the `source_kind` column).
SOURCE_KINDS: tuple = tuple(_native.SOURCE_KINDS)

PathLike = Union[str, "os.PathLike[str]"]


def _frame(table: Any) -> pl.DataFrame:
    """A polars frame over an Arrow stream producer (the native `Table`, without copying)."""
    return pl.from_arrow(pa.table(table))


def events_schema() -> pa.Schema:
    """The events table's Arrow schema (docs/formats.md), as the Rust ingest writes it."""
    return pa.table(_native.events_schema()).schema


def _places(sources: Mapping[str, Any]) -> list:
    places = []
    for kind, given in sources.items():
        if given is None:
            continue
        for place in [given] if isinstance(given, (str, os.PathLike)) else given:
            places.append((kind, str(Path(place).expanduser())))
    return places


def ingest(
    sources: Optional[Mapping[str, Any]] = None,
    *,
    table: Optional[PathLike] = None,
    home: Optional[PathLike] = None,
    **places: Any,
) -> pl.DataFrame:
    """Reads agent histories into the events table and returns its events.

    The places to read are given per source kind (`SOURCE_KINDS`), as a mapping or keywords —
    ``ingest(claude="~/.claude/projects", codex=[...])`` — as ``leastgrant ingest --claude …``
    takes them; with none, every source's default places under ``home`` (default: ``$HOME``).
    The table is written at ``table`` (kept, and re-read incrementally next time, as the
    command line does), else in a temporary directory removed afterwards. For the run's summary
    (events, duplicates, bad input by reason, skipped files), call `ingest_table`.
    """
    frame, _ = ingest_table(sources, table=table, home=home, **places)
    return frame


def ingest_table(
    sources: Optional[Mapping[str, Any]] = None,
    *,
    table: Optional[PathLike] = None,
    home: Optional[PathLike] = None,
    **places: Any,
) -> "tuple[pl.DataFrame, dict]":
    """`ingest`, also returning the run's summary (as ``leastgrant ingest --json`` reports it)."""
    given = dict(sources or {})
    given.update(places)
    home = Path(home or os.environ.get("HOME", "/")).expanduser()
    state_dir = Path(os.environ.get("LEASTGRANT_HOME") or home / ".leastgrant")
    temporary = None
    if table is None:
        temporary = tempfile.mkdtemp(prefix="leastgrant-events-")
        table = temporary
    try:
        summary = json.loads(
            _native.ingest(str(table), _places(given), str(home), os.getcwd(), str(state_dir))
        )
        return read_events(table), summary
    finally:
        if temporary is not None:
            shutil.rmtree(temporary, ignore_errors=True)


def read_events(table: PathLike) -> pl.DataFrame:
    """The events table ``leastgrant ingest`` wrote at ``table`` (its ``--out``), as polars."""
    return _frame(_native.read_events(str(Path(table).expanduser())))


@dataclass
class Results:
    """A replay's tables (docs/formats.md) as polars frames, and its summary — the same as
    ``leastgrant simulate`` writes (`<table>.parquet` and `summary.json`). A table the run has
    no rows for is an empty frame (the command line writes no file for it)."""

    settings: pl.DataFrame
    curves: pl.DataFrame
    bands: pl.DataFrame
    misses: pl.DataFrame
    promotions: pl.DataFrame
    friction: pl.DataFrame
    capabilities: pl.DataFrame
    projects: pl.DataFrame
    summary: dict = field(default_factory=dict)

    def tables(self) -> "dict[str, pl.DataFrame]":
        """Every table by name."""
        return {name: getattr(self, name) for name in TABLES}

    @property
    def recommended(self) -> Optional[str]:
        """The recommended setting's id, if one meets the miss budget."""
        rec = self.summary.get("recommended") or {}
        return rec.get("id") if isinstance(rec, dict) else None

    def write(self, out: PathLike) -> Path:
        """Writes the tables as Parquet and ``summary.json`` into ``out`` (for the report or
        DuckDB; `leastgrant.spark` and the command line write byte-identical files through the
        Rust writer, this is polars')."""
        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        for name, frame in self.tables().items():
            if frame.height:
                frame.write_parquet(out / f"{name}.parquet")
        (out / "summary.json").write_text(json.dumps(self.summary, indent=2))
        return out


def _results(tables: Mapping[str, Any], summary: str) -> Results:
    frames = {name: _frame(tables[name]) if name in tables else pl.DataFrame() for name in TABLES}
    return Results(summary=json.loads(summary), **frames)


def read_results(out: PathLike) -> Results:
    """A results directory written by ``leastgrant simulate``/``merge`` (or `leastgrant.spark`)."""
    out = Path(out)
    frames = {
        name: pl.read_parquet(out / f"{name}.parquet") if (out / f"{name}.parquet").exists() else pl.DataFrame()
        for name in TABLES
    }
    return Results(summary=json.loads((out / "summary.json").read_text()), **frames)


_GRID_FLAGS = ("posture", "confidence", "z", "min_sessions", "min_days", "half_life", "min_observed", "max_tier")


def _time_us(value: Union[None, str, int, date, datetime]) -> Optional[int]:
    if value is None or isinstance(value, int):
        return value
    if isinstance(value, str):
        if value.isdigit():
            return int(value)
        value = datetime.fromisoformat(value.replace("Z", "+00:00")) if "T" in value else date.fromisoformat(value)
    if not isinstance(value, datetime):
        value = datetime(value.year, value.month, value.day, tzinfo=timezone.utc)
    if value.tzinfo is None:
        value = value.replace(tzinfo=timezone.utc)
    return int(value.timestamp()) * 1_000_000 + value.microsecond


def run_config(
    settings: Optional[Sequence[Mapping[str, Any]]] = None,
    grid: Union[None, PathLike, Mapping[str, Any]] = None,
    *,
    unattended: str = "approve",
    history_home: Optional[str] = None,
    miss_budget: float = 0.10,
    miss_budget_on: str = "all",
    tune_until: Union[None, str, int, date, datetime] = None,
    window: int = 50,
    rules: Union[None, PathLike, Sequence[PathLike]] = None,
    no_rules: bool = False,
) -> str:
    """The replay's settings and options as the native module takes them (JSON text).

    ``grid`` is a TOML grid file (a path, or its text when it holds a newline) or the grid
    flags of ``leastgrant simulate`` as a mapping (``{"posture": ["assist", "autopilot"],
    "confidence": [0.8, 0.9]}``); ``settings`` lists setting descriptions as ``shard.json``
    records them. Neither: the standard comparison. The baselines always follow.

    Rules and grants, as ``leastgrant simulate``: by default the hook's (the state directory's
    ``rules.json`` and each project's ``.leastgrant/rules.json``, with the grants of the state
    directory, ``$LEASTGRANT_HOME`` or ``~/.leastgrant``); ``rules`` names rules files instead
    (``--rules``); ``no_rules=True`` replays learning and floors only (``--no-rules``).
    """
    if no_rules and rules:
        raise ValueError("rules and no_rules=True exclude each other, as --rules and --no-rules do")
    config: dict = {
        "unattended": unattended,
        "history_home": history_home,
        "miss_budget": float(miss_budget),
        "miss_budget_on": miss_budget_on,
        "split_at_us": _time_us(tune_until),
        "window": max(1, int(window)),
        "no_rules": bool(no_rules),
    }
    if rules is not None:
        files = [rules] if isinstance(rules, (str, os.PathLike)) else list(rules)
        config["rules"] = [str(Path(f).expanduser().absolute()) for f in files]
    if settings is not None:
        config["settings"] = [dict(s) for s in settings]
    elif isinstance(grid, Mapping):
        unknown = set(grid) - set(_GRID_FLAGS)
        if unknown:
            raise ValueError(f"unknown grid flags {sorted(unknown)}; the flags are {list(_GRID_FLAGS)}")
        flags = {k: list(v) if isinstance(v, (list, tuple)) else [v] for k, v in grid.items()}
        # `confidence` is per tier in a grid; the native module spreads a flag's value over the
        # tiers as `leastgrant simulate --confidence` does.
        renamed = {"half_life": "half_life_days"}
        config["grid"] = {renamed.get(k, k): v for k, v in flags.items()}
    elif grid is not None:
        text = str(grid)
        config["grid_toml"] = text if "\n" in text else Path(text).expanduser().read_text()
    return json.dumps(config)


def simulate(
    events: Any,
    settings: Optional[Sequence[Mapping[str, Any]]] = None,
    grid: Union[None, PathLike, Mapping[str, Any]] = None,
    **options: Any,
) -> Results:
    """Replays events under settings, as ``leastgrant simulate`` does: the same tables and
    summary for the same options.

    ``events`` is an events table directory (``leastgrant ingest --out``) or a frame with the
    events table's columns (polars, pyarrow, anything with ``__arrow_c_stream__``). Options:
    ``unattended``, ``history_home``, ``miss_budget``, ``miss_budget_on``, ``tune_until``,
    ``window`` (the command line's flags), and the rules and grants replayed with: by default
    the hook's (``$LEASTGRANT_HOME`` or ``~/.leastgrant``: its ``rules.json`` and grants, and
    each project's ``.leastgrant/rules.json``), ``rules=[paths]`` as ``--rules``, or
    ``no_rules=True`` as ``--no-rules`` (learning and floors only).
    """
    config = run_config(settings, grid, **options)
    if isinstance(events, (str, os.PathLike)):
        path = Path(events).expanduser()
        if not _native.is_events_table(str(path)):
            raise ValueError(f"`{path}` holds no events table (write one with `leastgrant ingest --out`)")
        tables, summary = _native.simulate_table(str(path), config)
    else:
        tables, summary = _native.simulate_events(_events_arrow(events), config)
    return _results(tables, summary)


def _events_arrow(events: Any) -> pa.Table:
    """Events as a pyarrow table with exactly the events table's schema (polars' string views
    and large strings cast to strings; column order as the schema's)."""
    if isinstance(events, pl.DataFrame):
        table = events.to_arrow()
    elif isinstance(events, pa.Table):
        table = events
    else:
        table = pa.table(events)
    schema = events_schema()
    missing = [name for name in schema.names if name not in table.column_names]
    if missing:
        raise ValueError(f"the events lack the events table's columns {missing}")
    return table.select(schema.names).cast(schema)


@dataclass
class CheckResult:
    """``leastgrant check --json``: the verdict (allow, ask or deny), its headline, the actions
    the call was read as, and the reasons (code and text)."""

    verdict: str
    headline: str
    reasons: list
    actions: list
    raw: dict


def check(
    command: Optional[str] = None,
    *,
    tool: Optional[str] = None,
    input: Optional[Mapping[str, Any]] = None,
    cwd: Optional[PathLike] = None,
    project: Optional[PathLike] = None,
    rules: Union[None, PathLike, Sequence[PathLike]] = None,
    envelope: Optional[PathLike] = None,
    at: Union[None, str, int, date, datetime] = None,
    no_grants: bool = False,
    claude_settings: bool = False,
) -> CheckResult:
    """One decision, as ``leastgrant check --json`` makes it: the same Rust code (the hook
    crate's ``check``) in this process, so the same verdict and reasons for the same call,
    workspace (``cwd``, ``project``: the command line's defaults), rules files (``rules``:
    ``--rules``, default the hook's), grants (``no_grants``), Claude Code settings
    (``claude_settings``), frozen envelope (``envelope``) and time (``at``: microseconds or a
    date, default now). Raises ``ValueError`` where the command line exits with an error."""
    if (command is None) == (tool is None):
        raise ValueError("check takes a shell command or a tool (with its input), not both")
    files = [] if rules is None else [rules] if isinstance(rules, (str, os.PathLike)) else list(rules)
    text = _native.check(
        command=command,
        tool=tool,
        input=None if tool is None else json.dumps(dict(input or {})),
        cwd=None if cwd is None else str(Path(cwd).expanduser()),
        project=None if project is None else str(Path(project).expanduser()),
        rules=[str(Path(f).expanduser()) for f in files],
        claude_settings=claude_settings,
        no_grants=no_grants,
        envelope=None if envelope is None else str(Path(envelope).expanduser()),
        now_us=_time_us(at),
    )
    raw = json.loads(text)
    return CheckResult(
        verdict=raw["verdict"],
        headline=raw.get("headline", ""),
        reasons=raw.get("reasons", []),
        actions=raw.get("actions", []),
        raw=raw,
    )
