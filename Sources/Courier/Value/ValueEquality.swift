extension Value: Hashable {
    public static func == (lhs: Value, rhs: Value) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): return true
        case (.bool(let a), .bool(let b)): return a == b
        case (.int(let a), .int(let b)): return a == b
        case (.uint(let a), .uint(let b)): return a == b
        case (.double(let a), .double(let b)): return a == b
        case (.string(let a), .string(let b)): return a == b
        case (.bytes(let a), .bytes(let b)): return a == b
        case (.array(let a), .array(let b)): return a == b
        case (.object(let a), .object(let b)): return a == b
        default:
            guard lhs.isNumber, rhs.isNumber else { return false }
            guard let a = ExactDecimal(lhs), let b = ExactDecimal(rhs) else {
                // Only an exponent beyond ±2^40 has no exact decimal; such numbers compare by spelling.
                if case .number(let x) = lhs, case .number(let y) = rhs { return x == y }
                return false
            }
            return a == b
        }
    }

    public func hash(into hasher: inout Hasher) {
        switch self {
        case .null: hasher.combine(0)
        case .bool(let b):
            hasher.combine(1)
            hasher.combine(b)
        case .int, .uint, .double, .number:
            hasher.combine(2)
            let canonical = ExactDecimal(self)
            if let exact = canonical?.int64 {
                hasher.combine(exact)
            } else if let canonical {
                hasher.combine(canonical)
            } else if case .number(let spelling) = self {
                hasher.combine(spelling)
            }
        case .string(let s):
            hasher.combine(3)
            hasher.combine(s)
        case .bytes(let b):
            hasher.combine(4)
            hasher.combine(b)
        case .array(let a):
            hasher.combine(5)
            hasher.combine(a)
        case .object(let o):
            hasher.combine(6)
            hasher.combine(o)
        }
    }
}

/// A number ``Value`` as an exact decimal: sign, significant digits (no leading or trailing zeros) and a
/// decimal exponent (value = digits × 10^exponent), so that `1`, `1.0`, `1e0` and `10E-1` are the same number
/// and a 400-digit integer loses nothing. Used for equality across number cases and by exact arithmetic
/// elsewhere (JSON Schema's `multipleOf`).
///
/// ```swift
/// ExactDecimal(lexical: "0.0750")   // negative: false, digits: [7, 5], exponent: -3
/// ExactDecimal(Value.int(1)) == ExactDecimal(Value.double(1.0))   // true
/// ```
public struct ExactDecimal: Hashable, Sendable {
    /// Whether the number is below zero (never true for zero).
    public var negative: Bool
    /// Significant decimal digits (0...9), most significant first; empty for zero.
    public var digits: [UInt8]
    /// The power of ten the digits are multiplied by.
    public var exponent: Int

    /// The exact decimal of a number value (`nil` for other kinds and for NaN and infinities). A double is
    /// taken at its shortest round-trip spelling.
    public init?(_ value: Value) {
        switch value {
        case .int(let i): self.init(lexical: String(i))
        case .uint(let u): self.init(lexical: String(u))
        case .double(let d):
            guard d.isFinite else { return nil }
            // Below 2^53 an integral double's shortest spelling is its exact integer; above, the shortest
            // spelling (1.823292486261349e+16) can differ from the exact value (18232924862613488).
            if d == d.rounded(.towardZero), abs(d) < 9_007_199_254_740_992 {
                self.init(lexical: String(Int64(d)))
            } else {
                self.init(lexical: "\(d)")
            }
        case .number(let s): self.init(lexical: s)
        default: return nil
        }
    }

    /// Parses the JSON number grammar (also accepts Swift's `1e+19` spelling); exponents beyond ±2^40 are
    /// refused.
    public init?(lexical: String) {
        var negative = false
        var digits: [UInt8] = []
        var exponent = 0
        var fractionDigits = 0
        var bytes = Array(lexical.utf8)[...]
        if bytes.first == UInt8(ascii: "-") {
            negative = true
            bytes = bytes.dropFirst()
        } else if bytes.first == UInt8(ascii: "+") {
            bytes = bytes.dropFirst()
        }
        var sawDigit = false
        var inFraction = false
        while let c = bytes.first {
            if c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9") {
                sawDigit = true
                if !(digits.isEmpty && c == UInt8(ascii: "0")) { digits.append(c - UInt8(ascii: "0")) }
                if inFraction { fractionDigits += 1 }
            } else if c == UInt8(ascii: ".") && !inFraction {
                inFraction = true
            } else {
                break
            }
            bytes = bytes.dropFirst()
        }
        guard sawDigit else { return nil }
        if let c = bytes.first, c == UInt8(ascii: "e") || c == UInt8(ascii: "E") {
            bytes = bytes.dropFirst()
            guard let e = Self.boundedExponent(bytes) else { return nil }
            exponent = e
            bytes = []
        }
        guard bytes.isEmpty else { return nil }
        // Zeros before the first significant digit were skipped; fractionDigits accounts for them.
        exponent -= fractionDigits
        while let last = digits.last, last == 0 {
            digits.removeLast()
            exponent += 1
        }
        if digits.isEmpty {
            negative = false
            exponent = 0
        }
        self.negative = negative
        self.digits = digits
        self.exponent = exponent
    }

    /// Reads an optionally signed run of decimal digits, refusing magnitudes of 2^40 or more without ever
    /// forming a larger integer (an exponent such as `-9223372036854775808` must not overflow).
    private static func boundedExponent(_ bytes: ArraySlice<UInt8>) -> Int? {
        var rest = bytes
        var negative = false
        if let sign = rest.first, sign == UInt8(ascii: "-") || sign == UInt8(ascii: "+") {
            negative = sign == UInt8(ascii: "-")
            rest = rest.dropFirst()
        }
        guard !rest.isEmpty else { return nil }
        var magnitude = 0
        for c in rest {
            guard c >= UInt8(ascii: "0"), c <= UInt8(ascii: "9") else { return nil }
            magnitude = magnitude * 10 + Int(c - UInt8(ascii: "0"))
            guard magnitude < 1 << 40 else { return nil }
        }
        return negative ? -magnitude : magnitude
    }

    /// Whether the number is zero.
    public var isZero: Bool { digits.isEmpty }

    /// The exact `Int64` this number equals, if any.
    public var int64: Int64? {
        if digits.isEmpty { return 0 }
        guard exponent >= 0, exponent <= 19 - digits.count else { return nil }
        var magnitude: UInt64 = 0
        for digit in digits + Array(repeating: 0, count: exponent) {
            let (times, overflow1) = magnitude.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times.addingReportingOverflow(UInt64(digit))
            guard !overflow1, !overflow2 else { return nil }
            magnitude = sum
        }
        if negative {
            return magnitude <= UInt64(Int64.max) + 1 ? Int64(truncatingIfNeeded: 0 &- magnitude) : nil
        }
        return magnitude <= UInt64(Int64.max) ? Int64(magnitude) : nil
    }
}
