@testable import CourierCodecs
import CourierCodecsTesting
import CourierTestSupport
import CourierTesting
import Foundation
import Testing

// `ProtobufModel` conformances written by hand, as `@ProtobufModel` writes them (CourierMacrosTests covers the
// macro and more models): the direct path against the `Codable` pivot.

struct HandAddress: Codable, Equatable, ProtobufModel {
    var city: String
    var street: String
    var zip: String

    static let protobufMembers = [
        ProtobufMember("city", String.self), ProtobufMember("street", String.self), ProtobufMember("zip", String.self),
    ]

    init(city: String, street: String, zip: String) {
        self.city = city
        self.street = street
        self.zip = zip
    }

    init(protobuf reader: inout ProtobufModelReader) throws(ProtobufModelReader.Stop) {
        var m0: String?
        var m1: String?
        var m2: String?
        while let slot = try reader.nextMember() {
            switch slot {
            case 0: try reader.read(&m0)
            case 1: try reader.read(&m1)
            case 2: try reader.read(&m2)
            default: try reader.skipMember()
            }
        }
        city = try reader.finish(m0, 0)
        street = try reader.finish(m1, 1)
        zip = try reader.finish(m2, 2)
    }

    func encodeProtobufMember(_ slot: Int, to writer: inout ProtobufModelWriter) throws(ProtobufModelWriter.Stop) {
        switch slot {
        case 0: try writer.write(city)
        case 1: try writer.write(street)
        case 2: try writer.write(zip)
        default: break
        }
    }
}

struct HandUser: Codable, Equatable, ProtobufModel {
    var id: Int64
    var name: String
    var age: Int32
    var score: Double
    var active: Bool
    var tags: [String]
    var address: HandAddress?
    /// Not in the schema: absent, so nil.
    var nickname: String?

    static let protobufMembers = [
        ProtobufMember("id", Int64.self), ProtobufMember("name", String.self), ProtobufMember("age", Int32.self),
        ProtobufMember("score", Double.self), ProtobufMember("active", Bool.self), ProtobufMember("tags", [String].self),
        ProtobufMember("address", HandAddress?.self), ProtobufMember("nickname", String?.self),
    ]

    init(protobuf reader: inout ProtobufModelReader) throws(ProtobufModelReader.Stop) {
        var m0: Int64?
        var m1: String?
        var m2: Int32?
        var m3: Double?
        var m4: Bool?
        var m5: [String]?
        var m6: HandAddress??
        var m7: String??
        while let slot = try reader.nextMember() {
            switch slot {
            case 0: try reader.read(&m0)
            case 1: try reader.read(&m1)
            case 2: try reader.read(&m2)
            case 3: try reader.read(&m3)
            case 4: try reader.read(&m4)
            case 5: try reader.read(&m5)
            case 6: try reader.read(&m6)
            case 7: try reader.read(&m7)
            default: try reader.skipMember()
            }
        }
        id = try reader.finish(m0, 0)
        name = try reader.finish(m1, 1)
        age = try reader.finish(m2, 2)
        score = try reader.finish(m3, 3)
        active = try reader.finish(m4, 4)
        tags = try reader.finish(m5, 5)
        address = try reader.finish(m6, 6)
        nickname = try reader.finish(m7, 7)
    }

    func encodeProtobufMember(_ slot: Int, to writer: inout ProtobufModelWriter) throws(ProtobufModelWriter.Stop) {
        switch slot {
        case 0: try writer.write(id)
        case 1: try writer.write(name)
        case 2: try writer.write(age)
        case 3: try writer.write(score)
        case 4: try writer.write(active)
        case 5: try writer.write(tags)
        case 6: try writer.write(address)
        case 7: try writer.write(nickname)
        default: break
        }
    }
}

struct HandPage: Codable, Equatable, ProtobufModel {
    var page: Int
    var total: Int32
    var users: [HandUser]

    static let protobufMembers = [
        ProtobufMember("page", Int.self), ProtobufMember("total", Int32.self), ProtobufMember("users", [HandUser].self),
    ]

    init(protobuf reader: inout ProtobufModelReader) throws(ProtobufModelReader.Stop) {
        var m0: Int?
        var m1: Int32?
        var m2: [HandUser]?
        while let slot = try reader.nextMember() {
            switch slot {
            case 0: try reader.read(&m0)
            case 1: try reader.read(&m1)
            case 2: try reader.read(&m2)
            default: try reader.skipMember()
            }
        }
        page = try reader.finish(m0, 0)
        total = try reader.finish(m1, 1)
        users = try reader.finish(m2, 2)
    }

    func encodeProtobufMember(_ slot: Int, to writer: inout ProtobufModelWriter) throws(ProtobufModelWriter.Stop) {
        switch slot {
        case 0: try writer.write(page)
        case 1: try writer.write(total)
        case 2: try writer.write(users)
        default: break
        }
    }
}

struct HandList: Codable, Equatable, ProtobufModel {
    var code: Int32
    var message: String
    var data: HandPage?

    static let protobufMembers = [
        ProtobufMember("code", Int32.self), ProtobufMember("message", String.self),
        ProtobufMember("data", HandPage?.self),
    ]

    init(protobuf reader: inout ProtobufModelReader) throws(ProtobufModelReader.Stop) {
        var m0: Int32?
        var m1: String?
        var m2: HandPage??
        while let slot = try reader.nextMember() {
            switch slot {
            case 0: try reader.read(&m0)
            case 1: try reader.read(&m1)
            case 2: try reader.read(&m2)
            default: try reader.skipMember()
            }
        }
        code = try reader.finish(m0, 0)
        message = try reader.finish(m1, 1)
        data = try reader.finish(m2, 2)
    }

    func encodeProtobufMember(_ slot: Int, to writer: inout ProtobufModelWriter) throws(ProtobufModelWriter.Stop) {
        switch slot {
        case 0: try writer.write(code)
        case 1: try writer.write(message)
        case 2: try writer.write(data)
        default: break
        }
    }
}

/// A member of a type without a direct form: the model always goes through `Codable`.
struct HandDated: Codable, Equatable, ProtobufModel {
    var code: Int32
    var message: Data

    static let protobufMembers = [ProtobufMember("code", Int32.self), ProtobufMember("message", Data.self)]

    init(protobuf reader: inout ProtobufModelReader) throws(ProtobufModelReader.Stop) {
        var m0: Int32?
        var m1: Data?
        while let slot = try reader.nextMember() {
            switch slot {
            case 0: try reader.read(&m0)
            case 1: try reader.read(&m1)
            default: try reader.skipMember()
            }
        }
        code = try reader.finish(m0, 0)
        message = try reader.finish(m1, 1)
    }

    func encodeProtobufMember(_ slot: Int, to writer: inout ProtobufModelWriter) throws(ProtobufModelWriter.Stop) {
        switch slot {
        case 0: try writer.write(code)
        case 1: try writer.write(message)
        default: break
        }
    }
}

/// The differential checks of the direct model path.
enum ProtobufModelDifferential {
    /// Whether two models are the same, NaNs included (their `Value`s compared, doubles by their bits).
    static func same<M: Encodable & Equatable>(_ a: M, _ b: M) -> Bool {
        if a == b { return true }
        guard let x = try? ValueEncoder().encode(a), let y = try? ValueEncoder().encode(b) else { return false }
        return ProtobufDifferential.identical(x, y)
    }

    /// Decodes `bytes` by the direct path alone (`nil` when it leaves them to `Codable`).
    static func direct<M: ProtobufModel>(_ type: M.Type, _ codec: ProtobufCodec, _ bytes: Data, _ hints: CodingHints)
        -> M?
    {
        let layout = try! codec.layout(for: hints)
        let plan = codec.schema.runtime.modelPlans.plan(layout, M.self, runtime: codec.schema.runtime)
        var options = codec.options
        if let limits = hints.limits { options.limits = limits }
        guard options.includeDefaultValues, bytes.count <= options.limits.maximumInputSize else { return nil }
        return bytes.withUnsafeBytes { raw in
            ProtobufModelReader.decode(
                M.self, raw.bindMemory(to: UInt8.self), plan: plan, runtime: codec.schema.runtime, options: options)
        }
    }

    /// Encodes `model` by the direct path alone.
    static func directBytes<M: ProtobufModel>(_ model: M, _ codec: ProtobufCodec, _ hints: CodingHints) -> Data? {
        let layout = try! codec.layout(for: hints)
        let plan = codec.schema.runtime.modelPlans.plan(layout, M.self, runtime: codec.schema.runtime)
        return ProtobufModelWriter.encode(model, plan: plan, options: codec.options)
    }

    /// The model path against `ValueDecoder` over protobuf-c's `Value`: the same model or the same error; and
    /// when the direct path answers, the same model. Returns whether it answered.
    @discardableResult
    static func check<M: ProtobufModel & Equatable>(
        _ type: M.Type, _ codec: ProtobufCodec, _ bytes: Data, _ hints: CodingHints
    ) -> Bool {
        let decoder = ValueDecoder()
        let pivot = Result { try decoder.decode(M.self, from: codec.decodeValue(bytes, hints: hints, direct: false)) }
        let viaCodec = Result { try codec.decode(M.self, from: bytes, hints: hints, decoder: decoder) }
        let fast = direct(M.self, codec, bytes, hints)
        switch (viaCodec, pivot) {
        case (.success(let a), .success(let b)):
            #expect(same(a, b))
        case (.failure(let a), .failure(let b)):
            #expect(ProtobufDifferential.failure(a) == ProtobufDifferential.failure(b))
        default:
            Issue.record("\(M.self): codec \(viaCodec) vs pivot \(pivot) for \(Array(bytes.prefix(48)))")
        }
        if let fast {
            guard case .success(let b) = pivot else {
                Issue.record("\(M.self): the direct path answered \(fast) where the pivot fails: \(pivot)")
                return true
            }
            #expect(same(fast, b))
        }
        return fast != nil
    }

    /// The direct write against the `Value` writer over `ValueEncoder`'s `Value`: the same bytes or the same
    /// error. Returns whether the direct write answered.
    @discardableResult
    static func checkEncode<M: ProtobufModel>(_ model: M, _ codec: ProtobufCodec, _ hints: CodingHints) -> Bool {
        let encoder = ValueEncoder()
        let pivot = Result { try codec.encodeValue(encoder.encode(model), hints: hints, direct: false) }
        let viaCodec = Result { try codec.encode(model: model, hints: hints, encoder: encoder) }
        let fast = directBytes(model, codec, hints)
        switch (viaCodec, pivot) {
        case (.success(let a), .success(let b)):
            #expect(a == b)
        case (.failure(let a), .failure(let b)):
            #expect(ProtobufDifferential.failure(a) == ProtobufDifferential.failure(b))
        default:
            Issue.record("\(M.self): codec \(viaCodec) vs pivot \(pivot)")
        }
        if let fast {
            #expect((try? pivot.get()) == fast, "\(M.self): direct bytes differ from the pivot's")
        }
        return fast != nil
    }
}

@Suite struct ProtobufModelTests {
    let demo = ProtobufCodec(schema: ProtobufTestSupport.demo)
    let listHints = ProtobufTestSupport.hints("demo.UserListResponse")

    @Test(arguments: ["users_10.pb", "users_5000.pb"])
    func fixturesReadAndWriteDirectlyAsThePivotDoes(name: String) throws {
        let bytes = try ProtobufTypedDecodingTests.fixture(name)
        #expect(ProtobufModelDifferential.check(HandList.self, demo, bytes, listHints))
        let model = try demo.decode(HandList.self, from: bytes, hints: listHints, decoder: ValueDecoder())
        #expect(model.data?.users.isEmpty == false)
        #expect(model.data?.users.allSatisfy { $0.nickname == nil } == true)
        #expect(ProtobufModelDifferential.checkEncode(model, demo, listHints))
    }

    @Test func generatedMessagesReadAndWriteAsThePivotDoes() throws {
        var answered = 0
        for seed in 0..<200 {
            var generator = ProtobufValueGenerator(schema: ProtobufTestSupport.demo, seed: UInt64(seed))
            let bytes = try demo.encode(generator.value(for: "demo.UserListResponse"), hints: listHints)
            if ProtobufModelDifferential.check(HandList.self, demo, bytes, listHints) { answered += 1 }
            if let model = try? demo.decode(HandList.self, from: bytes, hints: listHints, decoder: ValueDecoder()) {
                ProtobufModelDifferential.checkEncode(model, demo, listHints)
            }
        }
        // Most generated pages are plain: the direct path must answer them, not leave them all to the pivot.
        #expect(answered > 100)
    }

    @Test func everyTruncationAndByteFlipAgreesWithThePivot() throws {
        let bytes = try ProtobufTypedDecodingTests.fixture("users_10.pb")
        for cut in stride(from: 0, through: bytes.count, by: 7) {
            ProtobufModelDifferential.check(HandList.self, demo, bytes.prefix(cut), listHints)
        }
        var random = SeededRandom(seed: 9)
        for _ in 0..<400 {
            var mutated = bytes
            for _ in 0..<Int.random(in: 1...4, using: &random) {
                let at = Int.random(in: 0..<mutated.count, using: &random)
                mutated[at] = UInt8.random(in: 0...255, using: &random)
            }
            ProtobufModelDifferential.check(HandList.self, demo, mutated, listHints)
        }
    }

    @Test func aMemberWithoutADirectFormGoesThroughCodable() throws {
        let bytes = try ProtobufTypedDecodingTests.fixture("users_10.pb")
        #expect(ProtobufModelDifferential.direct(HandDated.self, demo, bytes, listHints) == nil)
        // The `Codable` path answers: `message` is a string, which `Data` decodes as base64 (and fails here).
        ProtobufModelDifferential.check(HandDated.self, demo, bytes, listHints)
    }
}
