import CourierCodecs
import CourierCodecsTesting
import CourierTestSupport
import CourierTesting
import Foundation
import Testing

@Suite(.timeLimit(.minutes(10))) struct ProtobufRawDecoderTests {
    let raw = ProtobufRawDecoder()

    @Test func fixtureTextMatchesProtocDecodeRaw() throws {
        try #require(ProtobufTestSupport.hasProtoc)
        for name in ["users_10.pb", "users_5000.pb"] {
            let bytes = try Repository.fixture(name)
            let expected = String(decoding: try ProtobufTestSupport.protoc(["--decode_raw"], input: bytes), as: UTF8.self)
            #expect(try raw.text(bytes) == expected, "\(name)")
        }
    }

    @Test func generatedKitchenSinkTextMatchesProtocDecodeRaw() throws {
        try #require(ProtobufTestSupport.hasProtoc)
        let schema = ProtobufTestSupport.kitchen
        let codec = ProtobufCodec(schema: schema)
        var generator = ProtobufValueGenerator(schema: schema, seed: 99)
        for _ in 0..<40 {
            let bytes = try codec.encode(
                try generator.value(for: "kitchen.KitchenSink"), hints: ProtobufTestSupport.hints("kitchen.KitchenSink"))
            let expected = String(decoding: try ProtobufTestSupport.protoc(["--decode_raw"], input: bytes), as: UTF8.self)
            let ours = try raw.text(bytes)
            #expect(ours == expected)
            if ours != expected { break }
        }
    }

    @Test func groupsFixedValuesAndEmptyStrings() throws {
        let bytes = Data([0x0B, 0x08, 0x01, 0x0C, 0x15, 0x01, 0x00, 0x00, 0x00, 0x12, 0x00, 0x19] + [UInt8](repeating: 0xFF, count: 8))
        #expect(try raw.text(bytes) == "1 {\n  1: 1\n}\n2: 0x00000001\n2: \"\"\n3: 0xffffffffffffffff\n")
        #expect(try raw.decode(bytes) == ["1": ["1": 1], "2": [1, ""], "3": .uint(UInt64.max)])
    }

    @Test func fixtureValueIsKeyedByFieldNumber() throws {
        let value = try raw.decode(try Repository.fixture("users_10.pb"))
        #expect(value["1"] == 200)
        #expect(value["2"] == "OK")
        let users = try #require(value["3"]?["3"]?.arrayValue)
        #expect(users.count == 10)
        #expect(users[0]["2"] == "Zoë Hernández")
        #expect(users[0]["5"] == Value(Double(808.78).bitPattern))  // a double is a fixed64 without a schema
        #expect(users[0]["7"] == ["trial", "admin"])
        #expect(users[0]["8"]?["3"] == "06545")
        #expect(value.objectValue?.keys == ["1", "2", "3"])
    }

    @Test func lengthDelimitedGuesses() throws {
        // "ok" is not a message (wire type 7) → string; 0xFF 0xFE is neither → bytes; {1: 150} → message.
        let bytes = Data([0x0A, 0x02, 0x6F, 0x6B, 0x12, 0x02, 0xFF, 0xFE, 0x1A, 0x03, 0x08, 0x96, 0x01])
        #expect(try raw.decode(bytes) == ["1": "ok", "2": .bytes([0xFF, 0xFE]), "3": ["1": 150]])
        #expect(try raw.text(bytes) == "1: \"ok\"\n2: \"\\377\\376\"\n3 {\n  1: 150\n}\n")
    }

    @Test(arguments: [
        ([UInt8]([0x08]), 1), ([0x08, 0x80], 1), ([0x0F], 0), ([0x0A, 0x05, 0x01], 1), ([0x0C], 0), ([0x0B, 0x08, 0x01], 3),
        ([0x15, 0x01, 0x02], 1), ([0x00], 0),
    ])
    func malformedInputNamesTheOffset(bytes: [UInt8], offset: Int) throws {
        let error = try #require(throws: CourierError.self) { try raw.decode(Data(bytes)) }
        #expect(error.code == .malformedInput)
        #expect(error.context.offset == offset)
        let textError = #expect(throws: CourierError.self) { try raw.text(Data(bytes)) }
        #expect(textError?.code == .malformedInput)
    }

    @Test func deepNestingStopsGuessingAtTheDepthLimit() throws {
        let bytes = Data(ProtobufHostileInputTests.nested(levels: 100_000, field: 1))
        let (depth, innermost) = Self.guessedDepth(of: try raw.decode(bytes))
        #expect(depth == raw.maxDepth)
        #expect(innermost.bytesValue != nil || innermost.stringValue != nil)
        #expect(try raw.text(bytes).count > 0)
    }

    /// Depths beyond `DecodingLimits.depthCeiling` are taken as the ceiling (guessing and groups recurse once
    /// per level): a million nested groups are refused at it instead of overflowing the stack.
    @Test func absurdDepthsStopAtTheCeiling() throws {
        var deep = ProtobufRawDecoder()
        deep.maxDepth = .max
        deep.limits.maximumDepth = .max
        let groups = Data([UInt8](repeating: 0x0B, count: 1_000_000) + [UInt8](repeating: 0x0C, count: 1_000_000))
        let error = try #require(throws: CourierError.self) { try deep.decode(groups) }
        #expect(error.code == .depthLimitExceeded)
        #expect(error.detail?.contains("maximumDepth = \(DecodingLimits.depthCeiling)") == true)
        #expect(throws: CourierError.self) { try deep.text(groups) }
        let nested = try deep.decode(Data(ProtobufHostileInputTests.nested(levels: 100_000, field: 1)))
        #expect(Self.guessedDepth(of: nested).depth == DecodingLimits.depthCeiling)
    }

    /// How many objects nest through field 1 of `value`, and the value inside the deepest.
    static func guessedDepth(of value: Value) -> (depth: Int, innermost: Value) {
        var depth = 0
        var cursor = value
        while case .object(let o) = cursor, let next = o["1"] {
            depth += 1
            cursor = next
        }
        return (depth, cursor)
    }

    /// Negative limits refuse the first value they bound, and the error names them as they were given.
    @Test func negativeLimitsAreErrorsThatNameThem() throws {
        let cases: [(WritableKeyPath<DecodingLimits, Int>, [UInt8], String)] = [
            (\.maximumTotalValues, [0x08, 0x01], "maximumTotalValues = -1"),
            (\.maximumContainerCount, [0x08, 0x01], "maximumContainerCount = -1"),
            (\.maximumStringLength, [0x0A, 0x01, 0x41], "maximumStringLength = -1"),
            (\.maximumDepth, [0x0B, 0x0C], "maximumDepth = -1"),
        ]
        for (limit, bytes, named) in cases {
            var decoder = ProtobufRawDecoder()
            decoder.limits[keyPath: limit] = -1
            let error = try #require(throws: CourierError.self) { try decoder.decode(Data(bytes)) }
            #expect(error.detail?.contains(named) == true, "\(error)")
        }
        var shallow = ProtobufRawDecoder()
        shallow.maxDepth = -1
        #expect(throws: CourierError.self) { try shallow.decode(Data([0x0B, 0x0C])) }
        #expect(try shallow.decode(Data([0x0A, 0x01, 0x41])) == ["1": "A"])
    }

    /// A million repeats of one field number build one array in linear time (the old merge copied the
    /// array on every append, hours for ten million). Ten million tags stop at the default limit of a
    /// million (next test).
    @Test func aMillionRepeatsOfOneFieldAreLinear() throws {
        let bytes = ProtobufTestSupport.repeated([0x08, 0x01], 999_999) + [0x12, 0x01, 0x41]  // one million fields
        let value = try raw.decode(Data(bytes))
        #expect(value["1"]?.arrayValue?.count == 999_999)
        #expect(value["2"] == "A")
        #expect(value.objectValue?.keys == ["1", "2"])
    }

    @Test func tenMillionTagsStopAtTheContainerLimit() throws {
        let bytes = ProtobufTestSupport.repeated([0x08, 0x01], 10_000_000)
        let error = try #require(throws: CourierError.self) { try raw.decode(Data(bytes)) }
        #expect(error.code == .sizeLimitExceeded)
        #expect(error.context.offset == 2_000_000)  // the first field over the limit
        #expect(error.message.contains("maximumContainerCount"))
        let textError = #expect(throws: CourierError.self) { try raw.text(Data(bytes)) }
        #expect(textError?.code == .sizeLimitExceeded)
    }

    @Test func aRaisedContainerLimitLetsMoreTagsThrough() throws {
        let bytes = ProtobufTestSupport.repeated([0x08, 0x01], 1_500_000)
        let error = #expect(throws: CourierError.self) { try raw.decode(Data(bytes)) }
        #expect(error?.code == .sizeLimitExceeded)
        var raised = ProtobufRawDecoder()
        raised.limits.maximumContainerCount = 2_000_000
        #expect(try raised.decode(Data(bytes))["1"]?.arrayValue?.count == 1_500_000)
    }

    @Test func totalValuesAndLengthsAreBounded() throws {
        var strict = ProtobufRawDecoder()
        strict.limits.maximumTotalValues = 1_000
        // 100 nested messages of 10 varints each: 1,101 values.
        let inner = ProtobufTestSupport.repeated([0x08, 0x01], 10)
        let bytes = ProtobufTestSupport.repeated([0x0A, UInt8(inner.count)] + inner, 100)
        let error = try #require(throws: CourierError.self) { try strict.decode(Data(bytes)) }
        #expect(error.code == .sizeLimitExceeded)
        #expect(try raw.decode(Data(bytes))["1"]?.arrayValue?.count == 100)
        var short = ProtobufRawDecoder()
        short.limits.maximumStringLength = 4
        let long = try #require(throws: CourierError.self) { try short.decode(Data([0x0A, 0x05, 1, 2, 3, 4, 5])) }
        #expect(long.code == .sizeLimitExceeded)
        #expect(long.context.offset == 0)
    }

    @Test func aMillionEmptyLengthDelimitedValues() throws {
        let value = try raw.decode(Data(ProtobufTestSupport.repeated([0x0A, 0x00], 1_000_000)))
        #expect(value["1"]?.arrayValue?.count == 1_000_000)
        #expect(value["1"]?[0] == "")
    }

    @Test func deepGroupsFailWithTheDepthCode() throws {
        let bytes = ProtobufTestSupport.repeated([0x0B], 100_000) + ProtobufTestSupport.repeated([0x0C], 100_000)
        let error = try #require(throws: CourierError.self) { try raw.decode(Data(bytes)) }
        #expect(error.code == .depthLimitExceeded)
        let textError = #expect(throws: CourierError.self) { try raw.text(Data(bytes)) }
        #expect(textError?.code == .depthLimitExceeded)
        let fine = ProtobufTestSupport.repeated([0x0B], 10) + ProtobufTestSupport.repeated([0x0C], 10)
        #expect(try raw.text(Data(fine)).split(separator: "\n").count == 20)
    }
}
