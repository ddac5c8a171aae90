#if Security
#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
public import Crypto
public import HTTPTypes
import Logging

/// Signs requests with HMAC-SHA256 over their ``CanonicalRequest`` (network role: it signs the bytes
/// actually sent) and, optionally, checks the server's signature over each response body.
///
/// It adds these header fields:
///
/// | field | value |
/// | --- | --- |
/// | `X-Courier-Key-Id` | the key id |
/// | `X-Courier-Timestamp` | Unix seconds |
/// | `X-Courier-Nonce` | 32 random lower-case hex digits, fresh for every send (a replay by auth refresh or retry gets a new one) |
/// | `X-Courier-Signed-Headers` | the signed field names, lower-cased, sorted, `;`-separated |
/// | `X-Courier-Signature` | lower-case hex HMAC-SHA256 of ``CanonicalRequest/string`` |
///
/// With ``EnvelopeEncryption`` in the same chain the envelope is sealed first, so the signature covers the
/// ciphertext (what is sent), and the server can reject a forged or replayed request before decrypting
/// anything; see ``SecurityStack`` for the order.
///
/// ```swift
/// let signing = RequestSigning(key: SigningKey(id: "app-2026", secret: secret))
/// module.interceptors.append(signing)
/// ```
public struct RequestSigning: Interceptor {
    /// Settings.
    public struct Options: Sendable {
        /// Header fields whose values are signed (case-insensitive names). Default: `content-type`.
        public var signedHeaderFields: [String]
        /// Require a valid `X-Courier-Signature` over every 2xx response body (see ``CanonicalResponse``);
        /// a missing one fails with `CourierError.Code.signatureMissing`, a wrong one with
        /// `CourierError.Code.signatureInvalid`. Error statuses without a signature pass (they fail anyway).
        public var verifiesResponses: Bool

        /// Defaults: sign `content-type`, do not verify responses.
        public init() {
            signedHeaderFields = ["content-type"]
            verifiesResponses = false
        }
    }

    /// The key.
    public var key: SigningKey
    /// The settings.
    public var options: Options
    /// The current time (injectable for tests).
    public var now: @Sendable () -> Date
    /// Makes a nonce for each send (injectable for tests).
    public var makeNonce: @Sendable () -> String

    /// A signing stage.
    public init(
        key: SigningKey, options: Options = Options(), now: @escaping @Sendable () -> Date = { Date() },
        makeNonce: @escaping @Sendable () -> String = RequestSigning.randomNonce
    ) {
        self.key = key
        self.options = options
        self.now = now
        self.makeNonce = makeNonce
    }

    /// 32 random lower-case hex digits (128 bits from the system's secure generator).
    @Sendable public static func randomNonce() -> String { randomHex(bytes: 16) }

    /// `RequestSigning`.
    public var name: String { "RequestSigning" }
    /// `InterceptorRole.network`.
    public var role: InterceptorRole { .network }

    public func intercept(
        _ request: CourierRequest, context: InterceptorContext, next: InterceptorNext
    ) async throws -> CourierResponse {
        var request = request
        let nonce = makeNonce()
        let timestamp = Int64(flooringClamped: now().timeIntervalSince1970)
        if let stream = request.bodyStream {
            // A streamed body is signed by its digest (see CanonicalRequest): read once more for a replayable
            // body, the unsigned-payload marker for a one-shot one.
            let digest = stream.isReplayable ? try await Self.digest(of: stream) : CanonicalRequest.unsignedPayload
            request.head.headerFields[.courierContentSHA256] = digest
            sign(&request.head, bodyHash: digest, timestamp: timestamp, nonce: nonce)
        } else {
            sign(&request.head, body: request.body, timestamp: timestamp, nonce: nonce)
        }
        context.logger.trace("signed request", metadata: ["keyID": "\(key.id)", "nonce": "\(nonce)"])
        let response = try await next(request)
        if options.verifiesResponses {
            try Self.verify(response, key: key, requestNonce: nonce)
        }
        return response
    }

    /// Adds the signature header fields to `head` for `body` (used by the interceptor; public for servers
    /// and tools that sign without a pipeline).
    public func sign(_ head: inout HTTPRequest, body: Data?, timestamp: Int64, nonce: String) {
        sign(&head, bodyHash: SHA256.hex(body ?? Data()), timestamp: timestamp, nonce: nonce)
    }

    /// Adds the signature header fields to `head` for a body signed by `bodyHash` (a streamed body's
    /// SHA-256 in lower-case hex, also sent in `X-Courier-Content-SHA256`, or
    /// ``CanonicalRequest/unsignedPayload``).
    public func sign(_ head: inout HTTPRequest, bodyHash: String, timestamp: Int64, nonce: String) {
        let names = Array(Set(options.signedHeaderFields.map { $0.lowercased() }))
            .sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        for name in [HTTPField.Name.courierKeyID, .courierTimestamp, .courierNonce, .courierSignedHeaders,
                     .courierSignature] {
            head.headerFields[name] = nil
        }
        let canonical = CanonicalRequest(
            method: head.method, path: head.path, headerFields: head.headerFields, signedHeaders: names,
            keyID: key.id, timestamp: timestamp, nonce: nonce, bodyHash: bodyHash)
        head.headerFields[.courierKeyID] = key.id
        head.headerFields[.courierTimestamp] = String(timestamp)
        head.headerFields[.courierNonce] = nonce
        head.headerFields[.courierSignedHeaders] = canonical.signedHeaders.joined(separator: ";")
        head.headerFields[.courierSignature] = canonical.signature(using: key.secret)
    }

    /// The lower-case hex SHA-256 of `body`, read chunk by chunk (bounded memory).
    ///
    /// ```swift
    /// let digest = try await RequestSigning.digest(of: try .file(videoURL))
    /// ```
    public static func digest(of body: BodyStream) async throws -> String {
        var hasher = SHA256()
        for try await chunk in body { hasher.update(data: chunk) }
        return Hex.encode(hasher.finalize())
    }

    static func verify(_ response: CourierResponse, key: SigningKey, requestNonce: String) throws {
        guard let signature = response.head.headerFields[.courierSignature] else {
            if response.isSuccessful {
                throw CourierError(.signatureMissing, detail: "the response carries no X-Courier-Signature")
            }
            return
        }
        let canonical = CanonicalResponse(
            status: Int(response.head.status.code), keyID: key.id, requestNonce: requestNonce, body: response.body)
        guard let mac = Hex.decodeLowercase(signature),
              HMAC<SHA256>.isValidAuthenticationCode(mac, authenticating: Data(canonical.string.utf8),
                                                     using: key.secret)
        else {
            throw CourierError(.signatureInvalid, detail: "the response signature does not match its body")
        }
    }
}

/// The server's check of a streamed body against the digest its signature covers (from
/// ``SignatureVerifier/verifyStreamed(_:)``): hash the bytes as they arrive, then ``finish()``.
public struct StreamedBodyCheck: Sendable {
    /// The digest the client declared and signed (or ``CanonicalRequest/unsignedPayload``).
    public let declared: String
    private var hasher = SHA256()
    /// Bytes seen so far.
    public private(set) var count: Int64 = 0

    init(declared: String) { self.declared = declared }

    /// Adds the next bytes of the body.
    public mutating func update<Bytes: Sequence>(_ bytes: Bytes) where Bytes.Element == UInt8 {
        if let done = bytes.withContiguousStorageIfAvailable({ buffer -> Int in
            hasher.update(bufferPointer: UnsafeRawBufferPointer(buffer))
            return buffer.count
        }) {
            count += Int64(done)
        } else {
            let array = Array(bytes)
            hasher.update(data: array)
            count += Int64(array.count)
        }
    }

    /// Checks the body's SHA-256 against the signed digest (an unsigned payload passes: the verifier
    /// accepted it); `CourierError.Code.signatureInvalid` when they differ.
    public func finish() throws {
        guard declared != CanonicalRequest.unsignedPayload else { return }
        guard Hex.encode(hasher.finalize()) == declared else {
            throw CourierError(.signatureInvalid, detail: "the body's SHA-256 does not match the signed X-Courier-Content-SHA256")
        }
    }
}

/// Remembers the nonces of accepted requests until their timestamps leave the replay window: bounded
/// (``capacity`` entries), expiring, thread-safe. Share one store among the verifiers of a server.
///
/// When the store is full of unexpired nonces, new requests are refused (`CourierError.Code.replayDetected`
/// with a detail saying so) rather than forgetting a nonce that could still be replayed: size it for your
/// request rate times twice the window.
///
/// ```swift
/// let nonces = NonceStore(capacity: 200_000)
/// let verifier = SignatureVerifier(keys: [key], nonces: nonces)
/// ```
public final class NonceStore: Sendable {
    private struct State {
        var seen: [String: Date] = [:]
        var order: [(key: String, expiry: Date)] = []
        var head = 0
    }

    /// The most nonces remembered at once.
    public let capacity: Int
    private let state = Locked(State())

    /// A store remembering at most `capacity` nonces.
    public init(capacity: Int = 100_000) {
        self.capacity = max(1, capacity)
    }

    /// How many nonces are remembered now (expired ones may still count until the next insertion).
    public var count: Int { state.withLock { $0.seen.count } }

    /// The outcome of ``insert(_:expiresAt:now:)``.
    ///
    /// New cases may be added in later versions: a `switch` over it should have a `default` branch.
    public enum Insertion: Sendable, Equatable {
        /// The nonce is new and is now remembered.
        case accepted
        /// The nonce was already seen and has not expired.
        case replayed
        /// The store is full of unexpired nonces.
        case full
    }

    /// Records `nonce` (scope it with the key id) until `expiresAt`, first forgetting nonces expired at `now`.
    public func insert(_ nonce: String, expiresAt: Date, now: Date) -> Insertion {
        state.withLock { state in
            // Entries leave only once expired; a nonce gone from here has a stale timestamp, so forgetting
            // it cannot let a replay through even though the queue is in arrival (not expiry) order.
            while state.head < state.order.count, state.order[state.head].expiry < now {
                let entry = state.order[state.head]
                if state.seen[entry.key] == entry.expiry { state.seen[entry.key] = nil }
                state.head += 1
            }
            if state.head > 1024, state.head * 2 > state.order.count {
                state.order.removeFirst(state.head)
                state.head = 0
            }
            if let expiry = state.seen[nonce], expiry >= now { return .replayed }
            guard state.seen.count < capacity else { return .full }
            state.seen[nonce] = expiresAt
            state.order.append((nonce, expiresAt))
            return .accepted
        }
    }
}

/// What ``SignatureVerifier/verify(_:body:)`` learned from an authentic request.
public struct VerifiedRequest: Sendable, Hashable {
    /// The key id it was signed with.
    public var keyID: String
    /// Its timestamp (Unix seconds).
    public var timestamp: Int64
    /// Its nonce (needed to sign the response).
    public var nonce: String
}

/// Checks requests signed by ``RequestSigning`` — usable in any server-side Swift (the demo server uses it):
/// looks the key up by id, recomputes the ``CanonicalRequest`` signature and compares in constant time,
/// rejects timestamps outside the window and nonces seen before, and signs responses.
///
/// Checks, in order: the signature fields are present (`CourierError.Code.signatureMissing`), the key id
/// is known (`CourierError.Code.unknownKey`), the signature matches and covers the required header fields
/// (`CourierError.Code.signatureInvalid`), the timestamp is within ``Options/window`` of now
/// (`CourierError.Code.staleTimestamp`), the nonce is new (`CourierError.Code.replayDetected`). A nonce
/// is remembered only once the signature has been found valid.
///
/// ```swift
/// let verifier = SignatureVerifier(keys: [SigningKey(id: "app-2026", secret: secret)])
/// let verified = try verifier.verify(request.head, body: body)     // throws CourierError
/// responseHeaders[.init("X-Courier-Signature")!] = verifier.responseSignature(
///     status: 200, body: responseBody, for: verified)
/// ```
public struct SignatureVerifier: Sendable {
    /// Settings.
    public struct Options: Sendable {
        /// How far a timestamp may be from now, either way. Default 300 s.
        public var window: Duration
        /// Header fields that must be among the signed ones (lower-case). Default: none.
        public var requiredSignedHeaders: [String]
        /// The longest nonce accepted (characters). Default 128.
        public var maximumNonceLength: Int
        /// Accept streamed bodies signed with ``CanonicalRequest/unsignedPayload`` (their bytes are then not
        /// covered by the signature). Default false.
        public var acceptsUnsignedPayload: Bool

        /// Defaults: ±300 s, no required fields, nonces up to 128 characters.
        public init() {
            window = .seconds(300)
            requiredSignedHeaders = []
            maximumNonceLength = 128
            acceptsUnsignedPayload = false
        }
    }

    /// Finds a key's secret by id.
    public var keys: @Sendable (String) -> SymmetricKey?
    /// The nonces seen.
    public var nonces: NonceStore
    /// The settings.
    public var options: Options
    /// The current time (injectable for tests).
    public var now: @Sendable () -> Date

    /// A verifier knowing `keys` (secrets by key id, as bytes).
    public init(
        nonces: NonceStore = NonceStore(), options: Options = Options(),
        now: @escaping @Sendable () -> Date = { Date() }, secrets: [String: Data]
    ) {
        let known = secrets.mapValues { SymmetricKey(data: $0) }
        self.init(nonces: nonces, options: options, now: now) { known[$0] }
    }

    /// A verifier with a key lookup.
    public init(
        nonces: NonceStore = NonceStore(), options: Options = Options(),
        now: @escaping @Sendable () -> Date = { Date() }, keys: @escaping @Sendable (String) -> SymmetricKey?
    ) {
        self.keys = keys
        self.nonces = nonces
        self.options = options
        self.now = now
    }

    /// A verifier knowing `keys`.
    public init(
        keys: [SigningKey], nonces: NonceStore = NonceStore(), options: Options = Options(),
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        let table = Dictionary(keys.map { ($0.id, $0.secret) }, uniquingKeysWith: { _, last in last })
        self.init(nonces: nonces, options: options, now: now) { table[$0] }
    }

    /// Verifies a signed request; returns its key id, timestamp and nonce.
    public func verify(_ head: HTTPRequest, body: Data?) throws -> VerifiedRequest {
        try verify(head, bodyHash: SHA256.hex(body ?? Data()))
    }

    /// Verifies the head of a request whose body streams (signed by its `X-Courier-Content-SHA256` digest;
    /// see ``CanonicalRequest``), before reading the body. Feed the body's bytes to the returned check as
    /// they arrive and call its ``StreamedBodyCheck/finish()`` at the end: it fails with
    /// `CourierError.Code.signatureInvalid` when the bytes differ from the signed digest. A missing digest
    /// is `CourierError.Code.signatureMissing`; ``CanonicalRequest/unsignedPayload`` is refused
    /// (`CourierError.Code.signatureInvalid`) unless ``Options/acceptsUnsignedPayload``.
    ///
    /// ```swift
    /// var (verified, check) = try verifier.verifyStreamed(request.head)
    /// for try await buffer in request.body { check.update(buffer); try file.write(buffer) }
    /// try check.finish()
    /// ```
    public func verifyStreamed(_ head: HTTPRequest) throws -> (VerifiedRequest, StreamedBodyCheck) {
        guard let declared = head.headerFields[.courierContentSHA256] else {
            throw CourierError(.signatureMissing, detail: "the streamed request carries no X-Courier-Content-SHA256")
        }
        if declared == CanonicalRequest.unsignedPayload {
            guard options.acceptsUnsignedPayload else {
                throw CourierError(.signatureInvalid, detail: "an unsigned payload is not accepted here")
            }
        } else if declared.count != 64 || !declared.allSatisfy({ $0.isHexDigit && !$0.isUppercase }) {
            throw CourierError(.signatureInvalid, detail: "X-Courier-Content-SHA256 is not a lower-case hex SHA-256")
        }
        let verified = try verify(head, bodyHash: declared)
        return (verified, StreamedBodyCheck(declared: declared))
    }

    private func verify(_ head: HTTPRequest, bodyHash: String) throws -> VerifiedRequest {
        let fields = head.headerFields
        guard let keyID = fields[.courierKeyID], let stamp = fields[.courierTimestamp],
              let nonce = fields[.courierNonce], let signature = fields[.courierSignature]
        else {
            throw CourierError(.signatureMissing, detail: "the request is not signed")
        }
        guard let secret = keys(keyID) else {
            throw CourierError(.unknownKey, detail: "no signing key has the request's key id")
        }
        guard !nonce.isEmpty, nonce.count <= options.maximumNonceLength else {
            throw CourierError(.signatureInvalid, detail: "the nonce is empty or too long")
        }
        guard let timestamp = Int64(stamp) else {
            throw CourierError(.signatureInvalid, detail: "the timestamp is not an integer")
        }
        let signed = (fields[.courierSignedHeaders] ?? "").split(separator: ";").map { String($0) }
        let canonical = CanonicalRequest(
            method: head.method, path: head.path, headerFields: fields, signedHeaders: signed, keyID: keyID,
            timestamp: timestamp, nonce: nonce, bodyHash: bodyHash)
        guard canonical.signedHeaders.joined(separator: ";") == (fields[.courierSignedHeaders] ?? ""),
              let mac = Hex.decodeLowercase(signature),
              HMAC<SHA256>.isValidAuthenticationCode(mac, authenticating: Data(canonical.string.utf8), using: secret)
        else {
            throw CourierError(.signatureInvalid, detail: "the request signature does not match")
        }
        for required in options.requiredSignedHeaders where !canonical.signedHeaders.contains(required.lowercased()) {
            throw CourierError(.signatureInvalid, detail: "the header field \(required.lowercased()) must be signed")
        }
        let current = now()
        let window = Double(options.window.components.seconds)
            + Double(options.window.components.attoseconds) / 1e18
        let sent = Date(timeIntervalSince1970: TimeInterval(timestamp))
        guard abs(sent.timeIntervalSince(current)) <= window else {
            throw CourierError(.staleTimestamp, detail: "the timestamp is outside the ±\(options.window) window")
        }
        switch nonces.insert(keyID + "\u{0}" + nonce, expiresAt: sent.addingTimeInterval(window), now: current) {
        case .accepted:
            return VerifiedRequest(keyID: keyID, timestamp: timestamp, nonce: nonce)
        case .replayed:
            throw CourierError(.replayDetected, detail: "the nonce was already used")
        case .full:
            throw CourierError(.replayDetected, detail: "the nonce store is full; the request cannot be checked for replay")
        }
    }

    /// The `X-Courier-Signature` value for a response to `request` (see ``CanonicalResponse``); nil when
    /// the key is no longer known.
    public func responseSignature(status: Int, body: Data, for request: VerifiedRequest) -> String? {
        guard let secret = keys(request.keyID) else { return nil }
        return CanonicalResponse(status: status, keyID: request.keyID, requestNonce: request.nonce, body: body)
            .signature(using: secret)
    }
}
#endif
