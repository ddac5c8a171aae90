import CourierCache
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

enum Fixture {
    static let service = APIService(name: "api", baseURL: URL(string: "http://api.test")!)

    static func module(_ name: String = "feed") -> APIModule {
        APIModule(name: name, service: service)
    }

    static func endpoint(
        _ path: String, policy: CachePolicy, module: APIModule = Fixture.module(), query: [QueryItem] = []
    ) -> Endpoint {
        var endpoint = Endpoint(name: "get" + path, module: module, path: path, query: query)
        endpoint.cachePolicy = policy
        return endpoint
    }

    static func tempPath(_ name: String = "cache") -> String {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("courier-cache-tests-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory.appendingPathComponent("\(name).sqlite").path
    }
}

/// A one-shot gate: `wait()` suspends until `open()`.
final class Gate: Sendable {
    private let state = Locked<(open: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

    func wait() async {
        await withCheckedContinuation { continuation in
            let proceed = state.withLock { state -> Bool in
                if state.open { return true }
                state.waiters.append(continuation)
                return false
            }
            if proceed { continuation.resume() }
        }
    }

    func open() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.open = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }
}

/// Waits (up to 5 s of real time) until `condition` holds.
func eventually(_ condition: @Sendable () -> Bool) async -> Bool {
    for _ in 0..<5_000 {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(1))
    }
    return condition()
}

func jsonResponse(_ status: HTTPResponse.Status = .ok, _ body: String = #"{"code":0}"#, fields: HTTPFields = [:])
    -> (HTTPResponse, Data)
{
    var headerFields: HTTPFields = [.contentType: "application/json"]
    headerFields.append(contentsOf: fields)
    return (HTTPResponse(status: status, headerFields: headerFields), Data(body.utf8))
}
