import Courier
import CourierTestSupport
import CourierTesting
import Foundation
import Testing

@testable import CourierCodecs

/// The tape behind ``XMLCodec/decode(_:from:hints:decoder:)`` answers the common models itself (no
/// fallback to the pivot), and a tape materialised as a `Value` is the pivot's `Value`.
@Suite struct XMLTapeTests {
    /// The model decoded from the tape alone, `nil` when the tape path bails.
    static func tapeOnly<T: Decodable>(_ type: T.Type, _ data: Data, shape: ValueShape? = nil) -> T? {
        let shape = shape ?? ValueShape(of: T.self)
        guard let tape = XMLTapeReader.read(data, shape: shape, limits: DecodingLimits(), decoder: ValueDecoder()) else {
            return nil
        }
        let model = try? XMLTapeDecoding(tape: tape, node: tape.root).unwrap(T.self)
        return tape.bailed ? nil : model
    }

    @Test func snakeCaseDocumentsStayOnTheTape() throws {
        var snake = ValueDecoder()
        snake.keyStrategy = .convertFromSnakeCase
        let xml = Data("<r><user_id>3</user_id><first_name>Ada</first_name></r>".utf8)
        let shape = ValueShape(of: TypedSnake.self).mappingKeys(KeyCodingStrategy.snakeCase(fromCamelCase:))
        let tape = try #require(XMLTapeReader.read(xml, shape: shape, limits: DecodingLimits(), decoder: snake))
        #expect(!tape.keyNamesCollide)
        let model = try XMLTapeDecoding(tape: tape, node: tape.root).unwrap(TypedSnake.self)
        #expect(!tape.bailed && model == TypedSnake(userId: 3, firstName: "Ada", homeAddress: nil))
        let both = Data("<r><user_id>3</user_id><userId>4</userId></r>".utf8)
        #expect(try #require(XMLTapeReader.read(both, shape: shape, limits: DecodingLimits(), decoder: snake)).keyNamesCollide)
    }

    /// Texts and attribute values of 0 to 20 bytes, ASCII and not, are the strings the standard library makes of
    /// their bytes: the same UTF-8, scalars and ASCII-ness, typed and as a `Value` (short ones are built in
    /// String's inline layout straight from the bytes).
    @Test func shortTextsAreTheStandardLibrarysStrings() throws {
        struct Leaf: Codable, Equatable { var t: String }
        let pieces = ["a", "é", "€", "😀", "z", "0"]
        var checked = 0
        for length in 0...20 {
            for start in 0..<pieces.count {
                var text = ""
                var k = start
                while text.utf8.count < length {
                    let piece = pieces[k % pieces.count]
                    text += text.utf8.count + piece.utf8.count <= length ? piece : "x"
                    k += 1
                }
                let wanted = String(decoding: Array(text.utf8), as: UTF8.self)
                let xml = Data("<r a=\"\(text)\"><t>\(text)</t></r>".utf8)
                let typed = try XMLCodec().decode(Leaf.self, from: xml, hints: CodingHints(), decoder: ValueDecoder())
                let value = try XMLCodec().decode(xml, hints: CodingHints())
                for string in [typed.t, value["t"]?.stringValue ?? "-", value["@a"]?.stringValue ?? "-"] {
                    #expect(Array(string.utf8) == Array(wanted.utf8), "\(length) bytes from piece \(start)")
                    #expect(Array(string.unicodeScalars) == Array(wanted.unicodeScalars))
                    #expect(string.utf16.count == wanted.utf16.count && string.count == wanted.count)
                    #expect(string.hashValue == wanted.hashValue && string == wanted)
                    if length <= 15 {  // both inline: the same bits, flags included
                        #expect(unsafeBitCast(string, to: (UInt64, UInt64).self) == unsafeBitCast(wanted, to: (UInt64, UInt64).self))
                    }
                    checked += 1
                }
            }
        }
        #expect(checked == 21 * 6 * 3)
    }

    @Test(arguments: ["users_10", "users_5000"])
    func theFixturesNeverFallBack(name: String) throws {
        let data = try Data(contentsOf: Repository.root.appendingPathComponent("Fixtures/\(name).xml"))
        let page = try #require(Self.tapeOnly(TypedPage.self, data))
        let pivot = try ValueDecoder().decode(
            TypedPage.self, from: XMLCodec().decode(data, hints: { var h = CodingHints(); h.shape = ValueShape(of: TypedPage.self); return h }()))
        #expect(page == pivot)
    }

    @Test func generatedPagesAndProfilesNeverFallBack() throws {
        var generator = ModelGenerator(seed: 5150, options: ModelGenerator.Options().carried(by: [.xml]))
        var profiles = 0
        for i in 0..<200 {
            var hints = CodingHints()
            if i % 2 == 0 { hints.xmlArrayLayout = .wrapped(.dropTrailingS) }
            let page = try generator.next(TypedPage.self)
            let pageXML = try XMLCodec().encode(model: page, hints: hints, encoder: ValueEncoder())
            #expect(Self.tapeOnly(TypedPage.self, pageXML) == page)
            let profile = try generator.next(Profile.self)
            let profileXML = try XMLCodec().encode(model: profile, hints: hints, encoder: ValueEncoder())
            // Whatever the pivot reads (XML loses a little: a lone empty item, say), the tape reads too.
            let pivot = try? XMLCodec().decode(Profile.self, from: profileXML, hints: CodingHints(), decoder: ValueDecoder())
            if let pivot {
                #expect(Self.tapeOnly(Profile.self, profileXML) == pivot)
                profiles += 1
            }
        }
        #expect(profiles > 150)
    }

    @Test func aTapeMaterialisesAsThePivotsValue() throws {
        var generator = ValueGenerator(seed: 77)
        var shapes: [ValueShape] = [.any, XMLTest.userListShape, ValueShape(of: Profile.self)]
        shapes.append(.object(["a": .array(.object(["b": .array(.integer)])), "c": .optional(.number)]))
        for i in 0..<300 {
            let value = generator.next(maxDepth: 3, maxWidth: 5)
            guard let data = try? XMLCodec().encode(value, hints: CodingHints()) else { continue }
            let shape = shapes[i % shapes.count]
            var hints = CodingHints()
            hints.shape = shape
            let pivot = try? XMLCodec().decode(data, hints: hints)
            let tape = XMLTapeReader.read(data, shape: shape, limits: DecodingLimits(), decoder: ValueDecoder())
            if let pivot, let tape {
                #expect(tape.value(tape.root) == pivot)
            } else {
                // The tape gives up on every document the pivot refuses.
                #expect(tape == nil || pivot != nil)
            }
        }
    }

    /// Lists other than of common scalars (read in an array reserved for their items) give what
    /// `Array.init(from:)` gives on the pivot: lists of models, of optionals, of one item, empty, nested in
    /// an optional, and a type of its own read from an unkeyed container.
    @Test func listsOfModelsReadAsThePivotReadsThem() throws {
        struct Item: Codable, Equatable {
            var listKey: String
            var listSize: Int?
        }
        /// The sum of an unkeyed container's integers.
        struct Sum: Decodable, Equatable {
            var total = 0
            init(from decoder: any Decoder) throws {
                var items = try decoder.unkeyedContainer()
                while !items.isAtEnd { total += try items.decode(Int.self) }
            }
        }
        struct Lists: Decodable, Equatable {
            var listItems: [Item]
            var listOne: [Item]
            var listEmpty: [Item]
            var listMaybe: [Item]?
            var listOptionals: [Int?]
            var listSum: Sum
        }
        let xml = "<r><listItems><listKey>a</listKey><listSize>1</listSize></listItems>"
            + "<listItems><listKey>b</listKey></listItems><listItems><listKey>c</listKey><listSize/></listItems>"
            + "<listOne><listKey>d</listKey></listOne><listEmpty/><listOptionals>1</listOptionals>"
            + "<listOptionals></listOptionals><listOptionals>3</listOptionals>"
            + "<listSum><item>4</item><item>5</item></listSum></r>"
        let data = Data(xml.utf8)
        let shape = ValueShape(of: Lists.self)
        var hints = CodingHints()
        hints.shape = shape
        let pivot = try ValueDecoder().decode(Lists.self, from: XMLCodec().decode(data, hints: hints))
        #expect(pivot.listItems.count == 3 && pivot.listOne.count == 1 && pivot.listEmpty.isEmpty)
        #expect(pivot.listSum.total == 9)
        #expect(Self.tapeOnly(Lists.self, data) == pivot)
        #expect(try XMLCodec().decode(Lists.self, from: data, hints: hints, decoder: ValueDecoder()) == pivot)
    }

    @Test func failuresAndRareRequestsFallBack() throws {
        #expect(Self.tapeOnly(TypedPage.self, Data("<r><code>x</code></r>".utf8)) == nil)
        #expect(Self.tapeOnly(TypedPage.self, Data("<!DOCTYPE r [<!ENTITY x \"y\">]><r/>".utf8)) == nil)
        struct AsksForPath: Decodable, Equatable {
            var depth: Int
            init(from decoder: any Decoder) throws { depth = decoder.codingPath.count }
        }
        #expect(Self.tapeOnly(AsksForPath.self, Data("<r/>".utf8)) == nil)
        #expect(
            try XMLCodec().decode(AsksForPath.self, from: Data("<r/>".utf8), hints: CodingHints(), decoder: ValueDecoder())
                .depth == 0)
    }
}
