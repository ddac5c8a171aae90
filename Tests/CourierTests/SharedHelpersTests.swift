import Courier
import CourierTesting
import Foundation
import HTTPTypes
import Testing

/// The helpers every module shares: request-target splitting, percent-coding, the redaction policy and the
/// low-level transport-failure classification. Each lives once in the core; these pin their edge cases.
@Suite struct SharedHelpersTests {
    // MARK: RequestTarget

    @Test(arguments: [
        // target, path, query, fragment
        ("", "/", nil, nil),
        ("/", "/", nil, nil),
        ("?", "/", "", nil),
        ("/x?", "/x", "", nil),
        ("#", "/", nil, ""),
        ("/x#top", "/x", nil, "top"),
        ("/a#b?c", "/a", nil, "b?c"),
        ("/a?b=1#c?d", "/a", "b=1", "c?d"),
        ("/a?b=1?c=2", "/a", "b=1?c=2", nil),
        ("/s?q=a+b", "/s", "q=a+b", nil),
        ("https://h.test/p?x=1#f", "https://h.test/p", "x=1", "f"),
        ("/ü/%2F?ä=ö", "/ü/%2F", "ä=ö", nil),
    ] as [(String, String, String?, String?)])
    func splitsTargets(_ text: String, _ path: String, _ query: String?, _ fragment: String?) {
        let target = RequestTarget(text)
        #expect(target.path == path)
        #expect(target.query == query)
        #expect(target.fragment == fragment)
        if !text.isEmpty, text.first != "?", text.first != "#" { #expect(target.text == text) }
    }

    @Test func aMissingTargetIsTheRoot() {
        #expect(RequestTarget(nil).path == "/")
        #expect(RequestTarget(nil).querySegments.isEmpty)
        #expect(RequestTarget(nil).text == "/")
    }

    @Test func segmentsAndItemsKeepOrderAndSkipEmptySegments() {
        let target = RequestTarget("/x?a=1&&b&c=%20+&=v&")
        #expect(target.querySegments == ["a=1", "b", "c=%20+", "=v"])
        #expect(target.queryItems == [QueryItem("a", "1"), QueryItem("b", nil), QueryItem("c", " +"), QueryItem("", "v")])
    }

    @Test(arguments: [
        ("/x", "a=1", "/x?a=1"), ("/x?", "a=1", "/x?a=1"), ("/x?b=2", "a=1", "/x?b=2&a=1"),
        ("/x?b=2&", "a=1", "/x?b=2&a=1"), ("/x#f", "a=1", "/x?a=1#f"), ("/x?b#f", "a=1", "/x?b&a=1#f"),
        ("/x?b", "", "/x?b"),
    ])
    func appendsQueries(_ target: String, _ text: String, _ expected: String) {
        #expect(RequestTarget(target).appendingQuery(text).text == expected)
    }

    @Test func anEndpointWithAFragmentGetsItsQueryBeforeTheFragment() throws {
        let module = APIModule(name: "m", service: APIService(name: "s", baseURL: URL(string: "http://api.test")!))
        let endpoint = Endpoint(name: "e", module: module, path: "https://h.test/doc#part", query: [QueryItem("a", "1")])
        #expect(try endpoint.url().absoluteString == "https://h.test/doc?a=1#part")
    }

    // MARK: Percent-decoding

    @Test(arguments: [
        ("", ""), ("plain", "plain"), ("a%20b", "a b"), ("%41%42", "AB"), ("%c3%bc", "ü"), ("%C3%BC", "ü"),
        ("a+b", "a+b"), ("%2B", "+"),
        // malformed escapes stay as they are
        ("%", "%"), ("%4", "%4"), ("100%", "100%"), ("%G1", "%G1"), ("%+1", "%+1"), ("%-1", "%-1"), ("% 1", "% 1"),
        ("%%41", "%A"), ("%4%41", "%4A"),
        // NUL and bytes that are not UTF-8
        ("%00", "\u{0}"), ("a%00b", "a\u{0}b"), ("%FF", "\u{FFFD}"), ("%C3", "\u{FFFD}"), ("%C3x", "\u{FFFD}x"),
        ("%ED%A0%80", "\u{FFFD}\u{FFFD}\u{FFFD}"),
    ])
    func decodesLeniently(_ text: String, _ expected: String) {
        #expect(QueryItem.percentDecode(text) == expected)
    }

    @Test(arguments: [
        ("", ""), ("a%20b", "a b"), ("%C3%BC", "ü"), ("%00", "\u{0}"), ("~1", "~1"),
    ])
    func decodesStrictlyWhenWellFormed(_ text: String, _ expected: String) {
        #expect(QueryItem.strictlyPercentDecoded(text) == expected)
    }

    @Test(arguments: ["%", "%4", "%G1", "%+1", "a%", "%FF", "%C3", "%ED%A0%80"])
    func strictDecodingRefusesMalformedEscapesAndNonUTF8(_ text: String) {
        #expect(QueryItem.strictlyPercentDecoded(text) == nil)
    }

    @Test(arguments: ["", "a b/c?d=e&f", "ü€😀", "\u{0}", "100%", "+ -._~", "%41"])
    func encodingRoundTrips(_ text: String) {
        let encoded = QueryItem.percentEncode(text)
        #expect(encoded.utf8.allSatisfy { $0 < 0x80 && $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "&") })
        #expect(QueryItem.percentDecode(encoded) == text)
        #expect(QueryItem.strictlyPercentDecoded(encoded) == text)
    }

    @Test func plusIsASpaceOnlyInFormBodies() {
        #expect(ParameterEncoding.parse("q=a+b%2B") == [QueryItem("q", "a+b+")])
        #expect(ParameterEncoding.parse("q=a+b%2B", plusAsSpace: true) == [QueryItem("q", "a b+")])
    }

    /// Huge inputs cost linear time: a quadratic splitter or decoder would take minutes on these.
    @Test func hugeInputsAreLinear() {
        let count = 200_000
        let malformed = String(repeating: "%4", count: count)
        let escapes = String(repeating: "%41", count: count)
        let query = "/x?" + String(repeating: "auth_token=s&a=%41&", count: count / 4) + "#" + String(repeating: "?", count: count)
        let clock = ContinuousClock()
        let elapsed = clock.measure {
            #expect(QueryItem.percentDecode(malformed).utf8.count == 2 * count)
            #expect(QueryItem.percentDecode(escapes) == String(repeating: "A", count: count))
            #expect(QueryItem.strictlyPercentDecoded(malformed) == nil)
            let target = RequestTarget(query)
            #expect(target.querySegments.count == count / 2)
            #expect(target.fragment?.utf8.count == count)
            let redacted = RedactionPolicy().redacting(target: query)
            #expect(!redacted.contains("auth_token=s&"))
            #expect(RequestTarget(String(repeating: "?", count: count)).query?.utf8.count == count - 1)
        }
        // Generous for a debug build on a loaded machine: quadratic work on these takes far longer.
        #expect(elapsed < .seconds(120), "took \(elapsed)")
    }

    // MARK: Redaction

    @Test(arguments: [
        "Authorization", "Proxy-Authorization", "Cookie", "Set-Cookie", "X-Session-Token", "x-session-token",
        "X-Api-Key", "X-Auth", "auth_token", "AUTH_TOKEN", "access_token", "refresh_token", "client_secret",
        "password", "X-Signature", "sessionid", "X-Credential", "sign", "sig", "apiKey",
    ])
    func secretNames(_ name: String) {
        #expect(RedactionPolicy().isSecret(name))
    }

    @Test(arguments: ["Accept", "Content-Type", "page", "lang", "X-Request-ID", "User-Agent", "q", "design"])
    func ordinaryNames(_ name: String) {
        #expect(!RedactionPolicy().isSecret(name))
    }

    @Test func thePolicyIsConfigurable() {
        var policy = RedactionPolicy()
        #expect(policy.isSecret("keyword"))
        policy.exemptions.insert("Keyword")
        #expect(!policy.isSecret("keyword"))
        #expect(!policy.isSecret("tenant"))
        policy.names.insert("Tenant")
        #expect(policy.isSecret("TENANT"))
        policy.patterns.append("PRIVATE")
        #expect(policy.isSecret("x-private-note"))
        #expect(!RedactionPolicy.disabled.isSecret("Authorization"))
        let custom = RedactionPolicy(patterns: ["pin"], names: ["otp"])
        #expect(custom.isSecret("user_pin") && custom.isSecret("OTP") && !custom.isSecret("auth_token"))
    }

    @Test func headerValuesAreReplacedByOnePlaceholder() {
        let session = HTTPField.Name("X-Session-Token")!
        let fields: HTTPFields = [.authorization: "Bearer abc", session: "s3ss", .accept: "*/*", .cookie: "a=b"]
        let redacted = RedactionPolicy().redacting(fields)
        #expect(redacted[session] == "REDACTED")
        #expect(redacted[.authorization] == RedactionPolicy.placeholder)
        #expect(redacted[.cookie] == RedactionPolicy.placeholder)
        #expect(redacted[.accept] == "*/*")
        #expect(Array(redacted).map(\.name) == Array(fields).map(\.name))
    }

    @Test(arguments: [
        ("/x?auth_token=abc&page=2", "/x?auth_token=REDACTED&page=2"),
        ("/x?page=2&AUTH_TOKEN=abc", "/x?page=2&AUTH_TOKEN=REDACTED"),
        ("/x?auth%5Ftoken=abc", "/x?auth%5Ftoken=REDACTED"),
        ("/x?token", "/x?token"),
        ("/x?token=", "/x?token=REDACTED"),
        ("/x?a=%20+&&session=1#frag", "/x?a=%20+&&session=REDACTED#frag"),
        ("/x?page=2", "/x?page=2"),
        ("/x", "/x"),
        ("?", "?"),
        ("https://h.test/p?api_key=k", "https://h.test/p?api_key=REDACTED"),
    ])
    func queryValuesAreReplacedInPlace(_ target: String, _ expected: String) {
        #expect(RedactionPolicy().redacting(target: target) == expected)
    }

    @Test func tracesHideSecretHeaderValues() async throws {
        let module = APIModule(name: "m", service: APIService(name: "s", baseURL: URL(string: "http://api.test")!))
        var endpoint = Endpoint(name: "e", module: module, path: "/x")
        endpoint.interceptors = [SetHeaders([HTTPField.Name("X-Session-Token")!: "s3ss10n", .accept: "text/plain"])]
        let transport = InMemoryTransport.successful()
        let reply = try await CourierClient(transport: transport).send(endpoint, options: .init(trace: true))
        let text = try #require(reply.metadata.trace).description
        #expect(text.contains("X-Session-Token: REDACTED"))
        #expect(text.contains("Accept: text/plain"))
        #expect(!text.contains("s3ss10n"))

        // The client's policy decides: exempting the name shows the value.
        var policy = RedactionPolicy()
        policy.exemptions.insert("x-session-token")
        let open = CourierClient(transport: transport, configuration: .init(redaction: policy))
        let shown = try await open.send(endpoint, options: .init(trace: true))
        #expect(try #require(shown.metadata.trace).description.contains("X-Session-Token: s3ss10n"))
    }

    // MARK: Transport failures

    @Test(arguments: [
        (ECONNREFUSED, TransportFailure.cannotConnect), (EHOSTUNREACH, .cannotConnect), (ENETUNREACH, .notConnected),
        (ETIMEDOUT, .timedOut), (ECONNRESET, .connectionLost), (EPIPE, .connectionLost), (ENOENT, .other),
    ])
    func socketErrorsMapOneWay(_ code: Int32, _ failure: TransportFailure) {
        #expect(TransportFailure(errno: code) == failure)
    }
}
