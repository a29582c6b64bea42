#!/usr/bin/env bash
# What profiling costs: each program under the interposer, without and with
# WAITWISE_PROFILE (what `waitwise run --profile` sets), REPEATS interleaved
# pairs (default 5, alternating which runs first). Prints per case the
# median wall time (or, for the mutex micro-benchmark, throughput) of each
# and the median of the pair ratios (profiled / unprofiled; for throughput
# unprofiled / profiled, so that above 1 is a cost either way).
#
#   crates/waitwise-preload/bench/profile_overhead.sh [REPEATS]
#
# Needs: cc, pigz, xz, memcached and memcslap (apt-get install -y pigz
# xz-utils memcached libmemcached-tools). SO=path/to/libwaitwise_preload.so
# benchmarks that build instead of target/release's; INPUT=file is the
# compressors' input (default: 24 MB of this repository's sources, repeated).
set -euo pipefail
cd "$(dirname "$0")/../../.."
REPEATS=${1:-5}
SO=${SO:-$PWD/target/release/libwaitwise_preload.so}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cc -O2 -pthread -o "$WORK/bench" crates/waitwise-preload/bench/bench.c
if [ -z "${INPUT:-}" ]; then
    INPUT=$WORK/input
    while [ "$(stat -c %s "$INPUT" 2>/dev/null || echo 0)" -lt 24000000 ]; do
        cat crates/*/src/*.rs >> "$INPUT"
    done
fi
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
seconds() { # seconds CMD...: wall time of CMD
    local t0 t1
    t0=$(date +%s.%N); "$@" > /dev/null; t1=$(date +%s.%N)
    awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.4f\n", b - a}'
}
run_case() { # run_case PROFILED CMD...: one sample
    if [ "$1" = 1 ]; then
        shift
        env LD_PRELOAD="$SO" WAITWISE_PROFILE="$WORK/profile-%p.json" "$@"
    else
        shift
        env LD_PRELOAD="$SO" "$@"
    fi
}
# compare NAME KIND CMD...: KIND is time (CMD timed here), seconds (CMD
# prints the seconds its work took) or rate (CMD prints a rate).
compare() {
    local name=$1 kind=$2; shift 2
    local u=() p=() r=() i a b
    for i in $(seq "$REPEATS"); do
        for first in $(( i % 2 )) $(( (i + 1) % 2 )); do
            if [ "$kind" = time ]; then
                v=$(seconds run_case "$first" "$@")
            else
                v=$(run_case "$first" "$@")
            fi
            if [ "$first" = 1 ]; then b=$v; else a=$v; fi
        done
        u+=("$a"); p+=("$b")
        if [ "$kind" != rate ]; then
            r+=("$(awk -v a="$a" -v b="$b" 'BEGIN {printf "%.4f", b / a}')")
        else
            r+=("$(awk -v a="$a" -v b="$b" 'BEGIN {printf "%.4f", a / b}')")
        fi
    done
    printf '%-34s unprofiled %10s  profiled %10s  cost ratio %s\n' "$name" \
        "$(printf '%s\n' "${u[@]}" | median)" "$(printf '%s\n' "${p[@]}" | median)" \
        "$(printf '%s\n' "${r[@]}" | median)"
}
compare "pigz -p4 (s)" time pigz -p 4 -c "$INPUT"
compare "xz -T4 -3 (s)" time xz -T4 -3 -c "$INPUT"
compare "contended mutex, 4 threads (pairs/s)" rate "$WORK/bench" mutex 4 0.5
if command -v memcached > /dev/null && command -v memcslap > /dev/null; then
    compare "memcached under memcslap load (s)" seconds \
        crates/waitwise-preload/bench/memcached_load.sh
fi
