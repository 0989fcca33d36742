#!/usr/bin/env bash
# A short run of every fuzz target on its committed seeds (docs/fuzzing.md): CI's fuzz step.
# FUZZ_SECONDS per target (default 10). Works on a stable toolchain: RUSTC_BOOTSTRAP=1 lets
# stable rustc take the flags cargo fuzz passes. A crash fails the run and leaves its input in
# fuzz/artifacts/<target>/.
set -euo pipefail
cd "$(dirname "$0")"
seconds="${FUZZ_SECONDS:-10}"
export RUSTC_BOOTSTRAP=1
export CARGO_TERM_COLOR=never
if ! cargo fuzz --version >/dev/null 2>&1; then
  cargo install cargo-fuzz --locked --quiet
fi
# One build for every target (`-s none`: the code is safe Rust, coverage is what matters here;
# the long run in docs/fuzzing.md adds AddressSanitizer).
start=$(date +%s)
cargo fuzz build -s none --features readers 2>&1 | grep -E '^(error|warning: unused)|Finished' || true
test -x target/x86_64-unknown-linux-gnu/release/shell
echo "fuzz build: $(( $(date +%s) - start )) s"
for target in $(cargo fuzz list); do
  mkdir -p "corpus/$target"
  log="$(mktemp)"
  if ! cargo fuzz run -s none --features readers "$target" "corpus/$target" "seeds/$target" -- \
      -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 >"$log" 2>&1; then
    tail -40 "$log"
    echo "fuzz target $target failed: its input is in fuzz/artifacts/$target/" >&2
    rm -f "$log"
    exit 1
  fi
  echo "$target: $(grep -Eo 'Done [0-9]+ runs' "$log" | head -1)"
  rm -f "$log"
done
