#!/bin/bash
# The interop client with a slow reader: a 100 MB download from one mpquic server over loopback, fetched by the
# mpquic client and the noq client in turn. Both clients run the same application code (interop/src/hq.rs:
# 64 KiB `AsyncRead::read` calls, each followed by an async file write).
#
# The procedure, fixed before looking at any outcome:
#   1. Start one server and let it listen.
#   2. Warm-up: one fetch per client (mpquic, then noq), reported as run 0 and left out of the comparison. The
#      first connection a fresh server serves differs from the later ones (its heap, buffers and blocking file
#      threads are created during it: about 4,500 page faults in the server instead of 0-2,200, and its sender
#      waits on flow control several times longer, with either client); without a warm-up that cost lands on
#      whichever client goes first.
#   3. PAIRS measured pairs that alternate which client goes first (mpquic first in odd pairs, noq first in
#      even ones), so that neither client always follows the other.
#
# Usage: interop/scripts/slow_reader_bench.sh [OUT_DIR]
# Environment: BIN (default target/release/mpquic-interop), PORT (4433), PAIRS (5), HQ (/tmp/hq: certs/,
# www/file and dl/ live there; the certificate and the 100 MB file are created if missing).
# Output: OUT_DIR/hq.txt (default /tmp/bench), one line per fetch with the client's download_ms, the wall time
# of the client process and the server's flow-control and packet counters for that connection; the clients'
# and the server's full summaries next to it.
set -u
OUT=${1:-/tmp/bench}
BIN=${BIN:-target/release/mpquic-interop}
PORT=${PORT:-4433}
PAIRS=${PAIRS:-5}
HQ=${HQ:-/tmp/hq}
BIN=$(realpath "$BIN")
mkdir -p "$OUT" "$HQ/certs" "$HQ/www"
if [ ! -s "$HQ/certs/cert.pem" ] || [ ! -s "$HQ/certs/priv.key" ]; then
  # A leaf certificate for localhost: rustls' verifier refuses a self-signed CA certificate as an end entity.
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 365 -subj /CN=localhost \
    -addext basicConstraints=critical,CA:FALSE -addext subjectAltName=DNS:localhost,IP:127.0.0.1 \
    -keyout "$HQ/certs/priv.key" -out "$HQ/certs/cert.pem" 2>/dev/null || exit 1
fi
if [ "$(stat -c %s "$HQ/www/file" 2>/dev/null)" != 100000000 ]; then
  head -c 100000000 /dev/urandom > "$HQ/www/file" || exit 1
fi
cd "$HQ" || exit 1
: > "$OUT/hq.txt"
ROLE=server TESTCASE=transfer WWW="$HQ/www" CERTS="$HQ/certs" LISTEN_ADDR=127.0.0.1:$PORT \
  "$BIN" endpoint mpquic > "$OUT/hq_server.txt" 2>&1 &
SP=$!
sleep 1

# The server's summary line for its n-th connection (1-based), once that connection has closed.
server_facts() {
  local n=$1 line=""
  for _ in 1 2 3 4 5 6 7 8 9 10; do
    line=$(grep '^interop: multipath=' "$OUT/hq_server.txt" | sed -n "${n}p")
    [ -n "$line" ] && break
    sleep 0.2
  done
  echo "$line" | grep -oE '(fc_blocked_us|fc_blocked_episodes|packets_lost|packets_received)=[0-9]+' \
    | sed 's/^/server_/' | tr '\n' ' '
}

CONN=0
fetch() {
  local impl=$1 run=$2
  rm -rf "$HQ/dl"; mkdir -p "$HQ/dl"
  local s e rc ok
  s=$(date +%s.%N)
  ROLE=client TESTCASE=transfer REQUESTS=https://localhost:$PORT/file DOWNLOADS="$HQ/dl" CERTS="$HQ/certs" \
    SERVER_ADDR=127.0.0.1:$PORT timeout 60 "$BIN" endpoint "$impl" > "$OUT/hq_client_${impl}_$run.txt" 2>&1
  rc=$?
  e=$(date +%s.%N)
  ok=$(cmp -s "$HQ/dl/file" "$HQ/www/file" && echo same || echo DIFF)
  CONN=$((CONN + 1))
  echo "$impl run $run rc=$rc $(echo "$e - $s" | bc) s $ok" \
    "$(grep -oE 'download_ms=[0-9]+' "$OUT/hq_client_${impl}_$run.txt")" \
    "$(server_facts $CONN)" >> "$OUT/hq.txt"
}

# Warm-up (run 0): not part of the comparison.
fetch mpquic 0
fetch noq 0
for i in $(seq 1 "$PAIRS"); do
  if [ $((i % 2)) -eq 1 ]; then order="mpquic noq"; else order="noq mpquic"; fi
  for impl in $order; do
    fetch "$impl" "$i"
  done
done
kill $SP
cat "$OUT/hq.txt"
