/// Percent-encoding (RFC 3986 §2.1), done in one place for every Courier module: query and form
/// parameters, cassette matching, redaction, schema `$ref` fragments.
extension QueryItem {
    /// Percent-encodes every byte of `text`'s UTF-8 but the RFC 3986 unreserved characters
    /// (`A–Z a–z 0–9 - . _ ~`), with upper-case hex digits: `a b/ü` → `a%20b%2F%C3%BC`.
    public static func percentEncode(_ text: String) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            if PercentCoding.isUnreserved(byte) {
                out.append(byte)
            } else {
                out.append(UInt8(ascii: "%"))
                out.append(PercentCoding.hexDigits[Int(byte >> 4)])
                out.append(PercentCoding.hexDigits[Int(byte & 0xF)])
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Decodes `%XX` escapes (either case of hex digit). An escape that is not `%` and two hex digits
    /// (`%`, `%4`, `%G1`, `%+1`) stays as it is; `+` stays a plus (form bodies turn it into a space before
    /// decoding, see ``ParameterEncoding/parse(_:plusAsSpace:)``); `%00` is a NUL character; bytes that do
    /// not form UTF-8 (`%FF`, a lone `%C3`) become U+FFFD. Linear in the length of `text`.
    ///
    /// ```swift
    /// QueryItem.percentDecode("a%20b%2")   // "a b%2"
    /// ```
    public static func percentDecode(_ text: some StringProtocol) -> String {
        guard text.utf8.contains(UInt8(ascii: "%")) else { return String(text) }
        let (bytes, _) = PercentCoding.decode(text.utf8)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Decodes `%XX` escapes strictly: nil when an escape is malformed or the bytes are not UTF-8 (a URI
    /// fragment that must be well-formed, such as a JSON Pointer in a `$ref`).
    package static func strictlyPercentDecoded(_ text: some StringProtocol) -> String? {
        guard text.utf8.contains(UInt8(ascii: "%")) else { return String(text) }
        let (bytes, wellFormed) = PercentCoding.decode(text.utf8)
        guard wellFormed else { return nil }
        return String(validating: bytes, as: UTF8.self)
    }
}

/// The byte-level percent-coding that ``QueryItem/percentEncode(_:)`` and ``QueryItem/percentDecode(_:)``
/// share.
enum PercentCoding {
    static let hexDigits: [UInt8] = Array("0123456789ABCDEF".utf8)

    static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
            UInt8(ascii: "~"):
            return true
        default:
            return false
        }
    }

    static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }

    /// The bytes with every well-formed `%XX` decoded and malformed escapes kept, and whether every `%`
    /// began a well-formed escape.
    static func decode(_ input: some Collection<UInt8>) -> (bytes: [UInt8], wellFormed: Bool) {
        let source = Array(input)
        var out: [UInt8] = []
        out.reserveCapacity(source.count)
        var wellFormed = true
        var index = 0
        while index < source.count {
            let byte = source[index]
            if byte == UInt8(ascii: "%") {
                if index + 2 < source.count, let high = hexValue(source[index + 1]), let low = hexValue(source[index + 2]) {
                    out.append(high << 4 | low)
                    index += 3
                    continue
                }
                wellFormed = false
            }
            out.append(byte)
            index += 1
        }
        return (out, wellFormed)
    }
}
