/// An exact decimal view of a number ``Value``: sign, significant digits and a decimal exponent
/// (value = digits × 10^exponent). Numeric keywords compare and divide with it, so `0.0075` is a
/// multiple of `0.0001`, a 400-digit integer neither overflows nor loses precision, and `1e100000` costs
/// no more than `1` (exponents are compared and subtracted, never expanded).
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

    /// Whether `self` is an integer multiple of `divisor`, exactly, in time proportional to the digits
    /// (never to the exponents, so `1e100000` costs what `1` costs); `nil` when the answer would need a long
    /// division with more than `maximumDigits` significant digits on either side (the caller gives up).
    ///
    /// With self = a·10^p and divisor = b·10^q (a and b without trailing zeros), self/divisor =
    /// a·10^(p−q)/b. When p < q it is no integer (10 divides b·10^(q−p) but not a). Otherwise, writing
    /// b = 2^s·5^t·b′ with b′ coprime to 10, b divides a·10^k (k = p − q) exactly when b′ divides a,
    /// 2^(s−k) divides a and 5^(t−k) divides a: no power of ten is ever expanded.
    func isMultiple(of divisor: SchemaDivisor, maximumDigits: Int) -> Bool? {
        if isZero { return true }
        let k = exponent - divisor.number.exponent
        if k < 0 { return false }
        guard let parts = divisor.parts, divisor.number.digits.count <= maximumDigits else { return nil }
        if parts.twos > k, !Self.isDivisible(digits, byPowerOf: 2, parts.twos - k) { return false }
        if parts.fives > k, !Self.isDivisible(digits, byPowerOf: 5, parts.fives - k) { return false }
        if let small = parts.smallCoprime { return Self.remainder(digits, small) == 0 }
        guard digits.count <= maximumDigits else { return nil }
        return Self.isDivisible(digits, by: parts.coprime)
    }

    /// The remainder of the integer `digits` divided by `m` (0 < m < 10^18): one pass, no overflow.
    static func remainder(_ digits: [UInt8], _ m: UInt64) -> UInt64 {
        var r: UInt64 = 0
        for d in digits { r = (r * 10 + UInt64(d)) % m }
        return r
    }

    /// Whether `prime`^`power` (prime 2 or 5) divides the integer `digits`. Only the last `power` digits
    /// matter (10^power is a multiple of prime^power), so the cost is bounded by `power`², whatever the
    /// length of `digits`.
    static func isDivisible(_ digits: [UInt8], byPowerOf prime: UInt8, _ power: Int) -> Bool {
        var tail = Array(digits.suffix(power))
        // Small powers: one pass modulo prime^power (2^60 and 5^25 keep r·10 + 9 below 2^64).
        if (prime == 2 && power <= 60) || (prime == 5 && power <= 25) {
            var m: UInt64 = 1
            for _ in 0..<power { m *= UInt64(prime) }
            return remainder(tail, m) == 0
        }
        for _ in 0..<power {
            guard let last = tail.last else { return false }
            let divisible = prime == 2 ? last % 2 == 0 : (last == 0 || last == 5)
            if !divisible { return false }
            divideExactly(&tail, by: prime)
            if tail.isEmpty { return false }  // zero cannot occur: the digits have no trailing zeros
        }
        return true
    }

    /// Divides the integer `digits` by `m` in place (m divides it), dropping leading zeros.
    static func divideExactly(_ digits: inout [UInt8], by m: UInt8) {
        var carry = 0
        var out: [UInt8] = []
        out.reserveCapacity(digits.count)
        for d in digits {
            let current = carry * 10 + Int(d)
            let q = current / Int(m)
            carry = current % Int(m)
            if !(out.isEmpty && q == 0) { out.append(UInt8(q)) }
        }
        digits = out
    }

    /// Whether the integer `digits` is a multiple of the integer `divisor` (schoolbook long division
    /// keeping only the remainder: digits.count × divisor.count work).
    static func isDivisible(_ digits: [UInt8], by divisor: [UInt8]) -> Bool {
        let width = divisor.count + 1
        let padded = [0] + divisor
        var r = [UInt8](repeating: 0, count: width)
        for d in digits {
            // r < divisor, so r[0] is 0: shift one place left and bring the next digit down.
            for i in 0..<(width - 1) { r[i] = r[i + 1] }
            r[width - 1] = d
            while compareDigits(r, padded) >= 0 { subtract(&r, padded) }
        }
        return r.allSatisfy { $0 == 0 }
    }

    /// Compares two digit arrays of the same width.
    private static func compareDigits(_ a: [UInt8], _ b: [UInt8]) -> Int {
        for i in a.indices where a[i] != b[i] { return a[i] < b[i] ? -1 : 1 }
        return 0
    }

    /// a −= b for digit arrays of the same width (a ≥ b).
    private static func subtract(_ a: inout [UInt8], _ b: [UInt8]) {
        var borrow = 0
        for i in stride(from: a.count - 1, through: 0, by: -1) {
            var d = Int(a[i]) - borrow - Int(b[i])
            if d < 0 {
                d += 10
                borrow = 1
            } else {
                borrow = 0
            }
            a[i] = UInt8(d)
        }
    }
}

/// A `multipleOf` divisor, taken apart once when the schema is compiled: divisor = b·10^q with
/// b = 2^s·5^t·b′ and b′ coprime to 10, so that ``SchemaNumber/isMultiple(of:maximumDigits:)`` never
/// expands a power of ten.
struct SchemaDivisor: Sendable {
    /// The factors of the divisor's significant digits b.
    struct Parts: Sendable {
        /// s: how many times 2 divides b.
        var twos: Int
        /// t: how many times 5 divides b.
        var fives: Int
        /// b′ = b / (2^s·5^t), most significant digit first.
        var coprime: [UInt8]
        /// b′ as an integer when it has at most 18 digits.
        var smallCoprime: UInt64?
    }

    /// The divisor (positive).
    var number: SchemaNumber
    /// Its factors; `nil` when it has more than ``maximumFactoredDigits`` significant digits (validation
    /// against it then gives up).
    var parts: Parts?

    /// The most significant digits a divisor is factored for (factoring costs their square).
    static let maximumFactoredDigits = 4_096

    init(_ number: SchemaNumber) {
        self.number = number
        guard number.digits.count <= Self.maximumFactoredDigits else {
            parts = nil
            return
        }
        var b = number.digits
        var twos = 0
        var fives = 0
        while let last = b.last, last % 2 == 0 {
            SchemaNumber.divideExactly(&b, by: 2)
            twos += 1
        }
        while let last = b.last, last == 5 {
            SchemaNumber.divideExactly(&b, by: 5)
            fives += 1
        }
        var small: UInt64? = nil
        if b.count <= 18 {
            var m: UInt64 = 0
            for d in b { m = m * 10 + UInt64(d) }
            small = m
        }
        parts = Parts(twos: twos, fives: fives, coprime: b, smallCoprime: small)
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
