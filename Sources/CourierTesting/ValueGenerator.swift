/// A seeded, reproducible generator of random `Value` trees, for property tests of codecs and
/// anything else that takes a `Value`. The same seed and options always give the same sequence.
///
/// Restrict the kinds to what a format can represent: JSON has no bytes (they come back as base64
/// strings), XML keys must be XML names, and so on.
///
/// ```swift
/// var generator = ValueGenerator(seed: 42, options: .json)
/// for _ in 0..<1000 {
///     let value = generator.next(maxDepth: 4, maxWidth: 6)
///     let bytes: [UInt8] = try JSONCodec().encode(value)
///     assert(try JSONCodec().decode(bytes) == value)
/// }
/// ```
public struct ValueGenerator: Sendable {
    /// The kinds of value the generator can produce.
    ///
    /// New cases may be added in later versions: a `switch` over it should have a `default` branch.
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        /// `Value.null`.
        case null
        /// `Value.bool(_:)`.
        case bool
        /// `Value.int(_:)`: small, boundary and random 64-bit integers.
        case int
        /// `Value.uint(_:)` above `Int64.max`.
        case uint
        /// `Value.double(_:)`: finite doubles only (short decimals, random bit patterns, `-0.0`).
        case double
        /// `Value.number(_:)`: integers and decimals too long for 64 bits or a `Double`.
        case number
        /// `Value.string(_:)` with ASCII, escapes, control characters and non-ASCII scalars.
        case string
        /// `Value.bytes(_:)`.
        case bytes
        /// `Value.array(_:)`.
        case array
        /// `Value.object(_:)` (names are unique, as in every `Value.Object`).
        case object
    }

    /// What object member names look like.
    ///
    /// New cases may be added in later versions: a `switch` over it should have a `default` branch.
    public enum KeyStyle: Sendable, Hashable {
        /// Any string, including escapes and non-ASCII text.
        case unicode
        /// ASCII identifiers (`[a-z_][a-z0-9_]*`), valid as XML names, protobuf field names and form keys.
        case identifier
    }

    /// What the generator produces.
    ///
    /// ```swift
    /// var options = ValueGenerator.Options()
    /// options.kinds.remove(.number)
    /// options.keyStyle = .identifier
    /// ```
    public struct Options: Sendable {
        /// The kinds to produce. Containers are only produced below the depth limit. Default: all.
        public var kinds: Set<Kind> = Set(Kind.allCases)
        /// What member names look like. Default ``KeyStyle/unicode``.
        public var keyStyle = KeyStyle.unicode
        /// The longest string (in scalars) and byte string produced. Default 24.
        public var maximumStringLength = 24

        /// All kinds, unicode keys.
        public init() {}

        /// Everything JSON represents exactly: all kinds but ``Kind/bytes``.
        public static var json: Options {
            var options = Options()
            options.kinds.remove(.bytes)
            return options
        }
    }

    /// The options in use.
    public var options: Options
    private var random: SeededRandom

    /// A generator whose sequence is determined by `seed`.
    public init(seed: UInt64, options: Options = Options()) {
        self.options = options
        self.random = SeededRandom(seed: seed)
    }

    /// The next random value, nested at most `maxDepth` containers deep with at most `maxWidth`
    /// elements or members per container.
    public mutating func next(maxDepth: Int = 4, maxWidth: Int = 6) -> Value {
        value(depth: max(0, maxDepth), width: max(0, maxWidth))
    }

    /// A random number in `0..<bound` (SplitMix64).
    public mutating func nextInt(below bound: Int) -> Int {
        precondition(bound > 0, "bound must be positive")
        return Int(nextRaw() % UInt64(bound))
    }

    private mutating func nextRaw() -> UInt64 { random.next() }

    private mutating func chance(_ percent: Int) -> Bool { nextInt(below: 100) < percent }

    private mutating func value(depth: Int, width: Int) -> Value {
        let kinds = Kind.allCases.filter {
            options.kinds.contains($0) && (depth > 0 || ($0 != .array && $0 != .object))
        }
        guard !kinds.isEmpty else { return .null }
        switch kinds[nextInt(below: kinds.count)] {
        case .null: return .null
        case .bool: return .bool(chance(50))
        case .int: return .int(integer())
        case .uint: return .uint(UInt64(Int64.max) + 1 + nextRaw() % (UInt64.max - UInt64(Int64.max)))
        case .double: return .double(double())
        case .number: return .number(exactNumber())
        case .string: return .string(string())
        case .bytes: return .bytes((0..<nextInt(below: options.maximumStringLength + 1)).map { _ in UInt8(truncatingIfNeeded: nextRaw()) })
        case .array:
            return .array((0..<nextInt(below: width + 1)).map { _ in value(depth: depth - 1, width: width) })
        case .object:
            var object = Value.Object()
            for _ in 0..<nextInt(below: width + 1) {
                object.updateValue(value(depth: depth - 1, width: width), forKey: key())
            }
            return .object(object)
        }
    }

    private mutating func integer() -> Int64 {
        switch nextInt(below: 4) {
        case 0: return Int64(nextInt(below: 201)) - 100
        case 1: return [Int64.min, .max, 0, -1, 1, Int64(Int32.max) + 1, Int64(Int32.min) - 1][nextInt(below: 7)]
        default: return Int64(bitPattern: nextRaw()) >> Int64(nextInt(below: 64))
        }
    }

    private mutating func double() -> Double {
        switch nextInt(below: 4) {
        case 0: return Double(nextInt(below: 2_000_001) - 1_000_000) / 100
        case 1: return [0.1, -0.0, 0.5, 1e-7, 2.5e20, .leastNonzeroMagnitude, .greatestFiniteMagnitude, 1.0][nextInt(below: 8)]
        default:
            while true {
                let d = Double(bitPattern: nextRaw())
                if d.isFinite { return d }
            }
        }
    }

    private mutating func digits(_ count: Int, leadingNonZero: Bool) -> String {
        var text = ""
        for i in 0..<count {
            let d = i == 0 && leadingNonZero ? 1 + nextInt(below: 9) : nextInt(below: 10)
            text.append(Character(Unicode.Scalar(UInt8(48 + d))))
        }
        return text
    }

    private mutating func exactNumber() -> String {
        let sign = chance(50) ? "-" : ""
        if chance(50) {
            return sign + digits(21 + nextInt(below: 15), leadingNonZero: true)
        }
        // A decimal with more significant digits than a Double keeps; the last digit is non-zero.
        return sign + digits(1 + nextInt(below: 3), leadingNonZero: true) + "." + digits(20 + nextInt(below: 10), leadingNonZero: false)
            + String(1 + nextInt(below: 9))
    }

    private static let pieces: [String] = [
        "a", "b", "z", "A", "0", "9", " ", "-", "_", ".", "\"", "\\", "/", "\n", "\t", "\r", "\u{0}", "\u{1}",
        "\u{1F}", "\u{7F}", "é", "ß", "中", "文", "€", "😀", "🇨🇳", "\u{2028}", "\u{FEFF}", "<", ">", "&", "'",
    ]

    private mutating func string() -> String {
        var text = ""
        for _ in 0..<nextInt(below: options.maximumStringLength + 1) {
            text += Self.pieces[nextInt(below: Self.pieces.count)]
        }
        return text
    }

    private static let identifierStart = Array("abcdefghijklmnopqrstuvwxyz_")
    private static let identifierRest = Array("abcdefghijklmnopqrstuvwxyz_0123456789")

    private mutating func key() -> String {
        switch options.keyStyle {
        case .unicode:
            return string()
        case .identifier:
            var text = String(Self.identifierStart[nextInt(below: Self.identifierStart.count)])
            for _ in 0..<nextInt(below: 10) { text.append(Self.identifierRest[nextInt(below: Self.identifierRest.count)]) }
            return text
        }
    }
}
