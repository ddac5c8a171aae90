import Courier
import Testing

@Suite struct ContentFormatTests {
    @Test(arguments: [
        ("application/json; charset=utf-8", "json"), ("application/problem+json", "json"),
        ("text/xml", "xml"), ("application/x-protobuf", "protobuf"), ("image/png", nil),
    ] as [(String, String?)])
    func contentTypes(header: String, expected: String?) {
        #expect(ContentFormat(contentType: header)?.name == expected)
    }
}
