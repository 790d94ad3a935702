#!/bin/sh
# Interleaved A/B of two builds' sessions benches (each compiled against its own build's headers, since
# Options differs between builds): one round of each per turn, the order alternating, so drift on a shared
# machine hits both alike. Prints one line per build, round and configuration; the caller takes medians.
#
#   bench/sessions_ab.sh A_NAME=A_BENCH B_NAME=B_BENCH MODEL [--configs 8x1,8x2] [--runs 50] [--rounds 15]
set -eu
if [ $# -lt 3 ]; then
  sed -n '2,6p' "$0"
  exit 2
fi
a=$1 b=$2 model=$3
shift 3
configs=8x1,8x2 runs=50 rounds=15
while [ $# -gt 0 ]; do
  case "$1" in
    --configs) configs=$2 ;;
    --runs) runs=$2 ;;
    --rounds) rounds=$2 ;;
    *) echo "sessions_ab.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
  shift 2
done
r=1
while [ $r -le "$rounds" ]; do
  if [ $((r % 2)) -eq 1 ]; then order="$a $b"; else order="$b $a"; fi
  for side in $order; do
    "${side#*=}" "$model" --configs "$configs" --runs "$runs" --rounds 1 | grep '^round' |
      sed "s/^round 0/${side%%=*} round $r/"
  done
  r=$((r + 1))
done
