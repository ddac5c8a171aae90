import CourierCodecs
import CourierTestSupport
import Foundation
import Testing

@Suite struct XMLDecodingTests {
    // MARK: The mapping table

    @Test(arguments: [
        ("<r>text</r>", "text" as Value),
        ("<r/>", ""),
        ("<r></r>", ""),
        ("<r>  spaced \n</r>", "  spaced \n"),
        ("<r><a>1</a><b>2</b></r>", ["a": "1", "b": "2"]),
        ("<r><a>1</a><b/><a>2</a><a>3</a></r>", ["a": ["1", "2", "3"], "b": ""]),
        ("<r id=\"7\">x</r>", ["@id": "7", "#text": "x"]),
        ("<r id=\"7\"/>", ["@id": "7"]),
        ("<r id=\"7\"> x <b>1</b> y </r>", ["@id": "7", "b": "1", "#text": "x  y"]),
        ("<r><![CDATA[<not> & markup]]></r>", "<not> & markup"),
        ("<r>a<![CDATA[<b>]]>c</r>", "a<b>c"),
        ("<r><!-- note --><a>1</a><?pi data?></r>", ["a": "1"]),
        ("<r>\n  <a>1</a>\n  <b>2</b>\n</r>", ["a": "1", "b": "2"]),
        ("<r>&lt;&amp;&gt;&quot;&apos;&#233;&#x4E2D;</r>", "<&>\"'é中"),
        ("<r a=\"x &amp; y &lt; &#38; &#x26;amp;\"/>", ["@a": "x & y < & &amp;"]),
        ("<r a=\"tab&#9;nl&#10;\"/>", ["@a": "tab\tnl\n"]),
        (
            "<r xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\"><a xsi:nil=\"true\"/><b xsi:nil=\"false\"/></r>",
            ["@xmlns:xsi": "http://www.w3.org/2001/XMLSchema-instance", "a": nil, "b": ""]
        ),
    ] as [(String, Value)])
    func mappingTable(xml: String, expected: Value) throws {
        #expect(try XMLTest.decode(xml) == expected)
    }

    @Test func namespacesAreKeptAsPrefixesAndDeclarations() throws {
        let xml = """
            <?xml version="1.0"?>
            <soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/" xmlns="urn:default">
              <soap:Body><m:GetUser xmlns:m="urn:users" m:lang="en"><m:id>7</m:id></m:GetUser></soap:Body>
            </soap:Envelope>
            """
        let (root, value) = try XMLCodec().decodeDocument(Data(xml.utf8))
        #expect(root == "soap:Envelope")
        let expected: Value = [
            "@xmlns:soap": "http://schemas.xmlsoap.org/soap/envelope/",
            "@xmlns": "urn:default",
            "soap:Body": ["m:GetUser": ["@xmlns:m": "urn:users", "@m:lang": "en", "m:id": "7"]],
        ]
        #expect(value == expected)
        // Member order follows the document: declarations, attributes, children.
        #expect(value.objectValue?.keys == ["@xmlns:soap", "@xmlns", "soap:Body"])
    }

    @Test func nonUTF8EncodingsAreConverted() throws {
        var bytes = Array("<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><r>caf".utf8)
        bytes.append(0xE9)
        bytes += Array("</r>".utf8)
        #expect(try XMLCodec().decode(Data(bytes), hints: .init()) == "café")
    }

    // MARK: Shape-guided decoding

    @Test func scalarsFollowTheShape() throws {
        let xml = """
            <r><i>-42</i><u>18446744073709551615</u><big>123456789012345678901234567890</big>
            <d>808.78</d><exact>0.1234567890123456789</exact><e>1e3</e><t>true</t><f>0</f>
            <bytes>AAEC/w==</bytes><s>007</s><inf>-INF</inf></r>
            """
        let shape: ValueShape = .object([
            "i": .integer, "u": .integer, "big": .integer, "d": .number, "exact": .number, "e": .number,
            "t": .bool, "f": .bool, "bytes": .bytes, "s": .string, "inf": .number,
        ])
        let value = try XMLTest.decode(xml, shape: shape)
        #expect(value["i"] == .int(-42))
        #expect(value["u"] == .uint(18_446_744_073_709_551_615))
        #expect(value["big"] == .number("123456789012345678901234567890"))
        #expect(value["d"] == .double(808.78))
        #expect(value["exact"] == .number("0.1234567890123456789"))
        #expect(value["e"] == .double(1000))
        #expect(value["t"] == .bool(true))
        #expect(value["f"] == .bool(false))
        #expect(value["bytes"] == .bytes([0, 1, 2, 255]))
        #expect(value["s"] == .string("007"))
        #expect(value["inf"] == .double(-.infinity))
    }

    @Test func optionalScalarsReadEmptyTextAsNull() throws {
        let shape: ValueShape = .object(["age": .optional(.integer), "name": .optional(.string)])
        #expect(try XMLTest.decode("<r><age/><name/></r>", shape: shape) == ["age": nil, "name": ""])
        #expect(try XMLTest.decode("<r><age> 7 </age></r>", shape: shape) == ["age": 7])
    }

    @Test func attributesFollowTheShape() throws {
        let shape: ValueShape = .object(["item": .object(["@id": .integer, "#text": .number])])
        #expect(try XMLTest.decode("<r><item id=\"3\">2.5</item></r>", shape: shape) == ["item": ["@id": 3, "#text": 2.5]])
        let error = try XMLTest.error { _ = try XMLTest.decode("<r><item id=\"x\">2.5</item></r>", shape: shape) }
        #expect(error.code == .typeMismatch)
        #expect(PathComponent.render(error.context.codingPath) == "item.@id")
    }

    @Test(arguments: [
        ("<r><a><age>x7</age></a></r>", "a.age", 1, "an integer"),
        ("<r><a><ok>yes</ok></a></r>", "a.ok", 1, "a boolean"),
        ("<r>\n<list><n>1</n><n>2.5</n></list></r>", "list[1]", 2, "an integer"),
        ("<r><a><age></age></a></r>", "a.age", 1, "an integer"),
        ("<r><list><n>1</n></list><list><n><n>1</n></n></list><list>x</list></r>", "list[2]", 1, "an integer"),
    ])
    func textThatDoesNotParseIsATypeMismatch(xml: String, path: String, line: Int, expected: String) throws {
        let shape: ValueShape = .object([
            "a": .object(["age": .integer, "ok": .bool]), "list": .array(.integer),
        ])
        let error = try XMLTest.error { _ = try XMLTest.decode(xml, shape: shape) }
        #expect(error.code == .typeMismatch)
        #expect(PathComponent.render(error.context.codingPath) == path)
        #expect(error.context.line == line)
        #expect(error.context.column != nil)
        #expect(error.message.contains(expected))
    }

    @Test func arraysOfOneAndRepeatedSiblings() throws {
        let shape: ValueShape = .object(["tag": .array(.string), "n": .array(.integer)])
        #expect(try XMLTest.decode("<r><tag>a</tag><n>1</n></r>", shape: shape) == ["tag": ["a"], "n": [1]])
        // A list member with no element at all is an empty list; an empty element among siblings an empty item.
        #expect(try XMLTest.decode("<r><tag>a</tag><tag>b</tag></r>", shape: shape) == ["tag": ["a", "b"], "n": []])
        #expect(try XMLTest.decode("<r><tag>a</tag><tag/><n>1</n></r>", shape: shape) == ["tag": ["a", ""], "n": [1]])
        #expect(try XMLTest.decode("<r><tag/></r>", shape: shape) == ["tag": [], "n": []])
        // Without the shape one element is just the element.
        #expect(try XMLTest.decode("<r><tag>a</tag></r>") == ["tag": "a"])
    }

    @Test func wrapperElementsBecomeArrays() throws {
        let shape: ValueShape = .object([
            "tags": .array(.string),
            "users": .array(.object(["id": .integer, "name": .string])),
            "empty": .array(.string),
            "alsoEmpty": .array(.string),
        ])
        let xml = """
            <r>
              <tags><tag>a</tag><tag>b</tag></tags>
              <users><user><id>1</id><name>Ada</name></user></users>
              <empty/>
              <alsoEmpty></alsoEmpty>
            </r>
            """
        let expected: Value = ["tags": ["a", "b"], "users": [["id": 1, "name": "Ada"]], "empty": [], "alsoEmpty": []]
        #expect(try XMLTest.decode(xml, shape: shape) == expected)
    }

    @Test func anElementWhoseChildIsAMemberIsOneElementNotAWrapper() throws {
        // `<users><id>…` — `id` is a member of the element shape, so this is one user, not a wrapper.
        let shape: ValueShape = .object(["users": .array(.object(["id": .integer]))])
        #expect(try XMLTest.decode("<r><users><id>1</id></users><users><id>2</id></users></r>", shape: shape)
            == ["users": [["id": 1], ["id": 2]]])
        #expect(try XMLTest.decode("<r><users><id>1</id></users></r>", shape: shape) == ["users": [["id": 1]]])
    }

    @Test func aWrapperWithMixedChildrenIsATypeMismatch() throws {
        let shape: ValueShape = .object(["tags": .array(.string)])
        let error = try XMLTest.error { _ = try XMLTest.decode("<r><tags><tag>a</tag><x>b</x></tags></r>", shape: shape) }
        #expect(error.code == .typeMismatch)
        #expect(PathComponent.render(error.context.codingPath) == "tags[1]")
    }

    @Test func theRootCanBeAnArray() throws {
        #expect(try XMLTest.decode("<users><user>a</user><user>b</user></users>", shape: .array(.string)) == ["a", "b"])
        #expect(try XMLTest.decode("<users/>", shape: .array(.string)) == [])
        #expect(try XMLTest.decode("<n>5</n>", shape: .array(.integer)) == [5])
    }

    @Test func objectShapesReadEmptyElementsAsEmptyObjects() throws {
        let shape: ValueShape = .object(["address": .object(["city": .string]), "meta": .map(.string)])
        #expect(try XMLTest.decode("<r><address/><meta></meta></r>", shape: shape) == ["address": [:], "meta": [:]])
    }

    // MARK: Fixtures

    @Test(arguments: ["users_10", "users_5000"])
    func userListFixtureMatchesItsJSONTwin(name: String) throws {
        var hints = CodingHints()
        hints.shape = XMLTest.userListShape
        let (root, xmlValue) = try XMLCodec().decodeDocument(try Repository.fixture("\(name).xml"), hints: hints)
        let jsonValue = try JSONCodec().decode(try Repository.fixture("\(name).json"), hints: CodingHints())
        #expect(root == "response")
        #expect(xmlValue == jsonValue)
        #expect(xmlValue[path: ["data", "total"]] == (name == "users_10" ? 10 : 5000))
        // Spot checks independent of the JSON codec.
        guard name == "users_10" else { return }
        #expect(xmlValue["code"] == .int(200))
        #expect(xmlValue[path: ["data", "users", 0, "name"]] == "Zoë Hernández")
        #expect(xmlValue[path: ["data", "users", 0, "tags"]] == ["trial", "admin"])
        #expect(xmlValue[path: ["data", "users", 1, "tags"]] == [])
        #expect(xmlValue[path: ["data", "users", 3, "tags"]] == ["us"])
        #expect(xmlValue[path: ["data", "users", 0, "address", "zip"]] == "06545")
        #expect(xmlValue[path: ["data", "users", 0, "score"]] == .double(808.78))
        #expect(xmlValue[path: ["data", "users"]]?.arrayValue?.count == 10)
    }

    @Test func userListWithoutAShapeKeepsStrings() throws {
        let value = try XMLCodec().decode(try Repository.fixture("users_10.xml"), hints: CodingHints())
        #expect(value["code"] == "200")
        #expect(value[path: ["data", "users", "user", 0, "tags", "tag"]] == ["trial", "admin"])
        #expect(value[path: ["data", "users", "user", 1, "tags"]] == "")
        #expect(value[path: ["data", "users", "user", 3, "tags", "tag"]] == "us")
    }
}

/// The demo user-list page as a Codable model, read from XML through the shape it implies.
@Suite struct XMLTypedDecodingTests {
    struct Page: Codable, Equatable {
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

    @Test(arguments: ["users_10", "users_5000"])
    func modelFromXMLEqualsModelFromJSON(name: String) throws {
        var hints = CodingHints()
        hints.shape = ValueShape(of: Page.self)
        #expect(hints.shape == XMLTest.userListShape)
        let fromXML = try ValueDecoder().decode(Page.self, from: try XMLCodec().decode(try Repository.fixture("\(name).xml"), hints: hints))
        let fromJSON = try ValueDecoder().decode(Page.self, from: try JSONCodec().decode(try Repository.fixture("\(name).json"), hints: CodingHints()))
        #expect(fromXML == fromJSON)
        #expect(fromXML.data.users.count == fromXML.data.total)
    }
}

/// Each decode owns its libxml2 context and error channels: parallel decodes do not interfere.
@Suite struct XMLConcurrencyTests {
    @Test func parallelDecodesAgree() async throws {
        let good = try Repository.fixture("users_10.xml")
        let bad = Data(XMLHostileInputTests.billionLaughs.utf8)
        var hints = CodingHints()
        hints.shape = XMLTest.userListShape
        let expected = try XMLCodec().decode(good, hints: hints)
        let outcomes = try await withThrowingTaskGroup(of: (Bool, Bool).self) { group in
            for i in 0..<32 {
                group.addTask { [hints] in
                    if i.isMultiple(of: 2) {
                        return (try XMLCodec().decode(good, hints: hints) == expected, true)
                    }
                    do {
                        _ = try XMLCodec().decode(bad, hints: hints)
                        return (true, false)
                    } catch let error as CourierError {
                        return (true, error.code == .unsafeInput)
                    }
                }
            }
            var all: [(Bool, Bool)] = []
            for try await outcome in group { all.append(outcome) }
            return all
        }
        #expect(outcomes.count == 32)
        #expect(outcomes.allSatisfy { $0.0 && $0.1 })
    }
}
