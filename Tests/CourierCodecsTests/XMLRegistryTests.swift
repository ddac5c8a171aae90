import Courier
import Foundation
import Testing

@testable import CourierCodecs

/// What a parse keeps for the next one with the same root shape (``XMLRegistry``) changes no answer, and
/// the start-tag scan's shortcut for documents with few `=` and `xmlns` still finds every crowded tag.
@Suite struct XMLRegistryTests {
    /// Members named only in this suite, so that no other test shares the registry of its shapes.
    struct Entry: Codable, Equatable {
        var registryKey: String
        var registryValue: Int?
        var registryList: [String]
    }

    /// The tape's `Value` and model, and the pivot's, for `xml` read with `shape`.
    static func bothPaths<T: Decodable & Equatable>(_ type: T.Type, _ xml: String, shape: ValueShape) throws {
        let data = Data(xml.utf8)
        var hints = CodingHints()
        hints.shape = shape
        let pivotValue = try XMLCodec().decode(data, hints: hints)
        let tape = try #require(XMLTapeReader.read(data, shape: shape, limits: DecodingLimits(), decoder: ValueDecoder()))
        #expect(tape.value(tape.root) == pivotValue, "\(xml)")
        let direct = try XMLCodec().decode(T.self, from: data, hints: hints, decoder: ValueDecoder())
        #expect(direct == (try ValueDecoder().decode(T.self, from: pivotValue)), "\(xml)")
    }

    @Test func namesLearnedFromOneDocumentDoNotShowInTheNext() throws {
        // A map lists its keys from the document: names of earlier documents must not appear.
        let shape = ValueShape.object(["registryMapOnly": .map(.string)])
        struct Holder: Decodable, Equatable { var registryMapOnly: [String: String] }
        let documents = [
            "<r><registryMapOnly><alpha>1</alpha><beta>2</beta></registryMapOnly></r>",
            "<r><registryMapOnly><gamma>3</gamma></registryMapOnly></r>",
            "<r><registryMapOnly><beta>4</beta><delta>6</delta></registryMapOnly></r>",
            "<r><registryMapOnly/></r>",
        ]
        for _ in 0..<3 {
            for xml in documents { try Self.bothPaths(Holder.self, xml, shape: shape) }
        }
        let data = Data(documents[1].utf8)
        var hints = CodingHints()
        hints.shape = shape
        let decoded = try XMLCodec().decode(Holder.self, from: data, hints: hints, decoder: ValueDecoder())
        #expect(decoded.registryMapOnly == ["gamma": "3"])
    }

    @Test func aModelDecodesAlikeWhateverTheDocumentsBeforeIt() throws {
        let shape = ValueShape(of: Entry.self)
        let documents = [
            "<e><registryKey>a</registryKey><registryValue>1</registryValue><registryList>x</registryList></e>",
            "<e><registryKey>b</registryKey><other>?</other><registryList>y</registryList><registryList>z</registryList></e>",
            "<e><registryValue>2</registryValue><registryKey>c</registryKey></e>",
            "<e><registryKey>d</registryKey><registryValue/><registryList><item>p</item></registryList></e>",
        ]
        // Each document first on a fresh order of the others, so that each meets a registry learned from
        // different predecessors.
        for rotation in 0..<documents.count {
            for i in 0..<documents.count {
                try Self.bothPaths(Entry.self, documents[(rotation + i) % documents.count], shape: shape)
            }
        }
    }

    @Test func aCollisionOfSnakeCaseNamesStaysWithItsDocument() throws {
        struct SnakeOnly: Decodable, Equatable {
            var registrySnakeId: Int
            var registrySnakeList: [String]
        }
        var snake = ValueDecoder()
        snake.keyStrategy = .convertFromSnakeCase
        let shape = ValueShape(of: SnakeOnly.self).mappingKeys(KeyCodingStrategy.snakeCase(fromCamelCase:))
        let colliding = Data("<r><registry_snake_id>1</registry_snake_id><registrySnakeId>2</registrySnakeId></r>".utf8)
        let collidingTape = try #require(XMLTapeReader.read(colliding, shape: shape, limits: DecodingLimits(), decoder: snake))
        #expect(collidingTape.keyNamesCollide)
        // The next document of the same shape, whose registry now holds both spellings, stays on the tape.
        let plain = Data(
            "<r><registry_snake_id>3</registry_snake_id><registry_snake_list>a</registry_snake_list></r>".utf8)
        let tape = try #require(XMLTapeReader.read(plain, shape: shape, limits: DecodingLimits(), decoder: snake))
        #expect(!tape.keyNamesCollide)
        let model = try XMLTapeDecoding(tape: tape, node: tape.root).unwrap(SnakeOnly.self)
        #expect(!tape.bailed && model == SnakeOnly(registrySnakeId: 3, registrySnakeList: ["a"]))
        // A list the document leaves out (an empty list, under a name of its own) collides with nothing.
        let empty = Data("<r><registry_snake_id>4</registry_snake_id></r>".utf8)
        let emptyTape = try #require(XMLTapeReader.read(empty, shape: shape, limits: DecodingLimits(), decoder: snake))
        #expect(!emptyTape.keyNamesCollide)
    }

    @Test func equalsSignsAndXmlnsOutsideTagsStillPass() throws {
        // More `=` and `xmlns` than the limits, all in text and attribute values: the full scan runs and
        // finds no crowded tag.
        let text = String(repeating: "a=b xmlns ", count: 300)
        let xml = "<r note=\"\(String(repeating: "=", count: 1_200))\"><t>\(text)</t></r>"
        let value = try XMLCodec().decode(Data(xml.utf8), hints: CodingHints())
        #expect(value["t"]?.stringValue == text)
    }

    @Test func aCrowdedTagIsFoundJustOverTheLimitOrAmongManyEqualsSigns() throws {
        var options = XMLCodec.Options()
        options.limits.maximumAttributesPerElement = 3
        options.limits.maximumNamespacesInScope = 2
        let codec = XMLCodec(options: options)
        let padding = String(repeating: "<p>=</p>", count: 200)
        for xml in [
            "<r><s a=\"1\" b=\"2\" c=\"3\" d=\"4\"/></r>",
            "<r>\(padding)<s a=\"1\" b=\"2\" c=\"3\" d=\"4\"/></r>",
            "<r a=\"1\" b=\"2\" c=\"3\" d=\"4\">\(padding)</r>",
            // Past the first blocks the count reads, with no other `=` before it.
            "<r>\(String(repeating: "<p>x</p>", count: 1_000))<s a=\"1\" b=\"2\" c=\"3\" d=\"4\"/>1234567</r>",
        ] {
            let thrown = throwing(try codec.decode(Data(xml.utf8), hints: CodingHints()))
            let error = try #require(thrown)
            #expect(error.code == .sizeLimitExceeded)
            #expect(error.message.contains("maximumAttributesPerElement"))
        }
        let namespaces = "<r xmlns:a=\"u\"><s xmlns:b=\"v\" xmlns:c=\"w\">\(padding)</s></r>"
        let thrown = throwing(try codec.decode(Data(namespaces.utf8), hints: CodingHints()))
        let error = try #require(thrown)
        #expect(error.code == .sizeLimitExceeded)
        #expect(error.message.contains("maximumNamespacesInScope"))
        // Within the limits, with as many `=` as needed.
        let calm = "<r a=\"1\" b=\"2\">\(padding)</r>"
        #expect(try codec.decode(Data(calm.utf8), hints: CodingHints())["p"] != nil)
    }

    /// The `CourierError` `body` throws, `nil` when it throws none.
    func throwing(_ body: @autoclosure () throws -> Value) -> CourierError? {
        do {
            _ = try body()
            return nil
        } catch let error as CourierError {
            return error
        } catch {
            return nil
        }
    }
}
