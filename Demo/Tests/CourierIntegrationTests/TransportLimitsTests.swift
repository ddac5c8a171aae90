import AsyncHTTPClient
import Courier
import CourierAsyncHTTPClient
import Foundation
import HTTPTypes
import Testing

/// Every transport against a hostile loopback server: bodies stay within the response limit (endless, lying
/// `Content-Length`, gzip bomb), the timeout is a deadline for the body too, and authentication challenges
/// come back at once as HTTP errors. Nothing here measures time or memory: each call must end, and end with
/// its enumerated error.
@Suite(.serialized, .timeLimit(.minutes(10))) struct TransportLimitsTests {
    /// The options of the limit checks: a small response limit and a deadline far beyond the checks.
    static func options(limit: Int = 1 << 20, timeout: Duration = .seconds(30)) -> TransportOptions {
        TransportOptions(timeout: timeout, maximumResponseSize: limit)
    }

    /// Sends `path` and returns the error it must end with.
    static func failure(
        of path: String, on transport: any Transport, server: HostileServer, options: TransportOptions
    ) async throws -> CourierError {
        try await #require(throws: CourierError.self) {
            _ = try await transport.send(server.request(path), body: nil, options: options)
        }
    }

    @Test(arguments: TransportUnderTest.allCases)
    func anEndlessBodyFailsAsTooLargeAndTheTransportStaysUsable(_ kind: TransportUnderTest) async throws {
        try await HostileServer.with { server in
            try await kind.run { transport in
                let error = try await Self.failure(of: "/endless", on: transport, server: server, options: Self.options())
                #expect(error.code == .responseTooLarge, "\(error)")
                #expect(error.context.stage == "transport")
                let (head, body) = try await transport.send(server.request("/ok"), body: nil, options: Self.options())
                #expect(head.status == .ok)
                #expect(body == Data(#"{"ok":true}"#.utf8))
            }
        }
    }

    @Test(arguments: TransportUnderTest.allCases)
    func aHugeDeclaredLengthFailsAtTheHead(_ kind: TransportUnderTest) async throws {
        try await HostileServer.with { server in
            try await kind.run { transport in
                let error = try await Self.failure(of: "/huge-length", on: transport, server: server, options: Self.options())
                #expect(error.code == .responseTooLarge, "\(error)")
                #expect(error.detail?.contains("declares 1073741824 bytes") == true, "\(error)")
            }
        }
    }

    /// URLSession (libcurl) and `HTTPClient.shared` inflate the body, and the inflated bytes are counted (or
    /// the client's decompression limit stops them); a client that does not inflate hands over the compressed
    /// bytes, about a thousandth of the inflated size, which pass the limit later.
    @Test(arguments: TransportUnderTest.allCases)
    func aGzipBombFailsAsTooLarge(_ kind: TransportUnderTest) async throws {
        try await HostileServer.with { server in
            try await kind.run { transport in
                let error = try await Self.failure(
                    of: "/gzip-bomb", on: transport, server: server, options: Self.options(limit: 64 << 10))
                #expect(error.code == .responseTooLarge, "\(error)")
            }
        }
    }

    @Test func theBoundedConfigurationStopsAGzipBombAtItsDecompressionLimit() async throws {
        try await HostileServer.with { server in
            let configuration = HTTPClientTransport.boundedConfiguration(maximumResponseSize: 1 << 20)
            let client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
            let transport = HTTPClientTransport(client: client)
            // The transport's own limit is far above the client's: the decompression limit ends the call.
            let outcome: Result<CourierError, any Error>
            do {
                outcome = .success(try await Self.failure(
                    of: "/gzip-bomb", on: transport, server: server, options: Self.options(limit: 64 << 20)))
            } catch {
                outcome = .failure(error)
            }
            try await client.shutdown()
            let error = try outcome.get()
            #expect(error.code == .responseTooLarge, "\(error)")
            #expect(error.detail?.contains("decompression limit") == true, "\(error)")
        }
    }

    @Test(arguments: TransportUnderTest.allCases)
    func aTricklingBodyEndsAtTheDeadline(_ kind: TransportUnderTest) async throws {
        try await HostileServer.with { server in
            try await kind.run { transport in
                let error = try await Self.failure(
                    of: "/trickle", on: transport, server: server, options: Self.options(timeout: .milliseconds(500)))
                #expect(error.code == .timedOut, "\(error)")
            }
        }
    }

    /// AsyncHTTPClient follows no redirect: it hands over the `302`, whose endless body fails as too large
    /// (or the deadline ends the call).
    ///
    /// Not run on `FoundationTransport`: FoundationNetworking buffers a 301–308 body out of the delegate's
    /// sight (copying the buffer on every chunk) and, while the server floods it, never lets the task's
    /// cancellation onto its work queue, which every session in the process shares — the call ends at its
    /// deadline, but the transfer would starve every later URLSession call of this test process. The CLI's
    /// test (`CLIArgumentTests.theTimeoutEndsTheToolWhateverTheServerSends`) covers that transport in a
    /// process of its own; the limitation is documented on `FoundationTransport`.
    @Test(arguments: [TransportUnderTest.asyncHTTPClient, .asyncHTTPClientShared])
    func anEndlessRedirectBodyEndsByTheDeadline(_ kind: TransportUnderTest) async throws {
        try await HostileServer.with { server in
            try await kind.run { transport in
                do {
                    let (head, _) = try await transport.send(
                        server.request("/redirect-endless"), body: nil, options: Self.options(timeout: .seconds(1)))
                    #expect(head.status == .ok)
                } catch let error as CourierError {
                    #expect([.timedOut, .responseTooLarge].contains(error.code), "\(error)")
                }
            }
        }
    }

    /// Each challenge and the code its status maps to.
    static let challenges: [(String, CourierError.Code)] = [
        ("/auth/basic", .unauthorized),
        ("/auth/digest", .unauthorized),
        ("/auth/negotiate", .unauthorized),
        ("/auth/bearer", .unauthorized),
        ("/auth/proxy", .clientError),
    ]

    @Test(arguments: TransportUnderTest.allCases, challenges)
    func anAuthenticationChallengeReturnsAtOnceAsAnHTTPError(
        _ kind: TransportUnderTest, challenge: (path: String, code: CourierError.Code)
    ) async throws {
        try await HostileServer.with { server in
            // The deadline is far beyond the suite's time limit: a stalled challenge fails the test.
            try await kind.withClient(.init(defaultTimeout: .seconds(600))) { client in
                let module = APIModule(name: "hostile", service: APIService(name: "hostile", baseURL: server.baseURL))
                let error = try await #require(throws: CourierError.self) {
                    try await client.send(Endpoint(name: "challenge", module: module, path: challenge.path))
                }
                #expect(error.code == challenge.code, "\(error)")
                #expect(error.context.status == (challenge.path == "/auth/proxy" ? 407 : 401), "\(error)")
            }
            // The transport itself hands the challenge over as a response, body included.
            try await kind.run { transport in
                let (head, body) = try await transport.send(server.request(challenge.path), body: nil, options: Self.options())
                #expect(head.status.code == (challenge.path == "/auth/proxy" ? 407 : 401))
                #expect(body == Data(#"{"error":"unauthorized"}"#.utf8))
            }
        }
    }
}
