@testable import CourierCodecs
import CourierCodecsTesting
import CourierTestSupport
import CourierTesting
import Foundation
import Testing

// Models of the test schemas, decoded by the direct typed path and by the Value pivot.

struct PBAddress: Codable, Equatable {
    var city: String
    var street: String
    var zip: String
}

struct PBUser: Codable, Equatable {
    var id: Int64
    var name: String
    var email: String
    var age: Int32
    var score: Double
    var active: Bool
    var tags: [String]
    var address: PBAddress?
}

struct PBUserPage: Codable, Equatable {
    var page: Int
    var total: Int
    var users: [PBUser]
}

struct PBUserList: Codable, Equatable {
    var code: Int
    var message: String
    var data: PBUserPage?
}

/// Narrow and odd member types: out-of-range ages, a `Value` member, a set, floats from doubles.
struct PBNarrowUser: Codable, Equatable {
    var id: Int16
    var age: UInt8
    var score: Float
    var tags: Set<String>
    var address: Value?
    var nickname: String?
}

struct PBNarrowList: Codable, Equatable {
    var code: UInt8
    var data: PBNarrowPage
}

struct PBNarrowPage: Codable, Equatable {
    var users: [PBNarrowUser]
}

/// A model that holds every user's container (and every address's) before reading any, then reads them
/// backwards: decoders still held must not be reused for later messages.
struct PBHeldContainers: Decodable, Equatable {
    var names: [String] = []
    var cities: [String] = []
    var paths: [String] = []

    enum Keys: String, CodingKey {
        case data, users, name, address, city
    }

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Keys.self)
        guard c.contains(.data) else { return }
        let data = try c.nestedContainer(keyedBy: Keys.self, forKey: .data)
        var users = try data.nestedUnkeyedContainer(forKey: .users)
        var held: [KeyedDecodingContainer<Keys>] = []
        var addresses: [KeyedDecodingContainer<Keys>] = []
        while !users.isAtEnd {
            let user = try users.nestedContainer(keyedBy: Keys.self)
            held.append(user)
            if user.contains(.address) {
                addresses.append(try user.nestedContainer(keyedBy: Keys.self, forKey: .address))
            }
        }
        for user in held.reversed() {
            names.append(try user.decode(String.self, forKey: .name))
            paths.append(user.codingPath.map(\.stringValue).joined(separator: "."))
        }
        for address in addresses.reversed() {
            cities.append(try address.decode(String.self, forKey: .city))
            paths.append(address.codingPath.map(\.stringValue).joined(separator: "."))
        }
    }
}

/// A model written by hand against every container call, recording what it saw.
struct PBProbe: Decodable, Equatable {
    var log: [String] = []

    enum Keys: String, CodingKey {
        case code, message, data, users, page, total, missing, address, tags, name, age
    }

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Keys.self)
        log.append("keys \(c.allKeys.map(\.stringValue))")
        log.append("contains \(c.contains(.data)) \(c.contains(.missing))")
        log.append("nil \((try? c.decodeNil(forKey: .code)).map { "\($0)" } ?? "throws")")
        log.append("missing \((try? c.decodeIfPresent(Int.self, forKey: .missing)).map { "\(String(describing: $0))" } ?? "throws")")
        log.append("code as string \((try? c.decode(String.self, forKey: .code)) ?? "throws")")
        log.append("code \(try c.decode(Int64.self, forKey: .code))")
        log.append("path \(decoder.codingPath.map(\.stringValue))")
        guard c.contains(.data) else { return }
        let data = try c.nestedContainer(keyedBy: Keys.self, forKey: .data)
        log.append("data path \(data.codingPath.map(\.stringValue))")
        log.append("page \(try data.decode(UInt16.self, forKey: .page))")
        log.append("data as int \((try? c.decode(Int.self, forKey: .data)).map { "\($0)" } ?? "throws")")
        var users = try data.nestedUnkeyedContainer(forKey: .users)
        log.append("count \(String(describing: users.count))")
        while !users.isAtEnd {
            log.append("nil? \(try users.decodeNil())")
            let user = try users.nestedContainer(keyedBy: Keys.self)
            log.append("user \(user.codingPath.map(\.stringValue)) \(try user.decode(String.self, forKey: .name))")
            log.append("age \((try? user.decode(Int8.self, forKey: .age)).map { "\($0)" } ?? "throws")")
            log.append("tags \((try? user.decode([String].self, forKey: .tags)) ?? [])")
            if user.contains(.address) {
                let address = try user.superDecoder(forKey: .address)
                log.append("address \(address.codingPath.map(\.stringValue)) \(try Value(from: address))")
            }
        }
        log.append("past end \((try? users.decode(PBUser.self)) == nil)")
    }
}

struct PBScalars: Codable, Equatable {
    var fDouble: Double
    var fFloat: Float
    var fInt64: Int64
    var fUint64: UInt64
    var fInt32: Int32
    var fFixed64: UInt64
    var fFixed32: UInt32
    var fBool: Bool
    var fString: String
    var fBytes: Data
    var fUint32: UInt32
    var fSfixed32: Int32
    var fSfixed64: Int64
    var fSint32: Int32
    var fSint64: Int64
    var fColor: Value
}

struct PBInner: Codable, Equatable {
    var label: String
    var values: [Int32]
    var color: String
}

struct PBKitchenSink: Codable, Equatable {
    var scalars: PBScalars?
    var inner: PBInner?
    var inners: [PBInner]
    var packedInt32: [Int32]
    var packedSint64: [Int64]
    var packedDouble: [Double]
    var packedFixed32: [UInt32]
    var packedBool: [Bool]
    var packedColor: [Value]
    var unpackedInt64: [Int64]
    var unpackedFloat: [Float]
    var unpackedUint32: [UInt32]
    var strings: [String]
    var blobs: [Data]
    var stringMap: [String: String]
    var intMap: [Int: PBInner]
    var longMap: [String: Int64]
    var uintMap: [String: Bool]
    var boolMap: [String: String]
    var colorMap: [String: Value]
    var sintMap: [String: Data]
    var choiceText: String?
    var choiceNumber: Int64?
    var choiceInner: PBInner?
    var choiceBytes: Data?
    var choiceColor: Value?
    var maybeInt32: Int32?
    var maybeString: String?
    var maybeBool: Bool?
    var maybeDouble: Double?
    var maybeBytes: [UInt8]?
    var maybeColor: Value?
    var customJsonName: String
    var bigUnsigned: UInt64
    var legacy: Value?
}

final class PBNode: Codable, Equatable {
    var value: Int32
    var child: PBNode?
    var children: [PBNode]

    static func == (a: PBNode, b: PBNode) -> Bool {
        a.value == b.value && a.child == b.child && a.children == b.children
    }
}

/// The differential checks: the direct path against the pivot.
enum ProtobufDifferential {
    /// Whether two values are the same, member order and double bits included.
    static func identical(_ a: Value, _ b: Value) -> Bool { a.isIdentical(to: b) }

    /// A failure as code and path.
    static func failure(_ error: any Error) -> String {
        guard let e = error as? CourierError else { return "not a CourierError: \(error)" }
        return "\(e.code) at \(e.context.codingPath)"
    }

    /// The direct `Value` read against protobuf-c: the same value or the same error.
    static func checkValue(_ codec: ProtobufCodec, _ bytes: Data, _ hints: CodingHints) {
        let direct = Result { try codec.decodeValue(bytes, hints: hints, direct: true) }
        let pivot = Result { try codec.decodeValue(bytes, hints: hints, direct: false) }
        switch (direct, pivot) {
        case (.success(let a), .success(let b)):
            #expect(identical(a, b), "\(a) != \(b)")
        case (.failure(let a), .failure(let b)):
            #expect(failure(a) == failure(b))
        default:
            Issue.record("direct \(direct) vs pivot \(pivot) for \(Array(bytes.prefix(64)))")
        }
    }

    /// The typed path against `ValueDecoder` over protobuf-c's `Value`: the same model or the same error.
    static func checkTyped<T: Decodable & Equatable>(
        _ type: T.Type, _ codec: ProtobufCodec, _ bytes: Data, _ hints: CodingHints,
        _ decoder: ValueDecoder = ValueDecoder()
    ) {
        let direct = Result { try codec.decode(T.self, from: bytes, hints: hints, decoder: decoder) }
        let pivot = Result {
            try decoder.decode(T.self, from: codec.decodeValue(bytes, hints: hints, direct: false))
        }
        switch (direct, pivot) {
        case (.success(let a), .success(let b)):
            #expect(a == b)
        case (.failure(let a), .failure(let b)):
            #expect(failure(a) == failure(b))
        default:
            Issue.record("\(T.self): direct \(direct) vs pivot \(pivot)")
        }
    }
}

@Suite struct ProtobufTypedDecodingTests {
    let demo = ProtobufCodec(schema: ProtobufTestSupport.demo)
    let kitchen = ProtobufCodec(schema: ProtobufTestSupport.kitchen)
    let listHints = ProtobufTestSupport.hints("demo.UserListResponse")

    static func fixture(_ name: String) throws -> Data {
        try Data(contentsOf: Repository.root.appendingPathComponent("Fixtures/\(name)"))
    }

    @Test(arguments: ["users_10.pb", "users_5000.pb"])
    func fixturesDecodeTheSameWay(name: String) throws {
        let bytes = try Self.fixture(name)
        ProtobufDifferential.checkValue(demo, bytes, listHints)
        ProtobufDifferential.checkTyped(PBUserList.self, demo, bytes, listHints)
        ProtobufDifferential.checkTyped(PBNarrowList.self, demo, bytes, listHints)
        ProtobufDifferential.checkTyped(PBProbe.self, demo, bytes, listHints)
        ProtobufDifferential.checkTyped(PBHeldContainers.self, demo, bytes, listHints)
        let held = try demo.decode(PBHeldContainers.self, from: bytes, hints: listHints, decoder: ValueDecoder())
        let model = try demo.decode(PBUserList.self, from: bytes, hints: listHints, decoder: ValueDecoder())
        #expect(held.names == model.data?.users.reversed().map(\.name))
        ProtobufDifferential.checkTyped(Value.self, demo, bytes, listHints)
        var snake = ValueDecoder()
        snake.keyStrategy = .convertFromSnakeCase
        ProtobufDifferential.checkTyped(PBUserList.self, demo, bytes, listHints, snake)
        #expect(model.data?.users.isEmpty == false)
    }

    static let optionSets: [(String, ProtobufCodec.Options)] = {
        var plain = ProtobufCodec.Options()
        var noDefaults = plain
        noDefaults.includeDefaultValues = false
        var numbers = plain
        numbers.enumsAsNumbers = true
        var discard = plain
        discard.unknownFields = .discard
        plain.unknownFields = .keep
        return [("default", plain), ("noDefaults", noDefaults), ("enumsAsNumbers", numbers), ("discard", discard)]
    }()

    @Test(arguments: 0..<4)
    func generatedMessagesDecodeTheSameWay(optionIndex: Int) throws {
        let options = Self.optionSets[optionIndex].1
        let writer = ProtobufCodec(schema: ProtobufTestSupport.kitchen)
        let demoWriter = ProtobufCodec(schema: ProtobufTestSupport.demo)
        let kitchen = ProtobufCodec(schema: ProtobufTestSupport.kitchen, options: options)
        let demo = ProtobufCodec(schema: ProtobufTestSupport.demo, options: options)
        var lenient = ValueDecoder()
        lenient.lenientNumbers = true
        lenient.dataStrategy = .bytes
        for seed in 0..<60 {
            var generator = ProtobufValueGenerator(schema: ProtobufTestSupport.kitchen, seed: UInt64(seed))
            for type in ["kitchen.KitchenSink", "kitchen.Scalars", "kitchen.Node"] {
                let hints = ProtobufTestSupport.hints(type)
                let bytes = try writer.encode(generator.value(for: type), hints: hints)
                ProtobufDifferential.checkValue(kitchen, bytes, hints)
                ProtobufDifferential.checkTyped(Value.self, kitchen, bytes, hints)
                ProtobufDifferential.checkTyped(PBKitchenSink.self, kitchen, bytes, hints)
                ProtobufDifferential.checkTyped(PBKitchenSink.self, kitchen, bytes, hints, lenient)
                ProtobufDifferential.checkTyped(PBScalars.self, kitchen, bytes, hints)
                ProtobufDifferential.checkTyped(PBNode.self, kitchen, bytes, hints)
            }
            var demoGenerator = ProtobufValueGenerator(schema: ProtobufTestSupport.demo, seed: UInt64(seed))
            let bytes = try demoWriter.encode(demoGenerator.value(for: "demo.UserListResponse"), hints: listHints)
            ProtobufDifferential.checkValue(demo, bytes, listHints)
            ProtobufDifferential.checkTyped(PBUserList.self, demo, bytes, listHints)
            ProtobufDifferential.checkTyped(PBNarrowList.self, demo, bytes, listHints)
            ProtobufDifferential.checkTyped(PBProbe.self, demo, bytes, listHints)
            ProtobufDifferential.checkTyped(PBHeldContainers.self, demo, bytes, listHints)
        }
    }

    @Test func legacyProto2MessagesDecodeTheSameWay() throws {
        let codec = ProtobufCodec(schema: ProtobufTestSupport.kitchen)
        let hints = ProtobufTestSupport.hints("legacy.Legacy")
        for seed in 0..<40 {
            var generator = ProtobufValueGenerator(schema: ProtobufTestSupport.kitchen, seed: UInt64(seed))
            let bytes = try codec.encode(generator.value(for: "legacy.Legacy"), hints: hints)
            ProtobufDifferential.checkValue(codec, bytes, hints)
            ProtobufDifferential.checkTyped(Value.self, codec, bytes, hints)
            for cut in [0, bytes.count / 2, max(bytes.count - 1, 0)] {
                ProtobufDifferential.checkValue(codec, bytes.prefix(cut), hints)
            }
        }
    }

    /// Mutations of real messages (flipped, cut, inserted, duplicated and zeroed bytes): the same model or
    /// the same error code and path, for the `Value` and the typed paths.
    @Test(arguments: 0..<4)
    func hostileMutationsFailTheSameWay(seed: Int) throws {
        let base = try Self.fixture("users_10.pb")
        var random = SeededRandom(seed: UInt64(seed) &+ 1000)
        let kitchenHints = ProtobufTestSupport.hints("kitchen.KitchenSink")
        var generator = ProtobufValueGenerator(schema: ProtobufTestSupport.kitchen, seed: UInt64(seed))
        let sink = try kitchen.encode(generator.value(for: "kitchen.KitchenSink"), hints: kitchenHints)
        for round in 0..<400 {
            let useSink = round % 2 == 1
            var bytes = Array(useSink ? sink : base)
            for _ in 0...random.below(3) where !bytes.isEmpty {
                let at = random.below(bytes.count)
                switch random.below(6) {
                case 0: bytes[at] ^= UInt8(1 << random.below(8))
                case 1: bytes.removeSubrange(at...)
                case 2: bytes.insert(UInt8(truncatingIfNeeded: random.next()), at: at)
                case 3:
                    let end = min(bytes.count, at + random.below(16) + 1)
                    bytes.insert(contentsOf: bytes[at..<end], at: at)
                case 4: bytes[at] = 0
                default: bytes[at] = 0xff
                }
            }
            let data = Data(bytes)
            if useSink {
                ProtobufDifferential.checkValue(kitchen, data, kitchenHints)
                ProtobufDifferential.checkTyped(PBKitchenSink.self, kitchen, data, kitchenHints)
            } else {
                ProtobufDifferential.checkValue(demo, data, listHints)
                ProtobufDifferential.checkTyped(PBUserList.self, demo, data, listHints)
                ProtobufDifferential.checkTyped(PBProbe.self, demo, data, listHints)
            }
        }
    }

    @Test func hostileShapesFailTheSameWay() throws {
        let cases: [[UInt8]] = [
            [0x08, 0x01, 0x08, 0x02],  // a singular field twice: the last wins
            [0x12, 0x02, 0xC3, 0x28],  // invalid UTF-8
            [0x1A, 0x00, 0x1A, 0x02, 0x08, 0x05],  // a message twice: merged
            [0x88, 0x00, 0x05],  // a non-minimal key
            [0x0A, 0x01, 0x41],  // a wire type the field cannot have
            [0x98, 0x06, 0x01],  // an unknown field
            [0x08, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x02],  // bits past the 64th
            [0x08, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01],  // 11-byte varint
            [0x1A, 0x80, 0x80, 0x80, 0x80, 0x00],  // a 5-byte length
            [0x12, 0x80, 0x00],  // a non-minimal length
            [0x12, 0x81, 0x00, 0x41],  // a non-minimal length with its byte
            [0x80, 0x01, 0x05],  // a two-byte key (field 16, unknown)
            [0x0A],  // a key without its value
            [0x12],  // a key without its length
            [0x1A, 0x05, 0x08],  // a lying length
            [0x0B, 0x0C],  // a group
            [0x00],  // field number 0
        ]
        for bytes in cases {
            ProtobufDifferential.checkValue(demo, Data(bytes), listHints)
            ProtobufDifferential.checkTyped(PBUserList.self, demo, Data(bytes), listHints)
            ProtobufDifferential.checkTyped(PBProbe.self, demo, Data(bytes), listHints)
        }
        // Limits from the hints apply to the typed path too.
        var hints = listHints
        var limits = DecodingLimits()
        limits.maximumStringLength = 4
        hints.limits = limits
        let bytes = try Self.fixture("users_10.pb")
        #expect {
            try demo.decode(PBUserList.self, from: bytes, hints: hints, decoder: ValueDecoder())
        } throws: { ($0 as? CourierError)?.code == .sizeLimitExceeded }
        ProtobufDifferential.checkTyped(PBUserList.self, demo, bytes, hints)
    }

    /// The differential tests would pass if everything fell back to the pivot: check that plain inputs are
    /// answered by the direct paths themselves.
    @Test func theDirectPathsAnswerForPlainInputs() throws {
        let bytes = try Self.fixture("users_10.pb")
        let layout = try demo.layout(for: listHints)
        let direct = demo.directDecode(
            PBUserList.self, from: bytes, layout: layout, options: demo.options, decoder: ValueDecoder())
        #expect(direct == (try ValueDecoder().decode(PBUserList.self, from: demo.decodeValue(bytes, hints: listHints, direct: false))))
        let probe = demo.directDecode(
            PBProbe.self, from: bytes, layout: layout, options: demo.options, decoder: ValueDecoder())
        #expect(probe != nil)
        var answered = 0
        for seed in 0..<20 {
            var generator = ProtobufValueGenerator(schema: ProtobufTestSupport.kitchen, seed: UInt64(seed))
            let hints = ProtobufTestSupport.hints("kitchen.KitchenSink")
            let sink = try kitchen.encode(generator.value(for: "kitchen.KitchenSink"), hints: hints)
            let sinkLayout = try kitchen.layout(for: hints)
            let value = sink.withUnsafeBytes { raw in
                try? ProtobufWireReader(bytes: raw.bindMemory(to: UInt8.self), runtime: kitchen.schema.runtime, options: kitchen.options)
                    .value(sinkLayout, 0..<sink.count, depth: 1)
            }
            #expect(value != nil)
            if kitchen.directDecode(
                PBKitchenSink.self, from: sink, layout: sinkLayout, options: kitchen.options, decoder: ValueDecoder()) != nil
            {
                answered += 1
            }
        }
        // Unknown enum numbers make some models fail (then the pivot answers); most decode directly.
        #expect(answered >= 10)
    }

    /// Tight limits in every dimension: the direct reads count what the scanner counts, so each input fails
    /// (or not) with the same error on every path.
    @Test(arguments: [false, true])
    func tightLimitsFailTheSameWay(includeDefaults: Bool) throws {
        var random = SeededRandom(seed: 77)
        for seed in 0..<60 {
            var generator = ProtobufValueGenerator(schema: ProtobufTestSupport.kitchen, seed: UInt64(seed))
            let type = seed % 3 == 0 ? "kitchen.Node" : "kitchen.KitchenSink"
            let sinkHints = ProtobufTestSupport.hints(type)
            let bytes = try kitchen.encode(generator.value(for: type), hints: sinkHints)
            var limits = DecodingLimits()
            limits.maximumDepth = 1 + random.below(4)
            limits.maximumTotalValues = 20 + random.below(200)
            limits.maximumContainerCount = 3 + random.below(40)
            limits.maximumStringLength = random.below(16)
            var options = ProtobufCodec.Options()
            options.includeDefaultValues = includeDefaults
            options.limits = limits
            let codec = ProtobufCodec(schema: ProtobufTestSupport.kitchen, options: options)
            ProtobufDifferential.checkValue(codec, bytes, sinkHints)
            ProtobufDifferential.checkTyped(PBKitchenSink.self, codec, bytes, sinkHints)
            ProtobufDifferential.checkTyped(PBNode.self, codec, bytes, sinkHints)
            var hints = ProtobufTestSupport.hints("demo.UserListResponse")
            hints.limits = limits
            let users = try Self.fixture("users_10.pb")
            ProtobufDifferential.checkValue(demo, users, hints)
            ProtobufDifferential.checkTyped(PBUserList.self, demo, users, hints)
        }
    }

    /// The committed seeds of the FuzzProtobufTyped target, through the same differential.
    @Test func fuzzSeedsDecodeTheSameWay() throws {
        let folder = Repository.root.appendingPathComponent("Fixtures/fuzz/FuzzProtobufTyped")
        let files = try FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil)
        #expect(!files.isEmpty)
        var strict = ProtobufCodec.Options()
        strict.unknownFields = .reject
        strict.enumsAsNumbers = true
        let codecs = [demo, ProtobufCodec(schema: ProtobufTestSupport.demo, options: strict)]
        for file in files {
            let bytes = try Data(contentsOf: file)
            for codec in codecs {
                ProtobufDifferential.checkValue(codec, bytes, listHints)
                ProtobufDifferential.checkTyped(PBUserList.self, codec, bytes, listHints)
                ProtobufDifferential.checkTyped(PBProbe.self, codec, bytes, listHints)
            }
        }
    }

    /// The slots the checking pass records for the typed decoder are, message by message, what indexing the
    /// message finds: for generated messages, mutated ones, messages checked out of byte order (recording
    /// stops) and a page of empty users, nine slots and entries per two bytes, that runs the tape's budget out
    /// (recording stops part way; the messages after it are indexed, and the typed decode still answers as the
    /// pivot does).
    @Test func recordedSlotsAreWhatIndexingFinds() throws {
        /// Compares every message of the tree under `layout` with its index; returns (messages, recorded).
        func compare(_ codec: ProtobufCodec, _ data: Data, _ hints: CodingHints) throws -> (Int, Int)? {
            let layout = try codec.layout(for: hints)
            return data.withUnsafeBytes { raw -> (Int, Int)? in
                let bytes = raw.bindMemory(to: UInt8.self)
                let reader = ProtobufWireReader(bytes: bytes, runtime: codec.schema.runtime, options: codec.options)
                reader.startBudget(layout)
                reader.startRecording()
                guard (try? reader.check(layout, 0..<bytes.count, depth: 1)) != nil else { return nil }
                reader.counting = false
                var messages = 0
                var recorded = 0
                func walk(_ layout: MessageLayout, _ range: Range<Int>) throws(WireAnomaly) {
                    let indexed = try reader.index(layout, range)
                    var slots: [WireSlot] = []
                    try reader.slots(of: layout, range, into: &slots)
                    messages += 1
                    if reader.recordedBase(layout, range.lowerBound) != nil { recorded += 1 }
                    #expect(slots.map { [$0.keyStart, $0.valueStart, $0.count] }
                        == indexed.slots.map { [$0.keyStart, $0.valueStart, $0.count] })
                    for (i, f) in layout.hot.enumerated() where f.type == .message && !f.isMap {
                        let sub = reader.runtime.messages[f.messageIndex]
                        try reader.forEachOccurrence(indexed, i) { (start, _) throws(WireAnomaly) in
                            var offset = start
                            try walk(sub, try reader.lengthDelimited(&offset, end: range.upperBound))
                        }
                    }
                }
                do throws(WireAnomaly) {
                    try walk(layout, 0..<bytes.count)
                } catch {
                    Issue.record("a checked input failed to index")
                }
                return (messages, recorded)
            }
        }
        // Generated and real messages: every message recorded.
        let users = try Self.fixture("users_10.pb")
        let counts = try #require(try compare(demo, users, listHints))
        #expect(counts == (22, 22))
        for seed in 0..<30 {
            var generator = ProtobufValueGenerator(schema: ProtobufTestSupport.kitchen, seed: UInt64(seed))
            for type in ["kitchen.KitchenSink", "kitchen.Node", "legacy.Legacy"] {
                let hints = ProtobufTestSupport.hints(type)
                let bytes = try kitchen.encode(generator.value(for: type), hints: hints)
                _ = try compare(kitchen, bytes, hints)
            }
        }
        // Mutated messages (duplicated runs put fields and messages out of order).
        var random = SeededRandom(seed: 4242)
        for _ in 0..<300 {
            var bytes = Array(users)
            let at = random.below(bytes.count)
            let end = min(bytes.count, at + random.below(24) + 1)
            bytes.insert(contentsOf: bytes[at..<end], at: at)
            _ = try compare(demo, Data(bytes), listHints)
        }
        // Out of byte order (as when `check` indexes a message of proto2 `required` fields and checks its messages
        // field by field): a message checked after a later one is not recorded, and recording stops.
        let layout = try demo.layout(for: listHints)
        let pageLayout = demo.schema.runtime.messages[layout.hot[2].messageIndex]
        let userLayout = demo.schema.runtime.messages[pageLayout.hot[2].messageIndex]
        let pageBytes = users.withUnsafeBytes { raw -> [Range<Int>] in
            let reader = ProtobufWireReader(
                bytes: raw.bindMemory(to: UInt8.self), runtime: demo.schema.runtime, options: demo.options)
            guard let root = try? reader.index(layout, 0..<users.count) else { return [] }
            var offset = root.slots[2].valueStart
            guard let data = try? reader.lengthDelimited(&offset, end: users.count),
                let page = try? reader.index(pageLayout, data)
            else { return [] }
            var ranges: [Range<Int>] = []
            try? reader.forEachOccurrence(page, 2) { (start, _) throws(WireAnomaly) in
                var at = start
                ranges.append(try reader.lengthDelimited(&at, end: data.upperBound))
            }
            return ranges
        }
        #expect(pageBytes.count == 10)
        users.withUnsafeBytes { raw in
            let reader = ProtobufWireReader(
                bytes: raw.bindMemory(to: UInt8.self), runtime: demo.schema.runtime, options: demo.options)
            reader.startRecording()
            for range in [pageBytes[5], pageBytes[2], pageBytes[7]] {
                #expect((try? reader.check(userLayout, range, depth: 3)) != nil)
            }
            #expect(reader.recordedBase(userLayout, pageBytes[5].lowerBound) != nil)
            #expect(reader.recordedBase(userLayout, pageBytes[2].lowerBound) == nil)
            #expect(reader.recordedBase(userLayout, pageBytes[7].lowerBound) == nil)
            // A lookup with another type finds nothing either.
            #expect(reader.recordedBase(pageLayout, pageBytes[5].lowerBound) == nil)
            for range in [pageBytes[5], pageBytes[2], pageBytes[7]] {
                var slots: [WireSlot] = []
                #expect((try? reader.slots(of: userLayout, range, into: &slots)) != nil)
                let indexed = try? reader.index(userLayout, range)
                #expect(slots.map(\.valueStart) == indexed?.slots.map(\.valueStart))
            }
        }
        // A page of 2,000 empty users: 18,000 slots and entries for 4,000 bytes, past the budget of one per 4 bytes.
        let empty: [UInt8] = Array(repeating: [0x1A, 0x00], count: 2_000).flatMap { $0 }
        var length: [UInt8] = []
        var n = empty.count
        while n >= 0x80 {
            length.append(UInt8(n & 0x7F) | 0x80)
            n >>= 7
        }
        length.append(UInt8(n))
        let page = Data([0x1A] + length + empty)
        let (messages, recorded) = try #require(try compare(demo, page, listHints))
        #expect(messages == 2_002)
        #expect(recorded > 100 && recorded < messages)
        ProtobufDifferential.checkTyped(PBUserList.self, demo, page, listHints)
        let decoded = try demo.decode(PBUserList.self, from: page, hints: listHints, decoder: ValueDecoder())
        #expect(decoded.data?.users.count == 2_000)
    }

    @Test func deepNestingIsBoundedOnTheTypedPath() throws {
        let hints = ProtobufTestSupport.hints("kitchen.Node")
        for levels in [50, 99, 100, 101, 5000] {
            let bytes = Data(ProtobufHostileInputTests.nested(levels: levels, field: 0x12))
            ProtobufDifferential.checkValue(kitchen, bytes, hints)
            ProtobufDifferential.checkTyped(PBNode.self, kitchen, bytes, hints)
        }
    }

    /// Strings of at most 15 bytes are built in the standard library's inline layout from their bytes, on the
    /// `Value` path (checked as they are read) and on the typed path (checked before): the same strings, bit
    /// for bit, as the standard library's own, at every length around 15, at the very end of the input (where
    /// no byte past the payload may be read) and followed by more; and invalid UTF-8 fails as the pivot fails.
    @Test func shortStringsAreTheStandardLibrarysOwnBitForBit() throws {
        func field(_ key: UInt8, _ payload: [UInt8]) -> [UInt8] { [key, UInt8(payload.count)] + payload }
        var payloads: [[UInt8]] = [[0xC3, 0x28], [0xFF], [0xE2, 0x82], [0xED, 0xA0, 0x80], [0xC0, 0x80]]
        for length in 0...18 {
            for sample in ["abcdefghijklmnopqrs", "zoë€ééééééééé"] {
                payloads.append(Array(Array(sample.utf8).prefix(length)))
            }
            payloads.append([UInt8](repeating: 0x41, count: max(0, length - 1)) + [0xFF])
        }
        for payload in payloads {
            // The message alone and last, then the same string as a user's name, followed by more fields.
            let user = field(0x12, payload) + field(0x1A, Array("x@example.com".utf8))
            let page = field(0x1A, user) + field(0x1A, user)
            for bytes in [field(0x12, payload), field(0x12, payload) + field(0x1A, page)] {
                let data = Data(bytes)
                ProtobufDifferential.checkValue(demo, data, listHints)
                ProtobufDifferential.checkTyped(PBUserList.self, demo, data, listHints)
                guard let expected = String(validating: payload, as: UTF8.self) else {
                    #expect(throws: CourierError.self) { try demo.decode(data, hints: listHints) }
                    continue
                }
                let value = try demo.decodeValue(data, hints: listHints, direct: true)
                let typed = try demo.decode(PBUserList.self, from: data, hints: listHints, decoder: ValueDecoder())
                var built = [value["message"]?.stringValue, typed.message]
                if bytes.count > payload.count + 2 {
                    built += [value["data"]?["users"]?[1]?["name"]?.stringValue, typed.data?.users.last?.name]
                }
                for string in built {
                    let string = try #require(string)
                    #expect(string == expected)
                    guard payload.count <= 15 else { continue }
                    let bits = unsafeBitCast(string, to: (UInt64, UInt64).self)
                    let standard = unsafeBitCast(String(decoding: payload, as: UTF8.self), to: (UInt64, UInt64).self)
                    #expect(bits == standard, "\(payload)")
                }
            }
        }
    }
}
