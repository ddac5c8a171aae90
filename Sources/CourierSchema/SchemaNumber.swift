/// An exact decimal view of a number ``Value``: sign, significant digits and a decimal exponent
/// (value = digits × 10^exponent). Numeric keywords compare and divide with it, so `0.0075` is a
/// multiple of `0.0001` and a 400-digit integer neither overflows nor loses precision.
struct SchemaNumber: Sendable, Hashable {
    var negative: Bool
    /// Significant decimal digits (0...9), most significant first, no leading or trailing zeros;
    /// empty for zero.
    var digits: [UInt8]
    var exponent: Int

    init?(_ value: Value) {
        guard let exact = ExactDecimal(value) else { return nil }
        self.init(exact)
    }

    init?(lexical: String) {
        guard let exact = ExactDecimal(lexical: lexical) else { return nil }
        self.init(exact)
    }

    init(_ exact: ExactDecimal) {
        negative = exact.negative
        digits = exact.digits
        exponent = exact.exponent
    }

    var isZero: Bool { digits.isEmpty }

    /// Whether the number is an integer (no fractional part).
    var isInteger: Bool { digits.isEmpty || exponent >= 0 }

    /// The position of the most significant digit (a number in [10^(m-1), 10^m) has magnitude m).
    private var magnitude: Int { digits.count + exponent }

    /// Compares absolute values.
    private static func compareMagnitude(_ a: SchemaNumber, _ b: SchemaNumber) -> Int {
        if a.isZero || b.isZero { return a.isZero ? (b.isZero ? 0 : -1) : 1 }
        if a.magnitude != b.magnitude { return a.magnitude < b.magnitude ? -1 : 1 }
        let n = max(a.digits.count, b.digits.count)
        for i in 0..<n {
            let da = i < a.digits.count ? a.digits[i] : 0
            let db = i < b.digits.count ? b.digits[i] : 0
            if da != db { return da < db ? -1 : 1 }
        }
        return 0
    }

    /// -1, 0 or 1 as `a` is less than, equal to or greater than `b`.
    static func compare(_ a: SchemaNumber, _ b: SchemaNumber) -> Int {
        let signA = a.isZero ? 0 : (a.negative ? -1 : 1)
        let signB = b.isZero ? 0 : (b.negative ? -1 : 1)
        if signA != signB { return signA < signB ? -1 : 1 }
        if signA == 0 { return 0 }
        let m = compareMagnitude(a, b)
        return signA > 0 ? m : -m
    }

    /// Whether `self` is an integer multiple of `divisor` (exact; `divisor` must be positive).
    func isMultiple(of divisor: SchemaNumber) -> Bool {
        if isZero { return true }
        if divisor.isZero { return false }
        // Scale both to the common exponent e = min(exponents): X = digits·10^(ex−e), M = digits·10^(em−e).
        let common = min(exponent, divisor.exponent)
        let xZeros = exponent - common
        let mZeros = divisor.exponent - common
        // X is a multiple of M iff M's trailing zeros fit in X's and X' is a multiple of M's digits.
        // Long division of X (digits then xZeros zeros) by M (divisor digits then mZeros zeros).
        if mZeros > xZeros + digits.count { return false }
        // Remove common powers of ten: divide both by 10^min(xZeros, mZeros) = 10^0 (one of them is 0).
        var divisorDigits = divisor.digits
        divisorDigits.append(contentsOf: repeatElement(0, count: mZeros))
        if divisorDigits.count <= 18 {
            var m: UInt64 = 0
            for d in divisorDigits { m = m * 10 + UInt64(d) }
            var r: UInt64 = 0
            for d in digits { r = (r * 10 + UInt64(d)) % m }
            if xZeros > 0 && r != 0 { r = Self.mulMod(r, Self.powMod(10, UInt64(xZeros), m), m) }
            return r == 0
        }
        // Arbitrary-size divisor: schoolbook remainder on decimal digit arrays.
        var remainder: [UInt8] = []
        func step(_ d: UInt8) {
            remainder.append(d)
            while let first = remainder.first, first == 0 { remainder.removeFirst() }
            while Self.compareDigits(remainder, divisorDigits) >= 0 { Self.subtract(&remainder, divisorDigits) }
        }
        for d in digits { step(d) }
        var zeros = xZeros
        while zeros > 0 {
            step(0)
            zeros -= 1
            if remainder.isEmpty { return true }
            if zeros > 100_000 { return false }  // bounded work: treat absurd exponents as not a multiple
        }
        return remainder.isEmpty
    }

    private static func mulMod(_ a: UInt64, _ b: UInt64, _ m: UInt64) -> UInt64 {
        let product = a.multipliedFullWidth(by: b)
        return m.dividingFullWidth((product.high, product.low)).remainder
    }

    private static func powMod(_ base: UInt64, _ exponent: UInt64, _ m: UInt64) -> UInt64 {
        var result: UInt64 = 1 % m
        var b = base % m
        var e = exponent
        while e > 0 {
            if e & 1 == 1 { result = mulMod(result, b, m) }
            b = mulMod(b, b, m)
            e >>= 1
        }
        return result
    }

    private static func compareDigits(_ a: [UInt8], _ b: [UInt8]) -> Int {
        if a.count != b.count { return a.count < b.count ? -1 : 1 }
        for i in a.indices where a[i] != b[i] { return a[i] < b[i] ? -1 : 1 }
        return 0
    }

    private static func subtract(_ a: inout [UInt8], _ b: [UInt8]) {
        var borrow: Int = 0
        var i = a.count - 1
        var j = b.count - 1
        while i >= 0 {
            var d = Int(a[i]) - borrow - (j >= 0 ? Int(b[j]) : 0)
            if d < 0 {
                d += 10
                borrow = 1
            } else {
                borrow = 0
            }
            a[i] = UInt8(d)
            i -= 1
            j -= 1
        }
        while let first = a.first, first == 0 { a.removeFirst() }
    }
}

extension Value {
    /// Whether this number is mathematically an integer (`1.0` is; `1.5` is not).
    var isIntegral: Bool {
        switch self {
        case .int, .uint: return true
        case .double(let d): return d.isFinite && d.rounded(.towardZero) == d
        case .number(let s): return SchemaNumber(lexical: s)?.isInteger ?? false
        default: return false
        }
    }
}

/// Compares two numbers; the fast paths avoid decimal conversion for the common small cases.
@inline(__always)
func compareNumbers(_ a: Value, _ b: Value) -> Int? {
    switch (a, b) {
    case (.int(let x), .int(let y)): return x < y ? -1 : (x == y ? 0 : 1)
    case (.double(let x), .double(let y)): return x < y ? -1 : (x == y ? 0 : 1)
    case (.int(let x), .double(let y)) where x.magnitude < 1 << 53:
        let dx = Double(x)
        return dx < y ? -1 : (dx == y ? 0 : 1)
    case (.double(let x), .int(let y)) where y.magnitude < 1 << 53:
        let dy = Double(y)
        return x < dy ? -1 : (x == dy ? 0 : 1)
    default:
        guard let x = SchemaNumber(a), let y = SchemaNumber(b) else { return nil }
        return SchemaNumber.compare(x, y)
    }
}
