#if Macros
@testable import CourierCodecs
import CourierCodecsTesting
import CourierMacros
import CourierTestSupport
import CourierTesting
import Foundation
import Testing

// `@ProtobufModel` models through `ProtobufCodec`: the generated direct reads and writes against the `Codable`
// pivot (`ValueDecoder`/`ValueEncoder` over protobuf-c's `Value`), on generated, truncated, corrupted and
// hostile inputs and under tight limits. Wherever the direct path answers, its answer is the pivot's.

@ProtobufModel
struct MAddress: Codable, Equatable {
    var city: String
    var street: String
    var zip: String
}

@ProtobufModel
struct MUser: Codable, Equatable {
    var id: Int64
    var name: String
    var email: String
    var age: Int32
    var score: Double
    var active: Bool
    var tags: [String]
    var address: MAddress?
}

@ProtobufModel
struct MUserPage: Codable, Equatable {
    var page: Int
    var total: Int32
    var users: [MUser]
}

@ProtobufModel
struct MUserList: Codable, Equatable {
    var code: Int32
    var message: String
    var data: MUserPage?
}

@ProtobufModel
struct MScalars: Codable, Equatable {
    var fDouble: Double
    var fFloat: Float
    var fInt64: Int64
    var fUint64: UInt64
    var fInt32: Int32
    var fFixed64: UInt64
    var fFixed32: UInt32
    var fBool: Bool
    var fString: String
    var fUint32: UInt32
    var fSfixed32: Int32
    var fSfixed64: Int64
    var fSint32: Int
    var fSint64: Int64
}

@ProtobufModel
struct MInner: Codable, Equatable {
    var label: String
    var values: [Int32]
}

@ProtobufModel
struct MKitchen: Codable, Equatable {
    var scalars: MScalars?
    var inner: MInner?
    var inners: [MInner]
    var packedInt32: [Int32]
    var packedSint64: [Int64]
    var packedDouble: [Double]
    var packedFixed32: [UInt32]
    var packedBool: [Bool]
    var unpackedInt64: [Int64]
    var unpackedFloat: [Float]
    var unpackedUint32: [UInt32]
    var strings: [String]
    var choiceText: String?
    var choiceNumber: Int64?
    var choiceInner: MInner?
    var maybeInt32: Int32?
    var maybeString: String?
    var maybeBool: Bool?
    var maybeDouble: Double?
    var customJsonName: String
    var bigUnsigned: UInt64
}

/// The recursive message, through its repeated children (its singular `child` is left unread: checked only).
@ProtobufModel
struct MNode: Codable, Equatable {
    var value: Int32
    var children: [MNode]
}

/// Renamed keys and a member the schema lacks (absent, so nil).
@ProtobufModel
struct MRenamedInner: Codable, Equatable {
    var name: String
    var numbers: [Int64]?
    var note: String?

    enum CodingKeys: String, CodingKey {
        case name = "label"
        case numbers = "values"
        case note
    }
}

/// A `let` with a value: `Codable` writes it and never reads it (the input's label is checked, then skipped).
@ProtobufModel
struct MFixedLabel: Codable, Equatable {
    let label = "fixed"
    var values: [Int32]
}

/// Members without a direct form (`Data`, a set): the model always goes through `Codable`.
@ProtobufModel
struct MBlobs: Codable, Equatable {
    var blobs: [Data]
    var strings: Set<String>
}

// The README's example (a `demo.User` without its email, age, score and activity).
typealias Address = MAddress

@ProtobufModel
struct Account: Codable, Equatable {
    var id: Int64
    var name: String
    var tags: [String]
    var address: Address?  // a @ProtobufModel struct too
}

enum ModelDifferential {
    /// Whether two models are the same, NaNs included (compared through their `Value`s, doubles by their bits).
    static func same<M: Encodable & Equatable>(_ a: M, _ b: M) -> Bool {
        if a == b { return true }
        guard let x = try? ValueEncoder().encode(a), let y = try? ValueEncoder().encode(b) else { return false }
        return x.isIdentical(to: y)
    }

    static func failure(_ error: any Error) -> String {
        guard let e = error as? CourierError else { return "not a CourierError: \(error)" }
        return "\(e.code) at \(e.context.codingPath)"
    }

    /// Decodes by the direct path alone (`nil` when it leaves the input to `Codable`).
    static func direct<M: ProtobufModel>(_ type: M.Type, _ codec: ProtobufCodec, _ bytes: Data, _ hints: CodingHints)
        -> M?
    {
        guard let layout = try? codec.layout(for: hints) else { return nil }
        let plan = codec.schema.runtime.modelPlans.plan(layout, M.self, runtime: codec.schema.runtime)
        var options = codec.options
        if let limits = hints.limits { options.limits = limits }
        guard options.includeDefaultValues, bytes.count <= options.limits.maximumInputSize else { return nil }
        return bytes.withUnsafeBytes { raw in
            ProtobufModelReader.decode(
                M.self, raw.bindMemory(to: UInt8.self), plan: plan, runtime: codec.schema.runtime, options: options)
        }
    }

    /// The codec's typed decode against the pivot (same model or same error), and the direct path's answer, if
    /// any, against the pivot's model. Returns whether the direct path answered.
    @discardableResult
    static func check<M: ProtobufModel & Equatable>(
        _ type: M.Type, _ codec: ProtobufCodec, _ bytes: Data, _ hints: CodingHints,
        sourceLocation: SourceLocation = #_sourceLocation
    ) -> Bool {
        let decoder = ValueDecoder()
        let pivot = Result { try decoder.decode(M.self, from: codec.decodeValue(bytes, hints: hints, direct: false)) }
        let viaCodec = Result { try codec.decode(M.self, from: bytes, hints: hints, decoder: decoder) }
        switch (viaCodec, pivot) {
        case (.success(let a), .success(let b)):
            #expect(same(a, b), sourceLocation: sourceLocation)
        case (.failure(let a), .failure(let b)):
            #expect(failure(a) == failure(b), sourceLocation: sourceLocation)
        default:
            Issue.record(
                "\(M.self): codec \(viaCodec) vs pivot \(pivot) for \(Array(bytes.prefix(48)))",
                sourceLocation: sourceLocation)
        }
        guard let fast = direct(M.self, codec, bytes, hints) else { return false }
        if case .success(let b) = pivot {
            #expect(same(fast, b), sourceLocation: sourceLocation)
        } else {
            Issue.record("\(M.self): the direct path answered where the pivot fails: \(pivot)", sourceLocation: sourceLocation)
        }
        return true
    }

    /// The codec's typed encode against the `Value` writer over `ValueEncoder`'s `Value` (protobuf-c): the same
    /// bytes or the same error. Returns whether the direct write answered.
    @discardableResult
    static func checkEncode<M: ProtobufModel>(
        _ model: M, _ codec: ProtobufCodec, _ hints: CodingHints, sourceLocation: SourceLocation = #_sourceLocation
    ) -> Bool {
        let encoder = ValueEncoder()
        let pivot = Result { try codec.encodeValue(encoder.encode(model), hints: hints, direct: false) }
        let viaCodec = Result { try codec.encode(model: model, hints: hints, encoder: encoder) }
        switch (viaCodec, pivot) {
        case (.success(let a), .success(let b)):
            #expect(a == b, "\(M.self): bytes differ", sourceLocation: sourceLocation)
        case (.failure(let a), .failure(let b)):
            #expect(failure(a) == failure(b), sourceLocation: sourceLocation)
        default:
            Issue.record("\(M.self): codec \(viaCodec) vs pivot \(pivot)", sourceLocation: sourceLocation)
        }
        guard let layout = try? codec.layout(for: hints) else { return false }
        let plan = codec.schema.runtime.modelPlans.plan(layout, M.self, runtime: codec.schema.runtime)
        guard let fast = ProtobufModelWriter.encode(model, plan: plan, options: codec.options) else { return false }
        #expect((try? pivot.get()) == fast, "\(M.self): direct bytes differ", sourceLocation: sourceLocation)
        return true
    }
}

@Suite struct ProtobufModelCodecTests {
    static let demoSchema = try! ProtobufSchema(contentsOf: Repository.schema("demo.pb"))
    static let kitchenSchema = try! ProtobufSchema(contentsOf: Repository.schema("kitchen_sink.pb"))
    let demo = ProtobufCodec(schema: Self.demoSchema)
    let kitchen = ProtobufCodec(schema: Self.kitchenSchema)

    static func hints(_ type: String) -> CodingHints {
        var hints = CodingHints()
        hints.messageType = type
        return hints
    }

    @Test(arguments: ["users_10.pb", "users_5000.pb"])
    func theFixturesReadAndWriteDirectly(name: String) throws {
        let bytes = try Data(contentsOf: Repository.root.appendingPathComponent("Fixtures/\(name)"))
        let hints = Self.hints("demo.UserListResponse")
        #expect(ModelDifferential.check(MUserList.self, demo, bytes, hints))
        let model = try demo.decode(MUserList.self, from: bytes, hints: hints, decoder: ValueDecoder())
        #expect(model.data?.users.count == (name == "users_10.pb" ? 10 : 5000))
        #expect(ModelDifferential.checkEncode(model, demo, hints))
        #expect(try demo.encode(model: model, hints: hints, encoder: ValueEncoder()) == bytes)
    }

    @Test func theReadmeExampleReadsAndWritesDirectly() throws {
        let hints = Self.hints("demo.User")
        let account = Account(
            id: 7, name: "Ada", tags: ["admin"], address: Address(city: "London", street: "1 Main St", zip: "N1"))
        #expect(ModelDifferential.checkEncode(account, demo, hints))
        let bytes = try demo.encode(model: account, hints: hints, encoder: ValueEncoder())
        #expect(ModelDifferential.check(Account.self, demo, bytes, hints))
        #expect(try demo.decode(Account.self, from: bytes, hints: hints, decoder: ValueDecoder()) == account)
    }

    @Test func aLetWithAValueIsWrittenButNotRead() throws {
        let hints = Self.hints("kitchen.KitchenSink.Inner")
        let model = MFixedLabel(values: [1, -2])
        #expect(ModelDifferential.checkEncode(model, kitchen, hints))
        let bytes = try kitchen.encode(model: model, hints: hints, encoder: ValueEncoder())
        #expect(try kitchen.decode(Value.self, from: bytes, hints: hints, decoder: ValueDecoder())["label"] == "fixed")
        for input: [UInt8] in [[0x0A, 0x03, 0x61, 0x62, 0x63, 0x12, 0x01, 0x05], [0x0A, 0x02, 0xC3, 0x28], [0x0A, 0x05]] {
            ModelDifferential.check(MFixedLabel.self, kitchen, Data(input), hints)
        }
        #expect(ModelDifferential.check(MFixedLabel.self, kitchen, bytes, hints))
    }

    static let optionSets: [ProtobufCodec.Options] = {
        var keep = ProtobufCodec.Options()
        keep.unknownFields = .keep
        var discard = keep
        discard.unknownFields = .discard
        var reject = keep
        reject.unknownFields = .reject
        var noDefaults = keep
        noDefaults.includeDefaultValues = false
        var ignoring = keep
        ignoring.ignoreUnknownMembers = true
        return [keep, discard, reject, noDefaults, ignoring]
    }()

    @Test(arguments: 0..<5)
    func generatedMessagesAgreeWithThePivot(optionIndex: Int) throws {
        let options = Self.optionSets[optionIndex]
        let writer = ProtobufCodec(schema: Self.kitchenSchema)
        let kitchen = ProtobufCodec(schema: Self.kitchenSchema, options: options)
        let demo = ProtobufCodec(schema: Self.demoSchema, options: options)
        var answered = 0
        for seed in 0..<80 {
            var generator = ProtobufValueGenerator(schema: Self.kitchenSchema, seed: UInt64(seed))
            for type in ["kitchen.KitchenSink", "kitchen.Scalars", "kitchen.Node", "kitchen.KitchenSink.Inner"] {
                let hints = Self.hints(type)
                let bytes = try writer.encode(generator.value(for: type), hints: hints)
                switch type {
                case "kitchen.KitchenSink":
                    if ModelDifferential.check(MKitchen.self, kitchen, bytes, hints) { answered += 1 }
                    ModelDifferential.check(MBlobs.self, kitchen, bytes, hints)
                    if let model = try? kitchen.decode(MKitchen.self, from: bytes, hints: hints, decoder: ValueDecoder()) {
                        ModelDifferential.checkEncode(model, kitchen, hints)
                    }
                case "kitchen.Scalars":
                    if ModelDifferential.check(MScalars.self, kitchen, bytes, hints) { answered += 1 }
                    if let model = try? kitchen.decode(MScalars.self, from: bytes, hints: hints, decoder: ValueDecoder()) {
                        ModelDifferential.checkEncode(model, kitchen, hints)
                    }
                case "kitchen.Node":
                    if ModelDifferential.check(MNode.self, kitchen, bytes, hints) { answered += 1 }
                default:
                    if ModelDifferential.check(MInner.self, kitchen, bytes, hints) { answered += 1 }
                    ModelDifferential.check(MRenamedInner.self, kitchen, bytes, hints)
                    if let model = try? kitchen.decode(MRenamedInner.self, from: bytes, hints: hints, decoder: ValueDecoder()) {
                        ModelDifferential.checkEncode(model, kitchen, hints)
                    }
                }
            }
            var demoGenerator = ProtobufValueGenerator(schema: Self.demoSchema, seed: UInt64(seed))
            let hints = Self.hints("demo.UserListResponse")
            let bytes = try ProtobufCodec(schema: Self.demoSchema).encode(
                demoGenerator.value(for: "demo.UserListResponse"), hints: hints)
            if ModelDifferential.check(MUserList.self, demo, bytes, hints) { answered += 1 }
            if let model = try? demo.decode(MUserList.self, from: bytes, hints: hints, decoder: ValueDecoder()) {
                ModelDifferential.checkEncode(model, demo, hints)
            }
        }
        // Under the default options most generated messages read directly (a check that the path is taken).
        if optionIndex == 0 { #expect(answered > 200) }
    }

    @Test func modelsWithoutADirectFormGoThroughCodable() throws {
        let hints = Self.hints("kitchen.KitchenSink")
        var generator = ProtobufValueGenerator(schema: Self.kitchenSchema, seed: 3)
        let bytes = try kitchen.encode(generator.value(for: "kitchen.KitchenSink"), hints: hints)
        #expect(ModelDifferential.direct(MBlobs.self, kitchen, bytes, hints) == nil)
        let layout = try kitchen.layout(for: hints)
        let plan = kitchen.schema.runtime.modelPlans.plan(layout, MBlobs.self, runtime: kitchen.schema.runtime)
        #expect(!plan.decodable && !plan.encodable)
        let blobs = MBlobs(blobs: [Data([0, 1, 2])], strings: ["a"])
        #expect(!ModelDifferential.checkEncode(blobs, kitchen, hints))
    }

    @Test func corruptedAndTruncatedInputsAgreeWithThePivot() throws {
        let hints = Self.hints("kitchen.KitchenSink")
        var random = SeededRandom(seed: 14)
        for seed in 0..<30 {
            var generator = ProtobufValueGenerator(schema: Self.kitchenSchema, seed: UInt64(seed))
            let bytes = try kitchen.encode(generator.value(for: "kitchen.KitchenSink"), hints: hints)
            for cut in stride(from: 0, to: bytes.count, by: max(1, bytes.count / 25)) {
                ModelDifferential.check(MKitchen.self, kitchen, bytes.prefix(cut), hints)
            }
            for _ in 0..<40 where !bytes.isEmpty {
                var mutated = bytes
                for _ in 0..<Int.random(in: 1...3, using: &random) {
                    mutated[Int.random(in: 0..<mutated.count, using: &random)] = UInt8.random(in: 0...255, using: &random)
                }
                ModelDifferential.check(MKitchen.self, kitchen, mutated, hints)
            }
        }
    }

    /// Hand-made hostile inputs: a field given twice, two members of a oneof, a wrong wire type, lying lengths,
    /// an empty or ragged packed run, invalid UTF-8 in a read and in an unread string, an overlong key, an
    /// unknown field (kept, dropped or rejected), a group, field number 0.
    @Test(arguments: 0..<3)
    func hostileShapesAgreeWithThePivot(policy: Int) throws {
        var options = ProtobufCodec.Options()
        options.unknownFields = [.keep, .discard, .reject][policy]
        let codec = ProtobufCodec(schema: Self.kitchenSchema, options: options)
        let inner = Self.hints("kitchen.KitchenSink.Inner")
        let sink = Self.hints("kitchen.KitchenSink")
        let inputs: [[UInt8]] = [
            [0x0A, 0x01, 0x61, 0x0A, 0x01, 0x62],  // label twice
            [0x0A, 0x05, 0x61],  // a length past the end
            [0x08, 0x01],  // label with the varint wire type
            [0x12, 0x00],  // an empty packed run
            [0x12, 0x02, 0x01, 0x80],  // a ragged packed run
            [0x12, 0x01, 0x05, 0x10, 0x06],  // packed then unpacked
            [0x0A, 0x02, 0xC3, 0x28],  // invalid UTF-8
            [0x8A, 0x80, 0x80, 0x80, 0x00, 0x00],  // an overlong key
            [0xF8, 0x07, 0x01],  // an unknown field
            [0x0B, 0x0C],  // a group
            [0x00, 0x01],  // field number 0
            [0x0A, 0x00],  // an empty label (a zero, sent)
            [0x12, 0x0B] + [UInt8](repeating: 0xFF, count: 10) + [0x01],  // a 10-byte -1
        ]
        for input in inputs {
            ModelDifferential.check(MInner.self, codec, Data(input), inner)
            ModelDifferential.check(MRenamedInner.self, codec, Data(input), inner)
        }
        let sinkInputs: [[UInt8]] = [
            [0xB2, 0x01, 0x01, 0x61, 0xB8, 0x01, 0x05],  // choice_text then choice_number (one oneof)
            [0xB2, 0x01, 0x01, 0x61, 0xB2, 0x01, 0x01, 0x62],  // choice_text twice
            [0x6A, 0x02, 0xC3, 0x28],  // invalid UTF-8 in `strings`
            [0x8A, 0x02, 0x02, 0xC3, 0x28],  // invalid UTF-8 in snake_case_name
            [0x12, 0x03, 0x0A, 0x01, 0xFF],  // invalid UTF-8 inside the nested inner
            [0x1A, 0x02, 0x12, 0x00],  // an empty packed run inside a repeated inner
            [0x0A, 0x02, 0x4A, 0x00],  // scalars with an empty f_string
            [0x0A, 0x03, 0x4A, 0x01, 0xFF],  // scalars with invalid UTF-8
            [0x0A, 0x05, 0x15, 0x00, 0x00, 0x80, 0xFF],  // a -infinity float
        ]
        for input in sinkInputs {
            ModelDifferential.check(MKitchen.self, codec, Data(input), sink)
        }
        // A NaN float (NaN equals nothing, so compared by its bits).
        let nan = Data([0x0A, 0x05, 0x15, 0x01, 0x00, 0xC0, 0x7F])
        let direct = try #require(ModelDifferential.direct(MKitchen.self, codec, nan, sink))
        let pivot = try ValueDecoder().decode(MKitchen.self, from: codec.decodeValue(nan, hints: sink, direct: false))
        #expect(direct.scalars?.fFloat.bitPattern == pivot.scalars?.fFloat.bitPattern)
        #expect(direct.scalars?.fFloat.isNaN == true)
    }

    /// Tight limits in every dimension: each input fails (or not) the same way on both paths.
    @Test func tightLimitsFailTheSameWay() throws {
        var random = SeededRandom(seed: 41)
        for seed in 0..<60 {
            var generator = ProtobufValueGenerator(schema: Self.kitchenSchema, seed: UInt64(seed))
            let type = seed % 3 == 0 ? "kitchen.Node" : "kitchen.KitchenSink"
            var hints = Self.hints(type)
            let bytes = try kitchen.encode(generator.value(for: type), hints: hints)
            var limits = DecodingLimits()
            limits.maximumDepth = Int.random(in: 1...4, using: &random)
            limits.maximumTotalValues = Int.random(in: 20...220, using: &random)
            limits.maximumContainerCount = Int.random(in: 3...43, using: &random)
            limits.maximumStringLength = Int.random(in: 0...15, using: &random)
            hints.limits = limits
            if type == "kitchen.Node" {
                ModelDifferential.check(MNode.self, kitchen, bytes, hints)
            } else {
                ModelDifferential.check(MKitchen.self, kitchen, bytes, hints)
            }
            var userHints = Self.hints("demo.UserListResponse")
            userHints.limits = limits
            let users = try Data(contentsOf: Repository.root.appendingPathComponent("Fixtures/users_10.pb"))
            ModelDifferential.check(MUserList.self, demo, users, userHints)
        }
    }

    @Test func deepNestingIsBounded() throws {
        let hints = Self.hints("kitchen.Node")
        for levels in [50, 99, 100, 101, 5000] {
            // Each level: a `children` field (3) holding the next.
            var bytes: [UInt8] = []
            for _ in 0..<levels {
                var length: [UInt8] = []
                var n = bytes.count
                while n >= 0x80 {
                    length.append(UInt8(n & 0x7F) | 0x80)
                    n >>= 7
                }
                length.append(UInt8(n))
                bytes = [0x1A] + length + bytes
            }
            ModelDifferential.check(MNode.self, kitchen, Data(bytes), hints)
        }
    }

    /// Values the wire cannot hold as the pivot writes them: the direct write leaves them to the pivot, which
    /// gives the same bytes or error.
    @Test func awkwardValuesWriteAsThePivotWrites() throws {
        let hints = Self.hints("kitchen.Scalars")
        let base = MScalars(
            fDouble: 0, fFloat: 0, fInt64: 0, fUint64: 0, fInt32: 0, fFixed64: 0, fFixed32: 0, fBool: false,
            fString: "", fUint32: 0, fSfixed32: 0, fSfixed64: 0, fSint32: 0, fSint64: 0)
        var cases: [MScalars] = [base]
        for change in [
            { (m: inout MScalars) in m.fSint32 = Int(Int32.max) + 1 },
            { $0.fSint32 = Int(Int32.min) - 1 },
            { $0.fSint32 = -1 },
            { $0.fUint64 = .max },
            { $0.fFloat = .nan },
            { $0.fFloat = .infinity },
            { $0.fFloat = 0.1 },
            { $0.fFloat = -0.0 },
            { $0.fDouble = -0.0 },
            { $0.fDouble = .nan },
            { $0.fString = "a\u{0}b" },
            { $0.fString = "zoë" },
            { $0.fInt64 = .min },
            { $0.fFixed32 = .max },
        ] as [(inout MScalars) -> Void] {
            var model = base
            change(&model)
            cases.append(model)
        }
        for model in cases { ModelDifferential.checkEncode(model, kitchen, hints) }
        var renamed = MRenamedInner(name: "x", numbers: nil, note: "not in the schema")
        ModelDifferential.checkEncode(renamed, kitchen, Self.hints("kitchen.KitchenSink.Inner"))
        renamed.note = nil
        #expect(ModelDifferential.checkEncode(renamed, kitchen, Self.hints("kitchen.KitchenSink.Inner")))
    }
}
#endif
