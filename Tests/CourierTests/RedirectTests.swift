import Courier
import CourierTesting
import Foundation
import HTTPTypes
import Testing

/// The `redirects` stage against an in-memory server: what each hop sends, what each policy follows, and the
/// errors it ends with.
@Suite(.timeLimit(.minutes(10))) struct RedirectTests {
    /// A server of a few routes on any host: `/r/<status>?to=<location>` redirects, `/loop` redirects to
    /// itself, `/chain/<n>` redirects to `/chain/<n-1>`, anything else echoes method, URL and body.
    static func server() -> InMemoryTransport {
        InMemoryTransport { request, body in
            let path = request.path ?? "/"
            let (bare, query) = path.split(separator: "?", maxSplits: 1).map(String.init).pair
            if bare.hasPrefix("/r/"), let status = Int(bare.dropFirst(3)) {
                let target = QueryItem.decode(query ?? "").first { $0.name == "to" }?.value ?? "/"
                return (HTTPResponse(status: .init(code: status), headerFields: [.location: target]), Data("moved".utf8))
            }
            if bare == "/loop" { return (HTTPResponse(status: .found, headerFields: [.location: "/loop"]), Data()) }
            if bare.hasPrefix("/chain/"), let n = Int(bare.dropFirst(7)), n > 0 {
                return (HTTPResponse(status: .found, headerFields: [.location: "/chain/\(n - 1)"]), Data())
            }
            let echo: Value = [
                "method": .string(request.method.rawValue),
                "url": .string("\(request.scheme ?? "")://\(request.authority ?? "")\(path)"),
                "body": .string(String(decoding: body ?? Data(), as: UTF8.self)),
                "authorization": .string(request.headerFields[.authorization] ?? ""),
                "cookie": .string(request.headerFields[.cookie] ?? ""),
                "contentType": .string(request.headerFields[.contentType] ?? ""),
            ]
            return (HTTPResponse(status: .ok, headerFields: [.contentType: "application/json"]),
                    try JSONCodec().encode(echo, hints: CodingHints()))
        }
    }

    static let module = APIModule(name: "edge", service: APIService(name: "edge", baseURL: URL(string: "http://a.test")!))

    static func endpoint(_ path: String, method: HTTPRequest.Method = .get, body: Value? = nil) -> Endpoint {
        Endpoint(name: "e", module: module, method: method, path: path, body: body)
    }

    static func redirect(_ status: Int, to location: String) -> String {
        "/r/\(status)?to=" + QueryItem.percentEncode(location)
    }

    @Test func aRelativeLocationResolvesAgainstTheURLThatAnsweredAndTheHopsAreInTheMetadata() async throws {
        let transport = Self.server()
        let client = CourierClient(transport: transport)
        let reply = try await client.send(Self.endpoint(Self.redirect(302, to: "../final?x=%2F")))
        #expect(reply.value["url"]?.stringValue == "http://a.test/final?x=%2F")
        #expect(reply.metadata.url?.absoluteString == "http://a.test/final?x=%2F")
        #expect(reply.metadata.redirects.count == 1)
        #expect(reply.metadata.redirects.first?.status == 302)
        #expect(reply.metadata.redirects.first?.from.absoluteString.hasPrefix("http://a.test/r/302") == true)
        #expect(transport.requests.count == 2)
    }

    @Test func theMetadataURLIsTheRequestsWhenThereIsNoRedirect() async throws {
        let reply = try await CourierClient(transport: Self.server()).send(Self.endpoint("/plain"))
        #expect(reply.metadata.redirects.isEmpty)
        #expect(reply.metadata.url?.absoluteString == "http://a.test/plain")
    }

    @Test(arguments: [301, 302, 303])
    func aPOSTBecomesAGETWithoutBody(status: Int) async throws {
        let transport = Self.server()
        let reply = try await CourierClient(transport: transport).send(
            Self.endpoint(Self.redirect(status, to: "/done"), method: .post, body: ["a": 1]))
        #expect(reply.value["method"]?.stringValue == "GET")
        #expect(reply.value["body"]?.stringValue == "")
        #expect(reply.value["contentType"]?.stringValue == "")
        #expect(transport.requests.last?.body == nil)
        #expect(reply.metadata.redirects.first?.method == .get)
    }

    @Test(arguments: [307, 308])
    func aTemporaryOrPermanentRedirectKeepsMethodAndBody(status: Int) async throws {
        let reply = try await CourierClient(transport: Self.server()).send(
            Self.endpoint(Self.redirect(status, to: "/done"), method: .put, body: ["a": 1]))
        #expect(reply.value["method"]?.stringValue == "PUT")
        #expect(reply.value["body"]?.stringValue == #"{"a":1}"#)
        #expect(reply.value["contentType"]?.stringValue?.contains("json") == true)
    }

    @Test func aBodyThatCannotBeReplayedIsNotSentAgain() async throws {
        var endpoint = Self.endpoint(Self.redirect(307, to: "/done"), method: .post, body: ["a": 1])
        endpoint.isReplayable = false
        let error = try await #require(throws: CourierError.self) {
            _ = try await CourierClient(transport: Self.server()).send(endpoint)
        }
        #expect(error.code == .redirectRefused)
    }

    @Test func aHEADStaysAHEADOnA303() async throws {
        let transport = Self.server()
        _ = try? await CourierClient(transport: transport).send(Self.endpoint(Self.redirect(303, to: "/done"), method: .head))
        #expect(transport.requests.map(\.head.method) == [.head, .head])
    }

    @Test func aCrossOriginHopDropsCredentialsAndASameOriginHopKeepsThem() async throws {
        var endpoint = Self.endpoint(Self.redirect(302, to: "/same"))
        endpoint.headers = [.authorization: "Bearer secret", .cookie: "s=1", .proxyAuthorization: "Basic eA=="]
        let client = CourierClient(transport: Self.server())
        let same = try await client.send(endpoint)
        #expect(same.value["authorization"]?.stringValue == "Bearer secret")
        #expect(same.value["cookie"]?.stringValue == "s=1")

        for target in ["http://b.test/other", "https://a.test/other", "http://a.test:8080/other"] {
            endpoint.path = Self.redirect(302, to: target)
            let other = try await client.send(endpoint)
            #expect(other.value["url"]?.stringValue == target)
            #expect(other.value["authorization"]?.stringValue == "", "\(target)")
            #expect(other.value["cookie"]?.stringValue == "", "\(target)")
        }
    }

    @Test func theHopLimitEndsALoopAndALongChain() async throws {
        let client = CourierClient(transport: Self.server())
        let loop = try await #require(throws: CourierError.self) { _ = try await client.send(Self.endpoint("/loop")) }
        #expect(loop.code == .tooManyRedirects)
        #expect(loop.detail?.contains("more than 10 redirects") == true, "\(loop)")

        var configuration = CourierClient.Configuration()
        configuration.redirectPolicy = .follow(limit: 3)
        let limited = CourierClient(transport: Self.server(), configuration: configuration)
        _ = try await limited.send(Self.endpoint("/chain/3"))
        let error = try await #require(throws: CourierError.self) { _ = try await limited.send(Self.endpoint("/chain/4")) }
        #expect(error.code == .tooManyRedirects)
        #expect(error.code.message(in: .english) == "The server redirected the request too many times.")
        #expect(error.code.message(in: .simplifiedChinese) == "服务器重定向次数过多~")
    }

    @Test func neverMakesTheRedirectTheAnswer() async throws {
        var configuration = CourierClient.Configuration()
        configuration.redirectPolicy = .never
        let transport = Self.server()
        let error = try await #require(throws: CourierError.self) {
            _ = try await CourierClient(transport: transport, configuration: configuration).send(Self.endpoint("/chain/1"))
        }
        #expect(error.code == .unexpectedStatus)
        #expect(error.context.status == 302)
        #expect(transport.requests.count == 1)
    }

    @Test func anEndpointPolicyOverridesTheModuleAndTheClient() async throws {
        var module = Self.module
        module.redirectPolicy = .never
        var endpoint = Endpoint(name: "e", module: module, path: "/chain/2")
        let client = CourierClient(transport: Self.server())
        let refused = await #expect(throws: CourierError.self) { _ = try await client.send(endpoint) }
        #expect(refused?.code == .unexpectedStatus)
        endpoint.redirectPolicy = .follow(limit: 2)
        let reply = try await client.send(endpoint)
        #expect(reply.metadata.redirects.count == 2)
        #expect(client.pipeline(for: endpoint).stageNames == [
            "result", "routing", "errorMapping", "codec", "redirects", "transport",
        ])
    }

    @Test func sameOriginFollowsTheOriginAndRefusesAnother() async throws {
        var configuration = CourierClient.Configuration()
        configuration.redirectPolicy = .sameOrigin(limit: 5)
        let client = CourierClient(transport: Self.server(), configuration: configuration)
        let reply = try await client.send(Self.endpoint(Self.redirect(302, to: "http://A.TEST:80/same")))
        #expect(reply.metadata.redirects.count == 1)
        let error = try await #require(throws: CourierError.self) {
            _ = try await client.send(Self.endpoint(Self.redirect(302, to: "http://b.test/")))
        }
        #expect(error.code == .redirectRefused)
        #expect(error.detail?.contains("another origin") == true)
    }

    @Test(arguments: ["ftp://a.test/file", "file:///etc/passwd", "javascript:alert(1)", "http://", "http://a.test:99999/"])
    func aLocationThatIsNotAnHTTPURLIsRefused(location: String) async throws {
        let error = try await #require(throws: CourierError.self) {
            _ = try await CourierClient(transport: Self.server()).send(Self.endpoint(Self.redirect(302, to: location)))
        }
        #expect(error.code == .redirectRefused, "\(location): \(error)")
    }

    @Test func aRedirectWithoutLocationIsTheAnswer() async throws {
        let transport = InMemoryTransport { _, _ in (HTTPResponse(status: .found), Data()) }
        let error = try await #require(throws: CourierError.self) {
            _ = try await CourierClient(transport: transport).send(Self.endpoint("/x"))
        }
        #expect(error.code == .unexpectedStatus)
        #expect(error.context.status == 302)
        #expect(transport.requests.count == 1)
    }

    /// A network-role interceptor (a signer, here one that stamps the path) runs once per hop, and the
    /// trace shows each hop.
    @Test func aNetworkInterceptorSeesEveryHop() async throws {
        struct PathStamp: Interceptor {
            let seen: Locked<[String]>
            var role: InterceptorRole { .network }
            func intercept(_ request: CourierRequest, context: InterceptorContext, next: InterceptorNext) async throws
                -> CourierResponse
            {
                seen.withLock { $0.append(request.head.path ?? "") }
                var request = request
                request.head.headerFields[.authorization] = "Sig " + (request.head.path ?? "")
                return try await next(request)
            }
        }
        let seen = Locked<[String]>([])
        var endpoint = Self.endpoint("/chain/2")
        endpoint.interceptors = [PathStamp(seen: seen)]
        let reply = try await CourierClient(transport: Self.server()).send(endpoint, options: .init(trace: true))
        #expect(seen.withLock { $0 } == ["/chain/2", "/chain/1", "/chain/0"])
        #expect(reply.value["authorization"]?.stringValue == "Sig /chain/0")
        let names = try #require(reply.metadata.trace).stages.map(\.name)
        #expect(names == [
            "result", "routing", "errorMapping", "codec", "redirects", "PathStamp", "transport", "PathStamp",
            "transport", "PathStamp", "transport",
        ])
        #expect(reply.metadata.trace?.stages.first { $0.name == "redirects" }?.nextCalls == 3)
    }
}

extension Array where Element == String {
    /// The first element and the second, if any.
    fileprivate var pair: (String, String?) { (self[0], count > 1 ? self[1] : nil) }
}
