import Foundation
import HTTPTypes

/// A hostile HTTP/1.1 server on 127.0.0.1 for the transport-limit tests: a small Python script, written to a
/// temporary folder and run with `python3`, which prints its port and serves until its standard input closes.
///
/// Paths: `/endless` (zeros until the client leaves), `/huge-length` (declares 1 GiB, then zeros until the
/// client leaves), `/gzip-bomb` (`Content-Encoding: gzip`, zeros compressed on the fly, 1 GiB inflated,
/// never held whole), `/redirect-endless` (a 302 to `/ok` whose body never ends), `/trickle` (declares 1000 bytes, sends one every 100 ms), `/auth/basic`,
/// `/auth/digest`, `/auth/negotiate`, `/auth/bearer` (401 with that challenge), `/auth/proxy` (407 with
/// `Proxy-Authenticate`), `/ok` (a small JSON body), `/echo-line/…` (the request line exactly as received).
///
/// ```swift
/// try await HostileServer.with { server in
///     let request = server.request("/endless")
/// }
/// ```
struct HostileServer {
    /// The port the server listens on.
    let port: Int
    /// `http://127.0.0.1:<port>`.
    var baseURL: URL { URL(string: "http://127.0.0.1:\(port)")! }

    /// A GET request for `path` on the server.
    func request(_ path: String) -> HTTPRequest {
        HTTPRequest(method: .get, scheme: "http", authority: "127.0.0.1:\(port)", path: path)
    }

    /// Runs `body` with a fresh server, stopping the server afterwards.
    static func with<T>(_ body: (HostileServer) async throws -> T) async throws -> T {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("courier-hostile-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        return try await withPythonServer(source: source, named: "hostile_server.py", in: folder) { port in
            try await body(HostileServer(port: port))
        }
    }

    /// The server's Python source.
    static let source = #"""
import sys
import threading
import time
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

CHUNK = b"\0" * 65536
BOMB_SIZE = 1 << 30


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format, *args):
        pass

    def do_GET(self):
        try:
            self.route()
        except (BrokenPipeError, ConnectionResetError, ConnectionAbortedError):
            pass

    do_POST = do_GET

    def small(self, status, headers, body=b'{"error":"unauthorized"}'):
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def chunk(self, data):
        if data:
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))

    def route(self):
        path = self.path.split("?")[0]
        if path == "/endless":
            self.send_response(200)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Connection", "close")
            self.end_headers()
            self.close_connection = True
            while True:
                self.wfile.write(CHUNK)
        elif path == "/huge-length":
            self.send_response(200)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Content-Length", str(1 << 30))
            self.end_headers()
            self.close_connection = True
            while True:
                self.wfile.write(CHUNK)
        elif path == "/gzip-bomb":
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Encoding", "gzip")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            self.close_connection = True
            compressor = zlib.compressobj(9, zlib.DEFLATED, 31)
            sent = 0
            while sent < BOMB_SIZE:
                self.chunk(compressor.compress(CHUNK))
                sent += len(CHUNK)
            self.chunk(compressor.flush())
            self.wfile.write(b"0\r\n\r\n")
        elif path == "/redirect-endless":
            self.send_response(302)
            self.send_header("Location", "/ok")
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Connection", "close")
            self.end_headers()
            self.close_connection = True
            # "Endless" for any client limit, yet bounded (1 GiB), so a client that never stops reading
            # cannot keep this server busy past the test.
            for _ in range((1 << 30) // len(CHUNK)):
                self.wfile.write(CHUNK)
        elif path == "/trickle":
            self.send_response(200)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Content-Length", "1000")
            self.end_headers()
            self.close_connection = True
            for _ in range(1000):
                self.wfile.write(b"x")
                self.wfile.flush()
                time.sleep(0.1)
        elif path == "/auth/basic":
            self.small(401, [("WWW-Authenticate", 'Basic realm="courier"')])
        elif path == "/auth/digest":
            self.small(401, [("WWW-Authenticate",
                              'Digest realm="courier", qop="auth", nonce="6f1b2c3d4e5f", opaque="0a1b2c3d"')])
        elif path == "/auth/negotiate":
            self.small(401, [("WWW-Authenticate", "Negotiate")])
        elif path == "/auth/bearer":
            self.small(401, [("WWW-Authenticate", 'Bearer realm="courier"')])
        elif path == "/auth/proxy":
            self.small(407, [("Proxy-Authenticate", 'Basic realm="proxy"')])
        elif path == "/ok":
            self.small(200, [], b'{"ok":true}')
        elif path.startswith("/echo-line/"):
            body = self.requestline.encode("latin-1")
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        else:
            self.small(404, [], b'{"error":"not found"}')


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
server.daemon_threads = True
print(server.server_address[1], flush=True)
threading.Thread(target=server.serve_forever, daemon=True).start()
sys.stdin.read()
server.shutdown()
"""#
}

/// The hostile server could not be started.
struct HostileServerError: Error, CustomStringConvertible {
    /// What went wrong.
    let message: String
    var description: String { message }
}
