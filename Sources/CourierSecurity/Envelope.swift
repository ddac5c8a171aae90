#if Security
#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
public import Crypto
import _CryptoExtras
public import HTTPTypes
import Logging

/// A 256-bit encryption key with its id. Its description never shows the key.
///
/// The legacy AES-CBC mode also needs a MAC key: pass the one your server uses, or leave it out to derive
/// it with HKDF-SHA256 (no salt, info `courier-cbc-hmac-sha256`) from `key`.
///
/// ```swift
/// let key = try EncryptionKey.random(id: "2026-01")          // or EncryptionKey(id:keyBytes:) from stored bytes
/// print(key)   // EncryptionKey(id: 2026-01, ‹key›)
/// ```
public struct EncryptionKey: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The key id (1 to 255 UTF-8 bytes), written into every envelope.
    public let id: String
    let key: SymmetricKey
    let macKey: SymmetricKey

    /// A key. Fails with `CourierError.Code.invalidConfiguration` unless `key` is 256 bits, `macKey` (when
    /// given) at least 128 bits, and `id` 1 to 255 UTF-8 bytes.
    public init(id: String, key: SymmetricKey, macKey: SymmetricKey? = nil) throws {
        guard (1...255).contains(id.utf8.count) else {
            throw CourierError(.invalidConfiguration, detail: "an encryption key id must be 1 to 255 UTF-8 bytes")
        }
        guard key.bitCount == 256 else {
            throw CourierError(.invalidConfiguration, detail: "encryption key \(id) is not 256 bits")
        }
        if let macKey, macKey.bitCount < 128 {
            throw CourierError(.invalidConfiguration, detail: "the MAC key of \(id) is shorter than 128 bits")
        }
        self.id = id
        self.key = key
        self.macKey = macKey ?? HKDF<SHA256>.deriveKey(
            inputKeyMaterial: key, info: Data("courier-cbc-hmac-sha256".utf8), outputByteCount: 32)
    }

    /// A key from its raw bytes (32 bytes; a MAC key, when given, at least 16), for apps that keep keys as
    /// bytes: no swift-crypto type needed. Fails as ``init(id:key:macKey:)`` does.
    public init(id: String, keyBytes: some DataProtocol, macKeyBytes: Data? = nil) throws {
        try self.init(id: id, key: SymmetricKey(data: Data(keyBytes)), macKey: macKeyBytes.map { SymmetricKey(data: $0) })
    }

    /// A new random 256-bit key (from the system's secure random source) under `id`.
    public static func random(id: String) throws -> EncryptionKey {
        try EncryptionKey(id: id, key: SymmetricKey(size: .bits256))
    }

    public var description: String { "EncryptionKey(id: \(id), ‹key›)" }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: ["id": id], displayStyle: .struct) }
}

/// The encryption keys known by id, one of them current: new envelopes use the current key, and envelopes
/// under any key still in the ring open. Shared by reference and thread-safe, so a rotation reaches every
/// stage and server route using the ring at once.
///
/// ```swift
/// let ring = KeyRing(current: try EncryptionKey(id: "2026-01", key: january))
/// ring.rotate(to: try EncryptionKey(id: "2026-02", key: february))   // 2026-01 still opens
/// ring.remove(id: "2026-01")                                          // now it does not
/// ```
public final class KeyRing: Sendable, CustomStringConvertible {
    private struct State {
        var keys: [String: EncryptionKey]
        var currentID: String
    }

    private let state: Locked<State>

    /// A ring with a current key and older ones.
    public init(current: EncryptionKey, previous: [EncryptionKey] = []) {
        var keys: [String: EncryptionKey] = [:]
        for key in previous { keys[key.id] = key }
        keys[current.id] = current
        state = Locked(State(keys: keys, currentID: current.id))
    }

    /// The key new envelopes use.
    public var current: EncryptionKey { state.withLock { $0.keys[$0.currentID]! } }

    /// The key with `id`, if the ring has it.
    public func key(id: String) -> EncryptionKey? { state.withLock { $0.keys[id] } }

    /// The ids of the keys in the ring, sorted.
    public var ids: [String] { state.withLock { $0.keys.keys.sorted() } }

    /// Adds `key` (replacing one with its id) and makes it current; the others stay for opening.
    public func rotate(to key: EncryptionKey) {
        state.withLock {
            $0.keys[key.id] = key
            $0.currentID = key.id
        }
    }

    /// Adds `key` for opening only (replacing one with its id; the current key stays current unless it is
    /// the one replaced).
    public func add(_ key: EncryptionKey) {
        state.withLock { $0.keys[key.id] = key }
    }

    /// Removes the key with `id`; the current key cannot be removed. Returns whether a key was removed.
    @discardableResult
    public func remove(id: String) -> Bool {
        state.withLock { state in
            guard id != state.currentID else { return false }
            return state.keys.removeValue(forKey: id) != nil
        }
    }

    public var description: String { "KeyRing(current: \(state.withLock { $0.currentID }), ids: \(ids))" }
}

/// The value of the `X-Courier-Encryption` header field: `aes-256-gcm; kid=2026-01` (binary envelope) or
/// `aes-256-gcm; kid=2026-01; encoding=base64` (text form). On a request it also asks the server to encrypt
/// its answer.
///
/// ```swift
/// let header = EncryptionHeader("aes-256-cbc-hmac-sha256; kid=legacy")!
/// header.algorithm   // .aes256CBCHMACSHA256
/// ```
public struct EncryptionHeader: Sendable, Hashable, CustomStringConvertible {
    /// The algorithm.
    public var algorithm: EnvelopeSealer.Algorithm
    /// The key id of the envelope.
    public var keyID: String
    /// How the envelope is written in the body.
    public var encoding: EnvelopeSealer.Encoding

    /// A header value.
    public init(algorithm: EnvelopeSealer.Algorithm, keyID: String, encoding: EnvelopeSealer.Encoding) {
        self.algorithm = algorithm
        self.keyID = keyID
        self.encoding = encoding
    }

    /// Parses a header value; nil when malformed.
    public init?(_ text: String) {
        let parts = text.split(separator: ";").map { CanonicalRequest.trimmed(String($0)) }
        guard let first = parts.first, let algorithm = EnvelopeSealer.Algorithm(name: first.lowercased()) else {
            return nil
        }
        var keyID: String?
        var encoding = EnvelopeSealer.Encoding.binary
        for part in parts.dropFirst() {
            let pair = part.split(separator: "=", maxSplits: 1).map(String.init)
            guard pair.count == 2 else { return nil }
            switch pair[0].lowercased() {
            case "kid": keyID = pair[1]
            case "encoding":
                switch pair[1].lowercased() {
                case "base64": encoding = .base64
                case "binary": encoding = .binary
                default: return nil
                }
            default: continue
            }
        }
        guard let keyID, !keyID.isEmpty else { return nil }
        self.init(algorithm: algorithm, keyID: keyID, encoding: encoding)
    }

    /// The header value.
    public var description: String {
        "\(algorithm.name); kid=\(keyID)" + (encoding == .base64 ? "; encoding=base64" : "")
    }
}

/// Seals and opens encrypted bodies — the same value on both sides (the client's ``EnvelopeEncryption``
/// stage, and a server such as the demo server).
///
/// **Binary envelope, AES-256-GCM (version 1):**
///
/// ```text
/// [version u8 = 0x01][keyIdLength u8][keyId utf8][nonce 12][ciphertext][tag 16]
/// ```
///
/// The additional authenticated data is the header `[version][keyIdLength][keyId]`, so the version and key
/// id cannot be changed without failing the tag. The nonce is random for every envelope.
///
/// **Binary envelope, legacy AES-256-CBC + HMAC-SHA256 (version 2, encrypt-then-MAC):**
///
/// ```text
/// [version u8 = 0x02][keyIdLength u8][keyId utf8][iv 16][ciphertext, PKCS#7-padded, n×16][mac 32]
/// ```
///
/// `mac` = HMAC-SHA256(macKey, everything before it). The MAC is checked (in constant time) before
/// anything is decrypted, so padding errors are reported only for authentic envelopes.
///
/// **Text form:** the binary envelope in standard base64 (with padding).
///
/// Failures: an unknown version or a truncated envelope → `CourierError.Code.malformedEnvelope`; a key id
/// not in the ring → `CourierError.Code.unknownKey`; a wrong tag or MAC → `CourierError.Code.decryptionFailed`;
/// invalid padding under a valid MAC → `CourierError.Code.badPadding`. Errors never contain key
/// material or plaintext.
///
/// ```swift
/// let sealer = EnvelopeSealer(keys: ring)
/// let envelope = try sealer.seal(Data(#"{"secret":1}"#.utf8))
/// let plaintext = try sealer.open(envelope)
/// ```
public struct EnvelopeSealer: Sendable {
    /// The cipher of an envelope.
    ///
    /// New cases may be added in later versions: a `switch` over it should have a `default` branch.
    public enum Algorithm: Sendable, Hashable, CaseIterable {
        /// AES-256-GCM (envelope version 1).
        case aes256GCM
        /// AES-256-CBC with PKCS#7 padding and HMAC-SHA256, encrypt-then-MAC (envelope version 2).
        case aes256CBCHMACSHA256

        /// The name in `X-Courier-Encryption`.
        public var name: String {
            switch self {
            case .aes256GCM: return "aes-256-gcm"
            case .aes256CBCHMACSHA256: return "aes-256-cbc-hmac-sha256"
            }
        }

        /// The algorithm with a header name.
        public init?(name: String) {
            guard let found = Self.allCases.first(where: { $0.name == name }) else { return nil }
            self = found
        }

        /// The envelope's version byte.
        public var version: UInt8 {
            switch self {
            case .aes256GCM: return 1
            case .aes256CBCHMACSHA256: return 2
            }
        }
    }

    /// How an envelope is written into a body.
    ///
    /// New cases may be added in later versions: a `switch` over it should have a `default` branch.
    public enum Encoding: Sendable, Hashable {
        /// The bytes as they are (`application/octet-stream`).
        case binary
        /// Standard base64 text (`text/plain`).
        case base64

        /// The body's media type.
        public var mediaType: String { self == .binary ? "application/octet-stream" : "text/plain" }
    }

    /// The keys.
    public var keys: KeyRing
    /// The cipher new envelopes use (any known version opens).
    public var algorithm: Algorithm
    /// How new envelopes are written.
    public var encoding: Encoding

    /// A sealer with a key ring (AES-256-GCM, binary, by default).
    public init(keys: KeyRing, algorithm: Algorithm = .aes256GCM, encoding: Encoding = .binary) {
        self.keys = keys
        self.algorithm = algorithm
        self.encoding = encoding
    }

    // MARK: - Bodies

    /// Seals `plaintext` under the current key, in ``encoding``.
    public func seal(_ plaintext: Data) throws -> Data {
        let binary = try sealBinary(plaintext, key: keys.current, algorithm: algorithm)
        return encoding == .base64 ? Data(binary.base64EncodedString().utf8) : binary
    }

    /// Opens an envelope written in `encoding` (default: ``encoding``) under any key in the ring.
    public func open(_ envelope: Data, encoding: Encoding? = nil) throws -> Data {
        var binary = envelope
        if (encoding ?? self.encoding) == .base64 {
            guard let decoded = Data(base64Encoded: envelope) else {
                throw CourierError(.malformedEnvelope, detail: "the envelope is not valid base64")
            }
            binary = decoded
        }
        return try openBinary(binary)
    }

    /// Seals with an explicit key and nonce/IV (known-answer tests; use ``seal(_:)`` otherwise — a nonce
    /// must never repeat under one key).
    func sealBinary(_ plaintext: Data, key: EncryptionKey, algorithm: Algorithm, iv: [UInt8]? = nil) throws -> Data {
        var out = Data([algorithm.version, UInt8(key.id.utf8.count)])
        out.append(contentsOf: key.id.utf8)
        let header = out
        do {
            switch algorithm {
            case .aes256GCM:
                let nonce = try iv.map { try AES.GCM.Nonce(data: $0) } ?? AES.GCM.Nonce()
                let box = try AES.GCM.seal(plaintext, using: key.key, nonce: nonce, authenticating: header)
                out.append(contentsOf: box.nonce)
                out.append(box.ciphertext)
                out.append(box.tag)
            case .aes256CBCHMACSHA256:
                let vector = try iv.map { try AES._CBC.IV(ivBytes: $0) } ?? AES._CBC.IV()
                var padded = Array(plaintext)
                let pad = 16 - padded.count % 16
                padded += Array(repeating: UInt8(pad), count: pad)
                let ciphertext = try AES._CBC.encrypt(padded, using: key.key, iv: vector, noPadding: true)
                out.append(contentsOf: vector)
                out.append(ciphertext)
                out.append(contentsOf: HMAC<SHA256>.authenticationCode(for: out, using: key.macKey))
            }
        } catch {
            throw CourierError(.encryptionFailed, detail: "the body could not be sealed with key \(key.id)")
        }
        return out
    }

    /// Opens a binary envelope.
    func openBinary(_ envelope: Data) throws -> Data {
        let bytes = [UInt8](envelope)
        guard bytes.count >= 2 else {
            throw CourierError(.malformedEnvelope, detail: "the envelope is truncated (\(bytes.count) bytes)")
        }
        let version = bytes[0]
        let idLength = Int(bytes[1])
        guard let algorithm = Algorithm.allCases.first(where: { $0.version == version }) else {
            throw CourierError(.malformedEnvelope, detail: "unknown envelope version \(version)")
        }
        let headerLength = 2 + idLength
        let minimum = headerLength + (algorithm == .aes256GCM ? 12 + 16 : 16 + 16 + 32)
        guard idLength > 0, bytes.count >= minimum else {
            throw CourierError(.malformedEnvelope, detail: "the envelope is truncated (\(bytes.count) bytes)")
        }
        guard let keyID = String(validating: bytes[2..<headerLength], as: UTF8.self) else {
            throw CourierError(.unknownKey, detail: "the envelope's key id is not UTF-8, so no key has it")
        }
        guard let key = keys.key(id: keyID) else {
            throw CourierError(.unknownKey, detail: "no key with the envelope's key id '\(Self.printable(keyID))'")
        }
        let header = Data(bytes[0..<headerLength])
        switch algorithm {
        case .aes256GCM:
            let nonceEnd = headerLength + 12
            let tagStart = bytes.count - 16
            do {
                let box = try AES.GCM.SealedBox(
                    nonce: AES.GCM.Nonce(data: bytes[headerLength..<nonceEnd]),
                    ciphertext: bytes[nonceEnd..<tagStart], tag: bytes[tagStart...])
                return try AES.GCM.open(box, using: key.key, authenticating: header)
            } catch {
                throw CourierError(.decryptionFailed, detail: "the envelope failed authentication (key \(key.id))")
            }
        case .aes256CBCHMACSHA256:
            let ivEnd = headerLength + 16
            let macStart = bytes.count - 32
            guard (macStart - ivEnd) % 16 == 0 else {
                throw CourierError(.malformedEnvelope, detail: "the ciphertext is not a whole number of blocks")
            }
            guard HMAC<SHA256>.isValidAuthenticationCode(
                bytes[macStart...], authenticating: bytes[..<macStart], using: key.macKey)
            else {
                throw CourierError(.decryptionFailed, detail: "the envelope failed authentication (key \(key.id))")
            }
            let padded: [UInt8]
            do {
                let iv = try AES._CBC.IV(ivBytes: bytes[headerLength..<ivEnd])
                padded = Array(try AES._CBC.decrypt(bytes[ivEnd..<macStart], using: key.key, iv: iv, noPadding: true))
            } catch {
                throw CourierError(.decryptionFailed, detail: "the envelope could not be decrypted (key \(key.id))")
            }
            guard let pad = padded.last, (1...16).contains(pad), padded.count >= Int(pad),
                  padded.suffix(Int(pad)).allSatisfy({ $0 == pad })
            else {
                throw CourierError(.badPadding, detail: "the decrypted data has invalid PKCS#7 padding")
            }
            return Data(padded.dropLast(Int(pad)))
        }
    }

    /// A key id fit for an error message (ids are not secret, but may be garbage from a tampered envelope).
    static func printable(_ id: String) -> String {
        let clean = String(id.unicodeScalars.filter { $0.value >= 0x20 && $0.value < 0x7F }.map(Character.init))
        return clean.count > 64 ? String(clean.prefix(61)) + "…" : clean
    }

    // MARK: - HTTP messages

    /// The `X-Courier-Encryption` value new envelopes carry.
    public var header: EncryptionHeader {
        EncryptionHeader(algorithm: algorithm, keyID: keys.current.id, encoding: encoding)
    }

    /// Seals a message body in place: the body becomes the envelope, `Content-Type` the envelope's media
    /// type, `X-Courier-Content-Type` carries the original `Content-Type` (or `fallbackContentType`), and
    /// `X-Courier-Encryption` names algorithm, key and encoding. An empty body gets only the
    /// `X-Courier-Encryption` field (on a request: "answer encrypted").
    public func seal(_ body: Data, headerFields: inout HTTPFields, fallbackContentType: String? = nil) throws -> Data {
        headerFields[.courierEncryption] = header.description
        guard !body.isEmpty else { return body }
        let original = headerFields[.contentType] ?? fallbackContentType
        let sealed = try seal(body)
        headerFields[.courierContentType] = original
        headerFields[.contentType] = encoding.mediaType
        return sealed
    }

    /// Opens a message body sealed by ``seal(_:headerFields:fallbackContentType:)``: returns the plaintext and
    /// restores `Content-Type` from `X-Courier-Content-Type` (removing both Courier fields). Returns nil, and
    /// changes nothing, when the message has no `X-Courier-Encryption` field.
    public func open(_ body: Data, headerFields: inout HTTPFields) throws -> Data? {
        guard let value = headerFields[.courierEncryption] else { return nil }
        guard let header = EncryptionHeader(value) else {
            throw CourierError(.malformedEnvelope, detail: "the X-Courier-Encryption field is malformed")
        }
        let plaintext = body.isEmpty ? body : try open(body, encoding: header.encoding)
        if !body.isEmpty {
            headerFields[.contentType] = headerFields[.courierContentType]
        }
        headerFields[.courierContentType] = nil
        headerFields[.courierEncryption] = nil
        return plaintext
    }
}

/// Encrypts request bodies and decrypts response bodies with an ``EnvelopeSealer`` (network role, named
/// `EnvelopeEncryption`).
///
/// On the way out, a non-empty body is sealed under the ring's current key: `Content-Type` becomes the
/// envelope's media type, the original travels in `X-Courier-Content-Type`, and
/// `X-Courier-Encryption: aes-256-gcm; kid=…` names the key (sent on bodiless requests too, asking for an
/// encrypted answer). On the way back, a response with `X-Courier-Encryption` is opened under whichever key
/// it names (older keys in the ring still work) and its `Content-Type` restored, so the codec stage decodes
/// it as usual. A 2xx response with a body but without encryption fails with
/// `CourierError.Code.decryptionFailed` unless ``Options/requiresEncryptedResponses`` is off.
///
/// ```swift
/// let ring = KeyRing(current: try EncryptionKey(id: "2026-01", key: key))
/// module.interceptors.append(EnvelopeEncryption(sealer: EnvelopeSealer(keys: ring)))
/// ```
public struct EnvelopeEncryption: Interceptor {
    /// Settings.
    public struct Options: Sendable {
        /// Seal request bodies. Default true.
        public var encryptsRequests: Bool
        /// Fail a 2xx response whose body is not encrypted. Default true.
        public var requiresEncryptedResponses: Bool

        /// Defaults: encrypt requests, require encrypted responses.
        public init() {
            encryptsRequests = true
            requiresEncryptedResponses = true
        }
    }

    /// The sealer.
    public var sealer: EnvelopeSealer
    /// The settings.
    public var options: Options

    /// An encryption stage.
    public init(sealer: EnvelopeSealer, options: Options = Options()) {
        self.sealer = sealer
        self.options = options
    }

    /// `EnvelopeEncryption`.
    public var name: String { "EnvelopeEncryption" }
    /// `InterceptorRole.network`.
    public var role: InterceptorRole { .network }

    public func intercept(
        _ request: CourierRequest, context: InterceptorContext, next: InterceptorNext
    ) async throws -> CourierResponse {
        var request = request
        if options.encryptsRequests, request.bodyStream != nil {
            throw CourierError(.encryptionFailed, detail: "a streamed body cannot be sealed in an envelope (it needs the whole body); send it unencrypted on a module without EnvelopeEncryption, or as a whole body")
        }
        if options.encryptsRequests {
            request.body = try sealer.seal(
                request.body ?? Data(), headerFields: &request.head.headerFields,
                fallbackContentType: request.format.mediaType)
            if request.body?.isEmpty == true {
                request.body = nil
            } else {
                request.format = sealer.encoding == .binary ? .binary : .text
            }
        } else {
            request.head.headerFields[.courierEncryption] = sealer.header.description
        }
        context.logger.trace("sealed request body", metadata: [
            "encryption": "\(request.head.headerFields[.courierEncryption] ?? "")", "bytes": "\(request.body?.count ?? 0)"])
        var response = try await next(request)
        if let plaintext = try sealer.open(response.body, headerFields: &response.head.headerFields) {
            response.body = plaintext
            response.format = response.head.headerFields[.contentType].flatMap(ContentFormat.init(contentType:))
            context.logger.trace("opened response body", metadata: ["bytes": "\(plaintext.count)"])
        } else if options.requiresEncryptedResponses, response.isSuccessful, !response.body.isEmpty {
            throw CourierError(.decryptionFailed, detail: "the response was not encrypted")
        }
        return response
    }
}
#endif
