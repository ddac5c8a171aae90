import Courier
import CourierCache
import CourierDemoServer
import CourierTesting
import Foundation
import HTTPTypes

/// A settable "now" for TTL tests over the demo server.
final class CacheTestNow: Sendable {
    private let current = Locked(Date(timeIntervalSince1970: 1_800_000_000))
    var date: Date { current.withLock { $0 } }
    func advance(_ seconds: Double) { current.withLock { $0 = $0.addingTimeInterval(seconds) } }
}

/// One demo server with a cache module over it.
struct CacheBench {
    let server: DemoServer
    let module: APIModule
    let client: CourierClient

    init(server: DemoServer, interceptors: [any Interceptor] = [], clock: any Clock<Duration> = ContinuousClock(),
         module name: String = "cache", configure: (inout APIModule) -> Void = { _ in })
    {
        self.server = server
        var module = APIModule(name: name, service: APIService(name: "demo", baseURL: server.baseURL))
        configure(&module)
        self.module = module
        self.client = CourierClient(configuration: .init(interceptors: interceptors, defaultTimeout: .seconds(30), clock: clock))
    }

    func endpoint(_ path: String, policy: CachePolicy = .ignore, query: [QueryItem] = []) -> Endpoint {
        var endpoint = Endpoint(name: path, module: module, path: path, query: query)
        endpoint.cachePolicy = policy
        return endpoint
    }

    /// The cache routes' counters.
    func stats() async throws -> Value {
        try await CourierClient().send(Endpoint(name: "stats", module: module, path: "/cache/stats")).value["data"] ?? .null
    }

    func hits(_ key: String) async throws -> Int {
        Int(try await stats()["hits"]?[key]?.int64Value ?? 0)
    }
}

func cacheTempPath() -> String {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-cache-it-\(UUID().uuidString)")
    try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    return directory.appendingPathComponent("cache.sqlite").path
}

/// Waits (up to 10 s) until `condition` holds.
func waitUntil(_ condition: @Sendable () async throws -> Bool) async rethrows -> Bool {
    for _ in 0..<1_000 {
        if try await condition() { return true }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return try await condition()
}

/// Holds each request `duration` before sending it: gives an overlapping call (a second `loadMore`) seconds,
/// not the few milliseconds of a loopback round trip, to join the first.
struct HoldRequest: Interceptor {
    let duration: Duration
    func intercept(_ request: CourierRequest, context: InterceptorContext, next: InterceptorNext)
        async throws -> CourierResponse
    {
        try await Task.sleep(for: duration)
        return try await next(request)
    }
}
