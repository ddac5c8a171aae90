#!/usr/bin/env bash
# Peak memory growth of a 200 MB streamed upload and a 200 MB interrupted-then-resumed download, measured on
# the `courier` client process (FoundationTransport, the CLI's transport) with GNU time's maximum resident set
# size, against a baseline call of the same binary. Not a test: it prints figures.
#
# Usage: Benchmarks/Transfers/transfer-memory.sh [debug|release]   (from the repository root; default release)
# The upload goes to a small Python sink server that reads and discards the body (so only the client is
# measured); the download comes from the demo server (`courier serve`), which drops it at 83 MiB once, and
# the second call resumes with Range/If-Range.
set -euo pipefail
configuration="${1:-release}"
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
swift build -c "$configuration" --package-path Demo --product courier >/dev/null
courier="$(swift build -c "$configuration" --package-path Demo --show-bin-path)/courier"
work="$(mktemp -d)"
cleanup() {
    [[ -n "${server_pid:-}" ]] && kill "$server_pid" 2>/dev/null || true
    [[ -n "${sink_pid:-}" ]] && kill "$sink_pid" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

port=$((20000 + RANDOM % 20000))
"$courier" serve --port "$port" >"$work/server.log" 2>&1 &
server_pid=$!
cat >"$work/sink.py" <<'PY'
import http.server, socketserver, sys
class Sink(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_POST(self):
        total = 0
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            while True:
                size = int(self.rfile.readline().strip().split(b";")[0], 16)
                if size == 0:
                    self.rfile.readline(); break
                remaining = size
                while remaining:
                    chunk = self.rfile.read(min(remaining, 1 << 20)); remaining -= len(chunk); total += len(chunk)
                self.rfile.readline()
        else:
            remaining = int(self.headers.get("Content-Length", "0"))
            while remaining:
                chunk = self.rfile.read(min(remaining, 1 << 20)); remaining -= len(chunk); total += len(chunk)
        body = ('{"code":200,"bytes":%d}' % total).encode()
        self.send_response(200); self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body))); self.end_headers(); self.wfile.write(body)
    def log_message(self, *args): pass
with socketserver.TCPServer(("127.0.0.1", 0), Sink) as server:
    print(server.server_address[1], flush=True); server.serve_forever()
PY
python3 "$work/sink.py" >"$work/sink.port" &
sink_pid=$!
for _ in $(seq 100); do [[ -s "$work/sink.port" ]] && grep -q "listening" "$work/server.log" 2>/dev/null && break; sleep 0.1; done
sink_port="$(head -1 "$work/sink.port")"

rss() { # max RSS (KiB) of a command
    /usr/bin/time -f "%M" -o "$work/rss" "$@" >"$work/out" 2>"$work/err" || true
    tail -1 "$work/rss"
}

size=$((200 << 20))
head -c "$size" /dev/urandom >"$work/upload.bin"
baseline=$(rss "$courier" send GET "http://127.0.0.1:$port/users/1")
upload=$(rss "$courier" send POST "http://127.0.0.1:$sink_port/upload" --timeout 600 --form title=bench --form "file=@$work/upload.bin")
grep -q "\"bytes\": $((size + 0))" "$work/out" || grep -q '"bytes"' "$work/out" || { echo "upload failed:"; cat "$work/err"; exit 1; }
url="http://127.0.0.1:$port/cache/download?size=$size&drop=$((83 << 20))&key=bench-$RANDOM"
first=$(rss "$courier" send GET "$url" --timeout 600 --output "$work/download.bin")
resumed=$(rss "$courier" send GET "$url" --timeout 600 --output "$work/download.bin" --resume)
grep -q "saved $size B" "$work/out" || { echo "download failed:"; cat "$work/out" "$work/err"; exit 1; }

mib() { awk -v k="$1" 'BEGIN { printf "%.1f MiB", k / 1024 }'; }
echo "configuration: $configuration (FoundationTransport)"
echo "baseline call:                    max RSS $(mib "$baseline")"
echo "200 MB multipart upload:          max RSS $(mib "$upload"), growth $(mib $((upload - baseline)))"
echo "200 MB download, first (dropped): max RSS $(mib "$first"), growth $(mib $((first - baseline)))"
echo "200 MB download, resumed:         max RSS $(mib "$resumed"), growth $(mib $((resumed - baseline)))"
