import Courier
import CourierTestSupport
import CourierTesting
import Foundation
import Testing

// Differential tests of JSONCodec's direct typed path against the Value pivot it must equal: the same
// model, or the same error code and coding path; for encoding, the same bytes.

enum TypedRole: String, Codable, CaseIterable, Equatable { case admin, member, guest }
enum TypedLevel: Int, Codable, CaseIterable, Equatable { case low = 1, high = 9 }

struct TypedAddress: Codable, Equatable {
    var city: String
    var street: String?
    var zip: String
    var location: [Double]
}

struct TypedUser: Codable, Equatable {
    var id: Int64
    var name: String
    var email: String?
    var age: UInt8
    var score: Double
    var ratio: Float?
    var active: Bool
    var tags: [String]
    var counts: [Int]
    var role: TypedRole
    var level: TypedLevel?
    var address: TypedAddress?
    var friends: [TypedAddress]
    var scores: [String: Int]
    var nested: [[Int16]]
    var small: Int8?
    var big: UInt64
    var joined: Date
    var avatar: Data?
    var homepage: URL?
    var balance: Decimal?
}

struct TypedEnvelope: Codable, Equatable {
    var code: Int
    var message: String
    var data: TypedPage
}

struct TypedPage: Codable, Equatable {
    var page: Int
    var total: Int
    var users: [TypedUser]
}

/// A model holding a `Value` and reading some members by hand (nested containers, `decodeNil`,
/// `superDecoder`, `allKeys`).
struct TypedHandWritten: Codable, Equatable {
    var raw: Value
    var first: Int?
    var names: [String]
    var inner: String?
    var keys: [String]

    enum CodingKeys: String, CodingKey { case raw, first, names, inner, keys, missing }
    enum InnerKeys: String, CodingKey { case text }

    init(raw: Value, first: Int?, names: [String], inner: String?, keys: [String]) {
        (self.raw, self.first, self.names, self.inner, self.keys) = (raw, first, names, inner, keys)
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        raw = try container.decode(Value.self, forKey: .raw)
        first = try container.decodeNil(forKey: .first) ? nil : container.decode(Int.self, forKey: .first)
        var list = try container.nestedUnkeyedContainer(forKey: .names)
        var names: [String] = []
        while !list.isAtEnd { names.append(try list.decode(String.self)) }
        self.names = names
        if container.contains(.inner) {
            let inner = try container.nestedContainer(keyedBy: InnerKeys.self, forKey: .inner)
            self.inner = try inner.decodeIfPresent(String.self, forKey: .text)
        }
        let superDecoder = try container.superDecoder(forKey: .missing)
        _ = try superDecoder.singleValueContainer().decodeNil()
        keys = container.allKeys.map(\.stringValue)
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(raw, forKey: .raw)
        try container.encode(first, forKey: .first)
        var list = container.nestedUnkeyedContainer(forKey: .names)
        for name in names { try list.encode(name) }
        if let inner {
            var nested = container.nestedContainer(keyedBy: InnerKeys.self, forKey: .inner)
            try nested.encode(inner, forKey: .text)
        }
        try container.encode(keys, forKey: .keys)
    }
}

/// Any JSON document, read through the generic containers (for the JSONTestSuite through the typed path).
indirect enum AnyJSON: Decodable, Equatable {
    case null, bool(Bool), number(Double), string(String), array([AnyJSON]), object([String: AnyJSON])

    init(from decoder: any Decoder) throws {
        if let keyed = try? decoder.container(keyedBy: AnyKey.self) {
            var object: [String: AnyJSON] = [:]
            for key in keyed.allKeys { object[key.stringValue] = try keyed.decode(AnyJSON.self, forKey: key) }
            self = .object(object)
        } else if var unkeyed = try? decoder.unkeyedContainer() {
            var array: [AnyJSON] = []
            while !unkeyed.isAtEnd { array.append(try unkeyed.decode(AnyJSON.self)) }
            self = .array(array)
        } else {
            let single = try decoder.singleValueContainer()
            if single.decodeNil() {
                self = .null
            } else if let b = try? single.decode(Bool.self) {
                self = .bool(b)
            } else if let s = try? single.decode(String.self) {
                self = .string(s)
            } else {
                self = .number(try single.decode(Double.self))
            }
        }
    }
}

/// The outcome of one decode, comparable across the two paths.
enum TypedOutcome<T: Equatable>: Equatable, CustomStringConvertible {
    case value(T)
    case failure(CourierError.Code, [PathComponent])
    case other(String)

    init(_ body: () throws -> T) {
        do {
            self = .value(try body())
        } catch let error as CourierError {
            self = .failure(error.code, error.context.codingPath)
        } catch {
            self = .other("\(error)")
        }
    }

    var description: String {
        switch self {
        case .value(let v): return "value \(v)"
        case .failure(let code, let path): return "\(code) at \(PathComponent.render(path))"
        case .other(let text): return text
        }
    }
}

/// Decodes `bytes` both ways; returns a description of the difference, or `nil` when they agree.
func typedDifference<T: Decodable & Equatable>(
    _ type: T.Type, _ bytes: [UInt8], codec: JSONCodec = JSONCodec(), decoder: ValueDecoder = ValueDecoder(),
    hints: CodingHints = CodingHints()
) -> String? {
    let data = Data(bytes)
    let pivot = TypedOutcome { try decoder.decode(T.self, from: codec.decode(data, hints: hints)) }
    let direct = TypedOutcome { try codec.decode(T.self, from: data, hints: hints, decoder: decoder) }
    if pivot == direct { return nil }
    return "pivot: \(pivot)\ndirect: \(direct)\ninput: \(String(decoding: bytes.prefix(300), as: UTF8.self))"
}

/// Encodes `model` both ways; returns a description of the difference, or `nil` when they agree.
func typedEncodingDifference<T: Encodable>(_ model: T, codec: JSONCodec, encoder: ValueEncoder) -> String? {
    let pivot = Result { try codec.encode(encoder.encode(model)) as [UInt8] }
    let direct = Result { try codec.encode(model: model, encoder: encoder) }
    switch (pivot, direct) {
    case (.success(let a), .success(let b)):
        return a == b ? nil : "pivot:  \(String(decoding: a, as: UTF8.self))\ndirect: \(String(decoding: b, as: UTF8.self))"
    case (.failure(let a), .failure(let b)):
        let (x, y) = (a as? CourierError, b as? CourierError)
        return x?.code == y?.code && x?.context.codingPath == y?.context.codingPath ? nil : "errors: \(a) vs \(b)"
    default:
        return "pivot \(pivot) vs direct \(direct)"
    }
}

@Suite struct JSONTypedDecodingTests {
    static let decoders: [ValueDecoder] = {
        var result: [ValueDecoder] = []
        for date in [DateCodingStrategy.iso8601, .secondsSince1970, .millisecondsSince1970] {
            for lenient in [false, true] {
                var decoder = ValueDecoder()
                decoder.dateStrategy = date
                decoder.lenientNumbers = lenient
                decoder.dataStrategy = lenient ? .bytes : .base64
                result.append(decoder)
            }
        }
        var snake = ValueDecoder()
        snake.keyStrategy = .convertFromSnakeCase
        result.append(snake)
        return result
    }()

    static func encoder(for decoder: ValueDecoder) -> ValueEncoder {
        var encoder = ValueEncoder()
        encoder.dateStrategy = decoder.dateStrategy
        encoder.dataStrategy = decoder.dataStrategy
        if decoder.keyStrategy == .convertFromSnakeCase { encoder.keyStrategy = .convertToSnakeCase }
        return encoder
    }

    @Test func generatedModelsDecodeAlike() throws {
        for (d, decoder) in Self.decoders.enumerated() {
            var generator = ModelGenerator(seed: UInt64(100 + d))
            let encoder = Self.encoder(for: decoder)
            for _ in 0..<60 {
                let model = try generator.next(TypedPage.self)
                let bytes: [UInt8] = try JSONCodec().encode(encoder.encode(model))
                #expect(typedDifference(TypedPage.self, bytes, decoder: decoder) == nil)
                let decoded = try JSONCodec().decode(TypedPage.self, from: bytes, decoder: decoder)
                #expect(try encoder.encode(decoded) == encoder.encode(model))
            }
        }
    }

    /// Random edits of generated documents: nodes replaced by values of other kinds, members removed
    /// or renamed, numbers out of range; both paths must fail alike (code and path) or agree.
    @Test func mutatedDocumentsFailAlike() throws {
        var mismatches: [String] = []
        for seed in 0..<400 {
            var generator = ModelGenerator(seed: UInt64(seed))
            var random = SeededRandom(seed: UInt64(seed) &* 7919)
            var values = ValueGenerator(seed: UInt64(seed), options: .json)
            let decoder = Self.decoders[seed % Self.decoders.count]
            let model = try generator.next(TypedPage.self)
            var value = try Self.encoder(for: decoder).encode(model)
            for _ in 0..<(1 + random.below(3)) {
                value = Self.mutate(value, &random, &values)
            }
            let bytes: [UInt8] = try JSONCodec().encode(value)
            if let difference = typedDifference(TypedPage.self, bytes, decoder: decoder) {
                mismatches.append("seed \(seed): \(difference)")
            }
        }
        #expect(mismatches.isEmpty, "\(mismatches.prefix(3).joined(separator: "\n\n"))")
    }

    static func mutate(_ value: Value, _ random: inout SeededRandom, _ values: inout ValueGenerator) -> Value {
        switch value {
        case .object(var object) where !object.isEmpty && random.chance(70):
            let i = random.below(object.count)
            let key = object.keys[i]
            switch random.below(4) {
            case 0: object.removeValue(forKey: key)
            case 1: object.updateValue(values.next(maxDepth: 1, maxWidth: 2), forKey: key)
            default: object.updateValue(mutate(object.values[i], &random, &values), forKey: key)
            }
            return .object(object)
        case .array(var elements) where !elements.isEmpty && random.chance(70):
            let i = random.below(elements.count)
            elements[i] = random.chance(30) ? values.next(maxDepth: 1, maxWidth: 2) : mutate(elements[i], &random, &values)
            return .array(elements)
        default:
            let replacements: [Value] = [
                .null, .bool(true), .string("x"), .string("42"), .string("1e2"), .int(-1), .int(300), .int(Int64.max),
                .uint(UInt64.max), .double(1.5), .double(1.0), .number("1e2"), .number("123456789012345678901234567890"),
                .number("-0"), .double(-0.0), .array([]), .object(Value.Object()), .double(1e300),
            ]
            return replacements[random.below(replacements.count)]
        }
    }

    @Test(arguments: ["users_10.json", "users_5000.json"])
    func fixturesDecodeAlike(name: String) throws {
        let bytes = try [UInt8](Repository.fixture(name))
        #expect(typedDifference(FixtureEnvelope.self, bytes) == nil)
        let envelope = try JSONCodec().decode(FixtureEnvelope.self, from: bytes)
        #expect(!envelope.data.users.isEmpty)
    }

    /// Numbers into every integer width and floating type: `1.0`, `1e2`, `-0`, huge, fractional...
    @Test func numbersConvertAlike() {
        let numbers = [
            "0", "-0", "1", "-1", "1.0", "1.5", "1e2", "1E+2", "1e-2", "-0.0", "127", "128", "255", "256", "-128", "-129",
            "32767", "65535", "2147483648", "4294967296", "9223372036854775807", "9223372036854775808",
            "-9223372036854775808", "-9223372036854775809", "18446744073709551615", "18446744073709551616",
            "123456789012345678901234567890", "1e400", "-1e400", "1e-400", "0.1", "3.4028235e38", "3.5e38",
            "100000000000000000000.0", "1.00000000000000000001", "\"42\"", "\"1e2\"", "\" 1\"", "\"x\"", "true", "null",
            "[]", "{}", "9007199254740993", "4.9e-324", "2.5e-324",
        ]
        var decoders = [ValueDecoder(), ValueDecoder()]
        decoders[1].lenientNumbers = true
        for decoder in decoders {
            for number in numbers {
                let bytes = Array("[\(number)]".utf8)
                #expect(typedDifference([Int].self, bytes, decoder: decoder) == nil)
                #expect(typedDifference([Int8].self, bytes, decoder: decoder) == nil)
                #expect(typedDifference([UInt8].self, bytes, decoder: decoder) == nil)
                #expect(typedDifference([Int16].self, bytes, decoder: decoder) == nil)
                #expect(typedDifference([UInt16].self, bytes, decoder: decoder) == nil)
                #expect(typedDifference([Int32].self, bytes, decoder: decoder) == nil)
                #expect(typedDifference([UInt32].self, bytes, decoder: decoder) == nil)
                #expect(typedDifference([Int64].self, bytes, decoder: decoder) == nil)
                #expect(typedDifference([UInt64].self, bytes, decoder: decoder) == nil)
                #expect(typedDifference([UInt].self, bytes, decoder: decoder) == nil)
                #expect(typedDifference([Double].self, bytes, decoder: decoder) == nil)
                #expect(typedDifference([Float].self, bytes, decoder: decoder) == nil)
                #expect(typedDifference([Decimal].self, bytes, decoder: decoder) == nil)
                #expect(typedDifference([Bool].self, bytes, decoder: decoder) == nil)
                #expect(typedDifference([String].self, bytes, decoder: decoder) == nil)
                #expect(typedDifference([Value].self, bytes, decoder: decoder) == nil)
                #expect(typedDifference(Int.self, Array(number.utf8), decoder: decoder) == nil)
                #expect(typedDifference(Double?.self, Array(number.utf8), decoder: decoder) == nil)
                #expect(typedDifference([String: Int].self, Array("{\"a\":\(number)}".utf8), decoder: decoder) == nil)
            }
        }
    }

    @Test func handWrittenModelsDecodeAlike() throws {
        let documents = [
            #"{"raw":{"a":[1,2.5,"x"]},"first":3,"names":["a","b"],"inner":{"text":"t"}}"#,
            #"{"raw":null,"first":null,"names":[],"inner":{"text":null}}"#,
            #"{"raw":1,"names":["a",2]}"#,
            #"{"raw":1,"first":"x","names":[]}"#,
            #"{"names":[]}"#,
            #"{"raw":[],"names":{}}"#,
            #"{"raw":[],"names":[],"inner":[]}"#,
            #"{"raw":[],"names":[],"missing":{"a":1}}"#,
            #"{"r\u0061w":"escaped","n\u0061mes":["\ud83d\ude00"],"inner":{"te\u0078t":"\u00e9"}}"#,
            #"{"raw":"\u212A","names":[],"\u212Aey":1}"#,
            #"[]"#, #"7"#, #"{"raw":1,"names":[1e400]}"#,
        ]
        for document in documents {
            #expect(typedDifference(TypedHandWritten.self, Array(document.utf8)) == nil)
        }
    }

    @Test func keysCompareByTheirText() {
        // Escaped names, names in another order, canonically equivalent names (é as one or two scalars).
        let documents = [
            #"{"city":"a","zip":"b","location":[]}"#,
            #"{"location":[1],"zip":"b","city":"a","street":"s"}"#,
            #"{"c\u0069ty":"a","zip":"b","location":[]}"#,
            #"{"city":"a","zip":"b","location":[],"city2":"x","cit":"y"}"#,
            #"{"city":"a","zip":"b"}"#,
            #"{"city":1,"zip":"b","location":[]}"#,
            #"{"city":"a","zip":"b","location":[true]}"#,
        ]
        for document in documents {
            #expect(typedDifference(TypedAddress.self, Array(document.utf8)) == nil)
        }
        #expect(typedDifference([String: Int].self, Array("{\"e\u{301}\":1}".utf8)) == nil)
        #expect(typedDifference([String: Int].self, Array("{\"e\u{301}\":1,\"\u{e9}\":2}".utf8)) == nil)
        #expect(typedDifference([Int: Int].self, Array(#"{"1":1,"-2":2,"x":3}"#.utf8)) == nil)
        #expect(typedDifference([Int: Int].self, Array(#"{"1":1,"-2":2}"#.utf8)) == nil)
        var snake = ValueDecoder()
        snake.keyStrategy = .convertFromSnakeCase
        for document in [
            #"{"a_b":1,"aB":2,"c":3}"#, #"{"aB":1,"a_b":2}"#, #"{"_a_b_":1,"__x":2,"y_z_":3,"super":{"q":1}}"#,
            #"{"location":[],"city":"c","zip":"z","street_name":"s"}"#,
        ] {
            #expect(typedDifference([String: Int].self, Array(document.utf8), decoder: snake) == nil)
            #expect(typedDifference(TypedAddress.self, Array(document.utf8), decoder: snake) == nil)
            #expect(typedDifference(TypedHandWritten.self, Array(document.utf8), decoder: snake) == nil)
            #expect(typedDifference(AnyJSON.self, Array(document.utf8), decoder: snake) == nil)
        }
    }

    /// Objects of more than 16 members read out of order, with escaped, non-ASCII and canonically equivalent
    /// names and absent ones, by hand and as dictionaries, with and without snake-case names: after a few
    /// misses they are looked up through a table of their names, which must find what reading every name
    /// found. (That the cost stays linear is the `hostile.json typed …` rows of `make bench`.)
    @Test func largeObjectsReadOutOfOrderDecodeAlike() {
        let count = 40
        let layouts: [[String]] = [
            (0..<count).map { "\"k\($0)\":\($0)" },
            (0..<count).map { "\"\\u006b\($0)\":\($0)" },
            (0..<count).map { $0 % 3 == 0 ? "\"\\u006b\($0)\":\($0)" : "\"k\($0)\":\($0)" },
            (0..<count).reversed().map { "\"k_\($0)\":\($0)" },
            (0..<count).map { "\"k\($0)\":\($0)" } + ["\"e\u{301}\":-1", "\"k\\u00e9\":-2"],
            ["\"\u{e9}\":-1"] + (0..<count).map { "\"\\u006b_\($0)\":\($0)" },
        ]
        var snake = ValueDecoder()
        snake.keyStrategy = .convertFromSnakeCase
        for layout in layouts {
            let document = Array(("{" + layout.joined(separator: ",") + "}").utf8)
            for decoder in [ValueDecoder(), snake] {
                #expect(typedDifference(OutOfOrderModel.self, document, decoder: decoder) == nil, "\(layout[0])")
                #expect(typedDifference([String: Int].self, document, decoder: decoder) == nil, "\(layout[0])")
                #expect(typedDifference(AnyJSON.self, document, decoder: decoder) == nil, "\(layout[0])")
            }
        }
        // The same decoder object reused for sibling objects of different layouts (an array of them).
        let siblings = "[" + layouts.map { "{" + $0.joined(separator: ",") + "}" }.joined(separator: ",") + "]"
        #expect(typedDifference([OutOfOrderModel].self, Array(siblings.utf8)) == nil)
        // Out-of-order reads found nothing wrong above only if they found something: check one answer.
        let first = try? JSONCodec().decode(
            OutOfOrderModel.self, from: Data(("{" + layouts[1].joined(separator: ",") + "}").utf8),
            hints: CodingHints(), decoder: ValueDecoder())
        #expect(first?.values.count == count && first?.values["k7"] == 7 && first?.absent == [nil, nil, nil, nil, 0, 39])
    }

    /// `maximumDepth` stops at `DecodingLimits.depthCeiling`, and a value that deep is decoded, typed, written
    /// and compared on a cooperative thread's stack without overflowing it; one level more is an error.
    @Test func theDepthCeilingFitsInATasksStack() async throws {
        var options = JSONCodec.Options()
        options.maximumDepth = .max
        #expect(options.maximumDepth == DecodingLimits.depthCeiling)
        let codec = JSONCodec(options: options)
        let depth = DecodingLimits.depthCeiling
        let outcome = await Task.detached { () -> String? in
            let text = Data((String(repeating: "[", count: depth) + String(repeating: "]", count: depth)).utf8)
            do {
                let value = try codec.decode(text, hints: CodingHints())
                let written: Data = try codec.encode(value, hints: CodingHints())
                let viaValue = try codec.decode(Value.self, from: text, hints: CodingHints(), decoder: ValueDecoder())
                let typed = try codec.decode(AnyJSON.self, from: text, hints: CodingHints(), decoder: ValueDecoder())
                guard written == text, viaValue == value, typed == (try ValueDecoder().decode(AnyJSON.self, from: value))
                else { return "the deep value did not round-trip" }
            } catch {
                return "\(error)"
            }
            let deeper = Data((String(repeating: "[", count: depth + 1) + String(repeating: "]", count: depth + 1)).utf8)
            do {
                _ = try codec.decode(deeper, hints: CodingHints())
                return "one level more decoded"
            } catch let error as CourierError {
                return error.code == .depthLimitExceeded ? nil : "\(error)"
            } catch {
                return "\(error)"
            }
        }.value
        #expect(outcome == nil, "\(outcome ?? "")")
    }

    @Test(arguments: [JSONCodec.DuplicateKeyPolicy.lastWins, .firstWins, .reject])
    func duplicateKeysFollowThePolicy(policy: JSONCodec.DuplicateKeyPolicy) {
        var options = JSONCodec.Options()
        options.duplicateKeys = policy
        let codec = JSONCodec(options: options)
        let documents = [
            #"{"city":"a","zip":"b","location":[],"city":"c"}"#,
            #"{"city":"a","zip":"b","location":[],"c\u0069ty":"c"}"#,
            #"{"city":"a","zip":"b","location":[],"other":{"x":1,"x":2}}"#,
            // Names alike in length and first seven bytes, then different or the same.
            #"{"city":"a","zip":"b","location":[],"other":{"abcdefgh1":1,"abcdefgh2":2}}"#,
            #"{"city":"a","zip":"b","location":[],"other":{"abcdefghij":1,"y":0,"abcdefghij":2}}"#,
            #"{"city":"a","zip":"b","location":[],"other":{"abcdefg":1,"abcdefg\#(String(repeating: "x", count: 256))":2}}"#,
            #"{"city":"a","zip":"b","location":[],"other":{"abcdefg\#(String(repeating: "x", count: 256))":1,"abcdefg":2}}"#,
            #"{"city":"a","zip":"b","location":[],"other":{"":1,"":2}}"#,
            #"{"city":"a","zip":"b","location":[],"other":{"":1,"\u0000":2}}"#,
        ]
        for document in documents {
            #expect(typedDifference(TypedAddress.self, Array(document.utf8), codec: codec) == nil)
        }
        var many = "{" + (0..<40).map { "\"k\($0)\":\($0)" }.joined(separator: ",") + ",\"k7\":99}"
        #expect(typedDifference([String: Int].self, Array(many.utf8), codec: codec) == nil)
        many = "{" + (0..<40).map { "\"k\($0)\":\($0)" }.joined(separator: ",") + "}"
        #expect(typedDifference([String: Int].self, Array(many.utf8), codec: codec) == nil)
    }

    @Test func limitsAndByteOrderMarksAreTheValuePathsOwn() throws {
        let document = Array(#"{"page":1,"total":2,"users":[]}"#.utf8)
        var limits = DecodingLimits()
        for change: (inout DecodingLimits) -> Void in [
            { $0.maximumDepth = 1 }, { $0.maximumTotalValues = 3 }, { $0.maximumContainerCount = 2 },
            { $0.maximumInputSize = 10 }, { $0.maximumNumberLength = 0 }, { $0.maximumStringLength = 3 },
        ] {
            limits = DecodingLimits()
            change(&limits)
            var hints = CodingHints()
            hints.limits = limits
            #expect(typedDifference(TypedPage.self, document, hints: hints) == nil)
            var options = JSONCodec.Options()
            options.limits = limits
            #expect(typedDifference(TypedPage.self, document, codec: JSONCodec(options: options)) == nil)
        }
        let bom: [UInt8] = [0xEF, 0xBB, 0xBF] + document
        #expect(typedDifference(TypedPage.self, bom) == nil)
        var options = JSONCodec.Options()
        options.allowsByteOrderMark = true
        #expect(typedDifference(TypedPage.self, bom, codec: JSONCodec(options: options)) == nil)
        #expect(try JSONCodec(options: options).decode(TypedPage.self, from: bom).total == 2)
    }

    @Test func hostileInputsFailAlike() {
        var inputs: [[UInt8]] = [
            Array(repeating: UInt8(ascii: "["), count: 100_000),
            Array((String(repeating: "[", count: 600) + String(repeating: "]", count: 600)).utf8),
            Array(("\"" + String(repeating: "a", count: 200_000)).utf8),
            Array(("[" + String(repeating: "9", count: 20_000) + "]").utf8),
            Array(("{" + (0..<20_000).map { "\"k\($0)\":1" }.joined(separator: ",") + "}").utf8),
            Array(("{" + (0..<20_000).map { _ in "\"a\":1" }.joined(separator: ",") + "}").utf8),
            [], [0xEF, 0xBB, 0xBF], Array("[1,]".utf8), Array("{\"a\":1,}".utf8), Array("[01]".utf8),
            Array("[\"\\ud800\"]".utf8), Array("[\"\\udc00\"]".utf8), [UInt8(ascii: "\""), 0xC0, 0x80, UInt8(ascii: "\"")],
            Array("[NaN]".utf8), Array("[1] x".utf8), Array("[\"a\u{1}\"]".utf8), Array("{\"a\" 1}".utf8),
        ]
        let document = Array(#"{"page":1,"total":2,"users":[{"id":1,"name":"\u00e9"}]}"#.utf8)
        for end in 0..<document.count { inputs.append(Array(document[..<end])) }
        for input in inputs {
            #expect(typedDifference(TypedPage.self, input) == nil)
            #expect(typedDifference(AnyJSON.self, input) == nil)
            #expect(typedDifference([Int].self, input) == nil)
        }
    }

    @Test(.enabled(
        if: Repository.runsExternalSuite("JSONTestSuite/test_parsing"),
        "JSONTestSuite not found: set COURIER_TEST_SUITES or add ../shared/test-suites"))
    func jsonTestSuiteThroughTheTypedPath() throws {
        guard let directory = Repository.externalSuite("JSONTestSuite/test_parsing") else { return }
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".json") }
        #expect(files.count > 300)
        for name in files {
            let bytes = try [UInt8](Data(contentsOf: directory.appendingPathComponent(name)))
            #expect(typedDifference(AnyJSON.self, bytes) == nil, "\(name)")
            #expect(typedDifference(Value.self, bytes) == nil, "\(name)")
        }
    }
}

/// The shape of Fixtures/users_*.json.
struct FixtureEnvelope: Decodable, Equatable {
    struct Address: Decodable, Equatable {
        var city: String
        var street: String
        var zip: String
    }

    struct User: Decodable, Equatable {
        var id: Int64
        var name: String
        var email: String
        var age: Int
        var score: Double
        var active: Bool
        var tags: [String]
        var address: Address
    }

    struct Page: Decodable, Equatable {
        var page: Int
        var total: Int
        var users: [User]
    }

    var code: Int
    var message: String
    var data: Page
}

/// Encodes members twice, writes nothing, or replaces its value: shapes the stream cannot follow.
struct TypedOddEncoder: Encodable {
    var mode: Int

    enum Keys: String, CodingKey { case a, b }

    func encode(to encoder: any Encoder) throws {
        switch mode {
        case 0:
            var c = encoder.container(keyedBy: Keys.self)
            try c.encode(1, forKey: .a)
            try c.encode(2, forKey: .b)
            try c.encode(3, forKey: .a)
        case 1: break
        case 2:
            var c = encoder.singleValueContainer()
            try c.encode(1)
            try c.encode("two")
        case 3:
            var c = encoder.container(keyedBy: Keys.self)
            try c.encode(1, forKey: .a)
            let sup = c.superEncoder()
            var s = sup.singleValueContainer()
            try s.encode(true)
            try c.encode(2, forKey: .b)
        case 4:
            var c = encoder.container(keyedBy: Keys.self)
            try c.encode(Double.nan, forKey: .a)
        case 5:
            var c = encoder.unkeyedContainer()
            try c.encode(Float(0.1))
            try c.encode(Float.greatestFiniteMagnitude)
            try c.encodeNil()
            try c.encode(UInt64.max)
            try c.encode(Int64.min)
            try c.encode(Decimal(string: "12.50")!)
            try c.encode(Value.object(["x": .bytes([1, 2, 3]), "y": .number("1e2")]))
            try c.encode(["k": [Int8(-1)]])
            try c.encode([1: "one"])
        case 6:
            var c = encoder.container(keyedBy: Keys.self)
            try c.encode(1, forKey: .a)
            var d = encoder.container(keyedBy: Keys.self)
            try d.encode(2, forKey: .b)
        case 7:
            var c = encoder.container(keyedBy: Keys.self)
            try c.encode(Value.number("not a number"), forKey: .a)
        default:
            var c = encoder.unkeyedContainer()
            try c.encode(TypedOddEncoder(mode: mode - 8))
            try c.encode([TypedOddEncoder(mode: 1)])
        }
    }
}

@Suite struct JSONTypedEncodingTests {
    static let codecs: [JSONCodec] = {
        var result: [JSONCodec] = []
        for pretty in [false, true] {
            for sorted in [false, true] {
                for slashes in [false, true] {
                    var options = JSONCodec.Options()
                    options.pretty = pretty
                    options.sortedKeys = sorted
                    options.escapeSlashes = slashes
                    result.append(JSONCodec(options: options))
                }
            }
        }
        for depth in [0, 1, 2, 3, 4, 6] {
            var options = JSONCodec.Options()
            options.maximumDepth = depth
            options.pretty = depth % 2 == 0
            result.append(JSONCodec(options: options))
        }
        return result
    }()

    static let encoders: [ValueEncoder] = {
        var result: [ValueEncoder] = []
        for date in [DateCodingStrategy.iso8601, .secondsSince1970, .millisecondsSince1970] {
            for data in [DataCodingStrategy.base64, .bytes] {
                var encoder = ValueEncoder()
                encoder.dateStrategy = date
                encoder.dataStrategy = data
                encoder.keyStrategy = data == .bytes ? .convertToSnakeCase : .useDefaultKeys
                result.append(encoder)
            }
        }
        return result
    }()

    @Test func generatedModelsEncodeToTheSameBytes() throws {
        var mismatches: [String] = []
        for (e, encoder) in Self.encoders.enumerated() {
            var generator = ModelGenerator(seed: UInt64(500 + e))
            for n in 0..<40 {
                let model = try generator.next(TypedPage.self)
                for codec in Self.codecs {
                    if let difference = typedEncodingDifference(model, codec: codec, encoder: encoder) {
                        mismatches.append("encoder \(e) model \(n): \(difference)")
                    }
                }
                if let difference = typedEncodingDifference(model.users, codec: JSONCodec(), encoder: encoder) {
                    mismatches.append(difference)
                }
            }
        }
        #expect(mismatches.isEmpty, "\(mismatches.prefix(3).joined(separator: "\n\n"))")
    }

    @Test func oddShapesEncodeToTheSameBytesOrErrors() throws {
        for mode in 0..<16 {
            for codec in Self.codecs {
                #expect(typedEncodingDifference(TypedOddEncoder(mode: mode), codec: codec, encoder: ValueEncoder()) == nil, "mode \(mode)")
            }
        }
        let hand = TypedHandWritten(raw: ["a": [1, 2]], first: 3, names: ["x"], inner: "i", keys: ["k"])
        for codec in Self.codecs {
            #expect(typedEncodingDifference(hand, codec: codec, encoder: ValueEncoder()) == nil)
            #expect(typedEncodingDifference("a/b\"c\u{1}", codec: codec, encoder: ValueEncoder()) == nil)
            #expect(typedEncodingDifference(Date(timeIntervalSince1970: 1.941), codec: codec, encoder: ValueEncoder()) == nil)
            #expect(typedEncodingDifference([Double.infinity], codec: codec, encoder: ValueEncoder()) == nil)
            #expect(typedEncodingDifference(Optional<Int>.none, codec: codec, encoder: ValueEncoder()) == nil)
            #expect(typedEncodingDifference([[[[[1]]]]], codec: codec, encoder: ValueEncoder()) == nil)
            #expect(typedEncodingDifference([String: [Int]](), codec: codec, encoder: ValueEncoder()) == nil)
        }
    }

    /// A model that catches an error and goes on gets the Value path's bytes: the direct encoder gives up on
    /// any error, since what it streamed before the error cannot be taken back.
    @Test func caughtErrorsLeaveNoTrace() throws {
        for mode in 0..<CatchingModel.modes {
            for codec in Self.codecs {
                #expect(
                    typedEncodingDifference(CatchingModel(mode: mode), codec: codec, encoder: ValueEncoder()) == nil,
                    "mode \(mode)")
            }
        }
        func text(_ mode: Int) -> String? {
            (try? JSONCodec().encode(model: CatchingModel(mode: mode), encoder: ValueEncoder()) as [UInt8])
                .map { String(decoding: $0, as: UTF8.self) }
        }
        #expect(text(0) == nil)
        #expect(text(1) == #"{"id":1}"#)
        #expect(text(2) == #"{"y":1}"#)
        #expect(text(3) == #"{"y":1}"#)
        #expect(text(4) == nil)
        #expect(text(5) == "2")
        #expect(text(9) == #"{"x":{"id":1},"y":[{"id":1}],"id":2}"#)
    }

    @Test func theCodecSetUsesTheDirectPaths() throws {
        let set = CodecSet([JSONCodec()])
        let model = TypedAddress(city: "a", street: nil, zip: "z", location: [1.5])
        let data = try set.encode(model: model, format: .json, hints: CodingHints(), encoder: ValueEncoder())
        #expect(String(decoding: data, as: UTF8.self) == #"{"city":"a","zip":"z","location":[1.5]}"#)
        let back = try set.decode(TypedAddress.self, from: data, format: .json, hints: CodingHints(), decoder: ValueDecoder())
        #expect(back == model)
    }
}

@Suite struct JSONTypedConvenienceTests {
    struct User: Codable, Equatable {
        var id: Int
        var name: String
    }

    @Test func theConveniencesDecodeAndEncodeModels() throws {
        let bytes = Array(#"{"id":7,"name":"Ada"}"#.utf8)
        let user = try JSONCodec().decode(User.self, from: bytes)
        #expect(user == User(id: 7, name: "Ada"))
        #expect(try JSONCodec().encode(model: user) == bytes)
        let fromBuffer = try bytes.withUnsafeBytes { try JSONCodec().decode(User.self, from: $0) }
        #expect(fromBuffer == user)
        let fromSlice = try JSONCodec().decode(User.self, from: bytes[...].lazy.map { $0 })
        #expect(fromSlice == user)
        #expect {
            try JSONCodec().decode(User.self, from: Array(#"{"id":"7","name":"Ada"}"#.utf8))
        } throws: { ($0 as? CourierError)?.code == .typeMismatch && ($0 as? CourierError)?.context.codingPath == [.key("id")] }
        #expect {
            try JSONCodec().decode(User.self, from: Array(#"{"id":7,"name":"Ada""#.utf8))
        } throws: { ($0 as? CourierError)?.code == .malformedInput && ($0 as? CourierError)?.context.line == 1 }
    }
}
