#if Cache
import CourierCache
import CourierResilience
import CourierTesting
import Foundation
import HTTPTypes
import Testing

/// `retryPolicy` and `cachePolicy` need their interceptor in the chain: without it a call fails fast with a
/// configuration error that says what to add, instead of silently neither retrying nor caching.
@Suite struct FeatureRequirementTests {
    static let service = APIService(name: "api", baseURL: URL(string: "https://api.test")!)

    final class Counter: Sendable {
        let count = Locked(0)
        var transport: InMemoryTransport {
            InMemoryTransport { _, _ in
                self.count.withLock { $0 += 1 }
                return (HTTPResponse(status: .ok, headerFields: [.contentType: "application/json"]), Data("{}".utf8))
            }
        }
        var sent: Int { count.withLock { $0 } }
    }

    @Test func aRetryPolicyWithoutARetryInterceptorFailsBeforeSending() async throws {
        let server = Counter()
        let client = CourierClient(transport: server.transport)
        var endpoint = Endpoint(name: "get", module: APIModule(name: "users", service: Self.service), path: "/u")
        endpoint.retryPolicy = .exponential(attempts: 3)
        let error = try await #require(throws: CourierError.self) { try await client.send(endpoint) }
        #expect(error.code == .invalidConfiguration)
        #expect(error.category == .configuration)
        #expect(error.message.contains("users.get sets retryPolicy"))
        #expect(error.message.contains("add RetryInterceptor"))
        #expect(server.sent == 0)
        // With the interceptor anywhere in the chain (here: globally), the same endpoint works.
        let retrying = CourierClient(transport: server.transport, configuration: .init(interceptors: [RetryInterceptor()]))
        _ = try await retrying.send(endpoint)
        #expect(server.sent == 1)
        #expect(retrying.pipeline(for: endpoint).unmetRequirements(of: endpoint).isEmpty)
    }

    @Test func aCachePolicyWithoutACacheInterceptorFailsAndIgnoreNeedsNothing() async throws {
        let server = Counter()
        let client = CourierClient(transport: server.transport)
        var module = APIModule(name: "feed", service: Self.service)
        module.cachePolicy = .normal(ttl: .seconds(60))
        let endpoint = Endpoint(name: "home", module: module, path: "/home")
        let error = try await #require(throws: CourierError.self) { try await client.send(endpoint) }
        #expect(error.code == .invalidConfiguration)
        #expect(error.message.contains("cachePolicy") && error.message.contains("CacheInterceptor"))
        #expect(client.pipeline(for: endpoint).unmetRequirements(of: endpoint).map(\.feature) == [.cache])
        // An endpoint that turns caching off for itself needs no cache, even in a caching module.
        var live = endpoint
        live.cachePolicy = .ignore
        _ = try await client.send(live)
        #expect(server.sent == 1)
        // The module registering the cache meets the requirement for all its endpoints.
        module.interceptors = [CacheInterceptor()]
        let cached = Endpoint(name: "home", module: module, path: "/home")
        _ = try await client.send(cached)
        _ = try await client.send(cached)
        #expect(server.sent == 2)          // the second came from the cache
    }

    @Test func bothMissingAreReportedAndTheDefaultsNeedNothing() {
        let client = CourierClient(transport: Counter().transport)
        var endpoint = Endpoint(name: "e", module: APIModule(name: "m", service: Self.service), path: "/")
        #expect(client.pipeline(for: endpoint).unmetRequirements(of: endpoint).isEmpty)
        endpoint.retryPolicy = .exponential(attempts: 2)
        endpoint.cachePolicy = .readOnly
        #expect(client.pipeline(for: endpoint).unmetRequirements(of: endpoint).map(\.option) == ["cachePolicy", "retryPolicy"])
        endpoint.retryPolicy = nil
        #expect(client.pipeline(for: endpoint).unmetRequirements(of: endpoint).map(\.option) == ["cachePolicy"])
    }
}
#endif
