import CourierCodecs
import Foundation
import SwiftProtobuf

/// Protocol Buffers: Courier's ProtobufCodec (protobuf-c with run-time descriptors, to and from Value) against
/// swift-protobuf's generated code for the same schema (Schemas/bench_userlist.proto), on the user-list pages.
enum ProtobufBenchmarks {
    struct Address: Codable { var city: String; var street: String; var zip: String }
    struct User: Codable {
        var id: Int64
        var name: String
        var email: String
        var age: Int32
        var score: Double
        var active: Bool
        var tags: [String]
        var address: Address?
    }
    struct UserPage: Codable { var page: Int32; var total: Int32; var users: [User] }
    struct UserListResponse: Codable { var code: Int32; var message: String; var data: UserPage? }

    static func run(_ h: inout Harness) throws {
        let root = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let schema = try ProtobufSchema(contentsOf: root.appendingPathComponent("Schemas/demo.pb"))
        let codec = ProtobufCodec(schema: schema)
        var hints = CodingHints()
        hints.messageType = "demo.UserListResponse"

        for name in ["users_10.pb", "users_5000.pb"] {
            let data = fixture(name)
            let bytes = data.count

            // Decode to Value vs swift-protobuf's generated struct.
            let ours = try h.measure("courier protobuf decode → Value \(name)", bytes: bytes) {
                _ = try codec.decode(data, hints: hints)
            }
            let peer = try h.measure("swift-protobuf decode \(name)", bytes: bytes) {
                _ = try Bench_UserListResponse(serializedBytes: data)
            }
            h.compare(ours, peer, target: 1.5)

            // Decode to a Codable model (protobuf → Value → ValueDecoder).
            let typed = try h.measure("courier protobuf decode → Codable \(name)", bytes: bytes) {
                _ = try ValueDecoder().decode(UserListResponse.self, from: try codec.decode(data, hints: hints))
            }
            h.compare(typed, peer, target: 1.0)

            // Encode a Value vs serializing the generated struct.
            let value = try codec.decode(data, hints: hints)
            let message = try Bench_UserListResponse(serializedBytes: data)
            let encoded = try codec.encode(value, hints: hints)
            let peerEncoded: Data = try message.serializedData()
            precondition(encoded == data && peerEncoded == data, "encoders disagree with the fixture")
            let oursEncode = try h.measure("courier protobuf encode Value \(name)", bytes: encoded.count) {
                _ = try codec.encode(value, hints: hints)
            }
            let peerEncode = try h.measure("swift-protobuf serializedData \(name)", bytes: peerEncoded.count) {
                let _: Data = try message.serializedData()
            }
            h.compare(oursEncode, peerEncode, target: 1.0)

            // Encode a Codable model (ValueEncoder → protobuf) vs the generated struct.
            let model = try ValueDecoder().decode(UserListResponse.self, from: value)
            let typedEncoded = try codec.encode(try ValueEncoder().encode(model), hints: hints)
            precondition(typedEncoded == data, "the typed encoder disagrees with the fixture")
            let typedEncode = try h.measure("courier protobuf encode Codable \(name)", bytes: typedEncoded.count) {
                _ = try codec.encode(try ValueEncoder().encode(model), hints: hints)
            }
            h.compare(typedEncode, peerEncode, target: 1.0)

            // The schema-less decoder (field numbers and wire values), against the same peer.
            let raw = try h.measure("courier ProtobufRawDecoder \(name)", bytes: bytes) {
                _ = try ProtobufRawDecoder().decode(data)
            }
            h.compare(raw, peer)
        }
    }
}
