"""``python -m leastgrant.spark``: the Spark jobs for a scheduler.

    python -m leastgrant.spark simulate --events DIR --out DIR [--master local[4]] [--partitions N]
    python -m leastgrant.spark ingest --claude PATH … --out DIR [--master …]

``simulate`` writes the files ``leastgrant simulate`` writes with the same flags (the tables and
``summary.json``, byte for byte); ``ingest`` writes the events as a Parquet dataset that
``simulate --events`` reads back (``DIR/events/``, Spark's layout, not ``leastgrant ingest``'s
incremental table).
"""

from __future__ import annotations

import argparse
import json
import sys

from .. import SOURCE_KINDS


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m leastgrant.spark", description=__doc__.split("\n\n")[0])
    parser.add_argument("--master", help="Spark master URL (default: the environment's, else local[*])")
    sub = parser.add_subparsers(dest="command", required=True)
    sim = sub.add_parser("simulate", help="replay an events table on Spark")
    sim.add_argument("--events", required=True, help="the events table (leastgrant ingest --out, or this ingest's --out)")
    sim.add_argument("--out", required=True, help="where the result tables go")
    sim.add_argument("--partitions", type=int, help="parts the projects are split into")
    sim.add_argument("--grid", help="a TOML grid file")
    sim.add_argument("--unattended", default="approve")
    sim.add_argument("--history-home")
    sim.add_argument("--miss-budget", type=float, default=0.10)
    sim.add_argument("--tune-until")
    sim.add_argument("--window", type=int, default=50)
    sim.add_argument("--rules", action="append", default=[], metavar="FILE",
                     help="a rules file to replay with (repeatable) [default: the hook's, with your grants]")
    sim.add_argument("--no-rules", action="store_true", help="replay with no rules and no grants")
    sim.add_argument("--miss-budget-on", default="all")
    sim.add_argument("--json", action="store_true", help="print the summary as JSON")
    ing = sub.add_parser("ingest", help="read transcripts into an events dataset on Spark")
    # One flag per transcript source, named as `leastgrant ingest` names it: the first kind of
    # each name in claim order (`claude-jsonl` before Claude Code's settings and OTel logs, which
    # are not transcripts).
    flags = []
    for kind in SOURCE_KINDS:
        flag = kind.split("-")[0]
        if flag not in ("cursor", "ledger") and flag not in flags:
            flags.append(flag)
    for flag in flags:
        ing.add_argument(f"--{flag}", action="append", default=[], metavar="PATH")
    ing.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    if args.command == "simulate" and args.rules and args.no_rules:
        parser.error("--rules and --no-rules exclude each other")

    from pyspark.sql import SparkSession

    builder = SparkSession.builder.appName(f"leastgrant {args.command}")
    if args.master:
        builder = builder.master(args.master)
    spark = builder.getOrCreate()
    from . import ingest, simulate

    try:
        if args.command == "simulate":
            results = simulate(
                spark,
                args.events,
                grid=args.grid,
                out=args.out,
                partitions=args.partitions,
                unattended=args.unattended,
                history_home=args.history_home,
                miss_budget=args.miss_budget,
                tune_until=args.tune_until,
                window=args.window,
                rules=args.rules or None,
                no_rules=args.no_rules,
                miss_budget_on=args.miss_budget_on,
            )
            if args.json:
                print(json.dumps(results.summary, indent=2))
            else:
                print(f"{results.settings.height} settings replayed; recommended: {results.recommended}; tables in {args.out}")
        else:
            places = {k: v for k, v in vars(args).items() if k not in ("command", "out", "master") and v}
            frame = ingest(spark, places)
            frame.write.mode("overwrite").parquet(f"{args.out}/events")
            print(f"events written to {args.out}/events")
    finally:
        spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
