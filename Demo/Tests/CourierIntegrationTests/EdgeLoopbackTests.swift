import AsyncHTTPClient
import Courier
import CourierAsyncHTTPClient
import Foundation
import HTTPTypes
import Testing

/// The network edge over loopback, on every transport: redirects followed by the chain's policy, cookies
/// kept by the jar only, and TLS (custom roots, pins, mutual TLS) against a local TLS server whose
/// certificates come from test-only CAs.
@Suite(.serialized, .timeLimit(.minutes(10))) struct EdgeLoopbackTests {
    static func module(_ server: EdgeServer, interceptors: [any Interceptor] = []) -> APIModule {
        APIModule(name: "edge", service: APIService(name: "edge", baseURL: server.baseURL), interceptors: interceptors)
    }

    static func redirect(_ status: Int, to location: String) -> String {
        "/r/\(status)?to=" + QueryItem.percentEncode(location)
    }

    // MARK: - Redirects

    @Test(arguments: TransportUnderTest.allCases)
    func redirectsAreFollowedByTheChainsPolicy(_ kind: TransportUnderTest) async throws {
        try await EdgeServer.with { server in
            try await kind.withClient { client in
                let module = Self.module(server)
                // Relative Location, hops in the metadata.
                let relative = try await client.send(Endpoint(name: "r", module: module, path: Self.redirect(302, to: "/echo?x=%2F")))
                #expect(relative.value["path"]?.stringValue == "/echo?x=%2F")
                #expect(relative.metadata.redirects.map(\.status) == [302])
                #expect(relative.metadata.url?.absoluteString == "\(server.baseURL)/echo?x=%2F")

                // 303 turns a POST into a GET without body; 307 keeps a PUT and its body.
                let seeOther = try await client.send(
                    Endpoint(name: "r", module: module, method: .post, path: Self.redirect(303, to: "/echo"), body: ["a": 1]))
                #expect(seeOther.value["method"]?.stringValue == "GET")
                #expect(seeOther.value["body"]?.stringValue == "")
                let temporary = try await client.send(
                    Endpoint(name: "r", module: module, method: .put, path: Self.redirect(307, to: "/echo"), body: ["a": 1]))
                #expect(temporary.value["method"]?.stringValue == "PUT")
                #expect(temporary.value["body"]?.stringValue == #"{"a":1}"#)

                // A chain within the limit, a loop past it.
                let chain = try await client.send(Endpoint(name: "c", module: module, path: "/chain/3"))
                #expect(chain.metadata.redirects.count == 3)
                let loop = try await #require(throws: CourierError.self) {
                    _ = try await client.send(Endpoint(name: "l", module: module, path: "/loop"))
                }
                #expect(loop.code == .tooManyRedirects, "\(loop)")

                // `never`: the 302 is the answer.
                var never = Endpoint(name: "n", module: module, path: "/chain/1")
                never.redirectPolicy = .never
                let answer = try await #require(throws: CourierError.self) { _ = try await client.send(never) }
                #expect(answer.code == .unexpectedStatus)
                #expect(answer.context.status == 302, "\(answer)")
            }
        }
    }

    @Test(arguments: TransportUnderTest.allCases)
    func aCrossOriginHopDropsAuthorizationAndSameOriginRefusesIt(_ kind: TransportUnderTest) async throws {
        try await EdgeServer.with { server in
            try await kind.withClient { client in
                let module = Self.module(server)
                var same = Endpoint(name: "s", module: module, path: Self.redirect(302, to: "/echo"))
                same.headers = [.authorization: "Bearer secret"]
                #expect(try await client.send(same).value["authorization"]?.stringValue == "Bearer secret")

                // localhost is another origin than 127.0.0.1, on the same server.
                var other = Endpoint(name: "o", module: module,
                                     path: Self.redirect(302, to: "http://localhost:\(server.port)/echo"))
                other.headers = [.authorization: "Bearer secret"]
                let reply = try await client.send(other)
                #expect(reply.value["host"]?.stringValue == "localhost:\(server.port)")
                #expect(reply.value["authorization"]?.stringValue == "")

                other.redirectPolicy = .sameOrigin(limit: 5)
                let refused = try await #require(throws: CourierError.self) { _ = try await client.send(other) }
                #expect(refused.code == .redirectRefused, "\(refused)")
            }
        }
    }

    /// A network-role interceptor (a signer would be one) sees each hop's own path.
    @Test(arguments: TransportUnderTest.allCases)
    func anInterceptorSeesEachHop(_ kind: TransportUnderTest) async throws {
        struct Sign: Interceptor {
            var role: InterceptorRole { .network }
            func intercept(_ request: CourierRequest, context: InterceptorContext, next: InterceptorNext) async throws
                -> CourierResponse
            {
                var request = request
                request.head.headerFields[.authorization] = "Sig " + (request.head.path ?? "")
                return try await next(request)
            }
        }
        try await EdgeServer.with { server in
            try await kind.withClient { client in
                let reply = try await client.send(
                    Endpoint(name: "c", module: Self.module(server, interceptors: [Sign()]), path: "/chain/2"),
                    options: .init(trace: true))
                #expect(reply.value["authorization"]?.stringValue == "Sig /chain/0")
                let transports = reply.metadata.trace?.stages.filter { $0.name == "transport" }.count
                #expect(transports == 3)
            }
        }
    }

    @Test func aClientThatFollowsRedirectsItselfIsRefused() async throws {
        try await EdgeServer.with { server in
            let client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup,
                                    configuration: HTTPClient.Configuration(redirectConfiguration: .follow(max: 5, allowCycles: false)))
            var failure: (any Error)?
            do {
                _ = try await HTTPClientTransport(client: client).send(
                    HTTPRequest(method: .get, scheme: "http", authority: "127.0.0.1:\(server.port)", path: "/chain/1"),
                    body: nil, options: TransportOptions(timeout: .seconds(10)))
            } catch {
                failure = error
            }
            try await client.shutdown()
            #expect((failure as? CourierError)?.code == .redirectRefused, "\(String(describing: failure))")
        }
    }

    // MARK: - Cookies

    @Test(arguments: TransportUnderTest.allCases)
    func cookiesAreTheJarsAndNeverTheTransports(_ kind: TransportUnderTest) async throws {
        try await EdgeServer.with { server in
            try await kind.withClient { client in
                let jar = CookieJar()
                let withJar = Self.module(server, interceptors: [jar])
                let login = try await client.send(Endpoint(name: "login", module: withJar, method: .post, path: "/login"))
                #expect(login.value["cookie"]?.stringValue == "sid=42")
                #expect(jar.store.cookies.map(\.name) == ["sid"])
                let set = "/set?c=" + QueryItem.percentEncode("theme=dark; Path=/; Max-Age=60")
                    + "&c=" + QueryItem.percentEncode("lang=en; Expires=Wed, 21 Oct 2099 07:28:00 GMT")
                _ = try await client.send(Endpoint(name: "set", module: withJar, path: set))
                let echo = try await client.send(Endpoint(name: "echo", module: withJar, path: "/echo"))
                #expect(echo.value["cookie"]?.stringValue == "sid=42; theme=dark; lang=en")

                // Without a jar, nothing is kept: the transport has no cookie storage of its own.
                let bare = Self.module(server)
                _ = try await client.send(Endpoint(name: "set", module: bare, path: set))
                _ = try await client.send(Endpoint(name: "login", module: bare, path: "/login"))
                let none = try await client.send(Endpoint(name: "echo", module: bare, path: "/echo"))
                #expect(none.value["cookie"]?.stringValue == "")
            }
        }
    }

    // MARK: - TLS

    static func get(_ server: EdgeServer, on transport: any Transport) async throws -> HTTPResponse {
        try await transport.send(
            HTTPRequest(method: .get, scheme: server.baseURL.scheme, authority: "127.0.0.1:\(server.port)", path: "/echo"),
            body: nil, options: TransportOptions(timeout: .seconds(8))
        ).0
    }

    static func failure(_ server: EdgeServer, on transport: any Transport) async throws -> CourierError {
        try await #require(throws: CourierError.self) { _ = try await get(server, on: transport) }
    }

    @Test(arguments: TransportUnderTest.allCases)
    func anUntrustedCertificateFailsAsTLS(_ kind: TransportUnderTest) async throws {
        try await EdgeServer.with(.tls) { server in
            try await kind.run { transport in
                let error = try await Self.failure(server, on: transport)
                #expect(error.code == .tlsFailure, "\(error)")
            }
        }
    }

    @Test func aCustomRootIsTrustedWithOrWithoutTheSystemRoots() async throws {
        try await EdgeServer.with(.tls) { server in
            let root = TLSPolicy.Source.file(server.certificates.caPEM.path)
            let only = try HTTPClientTransport(tls: TLSPolicy(trustRoots: [root]))
            #expect(try await Self.get(server, on: only).status == .ok)
            let pem = try Data(contentsOf: server.certificates.caPEM)
            let also = try HTTPClientTransport(tls: TLSPolicy(trustRoots: [.pem(pem)], trustsSystemRoots: true))
            #expect(try await Self.get(server, on: also).status == .ok)
            // Another CA is no help.
            let wrong = try HTTPClientTransport(tls: TLSPolicy(trustRoots: [.file(server.certificates.otherPEM.path)]))
            #expect(try await Self.failure(server, on: wrong).code == .tlsFailure)
        }
    }

    @Test func aPinMustMatchTheLeafKey() async throws {
        try await EdgeServer.with(.tls) { server in
            let root = TLSPolicy.Source.file(server.certificates.caPEM.path)
            let serverPin = try server.certificates.pin(of: server.certificates.serverPEM)
            let otherPin = try server.certificates.pin(of: server.certificates.otherPEM)
            let match = try HTTPClientTransport(tls: TLSPolicy(trustRoots: [root], pins: [otherPin, serverPin]))
            #expect(try await Self.get(server, on: match).status == .ok)

            let mismatch = try HTTPClientTransport(tls: TLSPolicy(trustRoots: [root], pins: [otherPin]))
            let error = try await Self.failure(server, on: mismatch)
            #expect(error.code == .certificatePinMismatch, "\(error)")
            #expect(error.detail?.contains(serverPin) == true, "\(error)")

            // A pinned transport sends nothing over plain http.
            let plain = try await #require(throws: CourierError.self) {
                _ = try await match.send(HTTPRequest(method: .get, scheme: "http", authority: "127.0.0.1:\(server.port)", path: "/"),
                                         body: nil, options: TransportOptions(timeout: .seconds(5)))
            }
            #expect(plain.code == .certificatePinMismatch)
        }
    }

    @Test func mutualTLSNeedsTheClientCertificate() async throws {
        try await EdgeServer.with(.mtls) { server in
            let certificates = server.certificates
            let root = TLSPolicy.Source.file(certificates.caPEM.path)
            let identity = TLSPolicy.ClientCertificate(
                certificateChain: .file(certificates.clientPEM.path), privateKey: .file(certificates.clientKey.path))
            let withIdentity = try HTTPClientTransport(tls: TLSPolicy(trustRoots: [root], clientCertificate: identity))
            #expect(try await Self.get(server, on: withIdentity).status == .ok)

            let without = try HTTPClientTransport(tls: TLSPolicy(trustRoots: [root]))
            let error = try await Self.failure(server, on: without)
            #expect([.tlsFailure, .connectionLost].contains(error.code), "\(error)")
        }
    }

    /// The README's TLS snippet, with the test CA's files in place of the example paths.
    @Test func theReadmeTLSSnippetWorks() async throws {
        try await EdgeServer.with(.mtls) { server in
            let certificates = server.certificates
            let pin = try certificates.pin(of: certificates.serverPEM)
            let tls = try TLSPolicy(
                trustRoots: [.file(certificates.caPEM.path)],
                pins: [pin, "sha256/YLh1dUR9y6Kja30RrAn7JKnbQG/uEtLMkBgFF2Fuihg="],
                clientCertificate: .init(certificateChain: .file(certificates.clientPEM.path),
                                         privateKey: .file(certificates.clientKey.path)))
            let secure = CourierClient(transport: try HTTPClientTransport(tls: tls))
            let module = Self.module(server)
            let reply = try await secure.send(Endpoint(name: "echo", module: module, path: "/echo"))
            #expect(reply.value["method"]?.stringValue == "GET")
        }
    }

    @Test func unreadableMaterialAndMalformedPinsAreConfigurationErrors() throws {
        let missing = try #require(throws: CourierError.self) {
            _ = try HTTPClientTransport(tls: TLSPolicy(trustRoots: [.file("/nonexistent/ca.pem")]))
        }
        #expect(missing.code == .invalidConfiguration)
        let garbage = try #require(throws: CourierError.self) {
            _ = try HTTPClientTransport(tls: TLSPolicy(trustRoots: [.pem(Data("not a certificate".utf8))]))
        }
        #expect(garbage.code == .invalidConfiguration)
        for pin in ["sha256/short", "md5/AAAA", ""] {
            let badPin = #expect(throws: CourierError.self) { _ = try TLSPolicy(pins: [pin]) }
            #expect(badPin?.code == .invalidConfiguration)
        }
        let noRoots = #expect(throws: CourierError.self) { _ = try TLSPolicy(trustsSystemRoots: false) }
        #expect(noRoots?.code == .invalidConfiguration)
    }

    /// FoundationNetworking has no per-session trust, pins or client certificate: the URLSession transport
    /// refuses each, and takes the system policy.
    @Test func urlSessionRefusesWhatFoundationNetworkingCannotEnforce() throws {
        let pin = "sha256/" + Data(repeating: 7, count: 32).base64EncodedString()
        let policies = [
            try TLSPolicy(trustRoots: [.pem(Data())]),
            try TLSPolicy(pins: [pin]),
            try TLSPolicy(clientCertificate: .init(certificateChain: .pem(Data()), privateKey: .pem(Data()))),
        ]
        for policy in policies {
            let error = try #require(throws: CourierError.self) { _ = try FoundationTransport(tls: policy) }
            #expect(error.code == .unsupportedByTransport, "\(error)")
            #expect(error.detail?.contains("HTTPClientTransport(tls:)") == true)
        }
        _ = try FoundationTransport(tls: .system)
    }
}
