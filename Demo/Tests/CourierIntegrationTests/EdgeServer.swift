import Foundation

/// A loopback server for the network-edge tests: a small Python script (run with `python3`) serving plain
/// HTTP, TLS with a certificate from a test-only CA, or mutual TLS that requires a client certificate from a
/// second test-only CA. The certificates are made with `openssl` into a temporary folder for each server.
///
/// Routes: `/r/<status>?to=<location>` (a redirect), `/loop` (redirects to itself), `/chain/<n>` (to
/// `/chain/<n-1>`), `/set?c=<cookie line>` (one `Set-Cookie` per `c`), `/login` (a `302` to `/echo` that sets
/// `sid=42`), anything else echoes method, path, `Authorization`, `Cookie` and body as JSON.
///
/// ```swift
/// try await EdgeServer.with(.tls) { server in
///     server.baseURL            // https://127.0.0.1:<port>
///     server.certificates.caPEM // the root that issued the server's certificate
/// }
/// ```
struct EdgeServer {
    /// How the server talks.
    enum Mode: String { case http, tls, mtls }

    /// The test certificates (PEM files in a temporary folder).
    struct Certificates {
        let folder: URL
        var caPEM: URL { folder.appendingPathComponent("ca.pem") }
        var serverPEM: URL { folder.appendingPathComponent("server.pem") }
        var serverKey: URL { folder.appendingPathComponent("server.key") }
        var clientCAPEM: URL { folder.appendingPathComponent("client-ca.pem") }
        var clientPEM: URL { folder.appendingPathComponent("client.pem") }
        var clientKey: URL { folder.appendingPathComponent("client.key") }
        /// A second, unrelated CA with its own leaf key, for mismatches.
        var otherPEM: URL { folder.appendingPathComponent("other.pem") }

        /// `sha256/…` of the public key in the certificate at `url`, as openssl computes it.
        func pin(of url: URL) throws -> String {
            let key = folder.appendingPathComponent("pin-\(UUID().uuidString).der")
            let pem = folder.appendingPathComponent("pin-\(UUID().uuidString).pem")
            try EdgeServer.openssl(["x509", "-in", url.path, "-pubkey", "-noout", "-out", pem.path])
            try EdgeServer.openssl(["pkey", "-pubin", "-in", pem.path, "-outform", "der", "-out", key.path])
            let digest = try EdgeServer.openssl(["dgst", "-sha256", "-binary", key.path])
            return "sha256/" + digest.base64EncodedString()
        }
    }

    let port: Int
    let mode: Mode
    let certificates: Certificates
    /// `http(s)://127.0.0.1:<port>`.
    var baseURL: URL { URL(string: "\(mode == .http ? "http" : "https")://127.0.0.1:\(port)")! }

    /// Runs `openssl` with `arguments`, returning its standard output.
    @discardableResult
    static func openssl(_ arguments: [String]) throws -> Data {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw HostileServerError(message: "openssl \(arguments.joined(separator: " ")) failed")
        }
        return data
    }

    /// Makes the test CAs and leaves in `folder` (EC P-256, ten years, test-only).
    static func makeCertificates(in folder: URL) throws -> Certificates {
        func path(_ name: String) -> String { folder.appendingPathComponent(name).path }
        func write(_ name: String, _ text: String) throws { try Data(text.utf8).write(to: folder.appendingPathComponent(name)) }
        let ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        try write("ca.ext", "basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign,cRLSign\n")
        try write("server.ext", "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\nbasicConstraints=CA:FALSE\n")
        try write("client.ext", "extendedKeyUsage=clientAuth\nbasicConstraints=CA:FALSE\n")
        for (ca, subject) in [("ca", "Courier Test CA"), ("client-ca", "Courier Test CourierClient CA"), ("other", "Courier Other CA")] {
            try openssl(["req", "-x509"] + ec + ["-keyout", path("\(ca).key"), "-out", path("\(ca).pem"), "-days", "3650",
                                                 "-subj", "/CN=\(subject)", "-addext", "basicConstraints=critical,CA:TRUE",
                                                 "-addext", "keyUsage=critical,keyCertSign,cRLSign"])
        }
        for (leaf, ca, subject) in [("server", "ca", "127.0.0.1"), ("client", "client-ca", "courier-test-client")] {
            try openssl(["req"] + ec + ["-keyout", path("\(leaf).key"), "-out", path("\(leaf).csr"), "-subj", "/CN=\(subject)"])
            try openssl(["x509", "-req", "-in", path("\(leaf).csr"), "-CA", path("\(ca).pem"), "-CAkey", path("\(ca).key"),
                         "-CAcreateserial", "-out", path("\(leaf).pem"), "-days", "3650", "-extfile", path("\(leaf).ext")])
        }
        return Certificates(folder: folder)
    }

    /// Runs `body` with a fresh server in `mode`, stopping it (and removing its certificates) afterwards.
    static func with<T>(_ mode: Mode = .http, _ body: (EdgeServer) async throws -> T) async throws -> T {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("courier-edge-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let certificates = try makeCertificates(in: folder)
        return try await withPythonServer(
            source: source, named: "edge_server.py", in: folder, arguments: [mode.rawValue, folder.path]
        ) { port in
            try await body(EdgeServer(port: port, mode: mode, certificates: certificates))
        }
    }

    /// The server's Python source.
    static let source = #"""
import json
import os
import ssl
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

MODE, FOLDER = sys.argv[1], sys.argv[2]


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format, *args):
        pass

    def answer(self, status, headers, body=b""):
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def handle_any(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        parts = urlsplit(self.path)
        query = parse_qs(parts.query)
        path = parts.path
        if path.startswith("/r/"):
            self.answer(int(path[3:]), [("Location", query.get("to", ["/"])[0])], b"moved")
        elif path == "/loop":
            self.answer(302, [("Location", "/loop")])
        elif path.startswith("/chain/") and int(path[7:]) > 0:
            self.answer(302, [("Location", "/chain/%d" % (int(path[7:]) - 1))])
        elif path == "/set":
            self.answer(200, [("Set-Cookie", line) for line in query.get("c", [])] + [("Content-Type", "application/json")], b"{}")
        elif path == "/login":
            self.answer(302, [("Location", "/echo"), ("Set-Cookie", "sid=42; Path=/")])
        else:
            echo = {
                "method": self.command,
                "path": self.path,
                "host": self.headers.get("Host") or "",
                "authorization": self.headers.get("Authorization") or "",
                "cookie": self.headers.get("Cookie") or "",
                "body": body.decode("utf-8", "replace"),
            }
            self.answer(200, [("Content-Type", "application/json")], json.dumps(echo).encode())

    do_GET = do_POST = do_PUT = do_HEAD = do_DELETE = handle_any


class Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        pass


server = Server(("127.0.0.1", 0), Handler)
if MODE != "http":
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(os.path.join(FOLDER, "server.pem"), os.path.join(FOLDER, "server.key"))
    if MODE == "mtls":
        context.verify_mode = ssl.CERT_REQUIRED
        context.load_verify_locations(os.path.join(FOLDER, "client-ca.pem"))
    server.socket = context.wrap_socket(server.socket, server_side=True, do_handshake_on_connect=False)
print(server.server_address[1], flush=True)
threading.Thread(target=server.serve_forever, daemon=True).start()
sys.stdin.read()
server.shutdown()
"""#
}
