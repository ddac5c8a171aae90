#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Courier

/// A seeded, reproducible generator of random instances of any `Decodable` model, for round-trip and
/// property tests of your own types. The same seed gives the same sequence.
///
/// It runs the model's own `init(from:)` against a decoder that answers every request with a random value
/// of exactly the type asked for: `Int8` gets an `Int8`, `UInt64` a `UInt64`, `Date` a date (whole
/// seconds), `URL` an `https` URL, `Data` random bytes, `Decimal` a short decimal, and a
/// `CaseIterable` enum one of its cases. Optionals are absent about a third of the time; arrays and
/// dictionaries hold up to `maxWidth` elements; nesting stops at `maxDepth` (optionals become `nil`,
/// collections empty), so recursive models terminate. A model whose `init(from:)` validates what it reads
/// (and throws) is retried with fresh values a few times before ``next(_:)`` gives up with that error.
///
/// ```swift
/// struct User: Codable, Equatable { var id: Int64; var name: String; var tags: [String]; var role: Role? }
/// enum Role: String, Codable, CaseIterable { case admin, member }
///
/// var generator = ModelGenerator(seed: 7)
/// let user = try generator.next(User.self)          // a random, valid User
/// let failures = RoundTrip.check(User.self, codecs: [JSONCodec(), XMLCodec()], count: 1_000, seed: 7)
/// ```
public struct ModelGenerator: Sendable {
    /// What the generated instances look like.
    public struct Options: Sendable {
        /// The deepest nesting of containers. Default 4.
        public var maxDepth = 4
        /// The most elements in an array or dictionary. Default 5.
        public var maxWidth = 5
        /// The longest string, in scalars. Default 16.
        public var maximumStringLength = 16
        /// The shortest string, in scalars. Default 0. (XML reads a lone empty list item, `<tag/>`, as an
        /// empty list: generate with 1 to round-trip lists of strings through XML.)
        public var minimumStringLength = 0
        /// Strings are ASCII letters and digits only (for formats or models that cannot take any text).
        /// Default `false`: any scalars, including escapes, control characters and non-ASCII text.
        public var asciiStrings = false
        /// How many times a model whose `init(from:)` throws is tried again with new values. Default 8.
        public var attempts = 8
        /// Which of the unusual scalars the generator mixes into strings (escapes, control characters,
        /// non-ASCII text) they may hold; lower-case ASCII letters are always allowed. Default: every scalar. ``carried(by:)`` narrows it to what each format can carry.
        public var allowsScalar: @Sendable (Unicode.Scalar) -> Bool = { _ in true }
        /// Whether an array of strings may hold an empty string. Default `true`. (XML writes a lone empty item
        /// as `<tag/>`, which reads back as an empty list: it cannot tell `[""]` from `[]`.)
        public var emptyStringsInArrays = true

        /// The defaults.
        public init() {}

        /// These options, narrowed to values every format of `formats` carries unchanged, so a round trip
        /// through them can only fail on a codec's bug, never on a format's limit:
        ///
        /// - `xml`: XML 1.0's `Char` production — no C0 control character but tab, line feed and carriage
        ///   return, no `U+FFFE`/`U+FFFF` — and no empty string as an array's item.
        /// - `form`: ASCII letters and digits only (form bodies carry text, not structure).
        /// - `json`, `protobuf` and formats Courier does not know: no change.
        ///
        /// ``RoundTrip/check(_:codecs:count:seed:options:hints:)`` applies it for its codecs' formats.
        public func carried(by formats: [ContentFormat]) -> Options {
            var options = self
            for format in formats {
                switch format {
                case .xml:
                    let previous = options.allowsScalar
                    options.allowsScalar = { scalar in previous(scalar) && Self.isXMLCharacter(scalar) }
                    options.emptyStringsInArrays = false
                case .form:
                    options.asciiStrings = true
                default:
                    break
                }
            }
            return options
        }

        /// XML 1.0's `Char`: `#x9 | #xA | #xD | [#x20-#xD7FF] | [#xE000-#xFFFD] | [#x10000-#x10FFFF]`.
        static func isXMLCharacter(_ scalar: Unicode.Scalar) -> Bool {
            switch scalar.value {
            case 0x9, 0xA, 0xD, 0x20...0xD7FF, 0xE000...0xFFFD, 0x10000...0x10FFFF: return true
            default: return false
            }
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

    /// A random instance of `type`; throws the model's own error when its `init(from:)` rejected every
    /// attempt (see ``Options/attempts``).
    public mutating func next<T: Decodable>(_ type: T.Type = T.self) throws -> T {
        var lastError: (any Error)?
        for _ in 0..<max(1, options.attempts) {
            let source = RandomSource(random: random, options: options)
            let decoder = RandomDecoder(source: source, depth: 0, codingPath: [])
            defer { random = source.random }
            do {
                return try decoder.decode(T.self)
            } catch {
                lastError = error
            }
        }
        throw CourierError(.typeMismatch, detail: "could not generate a \(T.self): \(lastError.map { "\($0)" } ?? "no attempt")")
    }
}

/// The random state one generation shares across its nested decoders.
final class RandomSource: @unchecked Sendable {
    var random: SeededRandom
    let options: ModelGenerator.Options

    init(random: SeededRandom, options: ModelGenerator.Options) {
        self.random = random
        self.options = options
    }

    private static let scalars: [Unicode.Scalar] = ["a", "Z", "0", " ", "\"", "\\", "<", "&", "\n", "\t", "\u{1}",
                                                    "é", "ß", "中", "文", "😀", "\u{2028}", "\u{7F}"]
    private static let ascii = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")

    func string(inArray: Bool = false) -> String {
        var shortest = min(options.minimumStringLength, options.maximumStringLength)
        if inArray, !options.emptyStringsInArrays { shortest = max(shortest, min(1, options.maximumStringLength)) }
        let length = shortest + random.below(options.maximumStringLength - shortest + 1)
        if options.asciiStrings { return String((0..<length).map { _ in Self.ascii[random.below(Self.ascii.count)] }) }
        var text = String.UnicodeScalarView()
        for _ in 0..<length {
            var scalar = Unicode.Scalar(UInt8(0x61 + random.below(26)))
            if !random.chance(60) {
                let special = Self.scalars[random.below(Self.scalars.count)]
                if options.allowsScalar(special) { scalar = special }
            }
            text.append(scalar)
        }
        return String(text)
    }

    /// Boundary values a fifth of the time, small values often, any bit pattern otherwise.
    func integer<I: FixedWidthInteger>(_ type: I.Type) -> I {
        switch random.below(5) {
        case 0: return [I.min, I.max, 0, 1][random.below(4)]
        case 1, 2: return I(truncatingIfNeeded: random.below(201) - (I.isSigned ? 100 : 0))
        default: return I(truncatingIfNeeded: random.next())
        }
    }

    /// Short decimals and finite random doubles (never NaN or infinity: no text format carries them).
    func double() -> Double {
        if random.chance(50) { return Double(random.below(2_000_001) - 1_000_000) / 100 }
        while true {
            let candidate = Double(bitPattern: random.next())
            if candidate.isFinite { return candidate }
        }
    }

    func float() -> Float {
        if random.chance(50) { return Float(random.below(20_001) - 10_000) / 4 }
        while true {
            let candidate = Float(bitPattern: UInt32(truncatingIfNeeded: random.next()))
            if candidate.isFinite { return candidate }
        }
    }

    func key() -> String {
        let length = 1 + random.below(8)
        return String((0..<length).map { _ in Character(Unicode.Scalar(UInt8(0x61 + random.below(26)))) })
    }
}

/// Answers a model's `init(from:)` with random values of the types it asks for.
struct RandomDecoder: Decoder {
    let source: RandomSource
    let depth: Int
    var codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    var exhausted: Bool { depth >= source.options.maxDepth }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        let count = exhausted ? 0 : source.random.below(source.options.maxWidth + 1)
        var seen = Set<String>()
        let keys = (0..<count).compactMap { _ -> Key? in
            let name = source.key()
            return seen.insert(name).inserted ? Key(stringValue: name) : nil
        }
        return KeyedDecodingContainer(RandomKeyed<Key>(decoder: self, allKeys: keys))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        RandomUnkeyed(decoder: self, count: exhausted ? 0 : source.random.below(source.options.maxWidth + 1))
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { RandomSingle(decoder: self) }

    func nested(_ key: any CodingKey) -> RandomDecoder {
        RandomDecoder(source: source, depth: depth + 1, codingPath: codingPath + [key])
    }

    func decodeNil() -> Bool { exhausted || source.random.chance(33) }

    /// A random `T`: the leaf types directly, `CaseIterable` enums by case, anything else through its
    /// own `init(from:)`.
    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        if let leaf = leaf(T.self) as? T { return leaf }
        if let cases = T.self as? any CaseIterable.Type, let chosen = pick(from: cases) as? T { return chosen }
        return try T(from: self)
    }

    private func pick<C: CaseIterable>(from type: C.Type) -> Any? {
        let all = Array(type.allCases)
        return all.isEmpty ? nil : all[source.random.below(all.count)]
    }

    private func leaf(_ type: Any.Type) -> Any? {
        switch type {
        case is Bool.Type: return source.random.chance(50)
        case is String.Type: return source.string(inArray: codingPath.last is RandomIndex)
        case is Double.Type: return source.double()
        case is Float.Type: return source.float()
        case is Int.Type: return source.integer(Int.self)
        case is Int8.Type: return source.integer(Int8.self)
        case is Int16.Type: return source.integer(Int16.self)
        case is Int32.Type: return source.integer(Int32.self)
        case is Int64.Type: return source.integer(Int64.self)
        case is UInt.Type: return source.integer(UInt.self)
        case is UInt8.Type: return source.integer(UInt8.self)
        case is UInt16.Type: return source.integer(UInt16.self)
        case is UInt32.Type: return source.integer(UInt32.self)
        case is UInt64.Type: return source.integer(UInt64.self)
        case is Date.Type:
            // Whole seconds between 1970 and 2100. (A `Date` is a `Double` of seconds since 2001: most
            // instants with milliseconds do not survive text in any ISO 8601 library, Foundation's included.)
            return Date(timeIntervalSince1970: Double(source.random.below(4_102_444_800)))
        case is URL.Type: return URL(string: "https://example.com/\(source.key())/\(source.random.below(1000))")!
        case is Data.Type: return Data((0..<source.random.below(source.options.maximumStringLength + 1)).map { _ in
                UInt8(truncatingIfNeeded: source.random.next())
            })
        case is Decimal.Type:
            return Decimal(string: "\(source.random.below(2_000_001) - 1_000_000).\(source.random.below(100))") ?? Decimal()
        case is Value.Type:
            var generator = ValueGenerator(seed: source.random.next(), options: .json)
            return generator.next(maxDepth: max(0, source.options.maxDepth - depth - 1), maxWidth: source.options.maxWidth)
        default: return nil
        }
    }
}

private struct RandomKeyed<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let decoder: RandomDecoder
    let allKeys: [Key]
    var codingPath: [any CodingKey] { decoder.codingPath }

    func contains(_ key: Key) -> Bool { true }
    func decodeNil(forKey key: Key) throws -> Bool { decoder.decodeNil() }
    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T { try decoder.nested(key).decode(T.self) }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws
        -> KeyedDecodingContainer<NestedKey>
    {
        try decoder.nested(key).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try decoder.nested(key).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder { decoder.nested(RandomIndex(intValue: 0)) }
    func superDecoder(forKey key: Key) throws -> any Decoder { decoder.nested(key) }
}

private struct RandomUnkeyed: UnkeyedDecodingContainer {
    let decoder: RandomDecoder
    let total: Int
    var currentIndex = 0
    var codingPath: [any CodingKey] { decoder.codingPath }
    var count: Int? { total }
    var isAtEnd: Bool { currentIndex >= total }

    init(decoder: RandomDecoder, count: Int) {
        self.decoder = decoder
        self.total = count
    }

    private mutating func element() throws -> RandomDecoder {
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(Any.self, .init(codingPath: codingPath, debugDescription: "no more elements"))
        }
        defer { currentIndex += 1 }
        return decoder.nested(RandomIndex(intValue: currentIndex))
    }

    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd, decoder.source.random.chance(20) else { return false }
        currentIndex += 1
        return true
    }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { try element().decode(T.self) }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws
        -> KeyedDecodingContainer<NestedKey>
    {
        try element().container(keyedBy: type)
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer { try element().unkeyedContainer() }
    mutating func superDecoder() throws -> any Decoder { try element() }
}

private struct RandomSingle: SingleValueDecodingContainer {
    let decoder: RandomDecoder
    var codingPath: [any CodingKey] { decoder.codingPath }

    func decodeNil() -> Bool { decoder.decodeNil() }
    func decode<T: Decodable>(_ type: T.Type) throws -> T { try decoder.decode(T.self) }
}

private struct RandomIndex: CodingKey {
    var intValue: Int?
    var stringValue: String { intValue.map(String.init) ?? "" }
    init(intValue: Int) { self.intValue = intValue }
    init?(stringValue: String) { nil }
}
