// libFuzzer entry point for ProtobufCodec's typed decode path (models read straight from the wire bytes),
// with a differential oracle: for any input, `codec.decode(T.self, from:hints:decoder:)` must give the same
// model as the Value pivot (`ValueDecoder().decode(T.self, from: codec.decode(bytes, hints:))`), or fail with
// the same `CourierError` code and coding path. Several codec options and model shapes (narrow integers, a
// `Value` member, optionals, a hand-written `init(from:)`) are tried on every input.
// Encoding is checked too: a decoded model written by the direct typed encode gives the same bytes (or error
// code and path) as its `Value` written by the codec, and re-encoding a decoded `Value` is stable.
// Seeds live in Fixtures/fuzz/FuzzProtobufTyped/.
import CourierCodecs
import Foundation

private let repositoryRoot = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

private let schema: ProtobufSchema = {
    let url = repositoryRoot.appendingPathComponent("Schemas/demo.pb")
    do {
        return try ProtobufSchema(contentsOf: url)
    } catch {
        fatalError("FuzzProtobufTyped: cannot load \(url.path): \(error)")
    }
}()

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
    var page: Int
    var total: Int
    var users: [User]
}

struct UserList: Codable, Equatable {
    var code: Int
    var message: String
    var data: UserPage?
}

struct NarrowUser: Codable, Equatable {
    var id: Int8
    var age: UInt8?
    var score: Float
    var address: Value?
}

struct NarrowList: Codable, Equatable {
    var code: UInt16
    var data: NarrowPage?
}

struct NarrowPage: Codable, Equatable {
    var users: [NarrowUser]
}

/// Records what a hand-written decoder sees, including errors it swallows.
struct Probe: Decodable, Equatable {
    var log: [String] = []

    enum Keys: String, CodingKey { case code, message, data, users, name, age, missing }

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Keys.self)
        log.append("\(c.allKeys.map(\.stringValue)) \(c.contains(.data))")
        log.append("\((try? c.decode(String.self, forKey: .code)) ?? "-") \((try? c.decodeIfPresent(Int8.self, forKey: .code)) ?? 0)")
        guard let data = try? c.nestedContainer(keyedBy: Keys.self, forKey: .data) else { return }
        var users = try data.nestedUnkeyedContainer(forKey: .users)
        while !users.isAtEnd {
            let user = try users.nestedContainer(keyedBy: Keys.self)
            log.append("\(user.codingPath.map(\.stringValue)) \((try? user.decode(UInt8.self, forKey: .age)) ?? 0)")
        }
    }
}

private let codecs: [ProtobufCodec] = {
    var noDefaults = ProtobufCodec.Options()
    noDefaults.includeDefaultValues = false
    noDefaults.unknownFields = .discard
    var numbers = ProtobufCodec.Options()
    numbers.enumsAsNumbers = true
    numbers.unknownFields = .reject
    numbers.maxDepth = 8
    return [ProtobufCodec(schema: schema), ProtobufCodec(schema: schema, options: noDefaults),
            ProtobufCodec(schema: schema, options: numbers)]
}()

private let hints: CodingHints = {
    var hints = CodingHints()
    hints.messageType = "demo.UserListResponse"
    return hints
}()

private func failure(_ error: any Error) -> String {
    guard let e = error as? CourierError else { fatalError("FuzzProtobufTyped: not a CourierError: \(error)") }
    return "\(e.code) at \(e.context.codingPath)"
}

private func check<T: Decodable & Equatable>(_ type: T.Type, _ codec: ProtobufCodec, _ input: Data, _ decoder: ValueDecoder) {
    let direct = Result { try codec.decode(T.self, from: input, hints: hints, decoder: decoder) }
    let pivot = Result { try decoder.decode(T.self, from: codec.decode(input, hints: hints)) }
    switch (direct, pivot) {
    case (.success(let a), .success(let b)):
        if a != b { fatalError("FuzzProtobufTyped: \(T.self) differs: direct \(a) vs pivot \(b)") }
    case (.failure(let a), .failure(let b)):
        if failure(a) != failure(b) { fatalError("FuzzProtobufTyped: \(T.self) errors differ: \(failure(a)) vs \(failure(b))") }
    default:
        fatalError("FuzzProtobufTyped: \(T.self) direct \(direct) vs pivot \(pivot)")
    }
}

private func checkEncode<T: Codable & Equatable>(_ type: T.Type, _ codec: ProtobufCodec, _ input: Data) {
    guard let model = try? codec.decode(T.self, from: input, hints: hints, decoder: ValueDecoder()) else { return }
    let direct = Result { try codec.encode(model: model, hints: hints, encoder: ValueEncoder()) }
    let pivot = Result { try codec.encode(ValueEncoder().encode(model), hints: hints) }
    switch (direct, pivot) {
    case (.success(let a), .success(let b)):
        if a != b { fatalError("FuzzProtobufTyped: \(T.self) encodes differ: direct \(Array(a)) vs \(Array(b))") }
    case (.failure(let a), .failure(let b)):
        if failure(a) != failure(b) { fatalError("FuzzProtobufTyped: \(T.self) encode errors differ: \(failure(a)) vs \(failure(b))") }
    default:
        fatalError("FuzzProtobufTyped: \(T.self) encode direct \(direct) vs pivot \(pivot)")
    }
    guard let value = try? codec.decode(input, hints: hints), let once = try? codec.encode(value, hints: hints),
        let again = try? codec.decode(once, hints: hints)
    else { return }
    if (try? codec.encode(again, hints: hints)) != once { fatalError("FuzzProtobufTyped: re-encoding is not stable") }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = Data(bytes: data, count: size)
    var snake = ValueDecoder()
    snake.keyStrategy = .convertFromSnakeCase
    snake.lenientNumbers = true
    for codec in codecs {
        check(UserList.self, codec, input, ValueDecoder())
        check(NarrowList.self, codec, input, snake)
        check(Probe.self, codec, input, ValueDecoder())
        checkEncode(UserList.self, codec, input)
        checkEncode(NarrowList.self, codec, input)
    }
    return 0
}
