public import Courier
public import Foundation
public import HTTPTypes

/// The service, modules and endpoints the pipeline suites share (an `http://api.test` service, nothing on
/// the network: the suites answer through in-memory transports).
public enum Fixture {
    /// The service every fixture module uses.
    public static let service = APIService(name: "api", baseURL: URL(string: "http://api.test")!)

    /// A module of ``service``.
    public static func module(_ name: String = "feed") -> APIModule {
        APIModule(name: name, service: service)
    }

    /// An endpoint of `module` at `path`.
    public static func endpoint(_ path: String, module: APIModule = Fixture.module(), query: [QueryItem] = []) -> Endpoint {
        Endpoint(name: "get" + path, module: module, path: path, query: query)
    }

    /// A fresh path for an SQLite file in a new temporary folder.
    public static func tempPath(_ name: String = "cache") -> String {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("courier-cache-tests-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory.appendingPathComponent("\(name).sqlite").path
    }
}

/// A one-shot gate: `wait()` suspends until `open()`.
public final class Gate: Sendable {
    public init() {}
    private let state = Locked<(open: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

    public func wait() async {
        await withCheckedContinuation { continuation in
            let proceed = state.withLock { state -> Bool in
                if state.open { return true }
                state.waiters.append(continuation)
                return false
            }
            if proceed { continuation.resume() }
        }
    }

    public func open() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.open = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }
}

/// Waits (up to 5 s of real time) until `condition` holds.
public func eventually(_ condition: @Sendable () -> Bool) async -> Bool {
    for _ in 0..<5_000 {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(1))
    }
    return condition()
}

public func jsonResponse(_ status: HTTPResponse.Status = .ok, _ body: String = #"{"code":0}"#, fields: HTTPFields = [:])
    -> (HTTPResponse, Data)
{
    var headerFields: HTTPFields = [.contentType: "application/json"]
    headerFields.append(contentsOf: fields)
    return (HTTPResponse(status: status, headerFields: headerFields), Data(body.utf8))
}
