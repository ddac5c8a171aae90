import Benchmark
import BenchmarkSupport
import Courier
import CourierCodecs
import CourierMacros
import Foundation
import SwiftProtobuf

/// Protocol Buffers: Courier's ProtobufCodec (protobuf-c with run-time descriptors; to and from `Value`, and the
/// typed codec API) and the schema-less ProtobufRawDecoder against swift-protobuf's generated code for the same
/// schema (Schemas/bench_userlist.proto, bench_userlist.pb.swift), on the user-list pages.
///
/// The typed rows read and write this model, a `Codable` struct with `@ProtobufModel` (generated member-by-member
/// code, as swift-protobuf's side has); `PlainUserListResponse` is the same page without it, through `Codable`.
/// The floors beside them parse nothing: `Codable`'s own cost (CodableFloor.swift) and the cost of the `Value` trees
/// alone (ValueFloor.swift).
@ProtobufModel
struct UserListResponse: Codable, Equatable {
    @ProtobufModel
    struct Address: Codable, Equatable {
        var city: String
        var street: String
        var zip: String
    }

    @ProtobufModel
    struct User: Codable, Equatable {
        var id: Int64
        var name: String
        var email: String
        var age: Int32
        var score: Double
        var active: Bool
        var tags: [String]
        var address: Address?
    }

    @ProtobufModel
    struct UserPage: Codable, Equatable {
        var page: Int32
        var total: Int32
        var users: [User]
    }

    var code: Int32
    var message: String
    var data: UserPage?

    /// The same page read from swift-protobuf's generated message, to check that both sides agree.
    init(_ message: Bench_UserListResponse) {
        code = message.code
        self.message = message.message
        data = !message.hasData ? nil : UserPage(
            page: message.data.page, total: message.data.total,
            users: message.data.users.map { user in
                User(
                    id: user.id, name: user.name, email: user.email, age: user.age, score: user.score,
                    active: user.active, tags: user.tags,
                    address: !user.hasAddress ? nil : Address(
                        city: user.address.city, street: user.address.street, zip: user.address.zip))
            })
    }
}

/// The page as plain `Codable` structs (no `@ProtobufModel`): what the codec reads through `Codable`.
struct PlainUserListResponse: Codable, Equatable {
    struct Address: Codable, Equatable {
        var city: String
        var street: String
        var zip: String
    }

    struct User: Codable, Equatable {
        var id: Int64
        var name: String
        var email: String
        var age: Int32
        var score: Double
        var active: Bool
        var tags: [String]
        var address: Address?
    }

    struct UserPage: Codable, Equatable {
        var page: Int32
        var total: Int32
        var users: [User]
    }

    var code: Int32
    var message: String
    var data: UserPage?

    /// The same page, converted through its `Value`.
    init(_ model: UserListResponse) {
        self = try! ValueDecoder().decode(Self.self, from: ValueEncoder().encode(model))
    }
}

let benchmarks: @Sendable () -> Void = {
    let schema = try! ProtobufSchema(contentsOf: BenchmarkSupport.root.appendingPathComponent("Schemas/demo.pb"))
    let codec = ProtobufCodec(schema: schema)
    var hints = CodingHints()
    hints.messageType = "demo.UserListResponse"

    for (file, size) in [("users_5000.pb", "5000"), ("users_10.pb", "10")] {
        let data = BenchmarkSupport.fixture(file)

        // The answers agree before anything is timed.
        let message = try! Bench_UserListResponse(serializedBytes: data)
        let peerModel = UserListResponse(message)
        let ourModel = try! codec.decode(UserListResponse.self, from: data, hints: hints, decoder: ValueDecoder())
        BenchmarkSupport.check(ourModel == peerModel, "\(file): typed decode vs swift-protobuf")
        let plainModel = PlainUserListResponse(peerModel)
        BenchmarkSupport.check(
            try! codec.decode(PlainUserListResponse.self, from: data, hints: hints, decoder: ValueDecoder()) == plainModel,
            "\(file): Codable decode vs swift-protobuf")
        BenchmarkSupport.check(
            (try! codec.encode(model: plainModel, hints: hints, encoder: ValueEncoder())) == data,
            "\(file): Codable encode vs swift-protobuf")
        let value = try! codec.decode(data, hints: hints)
        BenchmarkSupport.check(
            try! ValueDecoder().decode(UserListResponse.self, from: value) == peerModel,
            "\(file): decode → Value vs swift-protobuf")
        let peerEncoded: Data = try! message.serializedData()
        BenchmarkSupport.check(
            peerEncoded == data && (try! codec.encode(value, hints: hints)) == data,
            "\(file): encode of a Value vs swift-protobuf")
        BenchmarkSupport.check(
            (try! codec.encode(model: peerModel, hints: hints, encoder: ValueEncoder())) == data,
            "\(file): typed encode vs swift-protobuf")
        let rawValue = try? ProtobufRawDecoder().decode(data)
        BenchmarkSupport.check(rawValue != nil, "\(file): ProtobufRawDecoder rejects the page")
        let rawTree = rawValue!

        let tape = FloorTape(peerModel)
        BenchmarkSupport.check(try! tape.decode(UserListResponse.self) == peerModel, "\(file): the Codable floor's tape")
        let valueFloor = ValueFloor(value)
        BenchmarkSupport.check(valueFloor.build() == value, "\(file): the Value floor's program")
        let rawFloor = ValueFloor(rawTree)
        BenchmarkSupport.check(rawFloor.build() == rawTree, "\(file): the raw Value floor's program")

        let timed = BenchmarkSupport.timed()

        Benchmark("protobuf.decode \(size) swift-protobuf", configuration: timed) { benchmark in
            for _ in benchmark.scaledIterations { blackHole(try! Bench_UserListResponse(serializedBytes: data)) }
        }
        Benchmark("protobuf.decode.model \(size) Courier", configuration: timed) { benchmark in
            let decoder = ValueDecoder()
            for _ in benchmark.scaledIterations {
                blackHole(try! codec.decode(UserListResponse.self, from: data, hints: hints, decoder: decoder))
            }
        }
        Benchmark("protobuf.decode.codable \(size) Courier", configuration: timed) { benchmark in
            let decoder = ValueDecoder()
            for _ in benchmark.scaledIterations {
                blackHole(try! codec.decode(PlainUserListResponse.self, from: data, hints: hints, decoder: decoder))
            }
        }
        // Codable's own cost, with no parsing at all (CodableFloor.swift): no `Decodable` decoder can beat it.
        Benchmark("protobuf.decode.floor \(size) Codable", configuration: timed) { benchmark in
            for _ in benchmark.scaledIterations { blackHole(try! tape.decode(UserListResponse.self)) }
        }
        Benchmark("protobuf.decode.value \(size) Courier", configuration: timed) { benchmark in
            for _ in benchmark.scaledIterations { blackHole(try! codec.decode(data, hints: hints)) }
        }
        Benchmark("protobuf.decode.raw \(size) Courier", configuration: timed) { benchmark in
            let raw = ProtobufRawDecoder()
            for _ in benchmark.scaledIterations { blackHole(try! raw.decode(data)) }
        }
        // The trees' own cost, with no parsing at all (ValueFloor.swift): a decoder to `Value` can come near it only.
        Benchmark("protobuf.decode.valuefloor \(size) Value", configuration: timed) { benchmark in
            for _ in benchmark.scaledIterations { blackHole(valueFloor.build()) }
        }
        Benchmark("protobuf.decode.rawfloor \(size) Value", configuration: timed) { benchmark in
            for _ in benchmark.scaledIterations { blackHole(rawFloor.build()) }
        }

        Benchmark("protobuf.encode \(size) swift-protobuf", configuration: timed) { benchmark in
            for _ in benchmark.scaledIterations {
                let encoded: Data = try! message.serializedData()
                blackHole(encoded)
            }
        }
        Benchmark("protobuf.encode.model \(size) Courier", configuration: timed) { benchmark in
            let encoder = ValueEncoder()
            for _ in benchmark.scaledIterations {
                blackHole(try! codec.encode(model: peerModel, hints: hints, encoder: encoder))
            }
        }
        Benchmark("protobuf.encode.codable \(size) Courier", configuration: timed) { benchmark in
            let encoder = ValueEncoder()
            for _ in benchmark.scaledIterations {
                blackHole(try! codec.encode(model: plainModel, hints: hints, encoder: encoder))
            }
        }
        // Codable's own cost, formatting nothing (CodableFloor.swift): no `Encodable` encoder can beat it.
        let sink = FloorSink()
        Benchmark("protobuf.encode.floor \(size) Codable", configuration: timed) { benchmark in
            for _ in benchmark.scaledIterations { blackHole(try! sink.encode(peerModel)) }
        }
        Benchmark("protobuf.encode.value \(size) Courier", configuration: timed) { benchmark in
            for _ in benchmark.scaledIterations { blackHole(try! codec.encode(value, hints: hints)) }
        }
    }
}
