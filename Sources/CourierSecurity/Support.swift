#if Security
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Crypto
import HTTPTypes

/// Lower-case and upper-case hexadecimal text, and strict parsing (lower-case only, so that one flipped
/// bit of a signature's text can never spell the same bytes).
enum Hex {
    private static let lower = Array("0123456789abcdef".utf8)
    private static let upper = Array("0123456789ABCDEF".utf8)

    static func encode<Bytes: Sequence>(_ bytes: Bytes, uppercase: Bool = false) -> String where Bytes.Element == UInt8 {
        let digits = uppercase ? upper : lower
        var out: [UInt8] = []
        out.reserveCapacity(64)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Parses lower-case hex; nil for odd length or any other character.
    static func decodeLowercase(_ text: String) -> [UInt8]? {
        let utf8 = Array(text.utf8)
        guard utf8.count % 2 == 0 else { return nil }
        func nibble(_ c: UInt8) -> UInt8? {
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
            default: return nil
            }
        }
        var out: [UInt8] = []
        out.reserveCapacity(utf8.count / 2)
        var i = 0
        while i < utf8.count {
            guard let high = nibble(utf8[i]), let low = nibble(utf8[i + 1]) else { return nil }
            out.append(high << 4 | low)
            i += 2
        }
        return out
    }
}

extension SHA256 {
    /// The lower-case hex SHA-256 of `data`.
    static func hex<D: DataProtocol>(_ data: D) -> String { Hex.encode(SHA256.hash(data: data)) }
}

/// Random lower-case hex (nonces).
func randomHex(bytes count: Int) -> String {
    var generator = SystemRandomNumberGenerator()
    return Hex.encode((0..<count).map { _ in UInt8.random(in: .min ... .max, using: &generator) })
}

/// Compares two byte strings in time that depends only on their lengths.
func constantTimeEquals<A: Collection, B: Collection>(_ a: A, _ b: B) -> Bool
where A.Element == UInt8, B.Element == UInt8 {
    guard a.count == b.count else { return false }
    var difference: UInt8 = 0
    for (x, y) in zip(a, b) { difference |= x ^ y }
    return difference == 0
}

extension HTTPField.Name {
    /// Parses a header field name, failing with ``CourierError/Code/invalidConfiguration``.
    static func required(_ name: String) throws -> HTTPField.Name {
        guard let parsed = HTTPField.Name(name) else {
            throw CourierError(.invalidConfiguration, detail: "'\(name)' is not a valid header field name")
        }
        return parsed
    }

    /// `X-Courier-Key-Id`.
    static let courierKeyID = HTTPField.Name("X-Courier-Key-Id")!
    /// `X-Courier-Timestamp`.
    static let courierTimestamp = HTTPField.Name("X-Courier-Timestamp")!
    /// `X-Courier-Nonce`.
    static let courierNonce = HTTPField.Name("X-Courier-Nonce")!
    /// `X-Courier-Signature`.
    static let courierSignature = HTTPField.Name("X-Courier-Signature")!
    /// `X-Courier-Signed-Headers`.
    static let courierSignedHeaders = HTTPField.Name("X-Courier-Signed-Headers")!
    /// `X-Courier-Encryption`.
    static let courierEncryption = HTTPField.Name("X-Courier-Encryption")!
    /// `X-Courier-Content-SHA256`: a streamed body's SHA-256 (lower-case hex) or `UNSIGNED-PAYLOAD`.
    static let courierContentSHA256 = HTTPField.Name("X-Courier-Content-SHA256")!
    /// `X-Courier-Content-Type`.
    static let courierContentType = HTTPField.Name("X-Courier-Content-Type")!
}

/// A request path (as sent: `/a/b?x=1&y=2`) split into the bare path and the raw `&`-separated segments
/// of its query, each still percent-encoded as it will be sent (empty segments dropped), by the core's
/// ``Courier/RequestTarget``. A fragment is not part of a request target on the wire and is left out.
func splitRawPath(_ path: String?) -> (path: String, segments: [String]) {
    let target = RequestTarget(path)
    return (target.path, target.querySegments.map(String.init))
}

/// Joins a bare path and raw query segments back into a request path (no `?` when there are none).
func joinRawPath(_ path: String, _ segments: [String]) -> String {
    RequestTarget(path: path, query: segments.isEmpty ? nil : segments.joined(separator: "&")).text
}

/// The decoded pair of one raw segment (`a%5B%5D=x` → `a[]`, `x`).
func decodedPair(_ segment: String, plusAsSpace: Bool = false) -> QueryItem {
    ParameterEncoding.parse(segment, plusAsSpace: plusAsSpace).first ?? QueryItem("", nil)
}

/// Whether a decoded parameter name belongs to the top-level parameter `name` (`name`, `name[…]`, `name.…`).
func belongs(_ decoded: String, to name: String) -> Bool {
    decoded == name || decoded.hasPrefix(name + "[") || decoded.hasPrefix(name + ".")
}

/// `segments` stably sorted by their decoded names in byte order (the bytes of each segment unchanged).
func sortedByDecodedName(_ segments: [String], plusAsSpace: Bool = false) -> [String] {
    segments.map { (decodedPair($0, plusAsSpace: plusAsSpace).name, $0) }.enumerated().sorted { a, b in
        a.element.0 == b.element.0 ? a.offset < b.offset : a.element.0.utf8.lexicographicallyPrecedes(b.element.0.utf8)
    }.map(\.element.1)
}

/// Splits `path` (as sent: `/a/b?x=1`) into the bare path and its decoded query items.
func splitPath(_ path: String?) -> (path: String, query: [QueryItem]) {
    let (bare, segments) = splitRawPath(path)
    return (bare, segments.map { decodedPair($0) })
}

extension Int64 {
    /// `value` rounded down, NaN as 0 and beyond the type's range as its nearest end: a clock (an injected
    /// `now`) that gives an absurd date makes an absurd timestamp, not a trap.
    init(flooringClamped value: Double) {
        if value.isNaN {
            self = 0
        } else if value >= 0x1p63 {     // 2^63, the first Double past Int64.max
            self = .max
        } else if value < -0x1p63 {
            self = .min
        } else {
            self = Int64(value.rounded(.down))
        }
    }
}
#endif
