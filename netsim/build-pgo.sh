#!/usr/bin/env bash
# Builds a profile-guided (PGO) release build of the simulator, `mpquic-sim`: the same code and the same
# results as `cargo build --release -p mpquic-netsim`, laid out by the compiler from a profile of the
# simulator's own work (docs/simulator-speed.md, "Eighth pass"). On the reference case 20 % fewer
# instructions with the cost-free cipher and 13 % fewer with AES-GCM, and as much less CPU time per
# simulated second on a quiet machine (less on a loaded one); it pays off for long studies.
#
#   bash netsim/build-pgo.sh            # prints the path of the built binary
#   bash netsim/build-pgo.sh --verify   # also runs every study's quick variant with both builds and
#                                       # checks that every results.json is the same byte for byte
#
# Steps, under the target directory T (target/, or $CARGO_TARGET_DIR): (1) an instrumented build into
# T/pgo-generate, (2) the training runs: the reference bench with both ciphers and the quick variants of
# studies a, b, c, d2, d4 and e (bulk, coupled and uncoupled controllers, every scheduler, web and video
# workloads, BBR, the tunnel), (3) the merged profile, (4) the optimised build into T/pgo. Needs
# llvm-profdata of the toolchain's own LLVM (the rustup component llvm-tools, added if missing). Takes about
# 7 minutes on a 2-core machine (11 with --verify). The plain release build in T/release is only built, if
# it is out of date, by --verify. Exit code 2 with one line on stderr when something it needs is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

verify=false
case "${1:-}" in
  "") ;;
  --verify) verify=true ;;
  *) echo "usage: bash netsim/build-pgo.sh [--verify]" >&2; exit 2 ;;
esac

command -v cargo >/dev/null 2>&1 || { echo "cargo not found: install Rust (rustup) first" >&2; exit 2; }
host=$(rustc -vV | sed -n 's/^host: //p')
profdata="$(rustc --print sysroot)/lib/rustlib/$host/bin/llvm-profdata"
if [ ! -x "$profdata" ]; then
  rustup component add llvm-tools >&2 || true
fi
[ -x "$profdata" ] || { echo "llvm-profdata not found at $profdata: run 'rustup component add llvm-tools'" >&2; exit 2; }

target="${CARGO_TARGET_DIR:-target}"
work="$target/pgo-work"
rm -rf "$work"
mkdir -p "$work/raw"
# Absolute: the instrumented binary writes its profile wherever it runs.
raw="$(cd "$work/raw" && pwd)"

echo "== (1/4) instrumented build" >&2
RUSTFLAGS="${RUSTFLAGS:-} -Cprofile-generate=$raw" CARGO_TARGET_DIR="$target/pgo-generate" \
  cargo build --release --locked -p mpquic-netsim >&2

echo "== (2/4) training runs (log: $work/training.log)" >&2
gen="$target/pgo-generate/release/mpquic-sim"
{
  "$gen" bench --duration 3s --crypto null
  "$gen" bench --duration 2s
  for s in a b c d2 d4 e; do
    "$gen" study "$s" --quick --jobs 2 --out "$work/reports"
  done
} >"$work/training.log" 2>&1 || { echo "a training run failed: see $work/training.log" >&2; exit 1; }

echo "== (3/4) profile" >&2
"$profdata" merge -o "$work/merged.profdata" "$raw"

echo "== (4/4) optimised build" >&2
merged="$(cd "$work" && pwd)/merged.profdata"
RUSTFLAGS="${RUSTFLAGS:-} -Cprofile-use=$merged" CARGO_TARGET_DIR="$target/pgo" \
  cargo build --release --locked -p mpquic-netsim >&2
pgo="$target/pgo/release/mpquic-sim"

if $verify; then
  echo "== verify: every study's quick variant, plain release build against the PGO build" >&2
  cargo build --release --locked -p mpquic-netsim >&2
  { "$target/release/mpquic-sim" study all --quick --jobs 2 --out "$work/plain" &&
    "$pgo" study all --quick --jobs 2 --out "$work/pgo"; } >"$work/verify.log" 2>&1 ||
    { echo "a study failed: see $work/verify.log" >&2; exit 1; }
  status=0
  for f in "$work"/plain/*/results.json; do
    name=$(basename "$(dirname "$f")")
    if cmp -s "$f" "$work/pgo/$name/results.json"; then
      echo "same: $name" >&2
    else
      echo "DIFFERENT: $name" >&2
      status=1
    fi
  done
  [ "$status" -eq 0 ] || { echo "the PGO build gives other results than the plain build" >&2; exit 1; }
fi

echo "$pgo"
