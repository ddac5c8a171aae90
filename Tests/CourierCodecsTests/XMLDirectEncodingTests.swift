import Courier
import CourierTestSupport
import CourierTesting
import Foundation
import Testing

@testable import CourierCodecs

/// What an encode gave: the bytes, or the error's code and coding path.
enum EncodeOutcome: Equatable {
    case bytes([UInt8])
    case failure(CourierError.Code, [PathComponent])

    init(_ body: () throws -> Data) {
        do {
            self = .bytes([UInt8](try body()))
        } catch let error as CourierError {
            self = .failure(error.code, error.context.codingPath)
        } catch {
            self = .failure(.typeMismatch, [.key("not a CourierError: \(error)")])
        }
    }
}

/// Runs the typed XML encode, the direct encoder alone and the Value pivot they must equal.
enum TypedXMLEncode {
    /// Checks `codec.encode(model:)` against the pivot, and the direct encoder's bytes (when it does
    /// not hand over to the pivot) against the pivot's. `direct`: whether the direct encoder must
    /// answer itself (`nil`: either way). Returns the typed outcome.
    @discardableResult
    static func check<T: Encodable>(
        _ model: T, codec: XMLCodec = XMLCodec(), hints: CodingHints = CodingHints(),
        encoder: ValueEncoder = ValueEncoder(), direct: Bool? = true,
        sourceLocation: SourceLocation = #_sourceLocation
    ) -> EncodeOutcome {
        let pivot = EncodeOutcome { try codec.encode(encoder.encode(model), hints: hints) }
        let typed = EncodeOutcome { try codec.encode(model: model, hints: hints, encoder: encoder) }
        #expect(typed == pivot, "\(describe(typed)) vs pivot \(describe(pivot))", sourceLocation: sourceLocation)
        var options = codec.options
        if let layout = hints.xmlArrayLayout { options.arrayItemName = layout.itemName }
        let bytes = XMLDirectEncoder.encode(
            model, rootName: hints.rootName ?? options.rootName, options: options, encoder: encoder)
        if let bytes {
            #expect(EncodeOutcome.bytes(bytes) == pivot, sourceLocation: sourceLocation)
        }
        if let direct {
            #expect((bytes != nil) == direct, "direct path taken: \(bytes != nil)", sourceLocation: sourceLocation)
        }
        return typed
    }

    static func describe(_ outcome: EncodeOutcome) -> String {
        switch outcome {
        case .bytes(let b): return String(decoding: b.prefix(600), as: UTF8.self)
        case .failure(let code, let path): return "\(code) at \(PathComponent.render(path))"
        }
    }

    /// Every codec layout the tests cover.
    static let codecs: [XMLCodec] = {
        var wrapped = XMLCodec.Options()
        wrapped.arrayItemName = .dropTrailingS
        var pretty = XMLCodec.Options()
        pretty.prettyPrinted = true
        var prettyWrapped = XMLCodec.Options()
        prettyWrapped.prettyPrinted = true
        prettyWrapped.arrayItemName = "item"
        prettyWrapped.writesDeclaration = false
        var bare = XMLCodec.Options()
        bare.writesDeclaration = false
        bare.rootName = "root"
        return [XMLCodec(), XMLCodec(options: wrapped), XMLCodec(options: pretty), XMLCodec(options: prettyWrapped),
                XMLCodec(options: bare)]
    }()

    /// Every `ValueEncoder` option combination the tests cover.
    static let encoders: [ValueEncoder] = {
        var result: [ValueEncoder] = []
        for dates in [DateCodingStrategy.iso8601, .secondsSince1970, .millisecondsSince1970] {
            for data in [DataCodingStrategy.base64, .bytes] {
                for keys in [KeyCodingStrategy.useDefaultKeys, .convertToSnakeCase] {
                    var encoder = ValueEncoder()
                    encoder.dateStrategy = dates
                    encoder.dataStrategy = data
                    encoder.keyStrategy = keys
                    result.append(encoder)
                }
            }
        }
        return result
    }()
}

// MARK: - Models

/// Attributes (`@x`), text (`#text`) and children, written by hand.
private struct Tagged: Encodable {
    var id: Int
    var lang: String?
    var text: String
    var children: [String]
    var attributeLast = false
    var textLast = false

    enum Keys: String, CodingKey {
        case id = "@id", lang = "@lang", text = "#text", child
    }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: Keys.self)
        if !attributeLast { try c.encode(id, forKey: .id) }
        try c.encodeIfPresent(lang, forKey: .lang)
        if !textLast { try c.encode(text, forKey: .text) }
        for child in children.prefix(1) { try c.encode(child, forKey: .child) }
        if attributeLast { try c.encode(id, forKey: .id) }
        if textLast { try c.encode(text, forKey: .text) }
    }
}

/// Nested containers, a super encoder, nil members and a key written twice.
private struct Custom: Encodable {
    var id: Int
    var point: [Double]
    var parent: String?
    var twice = false
    var late = false

    enum Keys: String, CodingKey { case id, meta, parent, absent, userName }
    enum Meta: String, CodingKey { case label, point }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: Keys.self)
        try c.encode(id, forKey: .id)
        var meta = c.nestedContainer(keyedBy: Meta.self, forKey: .meta)
        try meta.encode("m", forKey: .label)
        var points = meta.nestedUnkeyedContainer(forKey: .point)
        for p in point { try points.encode(p) }
        if late {
            try c.encode(1, forKey: .userName)
            try meta.encode("late", forKey: .label)
        }
        var sup = c.superEncoder(forKey: .parent).singleValueContainer()
        if let parent { try sup.encode(parent) } else { try sup.encodeNil() }
        try c.encodeNil(forKey: .absent)
        if twice { try c.encode(9, forKey: .id) }
        let s = c.superEncoder()
        var sc = s.container(keyedBy: Meta.self)
        try sc.encode("base", forKey: .label)
    }
}

/// Arrays inside arrays, optionals in arrays, empty things.
private struct Shapes: Codable {
    var grid: [[Int]]
    var maybe: [Int?]
    var empty: [String]
    var nothing: [String: Int]
    var inner: Inner
    var unit: Unit

    struct Inner: Codable { var deep: [[[String]]] }
    struct Unit: Codable {}
}

/// Every scalar width with extremes.
private struct Widths: Encodable {
    var i8 = Int8.min
    var i16 = Int16.max
    var i32 = Int32.min
    var i64 = Int64.min
    var u = UInt.max
    var u8 = UInt8.max
    var u16 = UInt16.max
    var u32 = UInt32.max
    var u64 = UInt64.max
    var f = Float(0.1)
    var fInf = Float.infinity
    var d = 1e-7
    var dBig = 1e300
    var nan = Double.nan
    var negInf = -Double.infinity
    var whole = 42.0
    var t = true
    var list: [Float] = [0.5, -1, .nan]
}

/// A model that throws from `encode(to:)` at a given member.
private struct Throwing: Encodable {
    var after: Int
    enum Keys: String, CodingKey { case a, b, c }
    struct Boom: Error {}

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: Keys.self)
        try c.encode(1, forKey: .a)
        if after == 1 { throw EncodingError.invalidValue(1, .init(codingPath: c.codingPath, debugDescription: "no")) }
        var nested = c.nestedUnkeyedContainer(forKey: .b)
        try nested.encode(2)
        if after == 2 { throw Boom() }
        try c.encode(Decimal.nan, forKey: .c)
    }
}

/// Keys as written, for names XML refuses and namespace prefixes.
private struct Named: Encodable {
    var keys: [String]
    var values: [String]

    struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: Key.self)
        for (k, v) in zip(keys, values) { try c.encode(v, forKey: Key(stringValue: k)) }
    }
}

/// A chain of nested models, for the depth limit.
private final class Chain: Encodable {
    let next: Chain?
    init(depth: Int) { next = depth > 0 ? Chain(depth: depth - 1) : nil }
}

/// A model that asks for two kinds of container, or for one twice.
private struct Mixed: Encodable {
    var mode: Int
    enum Keys: String, CodingKey { case a, b }

    func encode(to encoder: any Encoder) throws {
        switch mode {
        case 0:
            var c = encoder.container(keyedBy: Keys.self)
            try c.encode(1, forKey: .a)
            var d = encoder.container(keyedBy: Keys.self)
            try d.encode(2, forKey: .b)
        case 1:
            var c = encoder.container(keyedBy: Keys.self)
            try c.encode(1, forKey: .a)
            var u = encoder.unkeyedContainer()
            try u.encode(2)
        case 2:
            var s = encoder.singleValueContainer()
            try s.encode(1)
            try s.encode(2)
        default:
            var u = encoder.unkeyedContainer()
            try u.encode(1)
            var v = encoder.unkeyedContainer()
            try v.encode(2)
            var n = v.nestedContainer(keyedBy: Keys.self)
            try n.encode("x", forKey: .a)
            var s = v.superEncoder().singleValueContainer()
            try s.encodeNil()
        }
    }
}

// MARK: - Tests

@Suite struct XMLDirectEncodingTests {
    static let fixtures = Repository.root.appendingPathComponent("Fixtures")

    @Test func theUserListFixtureEncodesLikeThePivotInEveryLayout() throws {
        let data = try Data(contentsOf: Self.fixtures.appendingPathComponent("users_10.xml"))
        let page = try XMLCodec().decode(TypedPage.self, from: data, hints: CodingHints(), decoder: ValueDecoder())
        for codec in TypedXMLEncode.codecs {
            for encoder in TypedXMLEncode.encoders.prefix(2) {
                var hints = CodingHints()
                hints.rootName = "users"
                TypedXMLEncode.check(page, codec: codec, hints: hints, encoder: encoder)
                hints.xmlArrayLayout = .wrapped(.dropTrailingS)
                TypedXMLEncode.check(page, codec: codec, hints: hints, encoder: encoder)
                hints.xmlArrayLayout = .repeated
                TypedXMLEncode.check(page, codec: codec, hints: hints, encoder: encoder)
            }
        }
    }

    @Test func generatedModelsEncodeLikeThePivotWithEveryOption() throws {
        var generator = ModelGenerator(seed: 2024, options: ModelGenerator.Options())
        let codecs = TypedXMLEncode.codecs
        let encoders = TypedXMLEncode.encoders
        for i in 0..<240 {
            let codec = codecs[i % codecs.count]
            let encoder = encoders[(i / codecs.count) % encoders.count]
            var hints = CodingHints()
            if i % 4 == 1 { hints.rootName = "profile" }
            if i % 7 == 3 { hints.xmlArrayLayout = .wrapped("entry") }
            // Unrestricted strings: control characters make the pivot fail, and so must the typed path.
            TypedXMLEncode.check(try generator.next(Profile.self), codec: codec, hints: hints, encoder: encoder, direct: nil)
            TypedXMLEncode.check(try generator.next(TypedPage.self), codec: codec, hints: hints, encoder: encoder, direct: nil)
            TypedXMLEncode.check(try generator.next(TypedScalars.self), codec: codec, hints: hints, encoder: encoder, direct: nil)
            TypedXMLEncode.check(try generator.next(TypedSpecial.self), codec: codec, hints: hints, encoder: encoder, direct: nil)
            TypedXMLEncode.check(try generator.next(TypedSnake.self), codec: codec, hints: hints, encoder: encoder, direct: nil)
        }
    }

    @Test func modelsWithXMLSafeTextTakeTheDirectPath() throws {
        var generator = ModelGenerator(seed: 77, options: ModelGenerator.Options().carried(by: [.xml]))
        for i in 0..<100 {
            let codec = TypedXMLEncode.codecs[i % TypedXMLEncode.codecs.count]
            let encoder = TypedXMLEncode.encoders[i % TypedXMLEncode.encoders.count]
            TypedXMLEncode.check(try generator.next(TypedPage.self), codec: codec, encoder: encoder)
            TypedXMLEncode.check(try generator.next(TypedScalars.self), codec: codec, encoder: encoder)
            TypedXMLEncode.check(try generator.next(Profile.self), codec: codec, encoder: encoder)
        }
    }

    @Test func attributesAndTextAreWrittenInTheirPlaces() {
        for codec in TypedXMLEncode.codecs {
            TypedXMLEncode.check(Tagged(id: 7, lang: "en", text: "a<b & \"c\"", children: []), codec: codec)
            TypedXMLEncode.check(Tagged(id: 7, lang: "it's \"q\"\t\n", text: "", children: ["x"]), codec: codec)
            TypedXMLEncode.check(Tagged(id: -1, lang: nil, text: "t", children: ["x"]), codec: codec)
            // An attribute or the text after a child element: the pivot writes them first.
            TypedXMLEncode.check(
                Tagged(id: 1, lang: nil, text: "t", children: ["x"], attributeLast: true), codec: codec, direct: false)
            TypedXMLEncode.check(
                Tagged(id: 1, lang: nil, text: "t", children: ["x"], textLast: true), codec: codec, direct: false)
            TypedXMLEncode.check(Tagged(id: 1, lang: "\u{1}", text: "t", children: []), codec: codec, direct: false)
        }
    }

    @Test func nestedContainersSuperEncodersAndNils() {
        for codec in TypedXMLEncode.codecs {
            TypedXMLEncode.check(Custom(id: 1, point: [1.5, -2], parent: "p"), codec: codec)
            TypedXMLEncode.check(Custom(id: 1, point: [], parent: nil), codec: codec)
            TypedXMLEncode.check(Custom(id: 1, point: [3], parent: nil, twice: true), codec: codec, direct: false)
            TypedXMLEncode.check(Custom(id: 1, point: [3], parent: nil, late: true), codec: codec, direct: false)
            for mode in 0..<4 {
                TypedXMLEncode.check(Mixed(mode: mode), codec: codec, direct: mode == 0 ? true : nil)
            }
        }
    }

    @Test func arraysInArraysOptionalsAndEmptyThings() {
        let samples = [
            Shapes(grid: [[1, 2], [], [3]], maybe: [1, nil, 3], empty: [], nothing: [:], inner: .init(deep: [[["a"]], []]), unit: .init()),
            Shapes(grid: [], maybe: [nil], empty: [""], nothing: ["k": 1, "j": 2], inner: .init(deep: []), unit: .init()),
        ]
        for codec in TypedXMLEncode.codecs {
            for sample in samples {
                TypedXMLEncode.check(sample, codec: codec)
                TypedXMLEncode.check(sample.grid, codec: codec)
                TypedXMLEncode.check(sample.maybe, codec: codec)
                TypedXMLEncode.check(sample.inner.deep, codec: codec)
            }
            TypedXMLEncode.check(["a", "<b>"], codec: codec)
            TypedXMLEncode.check([Double](), codec: codec)
            TypedXMLEncode.check([1.5, 2], codec: codec)
            TypedXMLEncode.check([[String]](arrayLiteral: [], ["x"]), codec: codec)
            TypedXMLEncode.check("top", codec: codec)
            TypedXMLEncode.check(Int?.none, codec: codec)
            TypedXMLEncode.check(Shapes.Unit(), codec: codec)
            TypedXMLEncode.check(Widths(), codec: codec)
        }
    }

    @Test func specialTypesGoThroughTheValueEncoder() throws {
        let special = TypedSpecial(
            when: Date(timeIntervalSince1970: 1_700_000_000.941), blob: Data([0, 1, 2, 255]),
            link: URL(string: "https://example.com/a?b=c&d"), amount: Decimal(string: "12.50"),
            extra: ["@x": 1, "y": [1, "two", nil], "#text": "t"], values: [.null, ["a": ["b"]], 3])
        for codec in TypedXMLEncode.codecs {
            for encoder in TypedXMLEncode.encoders {
                TypedXMLEncode.check(special, codec: codec, encoder: encoder)
            }
        }
        // Special types at the root go to the pivot.
        TypedXMLEncode.check(Date(timeIntervalSince1970: 0), direct: false)
        TypedXMLEncode.check(Value.object(["a": 1]), direct: false)
        TypedXMLEncode.check(Decimal.nan, direct: false)
    }

    @Test func errorsHaveThePivotsCodeAndPath() throws {
        let xmlSafe = TypedXMLEncode.check(Throwing(after: 1), direct: false)
        if case .failure(let code, _) = xmlSafe { #expect(code == .encodingFailed) } else { Issue.record("no error") }
        TypedXMLEncode.check(Throwing(after: 2), direct: false)
        let decimal = TypedXMLEncode.check(Throwing(after: 3), direct: false)
        #expect(decimal == .failure(.encodingFailed, ["c"]))
        // Names XML refuses, prefixes nobody declares, and declared ones.
        let bad = TypedXMLEncode.check(Named(keys: ["ok", "1bad"], values: ["a", "b"]), direct: false)
        #expect(bad == .failure(.encodingFailed, ["1bad"]))
        TypedXMLEncode.check(Named(keys: ["p:x"], values: ["a"]), direct: false)
        TypedXMLEncode.check(Named(keys: ["@xmlns:p", "p:x"], values: ["urn:p", "a"]), direct: false)
        TypedXMLEncode.check(Named(keys: ["@xmlns", "x"], values: ["urn:d", "a"]))
        TypedXMLEncode.check(Named(keys: ["#other"], values: ["a"]), direct: false)
        TypedXMLEncode.check(Named(keys: ["a", "a"], values: ["1", "2"]), direct: false)
        let many = (0..<40).map { "k\($0)" }
        TypedXMLEncode.check(Named(keys: many, values: many))
        TypedXMLEncode.check(Named(keys: many + ["k3"], values: many + ["again"]), direct: false)
        TypedXMLEncode.check(Named(keys: many + ["k39"], values: many + ["again"]), direct: false)
        TypedXMLEncode.check(Named(keys: Array(many[..<15]) + ["k2"], values: many), direct: false)
        let control = TypedXMLEncode.check(Named(keys: ["a", "b"], values: ["x", "y\u{0}"]), direct: false)
        #expect(control == .failure(.encodingFailed, ["b"]))
        TypedXMLEncode.check(Named(keys: ["a"], values: ["\u{FFFE}"]), direct: false)
        // A bad root name, and the depth limit.
        var hints = CodingHints()
        hints.rootName = "not a name"
        TypedXMLEncode.check(Widths(), hints: hints, direct: false)
        var shallow = XMLCodec.Options()
        shallow.maximumDepth = 5
        let deep = TypedXMLEncode.check(Chain(depth: 8), codec: XMLCodec(options: shallow), direct: false)
        if case .failure(let code, _) = deep { #expect(code == .encodingFailed) } else { Issue.record("no error") }
        TypedXMLEncode.check(Chain(depth: 3), codec: XMLCodec(options: shallow))
        // Lists of scalars at the depth limit: items one level deeper when wrapped.
        for depth in 1...4 {
            var limited = XMLCodec.Options()
            limited.maximumDepth = depth
            let list = TypedScalars(
                i8: 1, u16: 2, i32: nil, u: 3, f: 1, d: nil, flag: nil, text: "t", list: [1, 2], names: ["a"], inner: nil,
                inners: [])
            TypedXMLEncode.check(list, codec: XMLCodec(options: limited), direct: nil)
            limited.arrayItemName = .dropTrailingS
            TypedXMLEncode.check(list, codec: XMLCodec(options: limited), direct: nil)
        }
    }

    /// A model that catches an error and goes on gets the pivot's bytes: the direct encoder gives up on any
    /// error, since what it streamed before the error cannot be taken back.
    @Test func caughtErrorsLeaveNoTrace() {
        for mode in 0..<CatchingModel.modes {
            for codec in TypedXMLEncode.codecs {
                TypedXMLEncode.check(CatchingModel(mode: mode), codec: codec, direct: nil)
            }
        }
        var bare = XMLCodec.Options()
        bare.writesDeclaration = false
        let codec = XMLCodec(options: bare)
        func text(_ mode: Int) -> String? {
            (try? codec.encode(model: CatchingModel(mode: mode), hints: CodingHints(), encoder: ValueEncoder()))
                .map { String(decoding: $0, as: UTF8.self) }
        }
        #expect(text(1) == "<response><id>1</id></response>")
        #expect(text(2) == "<response><y>1</y></response>")
        #expect(text(3) == "<response><y>1</y></response>")
        #expect(text(5) == "<response>2</response>")
        #expect(text(9) == "<response><x><id>1</id></x><y><id>1</id></y><id>2</id></response>")
    }

    @Test func snakeCaseKeysAndUserInfo() {
        var encoder = ValueEncoder()
        encoder.keyStrategy = .convertToSnakeCase
        let snake = TypedSnake(userId: 3, firstName: "Ada", homeAddress: .init(city: "c", street: "s", zip: "z"))
        for codec in TypedXMLEncode.codecs {
            let outcome = TypedXMLEncode.check(snake, codec: codec, encoder: encoder)
            if case .bytes(let bytes) = outcome {
                #expect(String(decoding: bytes, as: UTF8.self).contains("<user_id>3</user_id>"))
            }
        }
    }
}
