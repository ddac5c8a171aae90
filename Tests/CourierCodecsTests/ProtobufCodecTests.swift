import CourierCodecs
import CourierTestSupport
import Foundation
import Testing

@Suite struct ProtobufCodecTests {
    let demo = ProtobufCodec(schema: ProtobufTestSupport.demo)
    let kitchen = ProtobufCodec(schema: ProtobufTestSupport.kitchen)
    let sinkHints = ProtobufTestSupport.hints("kitchen.KitchenSink")
    let scalarHints = ProtobufTestSupport.hints("kitchen.Scalars")
    let legacyHints = ProtobufTestSupport.hints("legacy.Legacy")

    // MARK: fixtures

    @Test(arguments: ["users_10", "users_5000"])
    func fixtureDecodesToTheValueOfItsJSON(name: String) throws {
        let value = try demo.decode(
            try Repository.fixture("\(name).pb"), hints: ProtobufTestSupport.hints("demo.UserListResponse"))
        let json = try JSONCodec().decode(try Repository.fixture("\(name).json"), hints: CodingHints())
        #expect(value == json)
        #expect(value.objectValue?.keys == ["code", "message", "data"])
        #expect(value["data"]?["users"]?[0]?.objectValue?.keys
            == ["id", "name", "email", "age", "score", "active", "tags", "address"])
    }

    @Test func fixtureReencodesToTheSameBytes() throws {
        let hints = ProtobufTestSupport.hints("demo.UserListResponse")
        let bytes = try Repository.fixture("users_10.pb")
        let value = try demo.decode(bytes, hints: hints)
        #expect(value["data"]?["users"]?[0]?["name"] == "Zoë Hernández")
        #expect(value["data"]?["users"]?[0]?["id"] == .int(1_000_000_000_000))
        #expect(value["data"]?["users"]?[1]?["tags"] == [])
        #expect(try demo.encode(value, hints: hints) == bytes)
        // The JSON form encodes to the same bytes too.
        let json = try JSONCodec().decode(try Repository.fixture("users_10.json"), hints: CodingHints())
        #expect(try demo.encode(json, hints: hints) == bytes)
    }

    // MARK: scalars, exact values

    @Test func decodesEveryScalarTypeExactly() throws {
        try #require(ProtobufTestSupport.hasProtoc)
        let text = """
            f_double: -1.5e300 f_float: 0.25 f_int64: -9223372036854775808 f_uint64: 18446744073709551615
            f_int32: -2147483648 f_fixed64: 9223372036854775808 f_fixed32: 4294967295 f_bool: true
            f_string: "Zo\\303\\253 \\344\\270\\255" f_bytes: "\\000\\377ab" f_uint32: 4294967295
            f_sfixed32: -7 f_sfixed64: -9223372036854775807 f_sint32: -2147483647 f_sint64: 9223372036854775807
            f_color: COLOR_NEGATIVE
            """
        let bytes = try ProtobufTestSupport.protoc(
            ["--encode=kitchen.Scalars", "kitchen_sink.proto"], input: Data(text.utf8))
        let value = try kitchen.decode(bytes, hints: scalarHints)
        let expected: Value = [
            "fDouble": .double(-1.5e300), "fFloat": .double(0.25), "fInt64": .int(Int64.min),
            "fUint64": .uint(UInt64.max), "fInt32": .int(Int64(Int32.min)), "fFixed64": .uint(1 << 63),
            "fFixed32": .int(4_294_967_295), "fBool": true, "fString": "Zoë 中", "fBytes": .bytes([0, 255, 97, 98]),
            "fUint32": .int(4_294_967_295), "fSfixed32": -7, "fSfixed64": .int(-9_223_372_036_854_775_807),
            "fSint32": .int(-2_147_483_647), "fSint64": .int(Int64.max), "fColor": "COLOR_NEGATIVE",
        ]
        #expect(value == expected)
        #expect(value["fUint64"].map { if case .uint = $0 { true } else { false } } == true)
        #expect(value.objectValue?.keys == expected.objectValue?.keys)
        // And back: our bytes decode in protoc to the same text.
        let ours = try kitchen.encode(value, hints: scalarHints)
        #expect(ours == bytes)
    }

    @Test func absentProto3FieldsDecodeToDefaultsUnlessTurnedOff() throws {
        let empty = try kitchen.decode(Data(), hints: scalarHints)
        #expect(empty["fInt64"] == 0)
        #expect(empty["fString"] == "")
        #expect(empty["fBytes"] == .bytes([]))
        #expect(empty["fBool"] == false)
        #expect(empty["fColor"] == "COLOR_UNSPECIFIED")
        #expect(empty.objectValue?.count == 16)
        let sink = try kitchen.decode(Data(), hints: sinkHints)
        #expect(sink["scalars"] == nil)  // absent messages are left out, not null
        #expect(sink["packedInt32"] == [])
        #expect(sink["stringMap"] == .object(Value.Object()))
        #expect(sink["maybeInt32"] == nil)  // proto3 optional: presence is kept
        #expect(sink["choiceText"] == nil)
        #expect(sink["customJsonName"] == "")

        var options = ProtobufCodec.Options()
        options.includeDefaultValues = false
        let sparse = ProtobufCodec(schema: ProtobufTestSupport.kitchen, options: options)
        #expect(try sparse.decode(Data(), hints: sinkHints) == .object(Value.Object()))
        let one = try sparse.decode(try kitchen.encode(["fInt32": 5], hints: scalarHints), hints: scalarHints)
        #expect(one == ["fInt32": 5])
    }

    @Test func presenceOfProto3OptionalZeroValues() throws {
        let bytes = try kitchen.encode(["maybeInt32": 0, "maybeString": "", "maybeBool": false], hints: sinkHints)
        #expect([UInt8](bytes) == [0xD8, 0x01, 0x00, 0xE2, 0x01, 0x00, 0xE8, 0x01, 0x00])
        let value = try kitchen.decode(bytes, hints: sinkHints)
        #expect(value["maybeInt32"] == 0)
        #expect(value["maybeString"] == "")
        #expect(value["maybeBool"] == false)
        #expect(value["maybeDouble"] == nil)
    }

    // MARK: enums, maps, oneofs

    @Test func enumsAsNamesNumbersAndUnknownNumbers() throws {
        let value = try kitchen.decode(try kitchen.encode(["fColor": 2], hints: scalarHints), hints: scalarHints)
        #expect(value["fColor"] == "COLOR_GREEN")
        let unknown = try kitchen.decode(try kitchen.encode(["fColor": 77], hints: scalarHints), hints: scalarHints)
        #expect(unknown["fColor"] == 77)
        var options = ProtobufCodec.Options()
        options.enumsAsNumbers = true
        let numeric = ProtobufCodec(schema: ProtobufTestSupport.kitchen, options: options)
        let bytes = try kitchen.encode(["fColor": "COLOR_NEGATIVE"], hints: scalarHints)
        #expect(try numeric.decode(bytes, hints: scalarHints)["fColor"] == -1)
        let error = try #require(throws: CourierError.self) {
            try kitchen.encode(["fColor": "COLOR_PURPLE"], hints: scalarHints)
        }
        #expect(error.code == .valueOutOfRange)
        #expect(error.context.codingPath == ["fColor"])
    }

    @Test func mapsBecomeObjectsWithTextKeys() throws {
        let value: Value = [
            "stringMap": ["a": "x", "": "empty key"],
            "intMap": ["-5": ["label": "neg", "values": [1, 2], "color": "COLOR_BLUE"]],
            "longMap": ["9223372036854775807": -1],
            "uintMap": ["4294967295": true],
            "boolMap": ["true": "yes", "false": "no"],
            "colorMap": ["c": "COLOR_RED"],
            "sintMap": ["-9223372036854775808": .bytes([1, 2, 3])],
        ]
        let bytes = try kitchen.encode(value, hints: sinkHints)
        let decoded = try kitchen.decode(bytes, hints: sinkHints)
        for key in value.objectValue!.keys { #expect(decoded[key] == value[key], "\(key)") }
        try #require(ProtobufTestSupport.hasProtoc)
        let text = String(decoding: try ProtobufTestSupport.protoc(
            ["--decode=kitchen.KitchenSink", "kitchen_sink.proto"], input: bytes), as: UTF8.self)
        #expect(text.contains("long_map {\n  key: 9223372036854775807\n  value: -1\n}"))
        #expect(text.contains("sint_map {\n  key: -9223372036854775808\n  value: \"\\001\\002\\003\"\n}"))
        #expect(text.contains("int_map {\n  key: -5\n  value {\n    label: \"neg\""))

        let badKey = try #require(throws: CourierError.self) {
            try kitchen.encode(["intMap": ["five": ["label": "x"]]], hints: sinkHints)
        }
        #expect(badKey.code == .typeMismatch)
        #expect(badKey.context.codingPath == ["intMap", "five"])
    }

    @Test func oneofKeepsOnlyTheSetMemberAndTheLastOneWins() throws {
        let value = try kitchen.decode(try kitchen.encode(["choiceNumber": 0], hints: sinkHints), hints: sinkHints)
        #expect(value["choiceNumber"] == 0)
        #expect(value["choiceText"] == nil)
        // Two members on the wire: the later one wins (protobuf semantics, done by protobuf-c).
        var wire = [UInt8](try kitchen.encode(["choiceText": "first"], hints: sinkHints))
        wire += try kitchen.encode(["choiceInner": ["label": "second"]], hints: sinkHints)
        let last = try kitchen.decode(Data(wire), hints: sinkHints)
        #expect(last["choiceText"] == nil)
        #expect(last["choiceInner"]?["label"] == "second")
        let error = try #require(throws: CourierError.self) {
            try kitchen.encode(["choiceText": "a", "choiceNumber": 1], hints: sinkHints)
        }
        #expect(error.code == .encodingFailed)
        #expect(error.context.codingPath == ["choiceNumber"])
    }

    @Test func packedAndUnpackedRepeatedFieldsOnTheWire() throws {
        let bytes = [UInt8](try kitchen.encode(["packedInt32": [1, 2, 300], "unpackedUint32": [1, 2]], hints: sinkHints))
        // packed_int32 = 4: one length-delimited record; unpacked_uint32 = 12: one varint record per element.
        #expect(bytes == [0x22, 0x04, 0x01, 0x02, 0xAC, 0x02, 0x60, 0x01, 0x60, 0x02])
        // Both forms are accepted whatever the declaration says.
        let unpackedInts: [UInt8] = [0x20, 0x07, 0x20, 0x08]
        let packedUints: [UInt8] = [0x62, 0x02, 0x05, 0x06]
        let value = try kitchen.decode(Data(unpackedInts + packedUints), hints: sinkHints)
        #expect(value["packedInt32"] == [7, 8])
        #expect(value["unpackedUint32"] == [5, 6])
    }

    // MARK: proto2

    @Test func proto2RequiredAndDefaults() throws {
        let legacy = ProtobufTestSupport.kitchen.messageType(named: "legacy.Legacy")
        #expect(legacy?.fields.first { $0.name == "name" }?.defaultValue == "unnamed")
        #expect(legacy?.fields.first { $0.name == "magic" }?.defaultValue == .bytes([1, 2, 97, 98, 99]))
        #expect(legacy?.fields.first { $0.name == "big" }?.defaultValue == .uint(UInt64.max))
        #expect(legacy?.fields.first { $0.name == "level" }?.defaultValue == "MEDIUM")
        #expect(legacy?.fields.first { $0.name == "id" }?.cardinality == .required)

        let minimal = try kitchen.decode(try kitchen.encode(["id": 9], hints: legacyHints), hints: legacyHints)
        #expect(minimal == ["id": 9, "plain": [], "packed": []])
        let full: Value = [
            "id": 1, "name": "n", "count": 0, "ratio": 2.5, "enabled": false, "level": "HIGH",
            "magic": .bytes([]), "big": .uint(UInt64.max), "small": -0.25, "plain": [1], "packed": [2, 3],
            "next": ["id": 2, "plain": [], "packed": []], "delta": -7,
        ]
        #expect(try kitchen.decode(try kitchen.encode(full, hints: legacyHints), hints: legacyHints) == full)

        let missing = try #require(throws: CourierError.self) {
            try kitchen.encode(["name": "x"], hints: legacyHints)
        }
        #expect(missing.code == .missingValue)
        let nested = try #require(throws: CourierError.self) {
            try kitchen.encode(["id": 1, "next": ["name": "x"]], hints: legacyHints)
        }
        #expect(nested.code == .missingValue)
        #expect(nested.context.codingPath == ["next"])
        // On the wire: protobuf-c refuses the message, we say which field.
        let decodeMissing = try #require(throws: CourierError.self) {
            try kitchen.decode(Data([0x12, 0x01, 0x78]), hints: legacyHints)
        }
        #expect(decodeMissing.code == .missingValue)
        #expect(decodeMissing.detail?.contains("id") == true)
    }

    // MARK: unknown fields

    @Test func unknownFieldsAreKeptReencodedDiscardedOrRejected() throws {
        // demo.Address knows fields 1-3; 9 (varint) and 10 (string) are unknown.
        let wire: [UInt8] = [0x0A, 0x01, 0x41, 0x48, 0x96, 0x01, 0x52, 0x02, 0x6F, 0x6B]
        let hints = ProtobufTestSupport.hints("demo.Address")
        let kept = try demo.decode(Data(wire), hints: hints)
        #expect(kept["city"] == "A")
        #expect(kept[ProtobufCodec.unknownFieldsKey] == .bytes([0x48, 0x96, 0x01, 0x52, 0x02, 0x6F, 0x6B]))
        #expect(try ProtobufRawDecoder().decode(Data(kept[ProtobufCodec.unknownFieldsKey]!.bytesValue!))
            == ["9": 150, "10": "ok"])
        #expect([UInt8](try demo.encode(kept, hints: hints)) == wire)

        var options = ProtobufCodec.Options()
        options.unknownFields = .discard
        #expect(try ProtobufCodec(schema: ProtobufTestSupport.demo, options: options)
            .decode(Data(wire), hints: hints) == ["city": "A", "street": "", "zip": ""])
        options.unknownFields = .reject
        let error = try #require(throws: CourierError.self) {
            try ProtobufCodec(schema: ProtobufTestSupport.demo, options: options).decode(Data(wire), hints: hints)
        }
        #expect(error.code == .malformedInput)
        #expect(error.detail?.contains("unknown field 9") == true)
    }

    // MARK: encoding input

    @Test func encodingAcceptsJSONNamesProtoNamesAndEnumNumbers() throws {
        let a = try kitchen.encode(["customJsonName": "x", "maybeColor": "COLOR_BLUE", "fInt32": 1], hints: sinkHints,
            ignoringUnknown: true)
        let b = try kitchen.encode(["snake_case_name": "x", "maybe_color": 3], hints: sinkHints)
        #expect(a == b)
        let value = try kitchen.decode(b, hints: sinkHints)
        #expect(value["customJsonName"] == "x")
        #expect(value["maybeColor"] == "COLOR_BLUE")
        // Textual numbers and base64 bytes, as proto3 JSON writes them.
        let json: Value = ["fInt64": "-42", "fUint64": "18446744073709551615", "fBytes": "AP9hYg==", "fDouble": "NaN"]
        let decoded = try kitchen.decode(try kitchen.encode(json, hints: scalarHints), hints: scalarHints)
        #expect(decoded["fInt64"] == -42)
        #expect(decoded["fUint64"] == .uint(UInt64.max))
        #expect(decoded["fBytes"] == .bytes([0, 255, 97, 98]))
        #expect(decoded["fDouble"]?.doubleValue?.isNaN == true)
    }

    struct EncodingErrorCase: Sendable, CustomTestStringConvertible {
        var value: Value
        var code: CourierError.Code
        var path: [PathComponent]
        var testDescription: String { "\(value) → \(code.name)" }
    }

    static let encodingErrorCases: [EncodingErrorCase] = [
        .init(value: ["fInt32": 2_147_483_648], code: .valueOutOfRange, path: ["fInt32"]),
        .init(value: ["fUint32": -1], code: .valueOutOfRange, path: ["fUint32"]),
        .init(value: ["fInt64": .uint(UInt64.max)], code: .valueOutOfRange, path: ["fInt64"]),
        .init(value: ["fFloat": 1e39], code: .valueOutOfRange, path: ["fFloat"]),
        .init(value: ["fInt32": 1.5], code: .typeMismatch, path: ["fInt32"]),
        .init(value: ["fBool": 1], code: .typeMismatch, path: ["fBool"]),
        .init(value: ["fString": 5], code: .typeMismatch, path: ["fString"]),
        .init(value: ["fBytes": "not base64!"], code: .typeMismatch, path: ["fBytes"]),
        .init(value: ["nope": 1], code: .encodingFailed, path: ["nope"]),
    ]

    @Test(arguments: encodingErrorCases)
    func encodingErrorsNameTheCodeAndPath(_ c: EncodingErrorCase) throws {
        let error = try #require(throws: CourierError.self) { try kitchen.encode(c.value, hints: scalarHints) }
        #expect(error.code == c.code)
        #expect(error.context.codingPath == c.path)
    }

    @Test func encodingErrorPathsReachIntoNestedValues() throws {
        let error = try #require(throws: CourierError.self) {
            try kitchen.encode(["inners": [["label": "ok"], ["values": [1, "x"]]]], hints: sinkHints)
        }
        #expect(error.code == .typeMismatch)
        #expect(error.context.codingPath == ["inners", 1, "values", 1])
        #expect(error.message.contains("int32"))
        let notObject = try #require(throws: CourierError.self) { try kitchen.encode([1, 2], hints: sinkHints) }
        #expect(notObject.code == .typeMismatch)
        var options = ProtobufCodec.Options()
        options.ignoreUnknownMembers = true
        let lenient = ProtobufCodec(schema: ProtobufTestSupport.kitchen, options: options)
        #expect(try lenient.encode(["nope": 1, "fInt32": 1], hints: scalarHints) == Data([0x28, 0x01]))
    }

    @Test func stringsWithNULCharactersSurviveBothWays() throws {
        let value: Value = ["fString": "a\u{0}b"]
        let bytes = try kitchen.encode(value, hints: scalarHints)
        #expect([UInt8](bytes) == [0x4A, 0x03, 0x61, 0x00, 0x62])
        #expect(try kitchen.decode(bytes, hints: scalarHints)["fString"] == "a\u{0}b")
        let repeated: Value = ["strings": ["x", "\u{0}", "y"]]
        let decoded = try kitchen.decode(try kitchen.encode(repeated, hints: sinkHints), hints: sinkHints)
        #expect(decoded["strings"] == ["x", "\u{0}", "y"])
    }

    // MARK: message types

    @Test func messageTypeMustBeGivenAndKnown() throws {
        let missing = try #require(throws: CourierError.self) { try demo.decode(Data(), hints: CodingHints()) }
        #expect(missing.code == .unknownMessageType)
        #expect(missing.detail?.contains("CodingHints.messageType") == true)
        let unknown = try #require(throws: CourierError.self) {
            try demo.decode(Data(), hints: ProtobufTestSupport.hints("demo.Nope"))
        }
        #expect(unknown.code == .unknownMessageType)
        #expect(unknown.detail?.contains("demo.Nope") == true)
        #expect(demo.format == .protobuf)
    }
}

extension ProtobufCodec {
    /// Encodes with unknown members ignored (a helper for tests that mix in extra keys).
    fileprivate func encode(_ value: Value, hints: CodingHints, ignoringUnknown: Bool) throws -> Data {
        var options = self.options
        options.ignoreUnknownMembers = ignoringUnknown
        return try ProtobufCodec(schema: schema, options: options).encode(value, hints: hints)
    }
}
