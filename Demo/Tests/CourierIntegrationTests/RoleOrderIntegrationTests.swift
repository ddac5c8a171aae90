import Courier
import CourierCache
import CourierDemoServer
import CourierSecurity
import Foundation
import HTTPTypes
import Testing

/// The role order over loopback, on both transports: the set-up that leaked (a global cache, common
/// parameters and auth per module) answers each user with their own data, a refused connection moves the
/// call itself to the next host, and observers count business failures as failures.
@Suite(.serialized, .timeLimit(.minutes(10))) struct RoleOrderIntegrationTests {
    /// Records each call's outcome.
    final class Outcomes: CallLifecycleObserver {
        let outcomes = Locked<[String: CallOutcome]>([:])
        func callDidStop(_ call: CallInfo, outcome: CallOutcome) {
            outcomes.withLock { $0[call.endpoint] = outcome }
        }
    }

    @Test(arguments: TransportUnderTest.allCases)
    func aGlobalCacheAnswersEachUserWithTheirOwnData(_ kind: TransportUnderTest) async throws {
        try await kind.run { transport in
            try await withDemoServer { server, api in
                let user = Locked("u1")
                let tokens = CredentialStore(credential: Credential(accessToken: "token-u1")) { _ in
                    Credential(accessToken: "token-" + user.withLock { $0 })
                }
                var module = APIModule(name: "profile", service: api.service)
                module.interceptors = [
                    CommonParameters(placement: .query, [.dynamic("user_id") { _ in .string(user.withLock { $0 }) }]),
                    BearerAuth(store: tokens),
                ]
                // The cache is registered globally, as its own doc example does.
                let client = CourierClient(transport: transport, configuration: .init(interceptors: [CacheInterceptor()]))
                var endpoint = Endpoint(name: "me", module: module, path: "/echo")
                endpoint.cachePolicy = .normal(ttl: .seconds(600))

                let first = try await client.send(endpoint)
                #expect(first.value["data"]?["query"]?["user_id"] == "u1")
                #expect(first.value["data"]?["headers"]?["authorization"] == "Bearer token-u1")

                user.withLock { $0 = "u2" }
                await tokens.update(Credential(accessToken: "token-u2"))
                let second = try await client.send(endpoint)
                #expect(second.metadata.source == .network)
                #expect(second.value["data"]?["query"]?["user_id"] == "u2")
                #expect(second.value["data"]?["headers"]?["authorization"] == "Bearer token-u2")

                user.withLock { $0 = "u1" }
                await tokens.update(Credential(accessToken: "token-u1"))
                let third = try await client.send(endpoint)
                #expect(third.metadata.source == .cache)
                #expect(third.value["data"]?["query"]?["user_id"] == "u1")
                #expect(server.state.requestCount == 2)
            }
        }
    }

    /// Same user id, another credential: still not served from the other credential's entry.
    @Test func anotherCredentialForTheSameURLIsAMiss() async throws {
        try await withDemoServer { server, api in
            let tokens = CredentialStore(credential: Credential(accessToken: "alpha")) { _ in Credential(accessToken: "x") }
            var module = APIModule(name: "profile", service: api.service)
            module.interceptors = [BearerAuth(store: tokens)]
            let client = CourierClient(configuration: .init(interceptors: [CacheInterceptor()]))
            var endpoint = Endpoint(name: "me", module: module, path: "/echo")
            endpoint.cachePolicy = .normal(ttl: .seconds(600))
            _ = try await client.send(endpoint)
            await tokens.update(Credential(accessToken: "beta"))
            let reply = try await client.send(endpoint)
            #expect(reply.metadata.source == .network)
            #expect(reply.value["data"]?["headers"]?["authorization"] == "Bearer beta")
            #expect(server.state.requestCount == 2)
        }
    }

    @Test(arguments: [TransportUnderTest.urlSession, .asyncHTTPClient])
    func aCallWithRetrySucceedsOnTheSecondHostOnItsFirstAttempt(_ kind: TransportUnderTest) async throws {
        let gone = try await DemoServer.start()
        let deadURL = gone.baseURL
        await gone.stop()
        try await kind.run { transport in
            try await withDemoServer { server, _ in
                let service = APIService(name: "api", baseURLs: [.release: [deadURL, server.baseURL]], environment: .release)
                let module = APIModule(name: "user", service: service)
                let failover = FailoverInterceptor()
                let client = CourierClient(
                    transport: transport,
                    configuration: .init(interceptors: [RetryInterceptor(), failover], defaultTimeout: .seconds(20)))
                let reply = try await client.send(Endpoint(name: "user", module: module, path: "/users/1"),
                                                  options: .init(trace: true))
                #expect(reply.value["data"]?["id"] == 1)
                #expect(server.state.requestCount == 1)
                // No retry was spent: the routing stage moved the attempt when the connection was refused.
                let trace = try #require(reply.metadata.trace)
                #expect(trace.stages.first { $0.name == "retry" }?.nextCalls == 1)
                #expect(trace.stages.filter { $0.name == "transport" }.count == 2)
                #expect(failover.window(of: service).failures == 1)
            }
        }
    }

    @Test(arguments: TransportUnderTest.allCases)
    func observersCountBusinessFailuresAsFailures(_ kind: TransportUnderTest) async throws {
        try await kind.run { transport in
            try await withDemoServer { _, api in
                let outcomes = Outcomes()
                let client = CourierClient(
                    transport: transport,
                    configuration: .init(interceptors: [LifecycleInterceptor(observers: [outcomes])]))
                _ = try await client.send(api.user(id: 1))
                let error = try await #require(throws: CourierError.self) { try await client.send(api.user(id: 9_999)) }
                #expect(error.code == .business)
                let recorded = outcomes.outcomes.withLock { $0 }
                #expect(recorded["getUser"].map { if case .failure(let e) = $0 { e.code == .business } else { false } } == true)
                let trace = try await client.send(api.user(id: 1), options: .init(trace: true)).metadata.trace
                #expect(trace?.stages.map(\.name).contains("errorMapping") == true)
            }
        }
    }
}
