#if Security
#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
public import Crypto
public import HTTPTypes

/// A shared HMAC secret with the id both sides know it by. Its description never shows the secret.
///
/// ```swift
/// let key = SigningKey(id: "app-2026", secretBytes: secretBytes)
/// print(key)   // SigningKey(id: app-2026, ‹secret›)
/// ```
public struct SigningKey: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The key id sent in `X-Courier-Key-Id`.
    public var id: String
    /// The secret.
    public var secret: SymmetricKey

    /// A key.
    public init(id: String, secret: SymmetricKey) {
        self.id = id
        self.secret = secret
    }

    /// A key whose secret is `bytes` (no swift-crypto type needed).
    public init(id: String, secretBytes bytes: some DataProtocol) {
        self.init(id: id, secret: SymmetricKey(data: Data(bytes)))
    }

    /// A key whose secret is the UTF-8 bytes of `secret`.
    public init(id: String, secret: String) {
        self.init(id: id, secret: SymmetricKey(data: Data(secret.utf8)))
    }

    public var description: String { "SigningKey(id: \(id), ‹secret›)" }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: ["id": id], displayStyle: .struct) }
}

/// The canonical form of a request that ``RequestSigning`` signs and ``SignatureVerifier`` checks: the
/// exact bytes both sides feed to HMAC-SHA256.
///
/// The string is these lines joined by a single `\n` (no trailing newline):
///
/// ```text
/// COURIER-HMAC-SHA256                    algorithm tag
/// POST                                   method, as sent (upper case)
/// /users/7                               path without the query, as sent ("/" when empty)
/// a=1&b=x%20y&b=z                        query: items percent-decoded, sorted by name then value (byte
///                                        order), each re-encoded with RFC 3986 unreserved characters kept
///                                        (``ParameterEncoding``'s percent-encoding, so a query Courier
///                                        rendered differs from this line only in its order),
///                                        joined with "&" (a name without value is the bare name); empty
///                                        when there is none
/// content-type;x-app-version             signed header field names, lower-cased, sorted, joined with ";"
/// content-type:application/json          one line per signed field: lower-cased name ":" value (several
/// x-app-version:1.4                      values joined with ","; surrounding spaces trimmed; a missing
///                                        field has an empty value)
/// app-2026                               key id
/// 1767225600                             timestamp: Unix seconds, decimal
/// 3f1c…                                  nonce (sent as is)
/// 9f86d081884c7d65…                      SHA-256 of the body bytes, lower-case hex (of no bytes when
///                                        there is no body); for a streamed body, the digest sent in
///                                        `X-Courier-Content-SHA256` (see below)
/// ```
///
/// **Streamed bodies** (uploads) are signed by digest, as AWS SigV4 signs `x-amz-content-sha256`: the
/// client reads a replayable body (a file, a multipart form) once before sending it, computing its SHA-256
/// in bounded memory, sends the lower-case hex in `X-Courier-Content-SHA256`, and signs that digest as the
/// last line. A one-shot body (which cannot be read twice) is sent with the literal ``unsignedPayload``
/// marker instead, which a verifier refuses unless it opts in. The server checks the signature when the
/// head arrives (``SignatureVerifier/verifyStreamed(_:)``), hashes the bytes as they stream in, and rejects
/// the body when the digest differs (``StreamedBodyCheck/finish()``) — before acting on it.
///
/// The signature is the lower-case hex HMAC-SHA256 of the UTF-8 bytes of that string under the key's secret.
///
/// ```swift
/// let canonical = CanonicalRequest(method: .post, path: "/users?b=2&a=1", headerFields: fields,
///                                  signedHeaders: ["content-type"], keyID: "k1", timestamp: 1767225600,
///                                  nonce: "n1", body: Data(#"{"a":1}"#.utf8))
/// print(canonical.string)
/// ```
public struct CanonicalRequest: Sendable, Hashable {
    /// The algorithm tag on the first line.
    public static let algorithm = "COURIER-HMAC-SHA256"

    /// The method.
    public var method: String
    /// The path without the query.
    public var path: String
    /// The canonical query line.
    public var query: String
    /// The signed header names, lower-cased and sorted.
    public var signedHeaders: [String]
    /// The signed header lines (`name:value`), in ``signedHeaders`` order.
    public var headerLines: [String]
    /// The key id.
    public var keyID: String
    /// Unix seconds.
    public var timestamp: Int64
    /// The nonce.
    public var nonce: String
    /// The lower-case hex SHA-256 of the body.
    public var bodyHash: String

    /// The marker signed in place of a digest for a one-shot streamed body: `UNSIGNED-PAYLOAD`.
    public static let unsignedPayload = "UNSIGNED-PAYLOAD"

    /// The canonical form of a request as it is sent.
    public init(
        method: HTTPRequest.Method, path: String?, headerFields: HTTPFields, signedHeaders: [String],
        keyID: String, timestamp: Int64, nonce: String, body: Data?
    ) {
        self.init(method: method, path: path, headerFields: headerFields, signedHeaders: signedHeaders,
                  keyID: keyID, timestamp: timestamp, nonce: nonce, bodyHash: SHA256.hex(body ?? Data()))
    }

    /// The canonical form of a request whose body is signed by `bodyHash` (a streamed body's declared
    /// SHA-256, lower-case hex, or ``unsignedPayload``).
    public init(
        method: HTTPRequest.Method, path: String?, headerFields: HTTPFields, signedHeaders: [String],
        keyID: String, timestamp: Int64, nonce: String, bodyHash: String
    ) {
        let (bare, items) = splitPath(path)
        self.method = method.rawValue
        self.path = bare
        self.query = Self.canonicalQuery(items)
        let names = Array(Set(signedHeaders.map { $0.lowercased() })).sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        self.signedHeaders = names
        self.headerLines = names.map { name in
            let values = HTTPField.Name(name).map { headerFields[values: $0] } ?? []
            let value = values.map(Self.trimmed).joined(separator: ",")
            return name + ":" + value
        }
        self.keyID = keyID
        self.timestamp = timestamp
        self.nonce = nonce
        self.bodyHash = bodyHash
    }

    static func trimmed(_ text: String) -> String {
        let scalars = text.unicodeScalars
        let isSpace = { (s: Unicode.Scalar) in s == " " || s == "\t" }
        guard let first = scalars.firstIndex(where: { !isSpace($0) }),
              let last = scalars.lastIndex(where: { !isSpace($0) }) else { return "" }
        return String(scalars[first...last])
    }

    /// The canonical query line for `items`.
    public static func canonicalQuery(_ items: [QueryItem]) -> String {
        items.sorted { a, b in
            if a.name != b.name { return a.name.utf8.lexicographicallyPrecedes(b.name.utf8) }
            return (a.value ?? "").utf8.lexicographicallyPrecedes((b.value ?? "").utf8)
        }.map { ParameterEncoding.render([$0]) }.joined(separator: "&")
    }

    /// The string that is signed.
    public var string: String {
        ([Self.algorithm, method, path, query, signedHeaders.joined(separator: ";")] + headerLines
            + [keyID, String(timestamp), nonce, bodyHash]).joined(separator: "\n")
    }

    /// The lower-case hex HMAC-SHA256 of ``string`` under `secret`.
    public func signature(using secret: SymmetricKey) -> String {
        Hex.encode(HMAC<SHA256>.authenticationCode(for: Data(string.utf8), using: secret))
    }
}

/// The canonical form of a response whose body the server signs (see ``RequestSigning/Options/verifiesResponses``):
/// these lines joined by `\n`, signed with HMAC-SHA256 and sent lower-case hex in `X-Courier-Signature`.
/// Binding the request's nonce means an old signed response cannot be replayed for a new request.
///
/// ```text
/// COURIER-HMAC-SHA256-RESPONSE
/// 200                                    status code
/// app-2026                               key id
/// 3f1c…                                  the request's nonce
/// 9f86d081884c7d65…                      SHA-256 of the response body bytes as sent, lower-case hex
/// ```
///
/// ```swift
/// let signature = CanonicalResponse(status: 200, keyID: "k1", requestNonce: nonce, body: body)
///     .signature(using: secret)
/// ```
public struct CanonicalResponse: Sendable, Hashable {
    /// The algorithm tag on the first line.
    public static let algorithm = "COURIER-HMAC-SHA256-RESPONSE"
    /// The status code.
    public var status: Int
    /// The key id.
    public var keyID: String
    /// The nonce of the request being answered.
    public var requestNonce: String
    /// The lower-case hex SHA-256 of the body.
    public var bodyHash: String

    /// The canonical form of a response.
    public init(status: Int, keyID: String, requestNonce: String, body: Data) {
        self.status = status
        self.keyID = keyID
        self.requestNonce = requestNonce
        self.bodyHash = SHA256.hex(body)
    }

    /// The string that is signed.
    public var string: String {
        [Self.algorithm, String(status), keyID, requestNonce, bodyHash].joined(separator: "\n")
    }

    /// The lower-case hex HMAC-SHA256 of ``string`` under `secret`.
    public func signature(using secret: SymmetricKey) -> String {
        Hex.encode(HMAC<SHA256>.authenticationCode(for: Data(string.utf8), using: secret))
    }
}
#endif
