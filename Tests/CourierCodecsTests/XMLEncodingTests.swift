import CourierCodecs
import CourierTestSupport
import CourierTesting
import Foundation
import Testing

@Suite struct XMLEncodingTests {
    static let declaration = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"

    @Test func writesTheMappingBackwards() throws {
        let value: Value = [
            "@id": 7, "name": "Ada", "age": 36, "score": 99.5, "active": true, "tags": ["a", "b"],
            "avatar": .bytes([0, 1, 2, 255]), "nothing": nil, "big": .uint(18_446_744_073_709_551_615),
            "exact": .number("0.1234567890123456789"), "whole": .double(3),
        ]
        let xml = try XMLTest.encode(value)
        #expect(
            xml == Self.declaration
                + "<response id=\"7\"><name>Ada</name><age>36</age><score>99.5</score><active>true</active>"
                + "<tags>a</tags><tags>b</tags><avatar>AAEC/w==</avatar>"
                + "<nothing xsi:nil=\"true\" xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\"/>"
                + "<big>18446744073709551615</big><exact>0.1234567890123456789</exact><whole>3</whole></response>")
    }

    @Test func rootNameComesFromTheHintsThenTheOptions() throws {
        var options = XMLCodec.Options()
        options.writesDeclaration = false
        #expect(try XMLTest.encode("x", options: options) == "<response>x</response>")
        #expect(try XMLTest.encode("x", rootName: "user", options: options) == "<user>x</user>")
        options.rootName = "request"
        #expect(try XMLTest.encode("x", options: options) == "<request>x</request>")
    }

    @Test func escapesTextAndAttributes() throws {
        var options = XMLCodec.Options()
        options.writesDeclaration = false
        let value: Value = ["@q": "a&b<c>d\"e'f\tg\nh\ri", "t": "a&b<c>d\"e'f\tg\nh\ri ]]> é中🙂"]
        let xml = try XMLTest.encode(value, options: options)
        #expect(
            xml == "<response q=\"a&amp;b&lt;c&gt;d&quot;e&apos;f&#9;g&#10;h&#13;i\">"
                + "<t>a&amp;b&lt;c&gt;d\"e'f\tg\nh&#13;i ]]&gt; é中🙂</t></response>")
        #expect(try XMLTest.decode(xml) == value)
    }

    @Test(arguments: [
        (["a": ["b": "x\u{1}y"]] as Value, "a.b", "U+0001"),
        (["a": ["ok", "\u{0}"]], "a[1]", "U+0000"),
        (["@at": "\u{FFFE}"], "@at", "U+FFFE"),
        (["a": ["#text": "\u{1F}"]], "a.#text", "U+001F"),
    ] as [(Value, String, String)])
    func charactersXMLCannotCarryFail(value: Value, path: String, detail: String) throws {
        let error = try XMLTest.error { _ = try XMLTest.encode(value) }
        #expect(error.code == .encodingFailed)
        #expect(PathComponent.render(error.context.codingPath) == path)
        #expect(error.message.contains(detail))
    }

    @Test(arguments: [
        (["a": ["1b": "x"]] as Value, "a.1b"),
        (["list": [["ok": "1"], ["bad name": "2"]]], "list[1].bad name"),
        (["@a b": "x"], "@a b"),
        (["": "x"], ""),
        (["a:b:c": "x"], "a:b:c"),
        (["soap:Body": "x"], "soap:Body"),
        (["a": ["@x": ["nested": "object"]]], "a.@x"),
    ] as [(Value, String)])
    func invalidNamesAndUndeclaredPrefixesFail(value: Value, path: String) throws {
        let error = try XMLTest.error { _ = try XMLTest.encode(value) }
        #expect(error.code == .encodingFailed)
        #expect(PathComponent.render(error.context.codingPath) == path)
    }

    @Test func invalidRootNameFails() throws {
        let error = try XMLTest.error { _ = try XMLTest.encode("x", rootName: "not a name") }
        #expect(error.code == .encodingFailed)
    }

    @Test func declaredPrefixesAreAccepted() throws {
        let value: Value = ["@xmlns:soap": "http://schemas.xmlsoap.org/soap/envelope/", "soap:Body": ["x": "1"]]
        let xml = try XMLTest.encode(value, rootName: "soap:Envelope")
        let (root, decoded) = try XMLCodec().decodeDocument(Data(xml.utf8))
        #expect(root == "soap:Envelope")
        #expect(decoded == value)
    }

    @Test func wrappedArraysUseTheItemName() throws {
        var options = XMLCodec.Options()
        options.writesDeclaration = false
        options.arrayItemName = .dropTrailingS
        let value: Value = ["users": [["id": 1, "tags": ["a", "b"]], ["id": 2, "tags": []]], "data": ["x", "y"]]
        let xml = try XMLTest.encode(value, options: options)
        #expect(
            xml == "<response><users><user><id>1</id><tags><tag>a</tag><tag>b</tag></tags></user>"
                + "<user><id>2</id><tags/></user></users><data><item>x</item><item>y</item></data></response>")
        let shape: ValueShape = .object([
            "users": .array(.object(["id": .integer, "tags": .array(.string)])), "data": .array(.string),
        ])
        #expect(try XMLTest.decode(xml, shape: shape) == value)
        options.arrayItemName = "entry"
        #expect(try XMLTest.encode(["a": ["x"]], options: options) == "<response><a><entry>x</entry></a></response>")
    }

    @Test func prettyPrintingIndentsAndReadsBack() throws {
        var options = XMLCodec.Options()
        options.prettyPrinted = true
        let value: Value = ["@v": "1", "user": ["name": "Ada", "tags": ["a", "b"]], "empty": ""]
        let xml = try XMLTest.encode(value, options: options)
        #expect(
            xml == Self.declaration
                + "<response v=\"1\">\n  <user>\n    <name>Ada</name>\n    <tags>a</tags>\n    <tags>b</tags>\n  </user>\n"
                + "  <empty></empty>\n</response>\n")
        #expect(try XMLTest.decode(xml) == value)
    }

    @Test func tooDeepValuesFail() throws {
        var value: Value = "leaf"
        for _ in 0..<600 { value = ["a": value] }
        let error = try XMLTest.error { _ = try XMLTest.encode(value) }
        #expect(error.code == .encodingFailed)
        #expect(error.context.codingPath.count == 512)
    }

    @Test func userListFixtureRoundTripsThroughTheWrapperForm() throws {
        var hints = CodingHints()
        hints.shape = XMLTest.userListShape
        let codec = XMLCodec()
        let value = try codec.decode(try Repository.fixture("users_10.xml"), hints: hints)
        var options = XMLCodec.Options()
        options.arrayItemName = .dropTrailingS
        let encoded = try XMLCodec(options: options).encode(value, hints: hints)
        #expect(try codec.decode(encoded, hints: hints) == value)
        // The wrapper form is the fixture's own layout.
        let text = String(decoding: encoded, as: UTF8.self)
        #expect(text.hasPrefix(Self.declaration + "<response><code>200</code><message>OK</message><data><page>1</page>"))
        #expect(text.contains("<tags><tag>trial</tag><tag>admin</tag></tags>"))
    }
}

/// `decode(encode(v)) == v` for generated values of strings, objects and arrays.
@Suite struct XMLRoundTripTests {
    struct Generator {
        var rng: SeededRandom
        let nameStarts = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_éü中")
        let nameRest = Array("abcdefghijklmnopqrstuvwxyz0123456789-._·")
        let textCharacters = Array("aZ09 &<>\"'\t\n\r]]>;é中🙂\u{7F}\u{85}\u{2028}#@")

        mutating func name() -> String {
            var s = String(nameStarts.randomElement(using: &rng)!)
            for _ in 0..<Int.random(in: 0...6, using: &rng) { s.append(nameRest.randomElement(using: &rng)!) }
            return s
        }

        mutating func text(allowEmpty: Bool = true) -> String {
            let count = Int.random(in: (allowEmpty ? 0 : 1)...12, using: &rng)
            return String((0..<count).map { _ in textCharacters.randomElement(using: &rng)! })
        }

        /// An element's value: a string, null or a non-empty object.
        mutating func element(depth: Int) -> Value {
            let roll = Int.random(in: 0..<10, using: &rng)
            if depth > 4 || roll < 4 { return .string(text()) }
            if roll == 4 { return .null }
            return object(depth: depth)
        }

        mutating func object(depth: Int) -> Value {
            var object = Value.Object()
            var children = 0
            for _ in 0..<Int.random(in: 1...5, using: &rng) {
                let roll = Int.random(in: 0..<10, using: &rng)
                if roll < 2 {
                    let key = "@" + name()
                    if !object.contains(key) { object.append(key, .string(text())) }
                    continue
                }
                let key = name()
                guard !object.contains(key) else { continue }
                children += 1
                if roll < 4 {
                    // Two or more elements: an array of one reads back as the element itself.
                    object.append(key, .array((0..<Int.random(in: 2...4, using: &rng)).map { _ in element(depth: depth + 1) }))
                } else {
                    object.append(key, element(depth: depth + 1))
                }
            }
            if object.isEmpty { object.append(name(), .string(text())) }
            if Int.random(in: 0..<5, using: &rng) == 0 {
                // Text beside attributes or children, without edge blanks (mixed content is trimmed).
                var t = text(allowEmpty: false).trimmingCharacters(in: .whitespacesAndNewlines)
                if t.isEmpty { t = "t" }
                object.append("#text", .string(t))
            }
            return .object(object)
        }
    }

    @Test(arguments: [false, true])
    func generatedValuesRoundTrip(pretty: Bool) throws {
        var generator = Generator(rng: SeededRandom(seed: pretty ? 42 : 7))
        var options = XMLCodec.Options()
        options.prettyPrinted = pretty
        let codec = XMLCodec(options: options)
        for _ in 0..<300 {
            let value = generator.object(depth: 0)
            let data = try codec.encode(value, hints: CodingHints())
            let decoded = try codec.decode(data, hints: CodingHints())
            #expect(decoded == value, "\(String(decoding: data, as: UTF8.self))")
        }
    }
}
