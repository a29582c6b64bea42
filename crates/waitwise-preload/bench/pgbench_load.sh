#!/usr/bin/env bash
# One sample for run.sh: a fresh PostgreSQL cluster in a temporary
# directory, the server and pgbench under whatever LD_PRELOAD this script
# was given (8 clients on 4 pgbench threads, TPC-B-like, scale 2, 10 s,
# fsync off); prints the transactions per second. Run as root, the
# cluster belongs to the `postgres` user (the server refuses root).
#
# Needs: postgresql (apt-get install -y postgresql).
set -euo pipefail
bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
[ -n "$bin" ] || bin=$(dirname "$(command -v initdb)")
dir=$(mktemp -d /tmp/waitwise-pgbench.XXXXXX)
chmod 755 "$dir"
preload=${LD_PRELOAD:-}
unset LD_PRELOAD
as_pg=()
if [ "$(id -u)" = 0 ]; then
    chown postgres: "$dir"
    as_pg=(runuser -u postgres --)
fi
# The server's user must be able to read the interposer.
if [ -n "$preload" ]; then
    cp "$preload" "$dir/preload.so"
    chmod 755 "$dir/preload.so"
    preload=$dir/preload.so
fi
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"${as_pg[@]}" "$bin/initdb" -D "$dir/data" -A trust -U postgres --no-sync >/dev/null
"${as_pg[@]}" env ${preload:+LD_PRELOAD=$preload} "$bin/postgres" -D "$dir/data" -k "$dir" \
    -p "$port" -c listen_addresses= -c fsync=off >"$dir/log" 2>&1 &
server=$!
# A fast shutdown through pg_ctl (runuser does not pass a signal on).
trap '"${as_pg[@]}" "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1 || kill "$server"
      wait "$server" 2>/dev/null || true; rm -rf "$dir"' EXIT
for _ in $(seq 200); do
    "$bin/pg_isready" -q -h "$dir" -p "$port" && break
    sleep 0.05
done
"$bin/pgbench" -h "$dir" -p "$port" -U postgres -i -q -s 2 postgres >/dev/null 2>&1
env ${preload:+LD_PRELOAD=$preload} "$bin/pgbench" -h "$dir" -p "$port" -U postgres \
    -n -c 8 -j 4 -T 10 postgres 2>/dev/null | awk '/^tps/ {print $3}'
