@testable import CourierCodecs
import CourierCodecsTesting
import CourierTestSupport
import Courier
import Foundation
import Testing

/// The one-pass decode → `Value` (`ProtobufWireReader.streamedValue`) against the indexed read and protobuf-c,
/// on field orders it must hand over (reordered fields, split runs of a repeated field, repeated singular
/// fields), and the direct writers' buffer sized from the previous message.
@Suite struct ProtobufValueStreamTests {
    /// The top-level fields of a message as their own byte strings (key included).
    static func fields(_ bytes: [UInt8]) -> [[UInt8]] {
        bytes.withUnsafeBufferPointer { buffer -> [[UInt8]] in
            var reader = WireReader(buffer)
            var fields: [[UInt8]] = []
            while !reader.isAtEnd {
                let start = reader.offset
                guard let (_, wire) = try? reader.readWideKey(), (try? reader.skip(wire)) != nil else { break }
                fields.append(Array(buffer[start..<reader.offset]))
            }
            return fields
        }
    }

    /// The one pass and the indexed read of `bytes` as `type`: the one pass answers the same or hands over.
    static func checkReaders(_ codec: ProtobufCodec, _ bytes: [UInt8], _ type: String) throws {
        let layout = try codec.layout(for: ProtobufTestSupport.hints(type))
        bytes.withUnsafeBufferPointer { buffer in
            let streamed = ProtobufWireReader(bytes: buffer, runtime: codec.schema.runtime, options: codec.options)
            streamed.startBudget(layout)
            let indexed = ProtobufWireReader(bytes: buffer, runtime: codec.schema.runtime, options: codec.options)
            indexed.startBudget(layout)
            let one = Result { () throws(WireAnomaly) in try streamed.streamedValue(layout, 0..<buffer.count, depth: 1) }
            let two = Result { () throws(WireAnomaly) in try indexed.indexedValue(layout, 0..<buffer.count, depth: 1) }
            switch (one, two) {
            case (.success(let a?), .success(let b)):
                #expect(ProtobufDifferential.identical(a, b), "\(a) != \(b)")
                #expect(streamed.total == indexed.total)
            case (.success(nil), _):
                #expect(streamed.total == 1 + (codec.options.includeDefaultValues ? layout.fields.count : 0))
            case (.failure, .failure): break
            default: Issue.record("one pass \(one) vs indexed \(two) for \(type)")
            }
        }
    }

    @Test(arguments: 0..<4)
    func reorderedAndSplitFieldsDecodeTheSameWay(optionIndex: Int) throws {
        let options = ProtobufTypedDecodingTests.optionSets[optionIndex].1
        let writer = ProtobufCodec(schema: ProtobufTestSupport.kitchen)
        let codec = ProtobufCodec(schema: ProtobufTestSupport.kitchen, options: options)
        let demoWriter = ProtobufCodec(schema: ProtobufTestSupport.demo)
        let demo = ProtobufCodec(schema: ProtobufTestSupport.demo, options: options)
        for seed in 0..<40 {
            var generator = ProtobufValueGenerator(schema: ProtobufTestSupport.kitchen, seed: UInt64(seed))
            var cases: [(ProtobufCodec, String, [UInt8])] = []
            for type in ["kitchen.KitchenSink", "kitchen.Scalars", "kitchen.Node", "kitchen.KitchenSink.Inner"] {
                let hints = ProtobufTestSupport.hints(type)
                cases.append((codec, type, Array(try writer.encode(generator.value(for: type), hints: hints))))
            }
            var demoGenerator = ProtobufValueGenerator(schema: ProtobufTestSupport.demo, seed: UInt64(seed))
            let list = try demoWriter.encode(
                demoGenerator.value(for: "demo.UserListResponse"), hints: ProtobufTestSupport.hints("demo.UserListResponse"))
            cases.append((demo, "demo.UserListResponse", Array(list)))
            for (codec, type, bytes) in cases {
                let fields = Self.fields(bytes)
                var variants: [[UInt8]] = [bytes, fields.reversed().flatMap { $0 }, bytes + bytes]
                // Each field moved to the end: splits repeated runs and puts numbers out of order.
                for i in fields.indices.prefix(12) {
                    var moved = fields
                    let field = moved.remove(at: i)
                    variants.append((moved + [field]).flatMap { $0 })
                    variants.append((moved + [field, field]).flatMap { $0 })
                }
                for variant in variants {
                    ProtobufDifferential.checkValue(codec, Data(variant), ProtobufTestSupport.hints(type))
                    try Self.checkReaders(codec, variant, type)
                }
            }
        }
    }

    /// Users with and without an address, in runs and alternating: the shared member-name arrays of one
    /// nesting level must follow each message's own omissions.
    @Test func omittedFieldsKeepEachMessagesOwnNames() throws {
        var noDefaults = ProtobufCodec.Options()
        noDefaults.includeDefaultValues = false
        let hints = ProtobufTestSupport.hints("demo.UserListResponse")
        let writer = ProtobufCodec(schema: ProtobufTestSupport.demo)
        let patterns: [[Bool]] = [[true, false, false, true], [false, true, false, true, true], [false, false]]
        for pattern in patterns {
            let users: [Value] = pattern.enumerated().map { i, hasAddress in
                var user: Value.Object = ["id": .int(Int64(i)), "name": .string("n\(i)"), "age": .int(Int64(i % 2))]
                if hasAddress { user["address"] = ["city": "c", "zip": i % 2 == 0 ? "" : "z"] }
                return .object(user)
            }
            let page: Value = ["code": 1, "data": ["page": 1, "users": .array(users)]]
            let bytes = try writer.encode(page, hints: hints)
            for options in [ProtobufCodec.Options(), noDefaults] {
                let codec = ProtobufCodec(schema: ProtobufTestSupport.demo, options: options)
                ProtobufDifferential.checkValue(codec, bytes, hints)
                try Self.checkReaders(codec, Array(bytes), "demo.UserListResponse")
                // Fields in number order: the one pass answers itself.
                let layout = try codec.layout(for: hints)
                let streamed = Array(bytes).withUnsafeBufferPointer { buffer in
                    let reader = ProtobufWireReader(bytes: buffer, runtime: codec.schema.runtime, options: options)
                    reader.startBudget(layout)
                    return try? reader.streamedValue(layout, 0..<buffer.count, depth: 1)
                }
                #expect(streamed != nil)
            }
        }
    }

    /// Values that protobuf-c's C storage holds as zero, written in every way the wire allows (overlong varints,
    /// an `int32` of 2³² truncated to 0, `-0.0`, an enum's named 0), and their non-zero neighbours: the one pass
    /// leaves out exactly the fields protobuf-c leaves out, with and without default values.
    @Test func zeroLikeValuesAreLeftOutAsProtobufCDoes() throws {
        let twoTo32: [UInt8] = [0x80, 0x80, 0x80, 0x80, 0x10]
        let zeros: [[UInt8]] = [
            [0x09] + [UInt8](repeating: 0, count: 8), [0x15, 0, 0, 0, 0], [0x18, 0x80, 0x00], [0x20, 0x80, 0x80, 0x00],
            [0x28] + twoTo32, [0x31] + [UInt8](repeating: 0, count: 8), [0x3D, 0, 0, 0, 0], [0x40, 0x80, 0x00],
            [0x4A, 0x00], [0x52, 0x00], [0x58] + twoTo32, [0x65, 0, 0, 0, 0], [0x69] + [UInt8](repeating: 0, count: 8),
            [0x70] + twoTo32, [0x78, 0x00], [0x80, 0x01] + twoTo32,
        ]
        let nonZeros: [[UInt8]] = [
            [0x09, 0, 0, 0, 0, 0, 0, 0, 0x80], [0x15, 0, 0, 0, 0x80], [0x18, 0x81, 0x80, 0x80, 0x80, 0x10],
            [0x20, 0x80, 0x80, 0x80, 0x80, 0x10], [0x28, 0x81, 0x80, 0x80, 0x80, 0x10], [0x31, 1, 0, 0, 0, 0, 0, 0, 0],
            [0x3D, 0, 0, 0, 1], [0x40, 0x80, 0x80, 0x80, 0x80, 0x10], [0x4A, 0x01, 0x61], [0x52, 0x01, 0x00],
            [0x58, 0x81, 0x80, 0x80, 0x80, 0x10], [0x65, 0xFF, 0xFF, 0xFF, 0xFF], [0x69, 0, 0, 0, 0, 0, 0, 0, 0x80],
            [0x70, 0x02], [0x78, 0x01], [0x80, 0x01, 0x81, 0x80, 0x80, 0x80, 0x10],
        ]
        var noDefaults = ProtobufCodec.Options()
        noDefaults.includeDefaultValues = false
        var numbers = noDefaults
        numbers.enumsAsNumbers = true
        let hints = ProtobufTestSupport.hints("kitchen.Scalars")
        for options in [ProtobufCodec.Options(), noDefaults, numbers] {
            let codec = ProtobufCodec(schema: ProtobufTestSupport.kitchen, options: options)
            var messages = [zeros.flatMap { $0 }, nonZeros.flatMap { $0 }]
            for i in zeros.indices {
                messages.append(zeros[i])
                messages.append(nonZeros[i])
                var mixed = zeros
                mixed[i] = nonZeros[i]
                messages.append(mixed.flatMap { $0 })
            }
            for message in messages {
                ProtobufDifferential.checkValue(codec, Data(message), hints)
                try Self.checkReaders(codec, message, "kitchen.Scalars")
            }
            if !options.includeDefaultValues {
                let all = try codec.decode(Data(zeros.flatMap { $0 }), hints: hints)
                #expect(all.objectValue?.isEmpty == true, "\(all)")
                let none = try codec.decode(Data(nonZeros.flatMap { $0 }), hints: hints)
                #expect(none.objectValue?.count == 16, "\(none)")
            }
        }
    }

    /// Packed and unpacked occurrences of one repeated field side by side form one run.
    @Test func mixedPackedAndUnpackedRunsDecodeTheSameWay() throws {
        let codec = ProtobufCodec(schema: ProtobufTestSupport.kitchen)
        let layout = try codec.layout(for: ProtobufTestSupport.hints("kitchen.KitchenSink.Inner"))
        let values = try #require(layout.fields.first { $0.jsonName == "values" })
        let packed = UInt8(values.number << 3 | 2)
        let plain = UInt8(values.number << 3)
        let runs: [[UInt8]] = [
            [packed, 2, 1, 2, plain, 3, packed, 1, 4],
            [plain, 5, plain, 6, packed, 0],
            [packed, 3, 0x80, 1, 7, plain, 0x80],
        ]
        for run in runs {
            ProtobufDifferential.checkValue(codec, Data(run), ProtobufTestSupport.hints("kitchen.KitchenSink.Inner"))
            try Self.checkReaders(codec, run, "kitchen.KitchenSink.Inner")
        }
    }

    /// The writers' first buffer is the last message's size: big, small, empty and big messages in turn write
    /// the same bytes as protobuf-c.
    @Test func encodingAfterMessagesOfOtherSizesWritesTheSameBytes() throws {
        let codec = ProtobufCodec(schema: ProtobufTestSupport.demo)
        let hints = ProtobufTestSupport.hints("demo.UserListResponse")
        let big = try codec.decode(Self.fixture("users_5000.pb"), hints: hints)
        let small = try codec.decode(Self.fixture("users_10.pb"), hints: hints)
        for value in [big, small, Value.object([:]), big, small, small, ["code": 1] as Value] {
            let direct = try codec.encodeValue(value, hints: hints, direct: true)
            #expect(direct == (try codec.encodeValue(value, hints: hints, direct: false)))
        }
    }

    static func fixture(_ name: String) throws -> Data {
        try Data(contentsOf: Repository.root.appendingPathComponent("Fixtures/\(name)"))
    }
}
