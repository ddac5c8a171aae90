#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Pieces of the XML ⇄ ``Value`` mapping shared by the reader and the writer: the XML Schema instance
/// namespace, name validation and the shape-guided conversion of text to scalars.
enum XMLMapping {
    /// The XML Schema instance namespace, home of `xsi:nil`.
    static let xsiNamespace = "http://www.w3.org/2001/XMLSchema-instance"

    // MARK: Names

    /// Whether `name` is a namespace-qualified XML name (`NCName` or `prefix:NCName`).
    static func isQualifiedName(_ name: String) -> Bool {
        // Fast path for ASCII names without a prefix.
        var ascii = true
        var index = 0
        for b in name.utf8 {
            let letter = (b | 0x20) &- UInt8(ascii: "a") < 26 || b == UInt8(ascii: "_")
            if index == 0 {
                if !letter {
                    ascii = false
                    break
                }
            } else if !(letter || b &- UInt8(ascii: "0") < 10 || b == UInt8(ascii: "-") || b == UInt8(ascii: ".")) {
                ascii = false
                break
            }
            index += 1
        }
        if ascii { return index > 0 }
        var sawColon = false
        var atStart = true
        for scalar in name.unicodeScalars {
            if scalar == ":" {
                if sawColon || atStart { return false }
                sawColon = true
                atStart = true
                continue
            }
            if atStart {
                guard isNameStart(scalar) else { return false }
                atStart = false
            } else {
                guard isNameChar(scalar) else { return false }
            }
        }
        return !atStart
    }

    /// The prefix of a qualified name (`soap` for `soap:Body`), if any.
    static func prefix(of name: String) -> Substring? {
        guard let colon = name.firstIndex(of: ":") else { return nil }
        return name[..<colon]
    }

    /// XML 1.0 (fifth edition) `NameStartChar` without the colon.
    private static func isNameStart(_ s: Unicode.Scalar) -> Bool {
        switch s.value {
        case 0x41...0x5A, 0x61...0x7A, 0x5F: return true
        case 0xC0...0xD6, 0xD8...0xF6, 0xF8...0x2FF, 0x370...0x37D, 0x37F...0x1FFF, 0x200C...0x200D,
            0x2070...0x218F, 0x2C00...0x2FEF, 0x3001...0xD7FF, 0xF900...0xFDCF, 0xFDF0...0xFFFD,
            0x10000...0xEFFFF:
            return true
        default: return false
        }
    }

    /// XML 1.0 (fifth edition) `NameChar` without the colon.
    private static func isNameChar(_ s: Unicode.Scalar) -> Bool {
        switch s.value {
        case 0x30...0x39, 0x2D, 0x2E, 0xB7, 0x300...0x36F, 0x203F...0x2040: return true
        default: return isNameStart(s)
        }
    }

    // MARK: Scalars from text

    /// Why text could not become the scalar a shape asked for.
    struct Mismatch: Error {
        var expected: String
    }

    /// Whether `byte` is XML white space.
    @inline(__always)
    static func isSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x0A || byte == 0x09 || byte == 0x0D
    }

    /// `bytes` without leading and trailing XML white space.
    static func trimmed(_ bytes: UnsafeBufferPointer<UInt8>) -> UnsafeBufferPointer<UInt8> {
        var start = 0
        var end = bytes.count
        while start < end, isSpace(bytes[start]) { start += 1 }
        while end > start, isSpace(bytes[end - 1]) { end -= 1 }
        return UnsafeBufferPointer(rebasing: bytes[start..<end])
    }

    /// Converts the text of a leaf to the scalar `shape` names (already unwrapped from optional and
    /// array). `optional` turns empty text into `.null` for non-string shapes.
    static func scalar(
        _ text: UnsafeBufferPointer<UInt8>, shape: ValueShape, optional: Bool
    ) throws(Mismatch) -> Value {
        switch shape {
        case .any, .string, .integer, .number, .bool:
            return try scalar(text, kind: scalarKind(of: shape)!, optional: optional)
        case .bytes:
            let t = trimmed(text)
            if t.isEmpty { return .bytes([]) }
            guard let data = Data(base64Encoded: Data(t), options: .ignoreUnknownCharacters) else {
                throw Mismatch(expected: "base64 bytes")
            }
            return .bytes([UInt8](data))
        case .object, .map:
            // An empty element where an object is expected is an empty object; other text stays text
            // so that the model decoder can name the mismatch with its own path.
            if trimmed(text).isEmpty { return optional && text.isEmpty ? .null : .object(Value.Object()) }
            return .string(string(text))
        case .array(let element):
            return try scalar(text, shape: element.unwrapped, optional: optional)
        case .optional(let wrapped):
            return try scalar(text, shape: wrapped.unwrapped, optional: true)
        }
    }

    /// The shapes of plain scalars, which a builder reads from an element's resolved shape once.
    enum ScalarKind {
        case text, integer, number, bool
    }

    /// The kind of `shape` when it is a plain scalar (or anything, read as text).
    static func scalarKind(of shape: ValueShape) -> ScalarKind? {
        switch shape {
        case .any, .string: return .text
        case .integer: return .integer
        case .number: return .number
        case .bool: return .bool
        default: return nil
        }
    }

    /// ``scalar(_:shape:optional:)`` for a plain scalar shape.
    static func scalar(
        _ text: UnsafeBufferPointer<UInt8>, kind: ScalarKind, optional: Bool
    ) throws(Mismatch) -> Value {
        switch kind {
        case .text:
            return .string(string(text))
        case .integer:
            let t = trimmed(text)
            if t.isEmpty, optional { return .null }
            guard let v = integer(t) else { throw Mismatch(expected: "an integer") }
            return v
        case .number:
            let t = trimmed(text)
            if t.isEmpty, optional { return .null }
            guard let v = number(t) else { throw Mismatch(expected: "a number") }
            return v
        case .bool:
            let t = trimmed(text)
            if t.count == 1 {
                if t[0] == UInt8(ascii: "1") { return .bool(true) }
                if t[0] == UInt8(ascii: "0") { return .bool(false) }
            } else if equals(t, "true") {
                return .bool(true)
            } else if equals(t, "false") {
                return .bool(false)
            } else if t.isEmpty, optional {
                return .null
            }
            throw Mismatch(expected: "a boolean (true, false, 1 or 0)")
        }
    }

    /// The string of a text or attribute value, as `String(decoding:as:)` makes it (ill-formed UTF-8 repaired).
    /// At most 15 bytes of well-formed UTF-8 are put in String's inline layout directly
    /// (``ProtobufRawValueBuilder/smallString(_:_:validated:)``), bit for bit the string the standard library
    /// would make, without its general path.
    @inline(__always)
    static func string(_ text: UnsafeBufferPointer<UInt8>) -> String {
        if text.count <= 15, JSONParser.smallStringsFromBits,
            let small = ProtobufRawValueBuilder.smallString(text, 0..<text.count, validated: false)
        {
            return small
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// Whether `t` holds exactly the bytes of `word`, compared in place.
    @inline(__always)
    static func equals(_ t: UnsafeBufferPointer<UInt8>, _ word: StaticString) -> Bool {
        t.count == word.utf8CodeUnitCount && XMLStartTagScanner.starts(with: word, t, at: 0)
    }

    /// An integer in XML Schema lexical form (`-12`, `+7`, `0042`): `.int`, `.uint` or, beyond 64 bits,
    /// an exact `.number`.
    static func integer(_ t: UnsafeBufferPointer<UInt8>) -> Value? {
        var i = 0
        var negative = false
        if i < t.count, t[i] == UInt8(ascii: "-") || t[i] == UInt8(ascii: "+") {
            negative = t[i] == UInt8(ascii: "-")
            i += 1
        }
        guard i < t.count else { return nil }
        var magnitude: UInt64 = 0
        var overflow = false
        let digitsStart = i
        while i < t.count {
            let d = t[i] &- UInt8(ascii: "0")
            guard d < 10 else { return nil }
            if !overflow {
                let (m, o1) = magnitude.multipliedReportingOverflow(by: 10)
                let (s, o2) = m.addingReportingOverflow(UInt64(d))
                if o1 || o2 { overflow = true } else { magnitude = s }
            }
            i += 1
        }
        if overflow {
            var digits = Substring(String(decoding: UnsafeBufferPointer(rebasing: t[digitsStart...]), as: UTF8.self))
            while digits.count > 1, digits.first == "0" { digits = digits.dropFirst() }
            return .number((negative ? "-" : "") + digits)
        }
        if negative {
            if magnitude <= UInt64(Int64.max) { return .int(-Int64(magnitude)) }
            if magnitude == UInt64(Int64.max) + 1 { return .int(Int64.min) }
            return .number("-" + String(magnitude))
        }
        return Value(magnitude)
    }

    /// A number: an integer as ``integer(_:)`` does, a decimal or exponent form as `.double` when it
    /// has at most 15 significant digits (exact round trip) and as an exact `.number` otherwise;
    /// `INF`, `-INF` and `NaN` as in XML Schema.
    static func number(_ t: UnsafeBufferPointer<UInt8>) -> Value? {
        if let v = integer(t) { return v }
        if let d = exactDouble(t) { return .double(d) }
        let text = String(decoding: t, as: UTF8.self)
        // Only these few words start with a letter or a sign and are at most four bytes long.
        if t.count <= 4, let first = t.first,
            first == UInt8(ascii: "I") || first == UInt8(ascii: "N") || first == UInt8(ascii: "+")
                || first == UInt8(ascii: "-")
        {
            switch text {
            case "INF", "+INF": return .double(.infinity)
            case "-INF": return .double(-.infinity)
            case "NaN": return .double(.nan)
            default: break
            }
        }
        // Decimal grammar: [+-]? digits? ('.' digits?)? ([eE] [+-]? digits)?, at least one digit.
        var i = 0
        if i < t.count, t[i] == UInt8(ascii: "-") || t[i] == UInt8(ascii: "+") { i += 1 }
        var significant = 0
        var sawDigit = false
        var leading = true
        func isDigit(_ b: UInt8) -> Bool { b &- UInt8(ascii: "0") < 10 }
        while i < t.count, isDigit(t[i]) {
            if t[i] != UInt8(ascii: "0") || !leading { significant += 1; leading = false }
            sawDigit = true
            i += 1
        }
        if i < t.count, t[i] == UInt8(ascii: ".") {
            i += 1
            while i < t.count, isDigit(t[i]) {
                if t[i] != UInt8(ascii: "0") || !leading { significant += 1; leading = false }
                sawDigit = true
                i += 1
            }
        }
        guard sawDigit else { return nil }
        if i < t.count, t[i] == UInt8(ascii: "e") || t[i] == UInt8(ascii: "E") {
            i += 1
            if i < t.count, t[i] == UInt8(ascii: "-") || t[i] == UInt8(ascii: "+") { i += 1 }
            let expStart = i
            while i < t.count, isDigit(t[i]) { i += 1 }
            guard i > expStart else { return nil }
        }
        guard i == t.count else { return nil }
        if significant <= 15, let d = Double(text), d.isFinite { return .double(d) }
        var lexical = Substring(text)
        if lexical.first == "+" { lexical = lexical.dropFirst() }
        return .number(String(lexical))
    }

    /// Exact powers of ten: every one up to 10^22 is a `Double` without rounding.
    private static let powersOfTen: [Double] = (0...22).map { e in (0..<e).reduce(1.0) { value, _ in value * 10 } }

    /// The value of a decimal `[+-]? digits ('.' digits?)? ([eE] [+-]? digits)?` (or with digits only
    /// after the point) of at most 15 significant digits whose decimal exponent is within ±22, without
    /// `strtod`; `nil` for anything else. Its digits make an integer below 2^53 and the power of ten is
    /// exact, so the one multiplication or division rounds correctly: the same `Double` as `Double(text)`.
    static func exactDouble(_ t: UnsafeBufferPointer<UInt8>) -> Double? {
        var i = 0
        let negative = i < t.count && t[i] == UInt8(ascii: "-")
        if i < t.count, negative || t[i] == UInt8(ascii: "+") { i += 1 }
        var mantissa: UInt64 = 0
        var digits = 0
        var significant = 0
        var fraction = 0
        var sawPoint = false
        while i < t.count {
            let b = t[i]
            let d = b &- UInt8(ascii: "0")
            if d < 10 {
                digits += 1
                if mantissa != 0 || d != 0 { significant += 1 }
                if significant > 15 { return nil }
                mantissa = mantissa * 10 + UInt64(d)
                if sawPoint { fraction += 1 }
            } else if b == UInt8(ascii: "."), !sawPoint {
                sawPoint = true
            } else {
                break
            }
            i += 1
        }
        guard digits > 0 else { return nil }
        var exponent = 0
        if i < t.count, t[i] == UInt8(ascii: "e") || t[i] == UInt8(ascii: "E") {
            i += 1
            var negativeExponent = false
            if i < t.count, t[i] == UInt8(ascii: "-") || t[i] == UInt8(ascii: "+") {
                negativeExponent = t[i] == UInt8(ascii: "-")
                i += 1
            }
            let start = i
            while i < t.count, t[i] &- UInt8(ascii: "0") < 10 {
                if i - start >= 4 { return nil }
                exponent = exponent * 10 + Int(t[i] &- UInt8(ascii: "0"))
                i += 1
            }
            guard i > start else { return nil }
            if negativeExponent { exponent = -exponent }
        }
        guard i == t.count else { return nil }
        exponent -= fraction
        guard exponent >= -22, exponent <= 22 else { return nil }
        var value = Double(mantissa)
        if exponent >= 0 { value *= powersOfTen[exponent] } else { value /= powersOfTen[-exponent] }
        return negative ? -value : value
    }

    // MARK: Scalars to text

    /// The canonical text of a number.
    static func text(of double: Double) -> String {
        if double.isNaN { return "NaN" }
        if double.isInfinite { return double < 0 ? "-INF" : "INF" }
        if double == double.rounded(.towardZero), abs(double) < 1e15 { return String(Int64(double)) }
        return "\(double)"
    }
}
