"""The scale benchmark's Spark half (docs/decisions.md, "The scale benchmark"): replays an
events table with `leastgrant.spark.simulate` in local mode under the 64-setting grid of
`replay/examples/scale.rs` (no rules) and prints the wall time, events × settings per second,
and the peak resident memory of the whole process tree (the driver, the JVM, the Python
workers), sampled every half second.

    cargo run --release -p leastgrant-replay --example scale -- --events 10000000 \\
        --dir /work/scale --write-only --keep
    python python/bench/spark_scale.py /work/scale/data --master 'local[2]' [--partitions N]

Build the package with the release profile for this (`maturin build --release -m
python/Cargo.toml` and install the wheel): the default dev build replays several times slower.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import threading
import time

GRID = {"posture": ["assist", "autopilot"], "confidence": [0.5, 0.6, 0.7, 0.8], "min_days": [1, 2, 3, 4],
        "min_sessions": [1, 2]}


def tree_rss_kib(root: int) -> int:
    """The resident memory of `root` and every process below it."""
    children: dict = {}
    rss: dict = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                parent = int(f.read().rsplit(")", 1)[1].split()[1])
            with open(f"/proc/{entry}/status") as f:
                kib = next((int(l.split()[1]) for l in f if l.startswith("VmRSS:")), 0)
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(parent, []).append(int(entry))
        rss[int(entry)] = kib
    total, stack = 0, [root]
    while stack:
        pid = stack.pop()
        total += rss.get(pid, 0)
        stack.extend(children.get(pid, []))
    return total


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("table")
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--partitions", type=int)
    parser.add_argument("--driver-memory", default="4g")
    args = parser.parse_args()

    peak = [0]
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            peak[0] = max(peak[0], tree_rss_kib(os.getpid()))
            done.wait(0.5)

    threading.Thread(target=sample, daemon=True).start()
    from pyspark.sql import SparkSession

    import leastgrant.spark as lspark

    started = time.monotonic()
    spark = (
        SparkSession.builder.master(args.master)
        .appName("leastgrant scale")
        .config("spark.ui.enabled", "false")
        .config("spark.driver.memory", args.driver_memory)
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    ready = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="leastgrant-scale-") as out:
        results = lspark.simulate(spark, args.table, grid=GRID, out=out, partitions=args.partitions,
                                  no_rules=True)
        finished = time.monotonic()
        events = results.summary["settings"][0]["events"]
        settings = len(results.summary["settings"])
    spark.stop()
    done.set()
    replay = finished - ready
    print(json.dumps({
        "events": events,
        "settings": settings,
        "session_start_s": round(ready - started, 1),
        "simulate_s": round(replay, 1),
        "events_x_settings_per_s": round(events * settings / replay) if events else None,
        "peak_tree_rss_mib": peak[0] // 1024,
        "load_average": open("/proc/loadavg").read().split()[:3],
    }, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
