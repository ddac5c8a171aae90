import CourierCodecs
import CourierCodecsTesting
import CourierTesting
import Foundation
import Testing

@Suite struct ProtobufRoundTripTests {
    static let types = ["kitchen.KitchenSink", "kitchen.Scalars", "kitchen.Node", "legacy.Legacy", "demo.UserListResponse"]

    @Test(arguments: types)
    func generatedValuesRoundTrip(type: String) throws {
        let schema = type.hasPrefix("demo") ? ProtobufTestSupport.demo : ProtobufTestSupport.kitchen
        let codec = ProtobufCodec(schema: schema)
        let hints = ProtobufTestSupport.hints(type)
        var generator = ProtobufValueGenerator(schema: schema, seed: 0xC0FFEE ^ UInt64(type.utf8.count))
        for i in 0..<1000 {
            let value = try generator.value(for: type)
            let bytes = try codec.encode(value, hints: hints)
            let decoded = try codec.decode(bytes, hints: hints)
            if decoded != value {
                Issue.record("round trip \(i) of \(type) differs:\n\(value)\n\(decoded)")
                return
            }
            // Encoding is deterministic: the decoded value encodes to the same bytes.
            #expect(try codec.encode(decoded, hints: hints) == bytes)
        }
    }

    /// Our bytes → `protoc --decode` (text) → `protoc --encode` → our decoder gives the value back: protoc reads
    /// what we write and we read what protoc writes.
    @Test func generatedValuesSurviveAProtocTextRoundTrip() throws {
        try #require(ProtobufTestSupport.hasProtoc)
        let schema = ProtobufTestSupport.kitchen
        let codec = ProtobufCodec(schema: schema)
        let hints = ProtobufTestSupport.hints("kitchen.KitchenSink")
        var generator = ProtobufValueGenerator(schema: schema, seed: 2024)
        for _ in 0..<25 {
            let value = try generator.value(for: "kitchen.KitchenSink")
            let text = try ProtobufTestSupport.protoc(
                ["--decode=kitchen.KitchenSink", "kitchen_sink.proto"], input: try codec.encode(value, hints: hints))
            let bytes = try ProtobufTestSupport.protoc(["--encode=kitchen.KitchenSink", "kitchen_sink.proto"], input: text)
            let decoded = try codec.decode(bytes, hints: hints)
            #expect(decoded == value)
            if decoded != value { break }
        }
    }
}
