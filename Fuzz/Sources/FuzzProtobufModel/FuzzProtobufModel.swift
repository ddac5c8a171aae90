// libFuzzer entry point for ProtobufCodec's generated-model path (`ProtobufModel`: members read from and written
// to the wire bytes by generated code), with a differential oracle: for any input,
// `codec.decode(T.self, from:hints:decoder:)` must give the same model as the Value pivot
// (`ValueDecoder().decode(T.self, from: codec.decode(bytes, hints:))`) or fail with the same `CourierError` code
// and coding path, and a decoded model must encode to the pivot's bytes (or error). The conformances below make
// the calls `@ProtobufModel` generates (CourierMacrosTests pins that expansion), written out with the member
// types spelled, so that the fuzz build, whose sanitizer flags apply to every product, needs no compiler plug-in.
// Seeds live in Fixtures/fuzz/FuzzProtobufModel/.
import CourierCodecs
import Foundation

private let repositoryRoot = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

private let schema: ProtobufSchema = {
    let url = repositoryRoot.appendingPathComponent("Schemas/demo.pb")
    do {
        return try ProtobufSchema(contentsOf: url)
    } catch {
        fatalError("FuzzProtobufModel: cannot load \(url.path): \(error)")
    }
}()

struct Address: Codable, Equatable, ProtobufModel {
    var city: String
    var street: String
    var zip: String

    static let protobufMembers: [ProtobufMember] = [
        ProtobufMember("city", (String).self), ProtobufMember("street", (String).self),
        ProtobufMember("zip", (String).self),
    ]

    init(protobuf reader: inout ProtobufModelReader) throws(ProtobufModelReader.Stop) {
        var m0: (String)? = nil
        var m1: (String)? = nil
        var m2: (String)? = nil
        while let slot = try reader.nextMember() {
            switch slot {
            case 0: try reader.read(&m0)
            case 1: try reader.read(&m1)
            case 2: try reader.read(&m2)
            default: try reader.skipMember()
            }
        }
        self.city = try reader.finish(m0, 0)
        self.street = try reader.finish(m1, 1)
        self.zip = try reader.finish(m2, 2)
    }

    func encodeProtobufMember(_ slot: Int, to writer: inout ProtobufModelWriter) throws(ProtobufModelWriter.Stop) {
        switch slot {
        case 0: try writer.write(self.city)
        case 1: try writer.write(self.street)
        case 2: try writer.write(self.zip)
        default: break
        }
    }
}

/// The user with widened integers (`Int` for `int32` and `int64`) and a member the schema lacks.
struct User: Codable, Equatable, ProtobufModel {
    var id: Int
    var name: String
    var age: Int
    var score: Double
    var active: Bool?
    var tags: [String]
    var address: Address?
    var nickname: String?

    static let protobufMembers: [ProtobufMember] = [
        ProtobufMember("id", (Int).self), ProtobufMember("name", (String).self), ProtobufMember("age", (Int).self),
        ProtobufMember("score", (Double).self), ProtobufMember("active", (Bool?).self),
        ProtobufMember("tags", ([String]).self), ProtobufMember("address", (Address?).self),
        ProtobufMember("nickname", (String?).self),
    ]

    init(protobuf reader: inout ProtobufModelReader) throws(ProtobufModelReader.Stop) {
        var m0: (Int)? = nil
        var m1: (String)? = nil
        var m2: (Int)? = nil
        var m3: (Double)? = nil
        var m4: (Bool?)? = nil
        var m5: ([String])? = nil
        var m6: (Address?)? = nil
        var m7: (String?)? = nil
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
        self.id = try reader.finish(m0, 0)
        self.name = try reader.finish(m1, 1)
        self.age = try reader.finish(m2, 2)
        self.score = try reader.finish(m3, 3)
        self.active = try reader.finish(m4, 4)
        self.tags = try reader.finish(m5, 5)
        self.address = try reader.finish(m6, 6)
        self.nickname = try reader.finish(m7, 7)
    }

    func encodeProtobufMember(_ slot: Int, to writer: inout ProtobufModelWriter) throws(ProtobufModelWriter.Stop) {
        switch slot {
        case 0: try writer.write(self.id)
        case 1: try writer.write(self.name)
        case 2: try writer.write(self.age)
        case 3: try writer.write(self.score)
        case 4: try writer.write(self.active)
        case 5: try writer.write(self.tags)
        case 6: try writer.write(self.address)
        case 7: try writer.write(self.nickname)
        default: break
        }
    }
}

struct UserPage: Codable, Equatable, ProtobufModel {
    var page: Int32
    var total: Int64
    var users: [User]

    static let protobufMembers: [ProtobufMember] = [
        ProtobufMember("page", (Int32).self), ProtobufMember("total", (Int64).self),
        ProtobufMember("users", ([User]).self),
    ]

    init(protobuf reader: inout ProtobufModelReader) throws(ProtobufModelReader.Stop) {
        var m0: (Int32)? = nil
        var m1: (Int64)? = nil
        var m2: ([User])? = nil
        while let slot = try reader.nextMember() {
            switch slot {
            case 0: try reader.read(&m0)
            case 1: try reader.read(&m1)
            case 2: try reader.read(&m2)
            default: try reader.skipMember()
            }
        }
        self.page = try reader.finish(m0, 0)
        self.total = try reader.finish(m1, 1)
        self.users = try reader.finish(m2, 2)
    }

    func encodeProtobufMember(_ slot: Int, to writer: inout ProtobufModelWriter) throws(ProtobufModelWriter.Stop) {
        switch slot {
        case 0: try writer.write(self.page)
        case 1: try writer.write(self.total)
        case 2: try writer.write(self.users)
        default: break
        }
    }
}

struct UserList: Codable, Equatable, ProtobufModel {
    var code: Int32
    var message: String
    var data: UserPage?

    static let protobufMembers: [ProtobufMember] = [
        ProtobufMember("code", (Int32).self), ProtobufMember("message", (String).self),
        ProtobufMember("data", (UserPage?).self),
    ]

    init(protobuf reader: inout ProtobufModelReader) throws(ProtobufModelReader.Stop) {
        var m0: (Int32)? = nil
        var m1: (String)? = nil
        var m2: (UserPage?)? = nil
        while let slot = try reader.nextMember() {
            switch slot {
            case 0: try reader.read(&m0)
            case 1: try reader.read(&m1)
            case 2: try reader.read(&m2)
            default: try reader.skipMember()
            }
        }
        self.code = try reader.finish(m0, 0)
        self.message = try reader.finish(m1, 1)
        self.data = try reader.finish(m2, 2)
    }

    func encodeProtobufMember(_ slot: Int, to writer: inout ProtobufModelWriter) throws(ProtobufModelWriter.Stop) {
        switch slot {
        case 0: try writer.write(self.code)
        case 1: try writer.write(self.message)
        case 2: try writer.write(self.data)
        default: break
        }
    }
}

private let codecs: [ProtobufCodec] = {
    var discard = ProtobufCodec.Options()
    discard.unknownFields = .discard
    var strict = ProtobufCodec.Options()
    strict.unknownFields = .reject
    strict.maxDepth = 3
    var ignoring = ProtobufCodec.Options()
    ignoring.ignoreUnknownMembers = true
    return [ProtobufCodec(schema: schema), ProtobufCodec(schema: schema, options: discard),
            ProtobufCodec(schema: schema, options: strict), ProtobufCodec(schema: schema, options: ignoring)]
}()

private let hints: CodingHints = {
    var hints = CodingHints()
    hints.messageType = "demo.UserListResponse"
    return hints
}()

/// Tight limits: the generated path must count what the pivot counts.
private let tightHints: CodingHints = {
    var hints = CodingHints()
    hints.messageType = "demo.UserListResponse"
    var limits = DecodingLimits()
    limits.maximumTotalValues = 60
    limits.maximumContainerCount = 12
    limits.maximumStringLength = 12
    hints.limits = limits
    return hints
}()

private func failure(_ error: any Error) -> String {
    guard let e = error as? CourierError else { fatalError("FuzzProtobufModel: not a CourierError: \(error)") }
    return "\(e.code) at \(e.context.codingPath)"
}

private func check(_ codec: ProtobufCodec, _ input: Data, _ hints: CodingHints) {
    let decoder = ValueDecoder()
    let direct = Result { try codec.decode(UserList.self, from: input, hints: hints, decoder: decoder) }
    let pivot = Result { try decoder.decode(UserList.self, from: codec.decode(input, hints: hints)) }
    switch (direct, pivot) {
    case (.success(let a), .success(let b)):
        // NaN scores equal nothing: compare the models' bytes instead.
        if a != b, (try? codec.encode(model: a, hints: hints, encoder: ValueEncoder()))
            != (try? codec.encode(ValueEncoder().encode(b), hints: hints))
        {
            fatalError("FuzzProtobufModel: models differ: direct \(a) vs pivot \(b)")
        }
        checkEncode(a, codec, hints)
    case (.failure(let a), .failure(let b)):
        if failure(a) != failure(b) { fatalError("FuzzProtobufModel: errors differ: \(failure(a)) vs \(failure(b))") }
    default:
        fatalError("FuzzProtobufModel: direct \(direct) vs pivot \(pivot)")
    }
}

private func checkEncode(_ model: UserList, _ codec: ProtobufCodec, _ hints: CodingHints) {
    let direct = Result { try codec.encode(model: model, hints: hints, encoder: ValueEncoder()) }
    let pivot = Result { try codec.encode(ValueEncoder().encode(model), hints: hints) }
    switch (direct, pivot) {
    case (.success(let a), .success(let b)):
        if a != b { fatalError("FuzzProtobufModel: encodes differ: direct \(Array(a)) vs \(Array(b))") }
    case (.failure(let a), .failure(let b)):
        if failure(a) != failure(b) { fatalError("FuzzProtobufModel: encode errors differ: \(failure(a)) vs \(failure(b))") }
    default:
        fatalError("FuzzProtobufModel: encode direct \(direct) vs pivot \(pivot)")
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = Data(bytes: data, count: size)
    for codec in codecs {
        check(codec, input, hints)
    }
    check(codecs[0], input, tightHints)
    return 0
}
