#!/usr/bin/env bash
# One sample for run.sh: starts memcached (4 worker threads) on a free
# loopback port, under whatever LD_PRELOAD this script was given, loads it
# with memcslap (16 client threads, 10000 sets each, then as many gets;
# the client itself runs without the interposer) and prints the seconds
# the load took.
#
# Needs: memcached and memcslap (apt-get install -y memcached
# libmemcached-tools).
set -euo pipefail
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
memcached -u root -U 0 -t 4 -l 127.0.0.1 -m 256 -p "$port" &
server=$!
trap 'kill "$server" 2>/dev/null; wait "$server" 2>/dev/null || true' EXIT
for _ in $(seq 100); do
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
    sleep 0.05
done
load() {
    env -u LD_PRELOAD memcslap --servers="127.0.0.1:$port" --concurrency=16 \
        --execute-number=10000 --test="$1" | awk '/^Time to (set|get)/ {print $(NF-1)}'
}
set_s=$(load set)
get_s=$(load get)
awk -v a="$set_s" -v b="$get_s" 'BEGIN {print a + b}'
