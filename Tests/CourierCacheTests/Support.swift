#if Cache
import CourierCache
import CourierTestSupport
import CourierTesting
import Foundation
import HTTPTypes

/// A settable "now" for TTL tests.
final class TestNow: Sendable {
    private let current = Locked(Date(timeIntervalSince1970: 1_700_000_000))
    var date: Date { current.withLock { $0 } }
    func advance(_ seconds: Double) { current.withLock { $0 = $0.addingTimeInterval(seconds) } }
    var function: @Sendable () -> Date { { self.date } }
}

/// A fake HTTP server for InMemoryTransport: resources by path with ETag / Last-Modified / Cache-Control,
/// answering conditional requests with 304, and counting hits.
final class FakeServer: Sendable {
    struct Resource: Sendable {
        var body: String
        var eTag: String?
        var lastModified: String?
        var cacheControl: String?
        var status: Int = 200
    }

    private let resources = Locked<[String: Resource]>([:])
    private let hitCounts = Locked<[String: Int]>([:])
    let requests = Locked<[HTTPRequest]>([])

    subscript(path: String) -> Resource? {
        get { resources.withLock { $0[path] } }
        set { resources.withLock { $0[path] = newValue } }
    }

    func hits(_ path: String) -> Int { hitCounts.withLock { $0[path] ?? 0 } }
    var lastRequest: HTTPRequest? { requests.withLock { $0.last } }

    var transport: InMemoryTransport {
        InMemoryTransport { request, _ in self.handle(request) }
    }

    func handle(_ request: HTTPRequest) -> (HTTPResponse, Data) {
        let path = String((request.path ?? "/").split(separator: "?", maxSplits: 1).first ?? "/")
        requests.withLock { $0.append(request) }
        hitCounts.withLock { $0[path, default: 0] += 1 }
        guard let resource = self[path] else {
            return (HTTPResponse(status: .notFound, headerFields: [.contentType: "application/json"]),
                    Data(#"{"code":404,"message":"no such resource"}"#.utf8))
        }
        var fields: HTTPFields = [.contentType: "application/json"]
        if let eTag = resource.eTag { fields[.eTag] = eTag }
        if let lastModified = resource.lastModified { fields[.lastModified] = lastModified }
        if let cacheControl = resource.cacheControl { fields[.cacheControl] = cacheControl }
        if let eTag = resource.eTag, request.headerFields[.ifNoneMatch] == eTag {
            return (HTTPResponse(status: .notModified, headerFields: fields), Data())
        }
        if resource.eTag == nil, let lastModified = resource.lastModified,
            request.headerFields[.ifModifiedSince] == lastModified
        {
            return (HTTPResponse(status: .notModified, headerFields: fields), Data())
        }
        return (HTTPResponse(status: .init(code: resource.status), headerFields: fields), Data(resource.body.utf8))
    }
}

extension Fixture {
    /// An endpoint of `module` at `path` with a cache policy.
    static func endpoint(
        _ path: String, policy: CachePolicy, module: APIModule = Fixture.module(), query: [QueryItem] = []
    ) -> Endpoint {
        var endpoint = Fixture.endpoint(path, module: module, query: query)
        endpoint.cachePolicy = policy
        return endpoint
    }
}
#endif
