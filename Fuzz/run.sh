#!/usr/bin/env bash
# Builds the fuzz package (incrementally) and runs one libFuzzer target for a bounded time.
#
#   Fuzz/run.sh TARGET SECONDS [libFuzzer options...]      e.g. Fuzz/run.sh FuzzJSON 60 -jobs=2
#   Fuzz/run.sh --build                                      builds every target, runs none
#
# Every target is built at once, in one scratch folder (Fuzz/.build-fuzz): one build of Courier with coverage
# and AddressSanitizer serves them all. FUZZ_SKIP_BUILD=1 skips the build (`make fuzz` builds once, then runs
# two targets at a time).
#
# The seed corpus Fixtures/fuzz/TARGET/ is copied into Fuzz/corpus-work/TARGET/ (gitignored), where the
# fuzzer grows it across runs; crashing, hanging (timeout-*) and memory-hungry (oom-*) inputs land in
# Fuzz/corpus-work/TARGET-artifacts/, and -jobs logs (fuzz-N.log) in Fuzz/corpus-work/. A crash found
# should be fixed and its input added to the codec's regression tests.
set -euo pipefail

fuzz_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
build_only=0
if [[ "${1:-}" == "--build" ]]; then
    build_only=1
elif [[ $# -lt 2 ]]; then
    echo "usage: $0 TARGET SECONDS [libFuzzer options...] | $0 --build" >&2
    exit 64
fi
target="${1:-}"
seconds="${2:-}"
shift $(( build_only ? 1 : 2 ))

root="$(dirname "$fuzz_dir")"
seeds="$root/Fixtures/fuzz/$target"
work="$fuzz_dir/corpus-work/$target"
artifacts="$fuzz_dir/corpus-work/$target-artifacts"

if [[ $build_only == 0 && ! -d "$fuzz_dir/Sources/$target" ]]; then
    echo "unknown fuzz target '$target' (see $fuzz_dir/Sources)" >&2
    exit 64
fi

# No fuzz target needs a package trait: Courier's default (no traits) leaves out NIO, crypto and SQLite.
# -sanitize=fuzzer alone was seen to leave objects without coverage counters on some builds (which would
# fuzz blind), so the coverage kinds libFuzzer reads are asked for explicitly, and checked below.
# SwiftPM's own --sanitize flags, not -Xswiftc -sanitize=…: only then does it skip renaming `main` to
# `<Target>_main` at link time (which fails for a target with no main.swift), leaving libFuzzer's `main`.
# All products are built by one command with the same flags: building one product, then another with
# `--product`, was seen to relink the second against dependencies rebuilt without coverage.
build_flags=(-c debug --package-path "$fuzz_dir" --scratch-path "$fuzz_dir/.build-fuzz"
             --sanitize=fuzzer --sanitize=address -Xswiftc -parse-as-library
             -Xswiftc -sanitize-coverage=edge,inline-8bit-counters,pc-table)
if [[ "${FUZZ_SKIP_BUILD:-0}" != 1 ]]; then
    swift build "${build_flags[@]}"
fi
bin_dir="$(swift build "${build_flags[@]}" --show-bin-path)"

# A binary without coverage counters would "fuzz" blind and prove nothing: refuse to run it.
check_instrumented() {
    local probe
    # (an empty run: leak checks off, or lazily initialised globals would write a crash-* file here)
    probe="$(ASAN_OPTIONS=detect_leaks=0 "$bin_dir/$1" -runs=0 2>&1 || true)"
    if [[ "$probe" != *"inline 8-bit counters"* ]]; then
        echo "$1 is not instrumented for coverage; not fuzzing blind" >&2
        return 1
    fi
}
if [[ $build_only == 1 ]]; then
    for built in "$fuzz_dir"/Sources/*/; do check_instrumented "$(basename "$built")"; done
    exit 0
fi
check_instrumented "$target"

mkdir -p "$work" "$artifacts"
if [[ -d "$seeds" ]]; then
    cp -n "$seeds"/* "$work"/ 2>/dev/null || true
fi

# Leaks are checked (libFuzzer's default), less the false reports for lazily initialised globals.
export LSAN_OPTIONS="suppressions=$fuzz_dir/lsan.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"

# An input that runs 10 s (libFuzzer's default is 1,200) or takes 2 GiB is a finding, saved as a timeout-* or
# oom-* artifact: hangs and unbounded memory are bugs here, like crashes. Options given on the command line
# come later and win.
# From inside the ignored work folder: with -jobs/-workers libFuzzer writes fuzz-N.log files to the current
# directory, and those must not land in the repository either.
cd "$fuzz_dir/corpus-work"
exec "$bin_dir/$target" "$work" -max_total_time="$seconds" -artifact_prefix="$artifacts/" -print_final_stats=1 \
    -timeout=10 -rss_limit_mb=2048 "$@"
