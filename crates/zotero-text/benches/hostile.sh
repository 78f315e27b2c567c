#!/bin/sh
# The hostile files' figures for the README's bounds section: writes every case of
# tests/support/hostile.rs (examples/hostile.rs), then reads each in its own process through
# examples/extract.rs under /usr/bin/time -v, and prints one line per file: wall seconds, peak
# RSS, the outcome (the error, or the pages and their statuses). A case still running after
# 120 s is killed and printed as a hang; address space is capped at 4 GiB (a case over it
# aborts and is printed as a crash) so that a runaway case cannot starve the machine. Not run
# by tests or CI.
#   sh crates/zotero-text/benches/hostile.sh [DIR] [NAME…]
set -u
dir=${1:-/tmp/zotero-text-hostile}
[ $# -gt 0 ] && shift
target=${CARGO_TARGET_DIR:-target}
cargo build -q --release -p zotero-text --examples || exit 1
"$target/release/examples/hostile" "$dir" "$@" >/dev/null || exit 1
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores"
printf '%-34s %9s %8s %8s  %s\n' case bytes seconds "RSS MB" outcome
for f in "$dir"/*; do
  name=$(basename "$f")
  case_name=${name%.*}
  if [ $# -gt 0 ]; then
    keep=0
    for n in "$@"; do [ "$n" = "$case_name" ] && keep=1; done
    [ $keep = 1 ] || continue
  fi
  out=$(ulimit -v 4194304; timeout 120 /usr/bin/time -v "$target/release/examples/extract" "$f" --json 2>/tmp/hostile.err)
  rc=$?
  secs=$(grep 'Elapsed (wall' /tmp/hostile.err | awk '{print $NF}')
  rss=$(grep 'Maximum resident' /tmp/hostile.err | awk '{printf "%.0f", $NF/1024}')
  if [ $rc = 124 ]; then
    outcome="HANG (killed at 120 s)"
  elif [ $rc -gt 1 ]; then
    outcome="CRASH (exit $rc): $(grep -v '^\s' /tmp/hostile.err | head -1)"
  elif [ $rc = 1 ]; then
    outcome="error: $(grep -v '^\s' /tmp/hostile.err | head -1 | sed "s|^$f: ||")"
  else
    outcome=$(printf '%s\n' "$out" | sed -n 's/.*"status":"\([A-Za-z]*\)".*/\1/p' | sort | uniq -c | awk '{printf "%s%s %s", sep, $1, $2; sep=", "}')
    outcome="pages: $outcome"
  fi
  printf '%-34s %9s %8s %8s  %s\n' "$case_name" "$(stat -c %s "$f")" "$secs" "$rss" "$outcome"
done
