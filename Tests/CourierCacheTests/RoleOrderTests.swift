#if Cache && Metrics
import Courier
import CourierCache
import CourierObservability
import CourierResilience
import CourierTesting
import Foundation
import HTTPTypes
import Logging
import CourierTestSupport
import Testing

/// The role order of the chain (issue "one path"): stages sit by role whatever scope registered them, the
/// cache keys on what shaping added, observers see the request as sent and the outcome as the caller gets it,
/// and routing moves the failing call itself.
@Suite(.timeLimit(.minutes(10))) struct RoleOrderTests {
    /// Adds a module-level user parameter and credential, as `CommonParameters` and `BearerAuth` would.
    struct Identify: Interceptor {
        let user: Locked<String>
        var name: String { "Identify" }
        func intercept(_ request: CourierRequest, context: InterceptorContext, next: InterceptorNext) async throws
            -> CourierResponse
        {
            var request = request
            let user = self.user.withLock { $0 }
            request.head.path = (request.head.path ?? "/") + "?user_id=" + user
            request.head.headerFields[.authorization] = "Bearer token-of-" + user
            return try await next(request)
        }
    }

    /// Echoes the user the server saw.
    static func echoServer(count: Locked<Int>) -> InMemoryTransport {
        InMemoryTransport { request, _ in
            count.withLock { $0 += 1 }
            let user = request.headerFields[.authorization]?.replacingOccurrences(of: "Bearer token-of-", with: "") ?? "-"
            return (HTTPResponse(status: .ok, headerFields: [.contentType: "application/json"]),
                    Data(#"{"code":0,"user":"\#(user)"}"#.utf8))
        }
    }

    @Test func stagesSitByRoleWhateverScopeRegisteredThem() {
        struct Named: Interceptor {
            var name: String
            var role: InterceptorRole
            func intercept(_ request: CourierRequest, context: InterceptorContext, next: InterceptorNext)
                async throws -> CourierResponse
            { try await next(request) }
        }
        var module = Fixture.module("m")
        module.interceptors = [Named(name: "M-shaping", role: .shaping), Named(name: "M-network", role: .network)]
        var endpoint = Endpoint(name: "e", module: module, path: "/e")
        endpoint.interceptors = [Named(name: "E-observation", role: .observation), Named(name: "E-shaping", role: .shaping)]
        let global: [any Interceptor] = [
            Named(name: "G-network", role: .network), Named(name: "G-routing", role: .routing),
            Named(name: "G-resilience", role: .resilience), Named(name: "G-validation", role: .validation),
            Named(name: "G-cache", role: .cache), Named(name: "G-shaping", role: .shaping),
            Named(name: "G-observation", role: .observation),
        ]
        let client = CourierClient(transport: InMemoryTransport.successful(), configuration: .init(interceptors: global))
        #expect(client.pipeline(for: endpoint).stageNames == [
            "G-observation", "E-observation", "result", "G-shaping", "M-shaping", "E-shaping", "G-cache",
            "G-validation", "G-resilience", "G-routing", "routing", "errorMapping", "codec", "redirects", "G-network",
            "M-network", "transport",
        ])
        // The built-in interceptors declare the roles the README's diagram gives them.
        let roles: [(any Interceptor, InterceptorRole)] = [
            (CacheInterceptor(), .cache), (RetryInterceptor(), .resilience), (ConcurrencyLimiter(maximumPerHost: 2), .resilience),
            (FailoverInterceptor(), .routing), (LoggingInterceptor(), .observation),
            (MetricsInterceptor(factory: TestMetrics()), .observation), (LifecycleInterceptor(observers: []), .observation),
            (SetHeaders([:]), .shaping), (RequestID(), .shaping),
        ]
        for (interceptor, role) in roles { #expect(interceptor.role == role, "\(interceptor.name)") }
    }

    /// The set-up that leaked: a cache registered globally, the user parameter and credential per module.
    /// On the old ordering (by registration scope) the cache ran before them and answered user u2 with u1's
    /// entry.
    @Test func aGlobalCacheNeverAnswersOneUserWithAnothersEntry() async throws {
        let count = Locked(0)
        let user = Locked("u1")
        var module = Fixture.module("profile")
        module.interceptors = [Identify(user: user)]
        let client = CourierClient(
            transport: Self.echoServer(count: count),
            configuration: .init(interceptors: [CacheInterceptor()]))
        let endpoint = Fixture.endpoint("/me", policy: .normal(ttl: .seconds(600)), module: module)

        #expect(try await client.send(endpoint).value["user"] == "u1")
        user.withLock { $0 = "u2" }
        let second = try await client.send(endpoint)
        #expect(second.value["user"] == "u2")
        #expect(second.metadata.source == .network)
        user.withLock { $0 = "u1" }
        let third = try await client.send(endpoint)
        #expect(third.value["user"] == "u1")
        #expect(third.metadata.source == .cache)
        #expect(count.withLock { $0 } == 2)
    }

    @Test func theKeyHoldsTheCredentialOnlyAsADigest() {
        var request = CourierRequest(head: HTTPRequest(method: .get, scheme: "https", authority: "api.test", path: "/me"))
        request.head.headerFields[.authorization] = "Bearer secret-token-123"
        let endpoint = Fixture.endpoint("/me", policy: .normal(ttl: .seconds(1)))
        let key = CacheKey(request: request, endpoint: endpoint)
        #expect(!key.rawValue.contains("secret-token"))
        // SHA-256 of "authorization\0Bearer secret-token-123\0", checked with Python's hashlib.
        #expect(key.rawValue.hasSuffix(" credential=2389e83b91f033a169ec27343f785e7808435ddd623d4cb9d4fb08a8ffe5c3e8"))
        var other = request
        other.head.headerFields[.authorization] = "Bearer another-token"
        #expect(CacheKey(request: other, endpoint: endpoint) != key)
        var anonymous = request
        anonymous.head.headerFields[.authorization] = nil
        #expect(!CacheKey(request: anonymous, endpoint: endpoint).rawValue.contains("credential="))
    }

    @Test func theKeyWritesNumbersAsTheQueryDoes() {
        let endpoint = Fixture.endpoint("/n", policy: .normal(ttl: .seconds(1)))
        func key(_ payload: Value, path: String = "/n") -> String {
            var request = CourierRequest(head: HTTPRequest(method: .post, scheme: "https", authority: "api.test", path: path))
            request.payload = payload
            return CacheKey(request: request, endpoint: endpoint).rawValue
        }
        // One renderer of numbers: a body array holding 2.0 has the key of one holding 2, as `2` is sent.
        #expect(key([.double(2.0), .double(0.1)]) == key([.int(2), .number("0.1")]))
        #expect(key([.double(2.0)]).hasSuffix(" body=[2]"))
        #expect(key(["n": .double(2.0)]) == key(["n": .int(2)]))
        #expect(key(["n": .double(2.5)]) != key(["n": .int(2)]))
        // The path is split once: query items and the bare path, a fragment left out.
        #expect(key(.null, path: "/n?b=2&a=1#f").hasPrefix("POST https://api.test/n?a=1&b=2"))
    }

    @Test func responsesThatVaryOnAnUnkeyedFieldAreNotStored() async throws {
        let count = Locked(0)
        let vary = Locked("Accept-Language")
        let transport = InMemoryTransport { _, _ in
            count.withLock { $0 += 1 }
            let fields: HTTPFields = [.contentType: "application/json", .vary: vary.withLock { $0 }]
            return (HTTPResponse(status: .ok, headerFields: fields), Data(#"{"code":0}"#.utf8))
        }
        let client = CourierClient(transport: transport, configuration: .init(interceptors: [CacheInterceptor()]))
        var endpoint = Fixture.endpoint("/v", policy: .normal(ttl: .seconds(600)))
        endpoint.headers[.acceptLanguage] = "de"
        _ = try await client.send(endpoint)
        #expect(try await client.send(endpoint).metadata.source == .cache)     // Accept-Language is keyed
        endpoint.headers[.acceptLanguage] = "fr"
        #expect(try await client.send(endpoint).metadata.source == .network)   // another variant
        vary.withLock { $0 = "X-Tenant" }
        let path = "/w"
        let unkeyed = Fixture.endpoint(path, policy: .normal(ttl: .seconds(600)))
        _ = try await client.send(unkeyed)
        #expect(try await client.send(unkeyed).metadata.source == .network)    // X-Tenant is not: never stored
        vary.withLock { $0 = "*" }
        let star = Fixture.endpoint("/star", policy: .normal(ttl: .seconds(600)))
        _ = try await client.send(star)
        #expect(try await client.send(star).metadata.source == .network)
    }

    @Test func observersSeeTheRequestAsSentAndBusinessFailuresAsFailures() async throws {
        let metrics = TestMetrics()
        let log = CapturingLog()
        let logger = log.logger
        let transport = InMemoryTransport { request, _ in
            let failed = request.path?.contains("fail") == true
            return (HTTPResponse(status: .ok, headerFields: [.contentType: "application/json"]),
                    Data((failed ? #"{"code":301,"message":"user does not exist"}"# : #"{"code":0}"#).utf8))
        }
        var module = Fixture.module("acct")
        module.businessRule = BusinessRule()
        module.interceptors = [Identify(user: Locked("u7"))]
        let client = CourierClient(
            transport: transport,
            configuration: .init(interceptors: [
                LoggingInterceptor(logger: logger), MetricsInterceptor(factory: metrics),
            ]))
        _ = try await client.send(Endpoint(name: "ok", module: module, path: "/ok"))
        let error = try await #require(throws: CourierError.self) {
            try await client.send(Endpoint(name: "fail", module: module, path: "/fail"))
        }
        #expect(error.code == .business)
        let base = "module=acct,endpoint=fail,tags="
        #expect(metrics.counter("courier_calls_total{\(base),outcome=failure,source=network}") == 1)
        #expect(metrics.counter("courier_call_failures_total{\(base),code=business}") == 1)
        #expect(metrics.counter("courier_calls_total{module=acct,endpoint=ok,tags=,outcome=success,source=network}") == 1)

        // A typed call whose model does not decode is a failure too.
        struct Needs: Decodable, Sendable { var missing: String }
        let typed = await #expect(throws: CourierError.self) {
            _ = try await client.send(Endpoint(name: "typed", module: module, path: "/ok"), decoding: Needs.self)
        }
        #expect(typed?.code == .missingValue)
        #expect(metrics.counter("courier_call_failures_total{module=acct,endpoint=typed,tags=,code=missingValue}") == 1)

        // The logger is global and outermost, yet it logged the request as sent: with the module's query
        // parameter and (redacted) credential.
        let sent = log.texts.filter { $0.hasPrefix("→") }
        #expect(sent.count == 3)
        #expect(sent.allSatisfy { $0.contains("user_id=u7") && $0.contains("authorization") && !$0.contains("token-of") })
    }

    @Test func aRefusedConnectionMovesTheCallItselfToTheNextHost() async throws {
        let service = APIService(name: "api", baseURLs: [.release: [
            URL(string: "http://dead.test/v1")!, URL(string: "http://alive.test/v2/")!,
        ]], environment: .release)
        let transport = InMemoryTransport { request, _ in
            if request.authority == "dead.test" { throw TransportFailure.cannotConnect.error() }
            return (HTTPResponse(status: .ok, headerFields: [.contentType: "application/json"]),
                    Data(#"{"code":0}"#.utf8))
        }
        let client = CourierClient(transport: transport, configuration: .init(interceptors: [RetryInterceptor()]))
        let endpoint = Endpoint(name: "ping", module: APIModule(name: "m", service: service), path: "/ping?x=%2F")
        let reply = try await client.send(endpoint, options: .init(trace: true))
        #expect(reply.metadata.status == .ok)
        #expect(transport.requests.map(\.head.authority) == ["dead.test", "alive.test"])
        #expect(transport.requests.map(\.head.path) == ["/v1/ping?x=%2F", "/v2/ping?x=%2F"])
        // The retry stage called next once: the routing stage moved the attempt, no retry was spent.
        #expect(reply.metadata.trace?.stages.first { $0.name == "retry" }?.nextCalls == 1)
        #expect(service.currentBaseURL.host == "dead.test")   // the service stays put without a failover stage
    }

    @Test func aTimeoutMovesOnlyTheRetryToAnotherHost() async throws {
        let service = APIService(name: "api", baseURLs: [.release: [
            URL(string: "http://slow.test")!, URL(string: "http://fast.test")!,
        ]], environment: .release)
        let transport = InMemoryTransport { request, _ in
            if request.authority == "slow.test" { throw TransportFailure.timedOut.error() }
            return (HTTPResponse(status: .ok, headerFields: [.contentType: "application/json"]), Data(#"{}"#.utf8))
        }
        let policy = RetryPolicy.exponential(attempts: 2, initialDelay: .milliseconds(1))
        let client = CourierClient(transport: transport, configuration: .init(interceptors: [RetryInterceptor(defaultPolicy: policy)]))
        let endpoint = Endpoint(name: "ping", module: APIModule(name: "m", service: service), path: "/ping")
        _ = try await client.send(endpoint)
        #expect(transport.requests.map(\.head.authority) == ["slow.test", "fast.test"])

        let noRetry = CourierClient(transport: transport)
        let error = try await #require(throws: CourierError.self) { try await noRetry.send(endpoint) }
        #expect(error.code == .timedOut)                        // the request may have arrived: not resent
    }
}
#endif
