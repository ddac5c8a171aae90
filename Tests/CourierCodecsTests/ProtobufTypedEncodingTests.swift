@testable import CourierCodecs
import CourierCodecsTesting
import CourierTestSupport
import CourierTesting
import Foundation
import Testing

/// The direct encode (wire bytes written from the `Value` or the model) against the protobuf-c pivot: the same
/// bytes, or the same error code and coding path.
@Suite struct ProtobufTypedEncodingTests {
    enum Outcome: Equatable {
        case bytes([UInt8])
        case failure(CourierError.Code, String)
    }

    static func outcome(_ body: () throws -> Data) -> Outcome {
        do {
            return .bytes(Array(try body()))
        } catch let error as CourierError {
            return .failure(error.code, "\(error.context.codingPath)")
        } catch {
            return .failure(.encodingFailed, "not a CourierError: \(error)")
        }
    }

    /// Encodes `value` both ways and expects the same outcome; returns it.
    @discardableResult
    static func check(
        _ codec: ProtobufCodec, _ value: Value, _ hints: CodingHints, sourceLocation: SourceLocation = #_sourceLocation
    ) -> Outcome {
        let direct = outcome { try codec.encodeValue(value, hints: hints, direct: true) }
        let pivot = outcome { try codec.encodeValue(value, hints: hints, direct: false) }
        #expect(direct == pivot, "\(value)", sourceLocation: sourceLocation)
        return pivot
    }

    /// Encodes `model` through `encode(model:hints:encoder:)` and through the pivot.
    static func checkModel<T: Encodable>(
        _ codec: ProtobufCodec, _ model: T, _ hints: CodingHints, _ encoder: ValueEncoder = ValueEncoder(),
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let direct = outcome { try codec.encode(model: model, hints: hints, encoder: encoder) }
        let pivot = outcome { try codec.encodeValue(encoder.encode(model), hints: hints, direct: false) }
        #expect(direct == pivot, sourceLocation: sourceLocation)
    }

    static let kitchenTypes = ["kitchen.KitchenSink", "kitchen.Scalars", "kitchen.Node", "legacy.Legacy"]

    static func optionSets() -> [ProtobufCodec.Options] {
        var ignoring = ProtobufCodec.Options()
        ignoring.ignoreUnknownMembers = true
        var shallow = ProtobufCodec.Options()
        shallow.maxDepth = 3
        return [ProtobufCodec.Options(), ignoring, shallow]
    }

    @Test func fixturesEncodeTheSameBytes() throws {
        let codec = ProtobufCodec(schema: ProtobufTestSupport.demo)
        let hints = ProtobufTestSupport.hints("demo.UserListResponse")
        for name in ["users_10.pb", "users_5000.pb"] {
            let bytes = try Data(contentsOf: Repository.root.appendingPathComponent("Fixtures/\(name)"))
            let value = try codec.decode(bytes, hints: hints)
            #expect(Self.check(codec, value, hints) == .bytes(Array(bytes)) || name.isEmpty)
            let model = try codec.decode(PBUserList.self, from: bytes, hints: hints, decoder: ValueDecoder())
            Self.checkModel(codec, model, hints)
        }
    }

    @Test(arguments: 0..<3)
    func generatedValuesEncodeTheSameBytes(optionIndex: Int) throws {
        let options = Self.optionSets()[optionIndex]
        let kitchen = ProtobufCodec(schema: ProtobufTestSupport.kitchen, options: options)
        let demo = ProtobufCodec(schema: ProtobufTestSupport.demo, options: options)
        for seed in 0..<80 {
            var generator = ProtobufValueGenerator(schema: ProtobufTestSupport.kitchen, seed: UInt64(seed))
            for type in Self.kitchenTypes {
                Self.check(kitchen, try generator.value(for: type), ProtobufTestSupport.hints(type))
            }
            var demoGenerator = ProtobufValueGenerator(schema: ProtobufTestSupport.demo, seed: UInt64(seed))
            let hints = ProtobufTestSupport.hints("demo.UserListResponse")
            Self.check(demo, try demoGenerator.value(for: "demo.UserListResponse"), hints)
        }
    }

    /// Values bent out of shape: reordered and duplicated members (JSON and `.proto` names), zeros, `-0.0`,
    /// NUL in strings, wrong kinds, out-of-range numbers, enum names and numbers, base64 text for bytes,
    /// `@unknown` bytes, unknown members and nulls.
    @Test(arguments: 0..<4)
    func mutatedValuesEncodeTheSameWay(seed: Int) throws {
        var random = SeededRandom(seed: UInt64(seed) &+ 500)
        for options in Self.optionSets() {
            let codec = ProtobufCodec(schema: ProtobufTestSupport.kitchen, options: options)
            for round in 0..<150 {
                var generator = ProtobufValueGenerator(schema: ProtobufTestSupport.kitchen, seed: UInt64(round * 7 + seed))
                let type = Self.kitchenTypes[round % Self.kitchenTypes.count]
                let value = try generator.value(for: type)
                Self.check(codec, Self.mutate(value, &random, depth: 0), ProtobufTestSupport.hints(type))
            }
        }
    }

    static let replacements: [Value] = [
        .int(0), .int(-1), .int(1 << 40), .uint(UInt64.max), .double(-0.0), .double(0.5), .double(1e300),
        .double(.nan), .number("12"), .number("1e3"), .string(""), .string("a\u{0}b"), .string("\u{0}"),
        .string("AAEC"), .string("RED"), .string("BLUE"), .string("nope"), .string("-7"), .string("Infinity"),
        .bool(false), .bool(true), .bytes([]), .bytes([0, 1, 2]), .null, .array([]), .array([.int(0), .int(-5)]),
        .array([.string("x\u{0}")]), .object([:]), .object(["bogus": .int(1)]),
    ]

    static func mutate(_ value: Value, _ random: inout SeededRandom, depth: Int) -> Value {
        switch value {
        case .object(let object):
            var pairs = Array(zip(object.keys, object.values))
            for i in pairs.indices where random.chance(30) {
                pairs[i].1 = mutate(pairs[i].1, &random, depth: depth + 1)
            }
            if !pairs.isEmpty && random.chance(15) {
                pairs[random.below(pairs.count)].1 = replacements[random.below(replacements.count)]
            }
            if pairs.count > 1 && random.chance(25) { pairs.swapAt(random.below(pairs.count), random.below(pairs.count)) }
            if random.chance(5) { pairs.append(("noSuchField", .int(1))) }
            if random.chance(5) { pairs.append((ProtobufCodec.unknownFieldsKey, .bytes([0x08, 0x96, 0x01, 0xF8, 0xFF, 0x07, 0x00]))) }
            if random.chance(3) { pairs.append((ProtobufCodec.unknownFieldsKey, .bytes([0x0A, 0x05, 0x01]))) }
            if random.chance(8) { pairs.append(("f_int32", .int(3))) }
            if random.chance(8) { pairs.append(("choice_text", .string("t"))) }
            var out = Value.Object()
            for (k, v) in pairs where out[k] == nil { out.append(k, v) }
            return .object(out)
        case .array(var elements):
            for i in elements.indices where random.chance(20) {
                elements[i] = random.chance(50)
                    ? mutate(elements[i], &random, depth: depth + 1) : replacements[random.below(replacements.count)]
            }
            return .array(elements)
        default:
            return random.chance(10) ? replacements[random.below(replacements.count)] : value
        }
    }

    @Test func edgeValuesEncodeTheSameWay() throws {
        let codec = ProtobufCodec(schema: ProtobufTestSupport.kitchen)
        let hints = ProtobufTestSupport.hints("kitchen.Scalars")
        let edges: [Value] = [
            .int(0), .int(-1), .int(Int64(Int32.min)), .int(Int64(Int32.max) + 1), .int(.min), .int(.max),
            .uint(.max), .double(-0.0), .double(0), .double(.infinity), .double(.nan), .double(3.4e38), .double(1e39),
            .double(1e-50), .string("NaN"), .string("-Infinity"), .string(""), .string("\u{0}"), .string("RED"),
            .string("GREEN"), .string("2"), .string("AAEC"), .string("AA-_"), .string("!!"), .bytes([]),
            .bytes([0]), .bool(true), .bool(false), .number("-0"), .number("18446744073709551615"), .null,
        ]
        let fields = [
            "fDouble", "fFloat", "fInt64", "fUint64", "fInt32", "fFixed64", "fFixed32", "fBool", "fString", "fBytes",
            "fUint32", "fSfixed32", "fSfixed64", "fSint32", "fSint64", "fColor",
        ]
        for field in fields {
            for edge in edges {
                Self.check(codec, .object([field: edge]), hints)
                Self.check(codec, .object([field: edge, "fInt32": .int(5)]), hints)
            }
        }
        Self.check(codec, .string("not an object"), hints)
        Self.check(codec, .object(["fInt32": .int(1), "f_int32": .int(2)]), hints)
    }

    @Test func deepNestingFailsTheSameWay() throws {
        let codec = ProtobufCodec(schema: ProtobufTestSupport.kitchen)
        let hints = ProtobufTestSupport.hints("kitchen.Node")
        for depth in [1, 50, 99, 100, 101, 150] {
            var node: Value = .object(["value": .int(1)])
            for i in 1..<depth { node = .object(["value": .int(Int64(i)), "child": node]) }
            Self.check(codec, node, hints)
        }
        var wide: Value = .object(["value": .int(7)])
        for _ in 0..<3 { wide = .object(["children": .array(Array(repeating: wide, count: 40)), "value": .int(-3)]) }
        Self.check(codec, wide, hints)
    }

    @Test(arguments: 0..<2)
    func modelsEncodeTheSameBytes(seed: Int) throws {
        let kitchen = ProtobufCodec(schema: ProtobufTestSupport.kitchen)
        let demo = ProtobufCodec(schema: ProtobufTestSupport.demo)
        var snake = ValueEncoder()
        snake.keyStrategy = .convertToSnakeCase
        for round in 0..<60 {
            let s = UInt64(round * 2 + seed)
            var generator = ProtobufValueGenerator(schema: ProtobufTestSupport.kitchen, seed: s)
            let hints = ProtobufTestSupport.hints("kitchen.KitchenSink")
            let bytes = try kitchen.encode(generator.value(for: "kitchen.KitchenSink"), hints: hints)
            if let model = try? kitchen.decode(PBKitchenSink.self, from: bytes, hints: hints, decoder: ValueDecoder()) {
                Self.checkModel(kitchen, model, hints)
                Self.checkModel(kitchen, model, hints, snake)
            }
            var demoGenerator = ProtobufValueGenerator(schema: ProtobufTestSupport.demo, seed: s)
            let listHints = ProtobufTestSupport.hints("demo.UserListResponse")
            let list = try demo.encode(demoGenerator.value(for: "demo.UserListResponse"), hints: listHints)
            let model = try demo.decode(PBUserList.self, from: list, hints: listHints, decoder: ValueDecoder())
            Self.checkModel(demo, model, listHints)
            Self.checkModel(demo, model, listHints, snake)
        }
    }
}

extension ProtobufTypedEncodingTests {
    /// The direct write answers (rather than leaving it to the pivot) for plain generated values.
    @Test func theDirectWriteAnswersForPlainValues() throws {
        let codec = ProtobufCodec(schema: ProtobufTestSupport.kitchen)
        var answered = 0
        for seed in 0..<40 {
            var generator = ProtobufValueGenerator(schema: ProtobufTestSupport.kitchen, seed: UInt64(seed))
            for type in ["kitchen.KitchenSink", "kitchen.Scalars", "kitchen.Node"] {
                let layout = try codec.layout(for: ProtobufTestSupport.hints(type))
                let value = try generator.value(for: type)
                if ProtobufValueWriter.encode(value, layout, runtime: codec.schema.runtime, options: codec.options) != nil {
                    answered += 1
                }
            }
        }
        #expect(answered >= 80)
        let demo = ProtobufCodec(schema: ProtobufTestSupport.demo)
        let bytes = try Data(contentsOf: Repository.root.appendingPathComponent("Fixtures/users_10.pb"))
        let hints = ProtobufTestSupport.hints("demo.UserListResponse")
        let value = try demo.decode(bytes, hints: hints)
        let written = ProtobufValueWriter.encode(
            value, try demo.layout(for: hints), runtime: demo.schema.runtime, options: demo.options)
        #expect(written == bytes)
    }
}

/// A model written by hand against the container calls the direct typed encode gives up on or handles.
struct PBOddEncoder: Encodable {
    var mode: Int

    enum Keys: String, CodingKey {
        case code, message, data, page, total, users, name, id, age, bogus
    }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: Keys.self)
        switch mode {
        case 0:
            // Out of field order, with a nested container.
            var data = c.nestedContainer(keyedBy: Keys.self, forKey: .data)
            try data.encode(3, forKey: .page)
            try c.encode(7, forKey: .code)
        case 1:
            try c.encode("x", forKey: .code)  // a string for an int32 field
        case 2:
            try c.encode(1, forKey: .bogus)  // no such field
        case 3:
            try c.encode(Int64(1) << 40, forKey: .code)  // out of range for int32
        case 4:
            try c.encode("m", forKey: .message)
            try c.encode(5, forKey: .code)  // out of order
            try c.encodeNil(forKey: .data)
        case 5:
            try c.encode(5, forKey: .code)
            try c.encode(6, forKey: .code)  // twice
        case 6:
            let sup = c.superEncoder(forKey: .data)
            var inner = sup.container(keyedBy: Keys.self)
            try inner.encode(2, forKey: .page)
        case 7:
            var users = c.nestedUnkeyedContainer(forKey: .data)
            try users.encode(1)
        default:
            try c.encode("\u{0}", forKey: .message)
            try c.encode(Value.object(["page": .int(4), "users": .array([.object(["name": .string("n")])])]), forKey: .data)
        }
    }
}

struct PBWrongUser: Encodable {
    var id: String
    var name: Int
    var age: Double
}

struct PBWrongList: Encodable {
    var code: Int
    var data: PBWrongPage
}

struct PBWrongPage: Encodable {
    var users: [PBWrongUser]
}

extension ProtobufTypedEncodingTests {
    @Test func handWrittenModelsEncodeTheSameWay() throws {
        let demo = ProtobufCodec(schema: ProtobufTestSupport.demo)
        let hints = ProtobufTestSupport.hints("demo.UserListResponse")
        var ignoring = ProtobufCodec.Options()
        ignoring.ignoreUnknownMembers = true
        let lenient = ProtobufCodec(schema: ProtobufTestSupport.demo, options: ignoring)
        for mode in 0..<9 {
            Self.checkModel(demo, PBOddEncoder(mode: mode), hints)
            Self.checkModel(lenient, PBOddEncoder(mode: mode), hints)
        }
        let wrong = PBWrongList(
            code: 1, data: PBWrongPage(users: [PBWrongUser(id: "12", name: 3, age: 2.5), PBWrongUser(id: "x", name: 1, age: 1)]))
        Self.checkModel(demo, wrong, hints)
        let narrow = PBNarrowList(
            code: 200,
            data: PBNarrowPage(users: [
                PBNarrowUser(
                    id: -3, age: 250, score: 0.1, tags: ["a", "b\u{0}"], address: .object(["city": .string("c")]),
                    nickname: nil),
                PBNarrowUser(id: 0, age: 0, score: -0.0, tags: [], address: nil, nickname: "n"),
            ]))
        Self.checkModel(demo, narrow, hints)
        var snake = ValueEncoder()
        snake.keyStrategy = .convertToSnakeCase
        Self.checkModel(demo, narrow, hints, snake)
        Self.checkModel(demo, Value.object(["code": .int(3)]), hints)
    }

    /// The direct typed encode answers (rather than leaving it to the pivot) for plain models.
    @Test func theDirectTypedEncodeAnswersForPlainModels() throws {
        let demo = ProtobufCodec(schema: ProtobufTestSupport.demo)
        let hints = ProtobufTestSupport.hints("demo.UserListResponse")
        for name in ["users_10.pb", "users_5000.pb"] {
            let bytes = try Data(contentsOf: Repository.root.appendingPathComponent("Fixtures/\(name)"))
            let model = try demo.decode(PBUserList.self, from: bytes, hints: hints, decoder: ValueDecoder())
            let written = ProtobufTypedEncoding.encode(
                model, try demo.layout(for: hints), runtime: demo.schema.runtime, options: demo.options,
                encoder: ValueEncoder())
            #expect(written == bytes, "\(name)")
        }
    }
}
