public import Courier
public import CourierSecurity
import Crypto
import Foundation
public import HTTPTypes
import Hummingbird
import NIOCore

/// The demo API's transfer module, `/transfers/...`: uploads and downloads that stream to and from disk (or a
/// generator), never whole in memory, behind the same chain as any call. Every request must carry
///
/// - the common parameter `app_id=courier-demo` in its query (400 otherwise),
/// - `Authorization: Bearer demo-transfer-token` (401 otherwise: ``expiredToken`` lets a client show a refresh),
/// - a ``RequestSigning`` signature with ``DemoSecurity/signingKey``; an upload's body is signed by its SHA-256
///   (`X-Courier-Content-SHA256`), which the server checks as the bytes stream in — a body that differs is
///   rejected (401) and not kept.
///
/// Routes: `POST /transfers/upload` (multipart parts or a raw body, hashed as they stream: each part's name,
/// file name, size and SHA-256 are answered), `PUT /transfers/files/:name` (the body saved to disk; answers
/// size and SHA-256), `GET /transfers/files/:name` (a saved file, with `Range`/`If-Range` and an `ETag`),
/// `DELETE /transfers/files/:name`, `GET /transfers/pattern?size=N` (``DownloadPattern`` bytes with
/// `Range`/`If-Range`; `drop=M&key=K` cuts the body at byte M once per key, `ignoreRange=1` answers 200 to every
/// range, `etag=X` changes the validator, as a changed file would) and `GET /transfers/stats`.
///
/// ```swift
/// let store = DemoTransfers.credentialStore()
/// let module = DemoTransfers.module(service: api.service, store: store)
/// let reply = try await client.upload(DemoTransfers.upload(module: module), form: form).reply
/// ```
public enum DemoTransfers {
    /// The access token the server accepts. Public demo material.
    public static let accessToken = "demo-transfer-token"
    /// A token the server answers 401 to, as an expired one.
    public static let expiredToken = "demo-transfer-token-expired"
    /// The common parameter every transfer request must carry.
    public static let appID = "courier-demo"

    /// A credential store starting with ``expiredToken`` (or ``accessToken``) and refreshing to ``accessToken``.
    public static func credentialStore(startExpired: Bool = false) -> CredentialStore {
        CredentialStore(credential: Credential(accessToken: startExpired ? expiredToken : accessToken)) { _ in
            Credential(accessToken: accessToken)
        }
    }

    /// The transfer module: common parameters (`app_id`), bearer auth from `store`, request signing (the
    /// `authorization`, `range` and `if-range` fields signed too).
    public static func module(service: APIService, store: CredentialStore) -> APIModule {
        var options = RequestSigning.Options()
        options.signedHeaderFields = ["content-type", "authorization", "range", "if-range"]
        var stack = SecurityStack()
        stack.commonParameters = CommonParameters([.constant("app_id", .string(appID))])
        stack.auth = BearerAuth(store: store)
        stack.signing = RequestSigning(key: DemoSecurity.signingKey, options: options)
        return APIModule(name: "transfers", service: service).secured(stack)
    }

    /// `POST /transfers/upload` (send it with `client.upload(_:form:)` or `client.upload(_:body:)`).
    public static func upload(module: APIModule) -> Endpoint {
        var endpoint = Endpoint(name: "upload", module: module, method: .post, path: "/transfers/upload")
        endpoint.responseFormat = .json
        return endpoint
    }

    /// `PUT /transfers/files/:name`: the body saved on the server.
    public static func store(name: String, module: APIModule) -> Endpoint {
        var endpoint = Endpoint(name: "storeFile", module: module, method: .put, path: "/transfers/files/\(name)")
        endpoint.responseFormat = .json
        return endpoint
    }

    /// `GET /transfers/files/:name` (send it with `client.download(_:to:)`).
    public static func file(name: String, module: APIModule) -> Endpoint {
        Endpoint(name: "downloadFile", module: module, path: "/transfers/files/\(name)")
    }

    /// `DELETE /transfers/files/:name`.
    public static func delete(name: String, module: APIModule) -> Endpoint {
        var endpoint = Endpoint(name: "deleteFile", module: module, method: .delete, path: "/transfers/files/\(name)")
        endpoint.responseFormat = .json
        return endpoint
    }

    /// `GET /transfers/pattern`: `size` deterministic bytes; see the type's notes for the other switches.
    public static func pattern(
        size: Int64, module: APIModule, drop: Int64? = nil, key: String? = nil, ignoresRange: Bool = false,
        eTag: String? = nil
    ) -> Endpoint {
        var query = [QueryItem("size", String(size))]
        if let drop { query.append(QueryItem("drop", String(drop))) }
        if let key { query.append(QueryItem("key", key)) }
        if ignoresRange { query.append(QueryItem("ignoreRange", "1")) }
        if let eTag { query.append(QueryItem("etag", eTag)) }
        return Endpoint(name: "downloadPattern", module: module, path: "/transfers/pattern", query: query)
    }
}

/// The transfer routes (see ``DemoTransfers``).
struct TransferRoutes: DemoRouteGroup {
    final class Stats: Sendable {
        struct Counters: Sendable {
            var rangeRequests: [String] = []
            var ifRanges: [String] = []
            var dropped: Set<String> = []
            var uploads = 0
            var rejected = 0
        }
        let counters = Locked(Counters())
    }

    func register(on router: Router<BasicRequestContext>, state: DemoState, exchange: DemoExchange) {
        let folder = FileManager.default.temporaryDirectory
            .appendingPathComponent("courier-demo-transfers-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        var options = SignatureVerifier.Options()
        options.requiredSignedHeaders = ["authorization"]
        let verifier = SignatureVerifier(keys: [DemoSecurity.signingKey], nonces: NonceStore(capacity: 100_000),
                                         options: options)
        let stats = Stats()
        let guardian = TransferGuard(exchange: exchange, verifier: verifier, stats: stats)

        router.post("/transfers/upload") { request, _ -> Response in
            state.countRequest()
            return try await guardian.receive(request) { body, check in
                try await Self.upload(request, body: body, check: &check)
            }
        }
        router.put("/transfers/files/:name") { request, context -> Response in
            state.countRequest()
            guard let name = context.parameters.get("name"), Self.isSafe(name) else {
                return exchange.failure(to: request, code: 400, message: "bad file name", status: .badRequest)
            }
            let file = folder.appendingPathComponent(name)
            return try await guardian.receive(request) { body, check in
                try await Self.store(body, to: file, check: &check)
            }
        }
        router.get("/transfers/files/:name") { request, context -> Response in
            state.countRequest()
            if let refusal = guardian.refusal(request) { return refusal }
            guard let name = context.parameters.get("name"), Self.isSafe(name),
                let size = (try? FileManager.default.attributesOfItem(atPath: folder.appendingPathComponent(name).path))?[.size]
                    .flatMap({ ($0 as? NSNumber)?.int64Value })
            else {
                return exchange.failure(to: request, code: 404, message: "no such file", status: .notFound)
            }
            let file = folder.appendingPathComponent(name)
            let modified = (try? FileManager.default.attributesOfItem(atPath: file.path))?[.modificationDate] as? Date
            let eTag = "\"file-\(size)-\(Int64((modified?.timeIntervalSince1970 ?? 0) * 1000))\""
            return Self.serve(request, size: size, eTag: eTag, stats: stats, drop: nil, ignoresRange: false) { offset, count in
                let handle = try FileHandle(forReadingFrom: file)
                defer { try? handle.close() }
                try handle.seek(toOffset: UInt64(offset))
                return try handle.read(upToCount: count) ?? Data()
            }
        }
        router.delete("/transfers/files/:name") { request, context -> Response in
            state.countRequest()
            if let refusal = guardian.refusal(request) { return refusal }
            guard let name = context.parameters.get("name"), Self.isSafe(name) else {
                return exchange.failure(to: request, code: 400, message: "bad file name", status: .badRequest)
            }
            try? FileManager.default.removeItem(at: folder.appendingPathComponent(name))
            return exchange.respond(to: request, DemoExchange.envelope(data: ["deleted": .string(name)]), messageType: nil)
        }
        router.get("/transfers/pattern") { request, _ -> Response in
            state.countRequest()
            if let refusal = guardian.refusal(request) { return refusal }
            let query = request.uri.queryParameters
            let size = min(Int64(1) << 34, max(0, query["size"].flatMap { Int64(String($0)) } ?? 1 << 20))
            let key = query["key"].map(String.init) ?? "default"
            let drop = query["drop"].flatMap { Int64(String($0)) }.flatMap { at -> Int64? in
                stats.counters.withLock { $0.dropped.contains(key) } ? nil : at
            }
            let eTag = query["etag"].map { "\"\($0)\"" } ?? "\"pattern-\(size)\""
            return Self.serve(request, size: size, eTag: eTag, stats: stats, drop: drop.map { (key, $0) },
                              ignoresRange: query["ignoreRange"] == "1") { offset, count in
                Data(DownloadPattern.bytes(at: offset, count: count))
            }
        }
        router.get("/transfers/stats") { request, _ -> Response in
            let counters = stats.counters.withLock { $0 }
            let data: Value = [
                "rangeRequests": .array(counters.rangeRequests.map(Value.string)),
                "ifRanges": .array(counters.ifRanges.map(Value.string)),
                "uploads": .int(Int64(counters.uploads)), "rejected": .int(Int64(counters.rejected)),
            ]
            return exchange.respond(to: request, DemoExchange.envelope(data: data), messageType: nil)
        }
    }

    static func isSafe(_ name: String) -> Bool {
        !name.isEmpty && name.count <= 128 && name.allSatisfy { $0.isLetter || $0.isNumber || "-_.".contains($0) }
            && !name.hasPrefix(".")
    }

    /// A body of `size` bytes from `read`, honouring `Range` under `If-Range`, cut at `drop` (once per key);
    /// the transfer stats record each range asked for.
    static func serve(
        _ request: Request, size: Int64, eTag: String, stats: Stats, drop: (key: String, at: Int64)?,
        ignoresRange: Bool, read: @escaping @Sendable (Int64, Int) throws -> Data
    ) -> Response {
        rangedResponse(
            request, size: size, eTag: eTag, drop: drop, ignoresRange: ignoresRange,
            record: { range, ifRange in
                stats.counters.withLock {
                    $0.rangeRequests.append(range)
                    if let ifRange { $0.ifRanges.append(ifRange) }
                }
            },
            claimDrop: { key in stats.counters.withLock { $0.dropped.insert(key).inserted } },
            read: read)
    }

    /// Saves `body` to `file` (through a temporary name, kept only when the signed digest matches).
    static func store(_ body: RequestBody, to file: URL, check: inout StreamedBodyCheck) async throws -> Value {
        let temporary = file.deletingLastPathComponent().appendingPathComponent(".incoming-\(UUID().uuidString)")
        guard FileManager.default.createFile(atPath: temporary.path, contents: nil) else {
            throw CourierError(.fileAccessFailed, detail: "cannot create \(temporary.lastPathComponent)")
        }
        var hasher = SHA256()
        var size: Int64 = 0
        do {
            let handle = try FileHandle(forWritingTo: temporary)
            defer { try? handle.close() }
            for try await buffer in body {
                buffer.withUnsafeReadableBytes { hasher.update(bufferPointer: $0) }
                check.update(buffer.readableBytesView)
                try handle.write(contentsOf: buffer.readableBytesView)
                size += Int64(buffer.readableBytes)
            }
            try check.finish()
        } catch {
            try? FileManager.default.removeItem(at: temporary)
            throw error
        }
        if FileManager.default.fileExists(atPath: file.path) { try FileManager.default.removeItem(at: file) }
        try FileManager.default.moveItem(at: temporary, to: file)
        return ["name": .string(file.lastPathComponent), "size": .int(size),
                "sha256": .string(hasher.finalize().map { String(format: "%02x", $0) }.joined())]
    }

    /// Reads an upload: multipart parts (each hashed as it streams) or a raw body.
    static func upload(_ request: Request, body: RequestBody, check: inout StreamedBodyCheck) async throws -> Value {
        let contentType = request.headers[.contentType] ?? ""
        if contentType.hasPrefix("multipart/form-data"),
            let boundary = contentType.split(separator: ";").lazy
                .map({ $0.trimmingCharacters(in: .whitespaces) }).first(where: { $0.hasPrefix("boundary=") })
                .map({ String($0.dropFirst("boundary=".count)).trimmingCharacters(in: CharacterSet(charactersIn: "\"")) })
        {
            var parser = MultipartParser(boundary: boundary)
            for try await buffer in body {
                check.update(buffer.readableBytesView)
                try parser.feed(Data(buffer.readableBytesView))
            }
            try check.finish()
            let parts = try parser.finish()
            return ["parts": .array(parts.map { part in
                ["name": .string(part.name), "fileName": part.fileName.map(Value.string) ?? .null,
                 "size": .int(part.size), "sha256": .string(part.digest),
                 "text": part.text.map(Value.string) ?? .null]
            })]
        }
        var hasher = SHA256()
        var size: Int64 = 0
        for try await buffer in body {
            buffer.withUnsafeReadableBytes { hasher.update(bufferPointer: $0) }
            check.update(buffer.readableBytesView)
            size += Int64(buffer.readableBytes)
        }
        try check.finish()
        return ["size": .int(size), "sha256": .string(hasher.finalize().map { String(format: "%02x", $0) }.joined())]
    }
}

/// The checks every transfer request passes: common parameter, bearer token, signature.
struct TransferGuard: Sendable {
    var exchange: DemoExchange
    var verifier: SignatureVerifier
    var stats: TransferRoutes.Stats

    /// A refusal for a request without a body (nil: it passes).
    func refusal(_ request: Request) -> Response? {
        if let refusal = preconditions(request) { return refusal }
        do {
            _ = try verifier.verify(request.head, body: nil)
            return nil
        } catch let error as CourierError {
            return rejection(error, to: request)
        } catch {
            return rejection(CourierError(.signatureInvalid), to: request)
        }
    }

    private func preconditions(_ request: Request) -> Response? {
        let query = request.uri.queryParameters
        guard query["app_id"].map(String.init) == DemoTransfers.appID else {
            return exchange.failure(to: request, code: 400, message: "the common parameter app_id is missing",
                                    status: .badRequest)
        }
        guard request.headers[.authorization] == "Bearer \(DemoTransfers.accessToken)" else {
            // RFC 6750: a presented token that is not (or no longer) valid is `invalid_token`.
            let challenge = request.headers[.authorization] == nil
                ? #"Bearer realm="demo-transfers""# : #"Bearer realm="demo-transfers", error="invalid_token""#
            return exchange.respond(
                to: request, DemoExchange.envelope(code: 401, message: "the access token is missing or expired", data: nil),
                status: .unauthorized, messageType: "demo.ErrorResponse", headers: [.wwwAuthenticate: challenge])
        }
        return nil
    }

    /// Checks the head, then hands the streamed body (with its digest check) to `handle`; a body whose
    /// bytes differ from the signed digest is a 401.
    func receive(
        _ request: Request,
        _ handle: (RequestBody, inout StreamedBodyCheck) async throws -> Value
    ) async throws -> Response {
        if let refusal = preconditions(request) { return refusal }
        var check: StreamedBodyCheck
        do {
            (_, check) = try verifier.verifyStreamed(request.head)
        } catch let error as CourierError {
            return rejection(error, to: request)
        }
        do {
            let answer = try await handle(request.body, &check)
            stats.counters.withLock { $0.uploads += 1 }
            var data = answer
            if case .object(var object) = answer {
                object["query"] = .string(request.uri.query ?? "")
                data = .object(object)
            }
            return exchange.respond(to: request, DemoExchange.envelope(data: data), messageType: nil)
        } catch let error as CourierError where error.category == .security {
            return rejection(error, to: request)
        } catch let error as CourierError where error.code == .malformedInput {
            return exchange.failure(to: request, code: 400, message: error.detail ?? "malformed upload",
                                    status: .badRequest)
        }
    }

    private func rejection(_ error: CourierError, to request: Request) -> Response {
        stats.counters.withLock { $0.rejected += 1 }
        return exchange.failure(to: request, code: error.code.number,
                                message: "\(error.code.name): \(error.detail ?? "")", status: .unauthorized)
    }
}

/// A streaming `multipart/form-data` reader: hashes each part as its bytes pass (a small text part is kept).
struct MultipartParser {
    struct Part {
        var name: String
        var fileName: String?
        var size: Int64 = 0
        var digest = ""
        var text: String?
    }

    private enum Phase { case preamble, headers, body, done }

    private let delimiter: Data
    private var buffer = Data("\r\n".utf8)   // the first boundary has no CRLF before it
    private var phase = Phase.preamble
    private var parts: [Part] = []
    private var current: Part?
    private var hasher = SHA256()
    private var text = Data()

    init(boundary: String) { delimiter = Data("\r\n--\(boundary)".utf8) }

    mutating func feed(_ data: Data) throws {
        buffer.append(data)
        while true {
            switch phase {
            case .preamble:
                guard let range = buffer.range(of: delimiter) else {
                    buffer = Data(buffer.suffix(delimiter.count))
                    return
                }
                buffer.removeSubrange(..<range.upperBound)
                phase = .headers
            case .headers:
                // After a delimiter: "--" ends the body, else CRLF, header lines, a blank line.
                if buffer.count >= 2, buffer.prefix(2) == Data("--".utf8) {
                    phase = .done
                    return
                }
                guard let end = buffer.range(of: Data("\r\n\r\n".utf8)) else {
                    if buffer.count > 16 << 10 { throw CourierError(.malformedInput, detail: "a part's header is too long") }
                    return
                }
                let head = String(decoding: buffer[buffer.startIndex..<end.lowerBound], as: UTF8.self)
                buffer.removeSubrange(..<end.upperBound)
                current = Self.part(head)
                guard current != nil else { throw CourierError(.malformedInput, detail: "a part has no name") }
                hasher = SHA256()
                text = Data()
                phase = .body
            case .body:
                if let range = buffer.range(of: delimiter) {
                    consume(buffer[buffer.startIndex..<range.lowerBound])
                    buffer.removeSubrange(..<range.upperBound)
                    if var part = current {
                        part.digest = hasher.finalize().map { String(format: "%02x", $0) }.joined()
                        if part.fileName == nil { part.text = String(decoding: text, as: UTF8.self) }
                        parts.append(part)
                    }
                    current = nil
                    phase = .headers
                } else {
                    let keep = delimiter.count - 1
                    guard buffer.count > keep else { return }
                    let cut = buffer.index(buffer.endIndex, offsetBy: -keep)
                    consume(buffer[buffer.startIndex..<cut])
                    buffer = Data(buffer[cut...])
                    return
                }
            case .done:
                return
            }
        }
    }

    private mutating func consume(_ bytes: Data) {
        guard !bytes.isEmpty else { return }
        hasher.update(data: bytes)
        current?.size += Int64(bytes.count)
        if current?.fileName == nil, text.count < 64 << 10 { text.append(bytes) }
    }

    func finish() throws -> [Part] {
        guard phase == .done else { throw CourierError(.malformedInput, detail: "the multipart body ended early") }
        return parts
    }

    static func part(_ head: String) -> Part? {
        for line in head.split(separator: "\r\n") where line.lowercased().hasPrefix("content-disposition:") {
            func parameter(_ key: String) -> String? {
                guard let range = line.range(of: "\(key)=\"") else { return nil }
                let rest = line[range.upperBound...]
                guard let close = rest.firstIndex(of: "\"") else { return nil }
                return QueryItem.percentDecode(rest[..<close])
            }
            guard let name = parameter(" name") ?? parameter(";name") else { return nil }
            return Part(name: name, fileName: parameter("filename"))
        }
        return nil
    }
}
