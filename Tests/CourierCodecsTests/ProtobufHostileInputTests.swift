import CourierCodecs
import CourierTestSupport
import CourierTesting
import Foundation
import Testing

@Suite(.timeLimit(.minutes(10))) struct ProtobufHostileInputTests {
    let demo = ProtobufCodec(schema: ProtobufTestSupport.demo)
    let kitchen = ProtobufCodec(schema: ProtobufTestSupport.kitchen)
    let listHints = ProtobufTestSupport.hints("demo.UserListResponse")
    let nodeHints = ProtobufTestSupport.hints("kitchen.Node")

    private func decodeError(_ bytes: [UInt8], _ codec: ProtobufCodec? = nil, _ hints: CodingHints? = nil) throws
        -> CourierError
    {
        try #require(throws: CourierError.self) {
            try (codec ?? demo).decode(Data(bytes), hints: hints ?? listHints)
        }
    }

    @Test func twoGigabyteLengthPrefix() throws {
        let error = try decodeError([0x08, 0x01, 0x1A, 0x80, 0x80, 0x80, 0x80, 0x08, 0x00])
        #expect(error.code == .malformedInput)
        #expect(error.context.offset == 3)
        #expect(error.detail?.contains("2147483648") == true)
    }

    @Test func truncatedVarint() throws {
        let error = try decodeError([0x08, 0xFF, 0xFF])
        #expect(error.code == .malformedInput)
        #expect(error.context.offset == 1)
        #expect(error.detail?.contains("truncated varint") == true)
    }

    @Test(arguments: [UInt8(0x0B), 0x0C, 0x0E, 0x0F])
    func invalidWireTypes(key: UInt8) throws {
        let error = try decodeError([0x08, 0x01, key, 0x00])
        #expect(error.code == .malformedInput)
        #expect(error.context.offset == 2)
    }

    @Test func wireTypeThatDoesNotFitTheField() throws {
        // code (field 1, int32) sent as a fixed64.
        let error = try decodeError([0x09, 1, 2, 3, 4, 5, 6, 7, 8])
        #expect(error.code == .malformedInput)
        #expect(error.context.codingPath == ["code"])
        #expect(error.detail?.contains("wire type 1") == true)
    }

    @Test func invalidUTF8InAStringField() throws {
        let top = try decodeError([0x12, 0x02, 0xC3, 0x28])
        #expect(top.code == .invalidUTF8)
        #expect(top.context.codingPath == ["message"])
        // data.users[1].name
        let user: [UInt8] = [0x12, 0x01, 0xFF]
        let page: [UInt8] = [0x1A, 0x00, 0x1A, UInt8(user.count)] + user
        let nested = try decodeError([0x1A, UInt8(page.count)] + page)
        #expect(nested.code == .invalidUTF8)
        #expect(nested.context.codingPath == ["data", "users", 1, "name"])
    }

    /// `levels` nested length-delimited records of field `field`, built outside-in.
    static func nested(levels: Int, field: UInt8) -> [UInt8] {
        var sizes = [Int](repeating: 0, count: levels + 1)
        for k in 1...levels {
            var n = sizes[k - 1]
            var length = 1
            while n >= 0x80 { n >>= 7; length += 1 }
            sizes[k] = 1 + length + sizes[k - 1]
        }
        var out: [UInt8] = []
        out.reserveCapacity(sizes[levels])
        for k in stride(from: levels, to: 0, by: -1) {
            out.append(field << 3 | 2)
            var v = UInt64(sizes[k - 1])
            while v >= 0x80 {
                out.append(UInt8(v & 0x7F) | 0x80)
                v >>= 7
            }
            out.append(UInt8(v))
        }
        return out
    }

    @Test func hundredThousandDeepRecursiveMessage() throws {
        let bytes = Self.nested(levels: 100_000, field: 2)  // Node.child
        let error = try decodeError(bytes, kitchen, nodeHints)
        #expect(error.code == .depthLimitExceeded)
        #expect(error.detail?.contains("maximumDepth = 100") == true)
        // Within the limit it decodes.
        let fine = try kitchen.decode(Data(Self.nested(levels: 50, field: 2)), hints: nodeHints)
        var depth = 0
        var cursor: Value? = fine
        while let next = cursor?["child"] {
            depth += 1
            cursor = next
        }
        #expect(depth == 50)
        var options = ProtobufCodec.Options()
        options.maxDepth = 20
        let strict = ProtobufCodec(schema: ProtobufTestSupport.kitchen, options: options)
        #expect(try decodeError(Self.nested(levels: 20, field: 2), strict, nodeHints).code == .depthLimitExceeded)
        #expect(throws: Never.self) { try strict.decode(Data(Self.nested(levels: 19, field: 2)), hints: nodeHints) }
    }

    @Test func hundredThousandDeepNestingOfANonRecursiveSchema() throws {
        // The schema bounds protobuf-c's recursion (three levels); the rest is bytes in a string field.
        let error = try decodeError(Self.nested(levels: 100_000, field: 3))
        #expect(error.code == .invalidUTF8)
        #expect(error.context.codingPath == ["data", "users", 0, "email"])
    }

    /// Found by FuzzProtobuf: protobuf-c keeps an unknown field whose 5-byte key overflows 32 bits (it truncates
    /// the number); the kept bytes must re-encode.
    @Test func unknownFieldWithAnOverlongKeyRoundTrips() throws {
        let bytes: [UInt8] = [0xFD, 0xFF, 0xFF, 0xFF, 0x60, 0x5B, 0xFF, 0xFF, 0x7E]
        let value = try demo.decode(Data(bytes), hints: listHints)
        let unknown = try #require(value[ProtobufCodec.unknownFieldsKey]?.bytesValue)
        #expect(unknown.suffix(4) == [0x5B, 0xFF, 0xFF, 0x7E])
        #expect(try demo.decode(try demo.encode(value, hints: listHints), hints: listHints) == value)
    }

    /// Found by FuzzProtobuf: protobuf-c accepts field number 0 when its key is not minimal (0x81 0x00).
    @Test func fieldNumberZeroIsRejected() throws {
        let error = try decodeError([0x81, 0x00, 0, 0, 0, 0, 0, 0, 0x60, 0x5B])
        #expect(error.code == .malformedInput)
        #expect(error.detail?.contains("field number 0") == true)
    }

    @Test func encodingBoundsDepthToo() throws {
        var value: Value = ["value": 1]
        for _ in 0..<150 { value = ["child": value] }
        let error = try #require(throws: CourierError.self) { try kitchen.encode(value, hints: nodeHints) }
        #expect(error.code == .depthLimitExceeded)
    }

    @Test func everyTruncationOfTheFixtureFailsCleanly() throws {
        let bytes = [UInt8](try Repository.fixture("users_10.pb"))
        var failures = 0
        for length in 0..<bytes.count {
            do {
                _ = try demo.decode(Data(bytes[0..<length]), hints: listHints)
            } catch let error as CourierError {
                failures += 1
                #expect(error.code == .malformedInput || error.code == .invalidUTF8, "\(length): \(error)")
                if error.code == .malformedInput { #expect(error.context.offset != nil) }
            }
        }
        #expect(failures > bytes.count / 2)
    }

    @Test(arguments: 0..<4)
    func randomGarbageNeverCrashes(seed: Int) throws {
        var rng = SeededRandom(seed: UInt64(seed))
        var decoded = 0
        for _ in 0..<1500 {
            let count = Int(rng.next() % 64)
            let bytes = (0..<count).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            for (codec, hints) in [
                (demo, listHints), (kitchen, ProtobufTestSupport.hints("kitchen.KitchenSink")), (kitchen, nodeHints),
            ] {
                do {
                    let value = try codec.decode(Data(bytes), hints: hints)
                    decoded += 1
                    // Whatever decodes re-encodes and decodes to the same value.
                    let again = try codec.decode(try codec.encode(value, hints: hints), hints: hints)
                    #expect(again == value || containsNaN(value))
                } catch let error as CourierError {
                    #expect(error.category == .decoding)
                }
            }
        }
        #expect(decoded > 0)
    }

    // MARK: Limits while reading

    let sinkHints = ProtobufTestSupport.hints("kitchen.KitchenSink")

    /// A kitchen-sink codec whose limits `change` adjusts.
    private func sink(_ change: (inout DecodingLimits) -> Void) -> ProtobufCodec {
        var options = ProtobufCodec.Options()
        change(&options.limits)
        return ProtobufCodec(schema: ProtobufTestSupport.kitchen, options: options)
    }

    /// `value` as a varint.
    static func varint(_ value: UInt64) -> [UInt8] {
        var out: [UInt8] = []
        var v = value
        while v >= 0x80 {
            out.append(UInt8(v & 0x7F) | 0x80)
            v >>= 7
        }
        out.append(UInt8(v))
        return out
    }

    @Test func theProtobufDefaultsAreTheSharedOnesWithDepth100() {
        var expected = DecodingLimits()
        expected.maximumDepth = 100
        #expect(ProtobufCodec.Options().limits == expected)
        #expect(ProtobufCodec.Options().maxDepth == 100)
        #expect(ProtobufRawDecoder().limits == DecodingLimits())
    }

    @Test func twoMillionEmptySubMessagesAreRefusedBeforeProtobufC() throws {
        // inners (field 3): `1A 00` is two bytes of input and a whole Inner struct (plus its Value) each.
        let bytes = ProtobufTestSupport.repeated([0x1A, 0x00], 2_000_000)
        let error = try decodeError(bytes, kitchen, sinkHints)
        #expect(error.code == .sizeLimitExceeded)
        #expect(error.detail?.contains("maximumContainerCount") == true)
        #expect(error.context.offset == 2_000_000)  // the first occurrence over the limit
    }

    @Test func repeatedSubMessagesWithinRaisedLimitsDecode() throws {
        let bytes = ProtobufTestSupport.repeated([0x1A, 0x02, 0x10, 0x07], 3_000)  // inners: [{values: [7]}] × 3,000
        let strict = sink { $0.maximumContainerCount = 2_000 }
        #expect(try decodeError(bytes, strict, sinkHints).code == .sizeLimitExceeded)
        let raised = sink { $0.maximumContainerCount = 3_000 }
        let value = try raised.decode(Data(bytes), hints: sinkHints)
        #expect(value["inners"]?.arrayValue?.count == 3_000)
        #expect(value["inners"]?[2_999]?["values"] == [7])
    }

    /// protobuf-c merges each occurrence of a singular message field into the ones before, copying their
    /// repeated fields each time (and its arena keeps every copy): `n` occurrences used to cost time and memory
    /// quadratic in `n` (80 KB of them took 244 ms and 427 MB; 800 KB ran out of memory). The scan counts the
    /// bytes the merges would copy and stops at `maximumInputSize`, before protobuf-c reads anything.
    @Test func aSingularMessageFieldSentManyTimesStopsBeforeItsMergesGoQuadratic() throws {
        // data (field 3, a UserPage) sent 100,000 times, each with one user {name: "ab"}.
        let user: [UInt8] = [0x12, 0x02, 0x61, 0x62]
        let page: [UInt8] = [0x1A, UInt8(user.count)] + user
        let occurrence: [UInt8] = [0x1A, UInt8(page.count)] + page
        let bytes = ProtobufTestSupport.repeated(occurrence, 100_000)
        let error = try decodeError(bytes)
        #expect(error.code == .sizeLimitExceeded)
        #expect(error.detail?.contains("singular message field data") == true)
        #expect(error.detail?.contains("maximumInputSize") == true)
        #expect(error.context.codingPath == ["data"])
        // The typed decoders stop at the same point, with the same error.
        let typed = try #require(throws: CourierError.self) {
            try demo.decode(HandList.self, from: Data(bytes), hints: listHints, decoder: ValueDecoder())
        }
        #expect(typed.detail == error.detail)
        // A few hundred merge as protobuf says they do: their users add up.
        let merged = try demo.decode(Data(ProtobufTestSupport.repeated(occurrence, 300)), hints: listHints)
        #expect(merged["data"]?["users"]?.arrayValue?.count == 300)
        // The kitchen sink's inner (field 2) sent 100,000 times with one of its values each.
        let sinkError = try decodeError(ProtobufTestSupport.repeated([0x12, 0x02, 0x10, 0x01], 100_000), kitchen, sinkHints)
        #expect(sinkError.code == .sizeLimitExceeded)
        #expect(sinkError.detail?.contains("singular message field inner") == true)
        // The budget is the input size limit: a lower one stops sooner.
        let tight = sink { $0.maximumInputSize = 10_000 }
        let few = ProtobufTestSupport.repeated([0x12, 0x02, 0x10, 0x01], 200)
        #expect(try decodeError(few, tight, sinkHints).code == .sizeLimitExceeded)
        #expect(try kitchen.decode(Data(few), hints: sinkHints)["inner"]?["values"]?.arrayValue?.count == 200)
    }

    /// The scan stops at the limit (the millionth tag), before protobuf-c allocates anything.
    @Test func tenMillionUnpackedTagsStopAtTheContainerLimit() throws {
        let bytes = ProtobufTestSupport.repeated([0x60, 0x01], 10_000_000)  // unpacked_uint32 (field 12)
        let error = try decodeError(bytes, kitchen, sinkHints)
        #expect(error.code == .sizeLimitExceeded)
        #expect(error.detail?.contains("maximumContainerCount") == true)
        #expect(error.context.offset == 2_000_000)
    }

    @Test func packedElementsCountOneByOne() throws {
        let elements = 1_500_000
        let packedVarints = [0x22] + Self.varint(UInt64(elements)) + [UInt8](repeating: 0x01, count: elements)
        let error = try decodeError(packedVarints, kitchen, sinkHints)
        #expect(error.code == .sizeLimitExceeded)
        #expect(error.context.codingPath.isEmpty)
        let packedFixed = [0x3A] + Self.varint(UInt64(4 * elements)) + [UInt8](repeating: 0, count: 4 * elements)
        #expect(try decodeError(packedFixed, kitchen, sinkHints).code == .sizeLimitExceeded)
        let small = sink { $0.maximumContainerCount = 10 }
        let ten: [UInt8] = [0x22, 0x0A] + [UInt8](repeating: 0x01, count: 10)
        #expect(try small.decode(Data(ten), hints: sinkHints)["packedInt32"]?.arrayValue?.count == 10)
    }

    @Test func aPackedFixedRunWhoseLengthIsNotAMultipleIsMalformed() throws {
        let error = try decodeError([0x3A, 0x05, 1, 2, 3, 4, 5], kitchen, sinkHints)
        #expect(error.code == .malformedInput)
        #expect(error.detail?.contains("multiple of 4") == true)
    }

    @Test func aStringOverTheLimitNamesItsPath() throws {
        let strict = sink { $0.maximumStringLength = 8 }
        let label = [UInt8]("0123456789".utf8)
        let inner: [UInt8] = [0x0A, UInt8(label.count)] + label
        let error = try decodeError([0x1A, UInt8(inner.count)] + inner, strict, sinkHints)
        #expect(error.code == .sizeLimitExceeded)
        #expect(error.context.codingPath == ["inners", "label"])
        #expect(error.context.offset == 2)
        #expect(error.detail?.contains("maximumStringLength") == true)
    }

    @Test func wideAndDeepTreesAreBoundedInAll() throws {
        // Node.children (3): 200 children each with 200 empty children = 40,201 messages, 4 values each.
        let leaf: [UInt8] = [0x1A, 0x00]
        let middle = ProtobufTestSupport.repeated(leaf, 200)
        let child = [0x1A] + Self.varint(UInt64(middle.count)) + middle
        let bytes = ProtobufTestSupport.repeated(child, 200)
        let strict = ProtobufCodec(schema: ProtobufTestSupport.kitchen, options: {
            var options = ProtobufCodec.Options()
            options.limits.maximumTotalValues = 100_000
            return options
        }())
        let error = try decodeError(bytes, strict, nodeHints)
        #expect(error.code == .sizeLimitExceeded)
        #expect(error.detail?.contains("maximumTotalValues") == true)
        let value = try kitchen.decode(Data(bytes), hints: nodeHints)
        #expect(value["children"]?.arrayValue?.count == 200)
        #expect(value["children"]?[199]?["children"]?.arrayValue?.count == 200)
    }

    @Test(arguments: [
        // A sub-message length past the end of its parent.
        [UInt8]([0x1A, 0x04, 0x1A, 0x10, 0x00, 0x00]),
        // A length prefix past the end of the input.
        [0x1A, 0xFF, 0xFF, 0xFF, 0x7F],
        // An 11-byte varint.
        [0x08, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01],
        // A 6-byte key.
        [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01, 0x00],
        // Unterminated: a key alone, a length alone, a half fixed64.
        [0x1A], [0x1A, 0x05, 0x00], [0x09, 0x01, 0x02],
    ])
    func lyingAndUnterminatedBytesAreMalformed(bytes: [UInt8]) throws {
        let error = try decodeError(bytes, kitchen, nodeHints)
        #expect(error.code == .malformedInput)
        #expect(error.context.offset != nil)
    }

    @Test func aHundredThousandNestedGroupsAreMalformedAtOnce() throws {
        // protobuf-c has no groups: the first start-group key ends the decode.
        let bytes = ProtobufTestSupport.repeated([0x0B], 100_000) + ProtobufTestSupport.repeated([0x0C], 100_000)
        let error = try decodeError(bytes, kitchen, nodeHints)
        #expect(error.code == .malformedInput)
        let raw = try #require(throws: CourierError.self) { try ProtobufRawDecoder().decode(Data(bytes)) }
        #expect(raw.code == .depthLimitExceeded)
        #expect(raw.context.offset == 63)
    }

    @Test func hugeFieldNumbersAreUnknownFieldsOrErrors() throws {
        // Field 536,870,911 (the largest), then field 2^32 - 1 through a 5-byte key.
        for key in [Self.varint(UInt64(536_870_911) << 3), [0xF8, 0xFF, 0xFF, 0xFF, 0x7F]] {
            let bytes = key + [0x01]
            do {
                let value = try kitchen.decode(Data(bytes), hints: nodeHints)
                #expect(value[ProtobufCodec.unknownFieldsKey] != nil)
            } catch let error as CourierError {
                #expect(error.category == .decoding)
            }
        }
    }

    @Test func hintsReplaceTheCodecsLimits() throws {
        var hints = nodeHints
        var limits = DecodingLimits()
        limits.maximumDepth = 3
        hints.limits = limits
        #expect(throws: Never.self) { try kitchen.decode(Data(Self.nested(levels: 10, field: 2)), hints: nodeHints) }
        #expect(try decodeError(Self.nested(levels: 10, field: 2), kitchen, hints).code == .depthLimitExceeded)
        limits = DecodingLimits()
        limits.maximumInputSize = 3
        hints.limits = limits
        #expect(try decodeError([0x08, 0x01, 0x08, 0x02], kitchen, hints).code == .sizeLimitExceeded)
    }

    private func containsNaN(_ value: Value) -> Bool {
        switch value {
        case .double(let d): return d.isNaN
        case .array(let a): return a.contains(where: containsNaN)
        case .object(let o): return o.values.contains(where: containsNaN)
        default: return false
        }
    }
}

