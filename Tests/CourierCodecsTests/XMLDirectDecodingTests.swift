import Courier
import CourierCodecs
import CourierTestSupport
import CourierTesting
import Foundation
import Testing

/// What a decode gave: the model, or the error's code, coding path, line and column.
enum TypedOutcome<T: Equatable>: Equatable {
    case model(T)
    case failure(CourierError.Code, [PathComponent], Int?, Int?)

    init(_ body: () throws -> T) {
        do {
            self = .model(try body())
        } catch let error as CourierError {
            self = .failure(error.code, error.context.codingPath, error.context.line, error.context.column)
        } catch {
            self = .failure(.typeMismatch, [PathComponent.key("not a CourierError: \(error)")], nil, nil)
        }
    }
}

/// Runs the typed XML path and the Value pivot it must equal.
enum TypedXML {
    /// The pivot: the document read with the model's shape (snake-cased for `.convertFromSnakeCase`, as
    /// `CourierClient` does) unless the hints carry one, then `ValueDecoder`.
    static func pivot<T: Decodable & Equatable>(
        _ type: T.Type, _ data: Data, hints: CodingHints = CodingHints(), decoder: ValueDecoder = ValueDecoder(),
        codec: XMLCodec = XMLCodec()
    ) -> TypedOutcome<T> {
        var hints = hints
        if hints.shape == nil {
            var shape = ValueShape(of: T.self)
            if decoder.keyStrategy == .convertFromSnakeCase {
                shape = shape.mappingKeys(KeyCodingStrategy.snakeCase(fromCamelCase:))
            }
            hints.shape = shape
        }
        return TypedOutcome { try decoder.decode(T.self, from: codec.decode(data, hints: hints)) }
    }

    /// The direct path.
    static func direct<T: Decodable & Equatable>(
        _ type: T.Type, _ data: Data, hints: CodingHints = CodingHints(), decoder: ValueDecoder = ValueDecoder(),
        codec: XMLCodec = XMLCodec()
    ) -> TypedOutcome<T> {
        TypedOutcome { try codec.decode(T.self, from: data, hints: hints, decoder: decoder) }
    }

    /// Both, compared; returns the direct outcome.
    @discardableResult
    static func check<T: Decodable & Equatable>(
        _ type: T.Type, _ data: Data, hints: CodingHints = CodingHints(), decoder: ValueDecoder = ValueDecoder(),
        codec: XMLCodec = XMLCodec(), sourceLocation: SourceLocation = #_sourceLocation
    ) -> TypedOutcome<T> {
        let expected = pivot(T.self, data, hints: hints, decoder: decoder, codec: codec)
        let actual = direct(T.self, data, hints: hints, decoder: decoder, codec: codec)
        #expect(
            actual == expected, "\(String(decoding: data.prefix(400), as: UTF8.self))", sourceLocation: sourceLocation)
        return actual
    }

    @discardableResult
    static func check<T: Decodable & Equatable>(
        _ type: T.Type, _ xml: String, hints: CodingHints = CodingHints(), decoder: ValueDecoder = ValueDecoder(),
        codec: XMLCodec = XMLCodec(), sourceLocation: SourceLocation = #_sourceLocation
    ) -> TypedOutcome<T> {
        check(T.self, Data(xml.utf8), hints: hints, decoder: decoder, codec: codec, sourceLocation: sourceLocation)
    }
}

// MARK: - Models

/// The demo user-list page.
struct TypedPage: Codable, Equatable {
    struct Address: Codable, Equatable { var city: String; var street: String; var zip: String }
    struct User: Codable, Equatable {
        var id: Int64
        var name: String
        var email: String
        var age: Int
        var score: Double
        var active: Bool
        var tags: [String]
        var address: Address
    }
    struct Body: Codable, Equatable { var page: Int; var total: Int; var users: [User] }
    var code: Int
    var message: String
    var data: Body
}

/// Scalars of every width, optionals, lists and nested optionals.
struct TypedScalars: Codable, Equatable {
    struct Inner: Codable, Equatable { var a: Int16?; var b: [UInt8]; var c: String? }
    var i8: Int8
    var u16: UInt16
    var i32: Int32?
    var u: UInt
    var f: Float
    var d: Double?
    var flag: Bool?
    var text: String
    var list: [Int]
    var names: [String]?
    var inner: Inner?
    var inners: [Inner]
}

/// Members the tape hands to `ValueDecoder`: dates, data, URLs, decimals and raw values.
struct TypedSpecial: Codable, Equatable {
    var when: Date?
    var blob: Data?
    var link: URL?
    var amount: Decimal?
    var extra: Value?
    var values: [Value]?
}

/// A hand-written `init(from:)`: nested containers, `decodeIfPresent`, `contains`, `allKeys`, a swallowed
/// error and a super decoder.
struct TypedCustom: Decodable, Equatable {
    var id: Int
    var label: String
    var point: [Double]
    var fallback: Int
    var keys: [String]
    var parent: String?
    var present: Bool

    enum Keys: String, CodingKey { case id, meta, label, point, fallback, parent, absent }
    enum Meta: String, CodingKey { case label, point }

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Keys.self)
        id = try c.decode(Int.self, forKey: .id)
        let meta = try c.nestedContainer(keyedBy: Meta.self, forKey: .meta)
        label = try meta.decode(String.self, forKey: .label)
        var point = try meta.nestedUnkeyedContainer(forKey: .point)
        var coordinates: [Double] = []
        while !point.isAtEnd { coordinates.append(try point.decode(Double.self)) }
        self.point = coordinates
        fallback = (try? c.decode(Int.self, forKey: .fallback)) ?? -1
        keys = c.allKeys.map(\.stringValue).sorted()
        present = c.contains(.absent)
        parent = try c.contains(.parent) ? c.superDecoder(forKey: .parent).singleValueContainer().decode(String?.self) : nil
    }
}

/// Two large elements read out of order, one after the other.
struct TypedPair: Decodable, Equatable {
    var first: OutOfOrderModel
    var second: OutOfOrderModel
}

/// Members named in camel case, for `.convertFromSnakeCase`.
struct TypedSnake: Codable, Equatable {
    var userId: Int
    var firstName: String
    var homeAddress: TypedPage.Address?
}

/// An enum with raw values and one with a custom failure.
struct TypedEnums: Codable, Equatable {
    enum Role: String, Codable { case admin, member }
    enum Level: Int, Codable { case low = 1, high = 9 }
    var role: Role
    var level: Level?
    var roles: [Role]
}

// MARK: - Tests

@Suite struct XMLDirectDecodingTests {
    static let fixtures = Repository.root.appendingPathComponent("Fixtures")

    @Test(arguments: ["users_10", "users_5000"])
    func fixturesDecodeLikeThePivot(name: String) throws {
        let data = try Data(contentsOf: Self.fixtures.appendingPathComponent("\(name).xml"))
        let outcome = TypedXML.check(TypedPage.self, data)
        guard case .model(let page) = outcome else {
            Issue.record("the fixture did not decode: \(outcome)")
            return
        }
        #expect(page.data.users.count == (name == "users_10" ? 10 : 5000))
        // With an explicit shape in the hints, and as a raw Value.
        var hints = CodingHints()
        hints.shape = XMLTest.userListShape
        TypedXML.check(TypedPage.self, data, hints: hints)
        #expect(try XMLCodec().decode(Value.self, from: data, hints: hints, decoder: ValueDecoder())
            == XMLCodec().decode(data, hints: hints))
    }

    /// Lists of `Float` and of every fixed-width integer are read in one pass: the same models, and the same
    /// errors at the same item, as the pivot.
    @Test func listsOfEveryScalarWidthDecodeLikeThePivot() throws {
        struct Lists: Codable, Equatable {
            var ratio: [Float]
            var small: [Int8]
            var short: [Int16]
            var word: [Int32]
            var byte: [UInt8]
            var count: [UInt]
            var big: [UInt64]
        }
        func document(ratio: String = "1.5", byte: String = "255") -> Data {
            Data("""
                <lists><ratio>\(ratio)</ratio><ratio>-2</ratio><small>-128</small><small>127</small><short>300</short>\
                <word>-70000</word><byte>0</byte><byte>\(byte)</byte><count>7</count><big>18446744073709551615</big>\
                <big>1</big></lists>
                """.utf8)
        }
        #expect(TypedXML.check(Lists.self, document()) == .model(Lists(
            ratio: [1.5, -2], small: [-128, 127], short: [300], word: [-70000], byte: [0, 255], count: [7],
            big: [.max, 1])))
        for (ratio, byte) in [("1e39", "255"), ("1.5", "256"), ("1.5", "-1"), ("x", "1")] {
            guard case .failure = TypedXML.check(Lists.self, document(ratio: ratio, byte: byte)) else {
                Issue.record("\(ratio), \(byte) decoded")
                continue
            }
        }
    }

    @Test func generatedProfilesDecodeLikeThePivotInEveryLayout() throws {
        var options = ModelGenerator.Options().carried(by: [.xml])
        options.emptyStringsInArrays = true
        var generator = ModelGenerator(seed: 1414, options: options)
        var wrapped = XMLCodec.Options()
        wrapped.arrayItemName = .dropTrailingS
        var pretty = XMLCodec.Options()
        pretty.prettyPrinted = true
        pretty.arrayItemName = "item"
        let codecs = [XMLCodec(), XMLCodec(options: wrapped), XMLCodec(options: pretty)]
        var decoded = 0
        for i in 0..<300 {
            let profile = try generator.next(Profile.self)
            let codec = codecs[i % codecs.count]
            var hints = CodingHints()
            hints.rootName = i % 2 == 0 ? "profile" : nil
            let data = try codec.encode(model: profile, hints: hints, encoder: ValueEncoder())
            if case .model = TypedXML.check(Profile.self, data, codec: codec) { decoded += 1 }
        }
        #expect(decoded > 200)
    }

    @Test func generatedPagesDecodeLikeThePivotAndSoDoTheirMutations() throws {
        var generator = ModelGenerator(seed: 99, options: ModelGenerator.Options().carried(by: [.xml]))
        var random = SeededRandom(seed: 7)
        var wrapped = XMLCodec.Options()
        wrapped.arrayItemName = .dropTrailingS
        for i in 0..<150 {
            let page = try generator.next(TypedPage.self)
            var hints = CodingHints()
            if i % 3 == 0 { hints.xmlArrayLayout = .wrapped(.dropTrailingS) }
            let data = try XMLCodec().encode(model: page, hints: hints, encoder: ValueEncoder())
            TypedXML.check(TypedPage.self, data)
            // Mutations: cut, a byte changed, a stretch removed, a tag doubled.
            var bytes = [UInt8](data)
            let at = Int(random.next() % UInt64(bytes.count))
            TypedXML.check(TypedPage.self, Data(bytes[..<at]))
            bytes[at] = [UInt8(ascii: "x"), UInt8(ascii: "<"), UInt8(ascii: "1"), 0xFF, UInt8(ascii: " ")][i % 5]
            TypedXML.check(TypedPage.self, Data(bytes))
            var cut = [UInt8](data)
            let from = Int(random.next() % UInt64(cut.count))
            cut.removeSubrange(from..<min(cut.count, from + 1 + Int(random.next() % 40)))
            TypedXML.check(TypedPage.self, Data(cut))
            let text = String(decoding: data, as: UTF8.self)
            TypedXML.check(TypedPage.self, text.replacingOccurrences(of: "<age>", with: "<age>9999999999999999999"))
            TypedXML.check(TypedPage.self, text.replacingOccurrences(of: "</address>", with: "</address><address/>"))
            TypedXML.check(TypedPage.self, text.replacingOccurrences(of: "<active>", with: "<active xsi:nil=\"true\" xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\">"))
        }
    }

    @Test func generatedValuesReadAsModelsFailOrSucceedLikeThePivot() throws {
        var generator = ValueGenerator(seed: 2024)
        for _ in 0..<300 {
            let value = generator.next(maxDepth: 3, maxWidth: 5)
            guard let data = try? XMLCodec().encode(value, hints: CodingHints()) else { continue }
            TypedXML.check(TypedScalars.self, data)
            TypedXML.check(TypedSpecial.self, data)
            TypedXML.check(TypedEnums.self, data)
            TypedXML.check(Value.self, data)
        }
    }

    @Test(arguments: [
        "<r><i8>-128</i8><u16>65535</u16><u>0</u><f>1.5</f><text>x</text><list>1</list><list>2</list><inners/></r>",
        "<r><i8>128</i8><u16>1</u16><u>0</u><f>1</f><text/><list/><inners/></r>",
        "<r><i8>1</i8><u16>-1</u16><u>0</u><f>1</f><text/><inners/></r>",
        "<r><i8>1</i8><u16>1</u16><u>18446744073709551616</u><f>1</f><text/><inners/></r>",
        "<r><i8>1</i8><u16>1</u16><u>1</u><f>1e39</f><text/><inners/></r>",
        "<r><i8>1</i8><u16>1</u16><u>1</u><f>INF</f><d></d><flag></flag><i32/><text/><inners/></r>",
        "<r><i8>1.0</i8><u16>1</u16><u>1</u><f>1</f><text>a</text><inners><inner><a>1</a><b>2</b></inner></inners></r>",
        "<r><i8>1</i8><u16>1</u16><u>1</u><f>1</f><text>a</text><inners><a>1</a><b>2</b><b>3</b></inners><inners/></r>",
        "<r><i8>1</i8><u16>1</u16><u>1</u><f>1</f><text>a</text><inner><b>300</b></inner><inners/></r>",
        "<r><i8>1</i8><u16>1</u16><u>1</u><f>1</f><text>a</text><inner/><inners><c>z</c></inners><names/></r>",
        "<r><i8>1</i8><u16>1</u16><u>1</u><f>1</f><text>a <b>x</b></text><inners/></r>",
        "<r x=\"1\"><i8>1</i8><u16 y=\"2\">1</u16><u>1</u><f>1</f><text>a</text><inners/></r>",
        "<r xmlns=\"urn:x\"><i8>1</i8><u16>1</u16><u>1</u><f>1</f><text>mixed<q/>more</text><inners/></r>",
        "<r><i8>1</i8><u16>1</u16><u>1</u><f>1</f><text><![CDATA[<&>]]></text><d>-INF</d><inners/></r>",
        "<r><i8>1</i8><u16>1</u16><u>1</u><f>1</f><text>t</text><d>0.12345678901234567</d><inners/><list>x</list></r>",
        "<r><i8>1</i8><u16>1</u16><u>1</u><f>1</f><text>t</text><inners/><i8>2</i8></r>",
        "<r><i8>1</i8><u16>1</u16><u>1</u><f>1</f><inners/></r>",
        "<r/>",
        "<r>text</r>",
    ])
    func handWrittenScalarDocuments(xml: String) {
        TypedXML.check(TypedScalars.self, xml)
        TypedXML.check([TypedScalars].self, xml)
        TypedXML.check(TypedScalars?.self, xml)
    }

    @Test func specialMembersGoThroughValueDecoder() {
        let xml = """
            <r><when>2024-05-01T10:00:00Z</when><blob>AAE=</blob><link>https://x.org/a</link>\
            <amount>12.50</amount><extra><a>1</a><a>2</a><b/></extra><values>1</values><values><z>2</z></values></r>
            """
        guard case .model(let special) = TypedXML.check(TypedSpecial.self, xml) else {
            Issue.record("did not decode")
            return
        }
        #expect(special.blob == Data([0, 1]))
        TypedXML.check(TypedSpecial.self, "<r><when>yesterday</when></r>")
        TypedXML.check(TypedSpecial.self, "<r><blob>!!</blob></r>")
        var seconds = ValueDecoder()
        seconds.dateStrategy = .secondsSince1970
        TypedXML.check(TypedSpecial.self, "<r><when>1700000000</when></r>", decoder: seconds)
        TypedXML.check(TypedSpecial.self, "<r><when>x</when></r>", decoder: seconds)
    }

    @Test func handWrittenInitFromCallsEveryContainer() {
        TypedXML.check(TypedCustom.self, "<r><id>1</id><meta><label>a</label><point>1</point><point>2.5</point></meta><fallback>x</fallback><parent>p</parent></r>")
        TypedXML.check(TypedCustom.self, "<r><id>1</id><meta><label>a</label><point><v>1</v><v>2</v></point></meta><fallback>7</fallback></r>")
        TypedXML.check(TypedCustom.self, "<r><id>1</id><meta><label>a</label></meta><absent/></r>")
        TypedXML.check(TypedCustom.self, "<r><id>1</id><meta/></r>")
        TypedXML.check(TypedCustom.self, "<r><id>x</id></r>")
        TypedXML.check(TypedCustom.self, "<r><meta><label>a</label><point>q</point></meta><id>2</id></r>")
    }

    /// Elements of more than 16 members read out of order, by hand and as dictionaries, snake-cased too:
    /// after a few misses they are looked up through a table of their names, which must find what reading
    /// every name found (the first member of a name). Two large siblings keep a table each.
    @Test func largeElementsReadOutOfOrderDecodeLikeThePivot() {
        var hints = CodingHints()
        hints.shape = ValueShape(of: [String: Int].self)
        var snake = ValueDecoder()
        snake.keyStrategy = .convertFromSnakeCase
        for count in [10, 17, 40] {
            let members = (0..<count).map { "<k\($0)>\($0)</k\($0)>" }
            let snaked = (0..<count).map { "<k_\($0)>\($0)</k_\($0)>" }
            for layout in [members, members.reversed(), members + ["<k\u{e9}>-1</k\u{e9}>"], snaked] {
                let xml = "<r>" + layout.joined() + "</r>"
                for decoder in [ValueDecoder(), snake] {
                    TypedXML.check(OutOfOrderModel.self, xml, hints: hints, decoder: decoder)
                    TypedXML.check([String: Int].self, xml, hints: hints, decoder: decoder)
                }
            }
        }
        let members = (0..<40).map { "<k\($0)>\($0)</k\($0)>" }.joined()
        var pair = CodingHints()
        pair.shape = .object(["first": ValueShape(of: [String: Int].self), "second": ValueShape(of: [String: Int].self)])
        let outcome = TypedXML.check(
            TypedPair.self, "<r><first>\(members)</first><second>\(members)</second></r>", hints: pair)
        if case .model(let pair) = outcome {
            #expect(pair.second.values["k7"] == 7 && pair.second.absent == [nil, nil, nil, nil, 0, 39])
        } else {
            Issue.record("did not decode: \(outcome)")
        }
    }

    @Test func decoderOptionsAreHonoured() {
        var snake = ValueDecoder()
        snake.keyStrategy = .convertFromSnakeCase
        let xml = "<r><user_id>3</user_id><first_name>Ada</first_name><home_address><city>c</city><street>s</street><zip>1</zip></home_address></r>"
        guard case .model(let model) = TypedXML.check(TypedSnake.self, xml, decoder: snake) else {
            Issue.record("did not decode")
            return
        }
        #expect(model.userId == 3)
        TypedXML.check(TypedSnake.self, xml)
        var lenient = ValueDecoder()
        lenient.lenientNumbers = true
        var hints = CodingHints()
        hints.shape = .object(["userId": .string, "firstName": .string])
        TypedXML.check(TypedSnake.self, "<r><userId>42</userId><firstName>x</firstName></r>", hints: hints, decoder: lenient)
        TypedXML.check(TypedSnake.self, "<r><userId>42</userId><firstName>x</firstName></r>", hints: hints)
        TypedXML.check(TypedEnums.self, "<r><role>admin</role><level>9</level><roles>member</roles></r>")
        TypedXML.check(TypedEnums.self, "<r><role>root</role><roles/></r>")
        TypedXML.check(TypedEnums.self, "<r><role>admin</role><level>5</level></r>")
    }

    @Test func snakeCaseKeysDecodeLikeThePivotIncludingCollisions() throws {
        var snake = ValueDecoder()
        snake.keyStrategy = .convertFromSnakeCase
        var toSnake = ValueEncoder()
        toSnake.keyStrategy = .convertToSnakeCase
        var generator = ModelGenerator(seed: 4242, options: ModelGenerator.Options().carried(by: [.xml]))
        var decoded = 0
        for i in 0..<120 {
            var hints = CodingHints()
            if i % 3 == 0 { hints.xmlArrayLayout = .wrapped(.dropTrailingS) }
            let profile = try generator.next(Profile.self)
            let data = try XMLCodec().encode(model: profile, hints: hints, encoder: toSnake)
            if case .model = TypedXML.check(Profile.self, data, decoder: snake) { decoded += 1 }
            TypedXML.check(TypedSnake.self, try XMLCodec().encode(model: try generator.next(TypedSnake.self), hints: hints, encoder: toSnake), decoder: snake)
            TypedXML.check(TypedSnake.self, Data(data.prefix(data.count / 2)), decoder: snake)
        }
        #expect(decoded > 60)
        // Two names converting to the same key: the pivot keeps the last member.
        TypedXML.check(TypedSnake.self, "<r><user_id>1</user_id><userId>2</userId><first_name>a</first_name></r>", decoder: snake)
        TypedXML.check(TypedSnake.self, "<r><userId>2</userId><user_id>1</user_id><first_name>a</first_name></r>", decoder: snake)
        TypedXML.check(TypedSnake.self, "<r><user__id>1</user__id><user_id>x</user_id><first_name>a</first_name></r>", decoder: snake)
        TypedXML.check(TypedSnake.self, "<r><_user_id_>1</_user_id_><first_name>a</first_name></r>", decoder: snake)
        TypedXML.check(TypedSnake.self, "<r><user_id>q</user_id><first_name>a</first_name></r>", decoder: snake)
        TypedXML.check(TypedCustom.self, "<r><id>1</id><meta><label>a</label><point>1</point></meta><parent>p</parent></r>", decoder: snake)
    }

    @Test func hostileInputsFailWithTheSameErrors() {
        var bad = Array("<r>\n<code>1</code><message>bad ".utf8)
        bad += [0xC3, 0x28, 0xFF]
        bad += Array("</message></r>".utf8)
        let documents: [Data] = [
            Data(XMLHostileInputTests.billionLaughs.utf8),
            Data("<!DOCTYPE r [<!ENTITY x SYSTEM \"file:///etc/passwd\">]>\n<r>&x;</r>".utf8),
            Data("<!DOCTYPE r SYSTEM \"file:///etc/passwd\">\n<r/>".utf8),
            Data("<!DOCTYPE r [<!ATTLIST r a CDATA \"x\">]><r/>".utf8),
            Data("<!DOCTYPE r [<!ELEMENT r (#PCDATA)>]><r><code>1</code></r>".utf8),
            Data((String(repeating: "<a>", count: 300) + String(repeating: "</a>", count: 300)).utf8),
            Data(bad),
            Data("<r>&undeclared;</r>".utf8),
            Data(),
            Data("   ".utf8),
            Data("<r a=\"1\" a=\"2\"/>".utf8),
            Data(("<r " + (0..<2_000).map { "a\($0)=\"1\"" }.joined(separator: " ") + "/>").utf8),
            Data(("<r><message>" + String(repeating: "x", count: 70_000) + "</message></r>").utf8),
            Data("<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><r><message>caf\u{E9}</message></r>".utf8),
            Data([0xFF, 0xFE] + Array("<r/>".utf8)),
        ]
        var small = XMLCodec.Options()
        small.limits.maximumStringLength = 1_000
        small.limits.maximumDepth = 8
        small.limits.maximumTotalValues = 50
        small.limits.maximumContainerCount = 10
        for data in documents {
            TypedXML.check(TypedPage.self, data)
            TypedXML.check(TypedPage.self, data, codec: XMLCodec(options: small))
            TypedXML.check(Value.self, data)
        }
        // Limits from the hints replace the codec's.
        let page = "<r><code>1</code><message>m</message><data><page>1</page><total>2</total>"
            + String(repeating: "<users><id>1</id></users>", count: 20) + "</data></r>"
        var hints = CodingHints()
        hints.limits = small.limits
        TypedXML.check(TypedPage.self, page, hints: hints)
        TypedXML.check(TypedPage.self, page)
    }

    @Test func theModelShapeIsUsedOnlyWhenTheHintsCarryNone() {
        // `<tags><tag>a</tag></tags>` reads as ["a"] with the model's shape; a shape in the hints that says
        // otherwise wins.
        let xml = "<r><tags><tag>a</tag></tags></r>"
        struct Tags: Codable, Equatable { var tags: [String] }
        #expect(TypedXML.check(Tags.self, xml) == .model(Tags(tags: ["a"])))
        var hints = CodingHints()
        hints.shape = .object(["tags": .any])
        TypedXML.check(Tags.self, xml, hints: hints)
    }

    @Test func typedEncodingWritesThePivotsBytesWithEveryOption() throws {
        var generator = ModelGenerator(seed: 31, options: ModelGenerator.Options().carried(by: [.xml]))
        var snake = ValueEncoder()
        snake.keyStrategy = .convertToSnakeCase
        snake.dateStrategy = .millisecondsSince1970
        let encoders = [ValueEncoder(), snake]
        var wrapped = XMLCodec.Options()
        wrapped.arrayItemName = .dropTrailingS
        wrapped.prettyPrinted = true
        wrapped.writesDeclaration = false
        let codecs = [XMLCodec(), XMLCodec(options: wrapped)]
        for i in 0..<100 {
            let profile = try generator.next(Profile.self)
            let encoder = encoders[i % 2]
            let codec = codecs[(i / 2) % 2]
            var hints = CodingHints()
            hints.rootName = i % 3 == 0 ? "p:profile" : "profile"
            if i % 5 == 0 { hints.xmlArrayLayout = .wrapped("item") }
            let pivot = Result { try codec.encode(encoder.encode(profile), hints: hints) }
            let direct = Result { try codec.encode(model: profile, hints: hints, encoder: encoder) }
            switch (pivot, direct) {
            case (.success(let a), .success(let b)): #expect(a == b)
            case (.failure(let a as CourierError), .failure(let b as CourierError)):
                #expect(a.code == b.code && a.context.codingPath == b.context.codingPath)
            default: Issue.record("encoding differs: \(pivot) vs \(direct)")
            }
        }
    }
}
