#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
public import HTTPTypes

/// What a failed call's response looked like — status, header fields and the start of the body — kept on
/// the ``CourierError`` (``CourierError/response``) so a server's own explanation of a `500` is not lost.
///
/// The body is bounded: at most ``bodyLimit`` bytes are kept (``bodySize`` says how many there were).
/// ``excerpt`` is what ``CourierError/description`` shows: a short, single-line start of a textual body.
///
/// ```swift
/// do {
///     _ = try await client.send(.createOrder(cart))
/// } catch let error as CourierError {
///     if let response = error.response {
///         print(response.status.code, response.headerFields[.retryAfter] ?? "-")
///         print(response.bodyText ?? "\(response.bodySize) bytes")    // {"error":"inventory service down"}
///     }
/// }
/// ```
public struct ResponseSnapshot: Sendable, Hashable {
    /// The most body bytes a snapshot keeps: 64 KiB.
    public static let bodyLimit = 64 << 10
    /// The most characters of ``excerpt``.
    public static let excerptLength = 160

    /// The response's status.
    public var status: HTTPResponse.Status
    /// The response's header fields, as received.
    public var headerFields: HTTPFields
    /// The start of the body: at most ``bodyLimit`` bytes.
    public var body: Data
    /// The size of the whole body in bytes.
    public var bodySize: Int

    /// A snapshot of a response, keeping at most `limit` (at most ``bodyLimit``) bytes of `body`.
    public init(status: HTTPResponse.Status, headerFields: HTTPFields, body: Data, limit: Int = ResponseSnapshot.bodyLimit) {
        self.status = status
        self.headerFields = headerFields
        self.body = Data(body.prefix(max(0, min(limit, Self.bodyLimit))))
        self.bodySize = body.count
    }

    /// Whether the body was longer than what the snapshot keeps.
    public var isTruncated: Bool { bodySize > body.count }

    /// Whether the body is text: a textual `Content-Type` (`text/*`, JSON, XML, form, `+json`, `+xml`), or
    /// none and valid UTF-8 without NUL bytes.
    public var isText: Bool {
        guard let type = headerFields[.contentType]?.lowercased() else {
            return !body.contains(0) && String(validating: body, as: UTF8.self) != nil
        }
        let essence = String(type.split(separator: ";").first ?? "").filter { $0 != " " && $0 != "\t" }
        return essence.hasPrefix("text/") || essence.hasSuffix("+json") || essence.hasSuffix("+xml")
            || ["application/json", "application/xml", "application/x-www-form-urlencoded",
                "application/problem+json", "application/javascript"].contains(essence)
    }

    /// The kept body as text, when it is text (``isText``); invalid UTF-8 becomes U+FFFD.
    public var bodyText: String? {
        guard isText, !body.isEmpty else { return nil }
        return String(decoding: body, as: UTF8.self)
    }

    /// The start of a textual body on one line, for messages and logs: runs of white space become one space,
    /// other control characters are dropped, and it ends with `…` when cut at ``excerptLength`` characters
    /// (or when the snapshot itself was cut). `nil` for an empty or binary body.
    public var excerpt: String? {
        guard let text = bodyText else { return nil }
        var result = ""
        var count = 0
        var pendingSpace = false
        for character in text {
            if character.isWhitespace || character.isNewline {
                pendingSpace = !result.isEmpty
                continue
            }
            if character.unicodeScalars.allSatisfy({ $0.properties.generalCategory == .control || $0.properties.generalCategory == .format }) {
                continue
            }
            if pendingSpace {
                result.append(" ")
                count += 1
                pendingSpace = false
            }
            if count >= Self.excerptLength {
                return result + "…"
            }
            result.append(character)
            count += 1
        }
        if result.isEmpty { return nil }
        return isTruncated ? result + "…" : result
    }
}

extension ResponseSnapshot {
    /// A snapshot of a response in the chain (its body as it reached the stage: decrypted, not decoded).
    init(_ response: CourierResponse) {
        self.init(status: response.head.status, headerFields: response.head.headerFields, body: response.body)
    }
}
