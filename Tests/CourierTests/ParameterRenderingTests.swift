import Courier
import CourierTesting
import Foundation
import HTTPTypes
import Testing

/// ``ParameterEncoding``: the one renderer of parameters (query text, form bodies, signing input).
@Suite struct ParameterRenderingTests {
    static func render(_ object: Value.Object, _ encoding: ParameterEncoding = ParameterEncoding()) throws -> String {
        ParameterEncoding.render(try encoding.pairs(object))
    }

    // MARK: Scalars

    @Test(arguments: [
        (Value.int(0), "0"), (.int(42), "42"), (.int(-7), "-7"), (.int(.min), "-9223372036854775808"),
        (.uint(.max), "18446744073709551615"),
        (.double(2.0), "2"), (.double(-2.0), "-2"), (.double(0.1), "0.1"), (.double(-0.0), "0"),
        (.double(1e21), "1e+21"), (.double(1e20), "100000000000000000000"), (.double(123.456), "123.456"),
        (.double(1.5e-7), "1.5e-7"), (.double(0.000001), "0.000001"), (.double(.leastNonzeroMagnitude), "5e-324"),
        (.double(1.7976931348623157e308), "1.7976931348623157e+308"), (.double(0.30000000000000004), "0.30000000000000004"),
        (.double(9007199254740992), "9007199254740992"), (.double(-1.25e-10), "-1.25e-10"),
        (.number("12345678901234567890123.50"), "12345678901234567890123.50"),
        (.bool(true), "true"), (.bool(false), "false"), (.string("héllo"), "héllo"),
        (.bytes([0xFB, 0xFF]), "+/8="),
    ])
    func scalarTexts(_ value: Value, _ expected: String) {
        #expect(ParameterEncoding.scalarText(value) == expected)
    }

    @Test func nonFiniteDoublesFailNamingTheParameter() throws {
        for bad in [Double.nan, .infinity, -.infinity] {
            let error = try #require(throws: CourierError.self) { try Self.render(["ratio": .double(bad)]) }
            #expect(error.code == .encodingFailed)
            #expect(error.detail?.contains("'ratio'") == true)
        }
        #expect(ParameterEncoding.scalarText(.double(.nan)) == nil)
    }

    @Test func scalarsInAQuery() throws {
        let text = try Self.render([
            "i": 1, "neg": -3, "d": 2.0, "f": 0.1, "big": .double(1e21), "z": .double(-0.0), "t": true, "n": false,
        ])
        #expect(text == "i=1&neg=-3&d=2&f=0.1&big=1e%2B21&z=0&t=true&n=false")
    }

    // MARK: Null

    @Test func nullConventions() throws {
        let object: Value.Object = ["a": 1, "b": .null, "c": "x"]
        #expect(try Self.render(object) == "a=1&c=x")
        #expect(try Self.render(object, ParameterEncoding(nulls: .empty)) == "a=1&b=&c=x")
        #expect(try Self.render(object, ParameterEncoding(nulls: .bare)) == "a=1&b&c=x")
        #expect(ParameterEncoding().nulls == .omit)
    }

    // MARK: Percent-encoding

    @Test func reservedCharactersArePercentEncoded() throws {
        let text = try Self.render(["q & a": "a&b=c+d%e#f?g/h i", "k": "~-._"])
        #expect(text == "q%20%26%20a=a%26b%3Dc%2Bd%25e%23f%3Fg%2Fh%20i&k=~-._")
        #expect(ParameterEncoding.parse(text) == [QueryItem("q & a", "a&b=c+d%e#f?g/h i"), QueryItem("k", "~-._")])
    }

    @Test func nonASCIIIsUTF8PercentEncoded() throws {
        let text = try Self.render(["名前": "café 🚀"])
        #expect(text == "%E5%90%8D%E5%89%8D=caf%C3%A9%20%F0%9F%9A%80")
        #expect(ParameterEncoding.parse(text) == [QueryItem("名前", "café 🚀")])
    }

    @Test func parseReadsPlusPerContext() {
        #expect(ParameterEncoding.parse("a=x+y&&b&c=") == [QueryItem("a", "x+y"), QueryItem("b", nil), QueryItem("c", "")])
        #expect(ParameterEncoding.parse("a=x+y%2B", plusAsSpace: true) == [QueryItem("a", "x y+")])
        #expect(QueryItem.decode("a=%41") == [QueryItem("a", "A")])
        #expect(QueryItem.encode([QueryItem("a b", "c"), QueryItem("flag", nil)]) == "a%20b=c&flag")
    }

    // MARK: Arrays

    @Test func arrayConventions() throws {
        let object: Value.Object = ["tags": ["x", "y z"], "n": [1, 2.5]]
        #expect(try Self.render(object) == "tags%5B%5D=x&tags%5B%5D=y%20z&n%5B%5D=1&n%5B%5D=2.5")
        #expect(try Self.render(object, ParameterEncoding(arrays: .indexed))
            == "tags%5B0%5D=x&tags%5B1%5D=y%20z&n%5B0%5D=1&n%5B1%5D=2.5")
        #expect(try Self.render(object, ParameterEncoding(arrays: .repeated)) == "tags=x&tags=y%20z&n=1&n=2.5")
        #expect(try Self.render(object, ParameterEncoding(arrays: .commaSeparated)) == "tags=x%2Cy%20z&n=1%2C2.5")
        #expect(try ParameterEncoding(arrays: .commaSeparated).pairs(["a": [1, .null, 3]]) == [QueryItem("a", "1,,3")])
    }

    @Test func arraysOfContainers() throws {
        let object: Value.Object = ["items": [["id": 7], [1, 2]]]
        #expect(try ParameterEncoding().pairs(object)
            == [QueryItem("items[0][id]", "7"), QueryItem("items[1][]", "1"), QueryItem("items[1][]", "2")])
        #expect(try ParameterEncoding(arrays: .indexed).pairs(object)
            == [QueryItem("items[0][id]", "7"), QueryItem("items[1][0]", "1"), QueryItem("items[1][1]", "2")])
        for style in [ParameterEncoding.ArrayStyle.repeated, .commaSeparated] {
            let error = try #require(throws: CourierError.self) { try ParameterEncoding(arrays: style).pairs(object) }
            #expect(error.code == .encodingFailed)
            #expect(error.detail?.contains("'items'") == true)
            #expect(error.context.codingPath == [.key("items"), .index(0)])
        }
    }

    @Test func emptyContainersProduceNoPair() throws {
        #expect(try Self.render(["a": [], "b": [:], "c": 1]) == "c=1")
        for encoding in [ParameterEncoding(arrays: .indexed), ParameterEncoding(arrays: .repeated),
                         ParameterEncoding(arrays: .commaSeparated, objects: .json)] {
            #expect(try Self.render(["a": [], "b": [:], "c": 1], encoding) == "c=1")
        }
    }

    // MARK: Objects

    @Test func nestedObjectsThreeDeep() throws {
        let object: Value.Object = ["filter": ["price": ["range": ["min": 1, "max": 2.0]], "q": "ü"]]
        #expect(try ParameterEncoding().pairs(object) == [
            QueryItem("filter[price][range][min]", "1"), QueryItem("filter[price][range][max]", "2"),
            QueryItem("filter[q]", "ü"),
        ])
        #expect(try Self.render(object)
            == "filter%5Bprice%5D%5Brange%5D%5Bmin%5D=1&filter%5Bprice%5D%5Brange%5D%5Bmax%5D=2&filter%5Bq%5D=%C3%BC")
        #expect(try ParameterEncoding(objects: .dotted).pairs(object) == [
            QueryItem("filter.price.range.min", "1"), QueryItem("filter.price.range.max", "2"), QueryItem("filter.q", "ü"),
        ])
        #expect(try ParameterEncoding(objects: .json).pairs(object)
            == [QueryItem("filter", #"{"price":{"range":{"min":1,"max":2.0}},"q":"ü"}"#)])
    }

    @Test func objectsInArraysAndArraysInObjects() throws {
        let object: Value.Object = ["f": ["tags": ["a", "b"], "pairs": [["k": 1]]]]
        #expect(try ParameterEncoding().pairs(object)
            == [QueryItem("f[tags][]", "a"), QueryItem("f[tags][]", "b"), QueryItem("f[pairs][0][k]", "1")])
    }

    @Test func failConventionsNameTheParameter() throws {
        let arrays = try #require(throws: CourierError.self) {
            try ParameterEncoding(arrays: .fail).pairs(["ok": 1, "filter": ["tags": ["x"]]])
        }
        #expect(arrays.code == .encodingFailed)
        #expect(arrays.detail?.contains("'filter[tags]'") == true)
        #expect(arrays.context.codingPath == [.key("filter"), .key("tags")])
        #expect(arrays.description.contains("filter"))

        let objects = try #require(throws: CourierError.self) {
            try ParameterEncoding(objects: .fail).pairs(["page": 1, "filter": ["a": 1]])
        }
        #expect(objects.code == .encodingFailed)
        #expect(objects.detail?.contains("'filter'") == true)
        #expect(objects.detail?.contains(".fail") == true)
    }

    @Test func depthIsBounded() throws {
        var deep: Value = 1
        for _ in 0..<40 { deep = ["a": deep] }
        let error = try #require(throws: CourierError.self) { try ParameterEncoding().pairs(["top": deep]) }
        #expect(error.code == .encodingFailed)
        #expect(error.detail?.contains("maximumDepth") == true)
        var shallow = ParameterEncoding()
        shallow.maximumDepth = 64
        #expect(try shallow.pairs(["top": deep]).count == 1)
    }

    // MARK: The pipeline uses it

    static let module = APIModule(name: "m", service: APIService(name: "s", baseURL: URL(string: "http://h.test")!))

    static func send(_ endpoint: Endpoint) async throws -> (HTTPRequest, Data?) {
        let transport = InMemoryTransport.successful(json: #"{}"#)
        _ = try await CourierClient(transport: transport).send(endpoint)
        let request = try #require(transport.requests.first)
        return (request.head, request.body)
    }

    static let payload: Value = [
        "price": 2.0, "n": -3, "ok": true, "tags": ["a", "b"], "filter": ["a": 1, "b": ["c": "ü"]], "q": "x y+z",
    ]
    static let rendered = "price=2&n=-3&ok=true&tags%5B%5D=a&tags%5B%5D=b&filter%5Ba%5D=1&filter%5Bb%5D%5Bc%5D=%C3%BC&q=x%20y%2Bz"

    @Test func getQueryComesFromTheRenderer() async throws {
        let endpoint = Endpoint(name: "e", module: Self.module, method: .get, path: "/s",
                                query: [QueryItem("page", "1")], body: Self.payload)
        let (head, body) = try await Self.send(endpoint)
        #expect(head.path == "/s?page=1&" + Self.rendered)
        #expect(body == nil)
    }

    @Test func formBodyComesFromTheRenderer() async throws {
        var endpoint = Endpoint(name: "e", module: Self.module, method: .post, path: "/s", body: Self.payload)
        endpoint.requestFormat = .form
        let (head, body) = try await Self.send(endpoint)
        #expect(String(decoding: try #require(body), as: UTF8.self) == Self.rendered)
        #expect(head.headerFields[.contentType] == "application/x-www-form-urlencoded")
        #expect(try FormCodec().encode(Self.payload, hints: CodingHints()) == Data(Self.rendered.utf8))
    }

    @Test func endpointAndModuleChooseTheConvention() async throws {
        var module = Self.module
        module.parameterEncoding = ParameterEncoding(arrays: .repeated)
        var endpoint = Endpoint(name: "e", module: module, method: .get, path: "/s", body: ["t": [1, 2]])
        #expect(try await Self.send(endpoint).0.path == "/s?t=1&t=2")
        endpoint.parameterEncoding = ParameterEncoding(arrays: .indexed)
        #expect(try await Self.send(endpoint).0.path == "/s?t%5B0%5D=1&t%5B1%5D=2")
        endpoint.method = .post
        endpoint.requestFormat = .form
        #expect(try await Self.send(endpoint).1 == Data("t%5B0%5D=1&t%5B1%5D=2".utf8))
    }

    @Test func nothingIsDroppedSilently() async throws {
        var endpoint = Endpoint(name: "e", module: Self.module, method: .get, path: "/s", body: ["filter": ["a": 1]])
        #expect(try await Self.send(endpoint).0.path == "/s?filter%5Ba%5D=1")
        endpoint.parameterEncoding = ParameterEncoding(objects: .fail)
        let error = await #expect(throws: CourierError.self) { try await Self.send(endpoint) }
        #expect(error?.code == .encodingFailed)
        #expect(error?.detail?.contains("'filter'") == true)
    }
}
