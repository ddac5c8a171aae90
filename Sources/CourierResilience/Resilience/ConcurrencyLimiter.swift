import HTTPTypes

/// Lets at most N calls per host be in flight; the others wait in a queue that starts the highest
/// `Endpoint.priority` first (first come, first served within a priority). Cancelling a waiting
/// call removes it from the queue at once.
///
/// ```swift
/// let limiter = ConcurrencyLimiter(maximumPerHost: 4)
/// let client = CourierClient(configuration: .init(interceptors: [limiter]))
/// var avatar = Endpoint(name: "avatar", module: media, path: "/avatar/7")
/// avatar.priority = .low
/// ```
public final class ConcurrencyLimiter: Interceptor {
    private struct Waiter {
        var id: UInt64
        var priority: Priority
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct Host {
        var running = 0
        var waiting: [Waiter] = []
    }

    private struct State {
        var hosts: [String: Host] = [:]
        var nextID: UInt64 = 0
    }

    /// The most calls in flight per host.
    public let maximumPerHost: Int
    private let state = Locked(State())

    /// A limiter allowing `maximumPerHost` concurrent calls to each host.
    public init(maximumPerHost: Int) {
        precondition(maximumPerHost > 0, "ConcurrencyLimiter needs a positive limit")
        self.maximumPerHost = maximumPerHost
    }

    /// `concurrency-limit`.
    public var name: String { "concurrency-limit" }
    /// `InterceptorRole.resilience`.
    public var role: InterceptorRole { .resilience }

    /// Calls in flight to `host` (an authority, `host:port`).
    public func running(host: String) -> Int { state.withLock { $0.hosts[host]?.running ?? 0 } }

    /// Calls waiting for `host`.
    public func waiting(host: String) -> Int { state.withLock { $0.hosts[host]?.waiting.count ?? 0 } }

    public func intercept(
        _ request: CourierRequest, context: InterceptorContext, next: InterceptorNext
    ) async throws -> CourierResponse {
        let host = request.head.authority ?? ""
        try await acquire(host: host, priority: context.endpoint.priority)
        defer { release(host: host) }
        return try await next(request)
    }

    private func acquire(host: String, priority: Priority) async throws {
        let id: UInt64? = state.withLock { state in
            var entry = state.hosts[host] ?? Host()
            defer { state.hosts[host] = entry }
            if entry.running < maximumPerHost, entry.waiting.isEmpty {
                entry.running += 1
                return nil
            }
            state.nextID += 1
            return state.nextID
        }
        guard let id else { return }
        enum Outcome { case queued, acquired, cancelled }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let outcome = state.withLock { state -> Outcome in
                    if Task.isCancelled { return .cancelled }
                    var entry = state.hosts[host] ?? Host()
                    defer { state.hosts[host] = entry }
                    // The calls in flight may all have ended since the slot was asked for, each finding no
                    // waiter to pass its slot to: then no release is left to wake this one, and it takes a slot.
                    // (A waiter is queued only while every slot is taken, so the queue is empty then.)
                    if entry.running < maximumPerHost {
                        entry.running += 1
                        return .acquired
                    }
                    // Stable: after every waiter of the same or higher priority.
                    let index = entry.waiting.firstIndex { $0.priority < priority } ?? entry.waiting.count
                    entry.waiting.insert(Waiter(id: id, priority: priority, continuation: continuation), at: index)
                    return .queued
                }
                switch outcome {
                case .queued: break
                case .acquired: continuation.resume()
                case .cancelled: continuation.resume(throwing: CourierError(.cancelled, detail: "cancelled while queued"))
                }
            }
        } onCancel: {
            let waiter = state.withLock { state -> Waiter? in
                guard var entry = state.hosts[host], let index = entry.waiting.firstIndex(where: { $0.id == id })
                else { return nil }
                let waiter = entry.waiting.remove(at: index)
                state.hosts[host] = entry
                return waiter
            }
            waiter?.continuation.resume(throwing: CourierError(.cancelled, detail: "cancelled while queued"))
        }
    }

    private func release(host: String) {
        let next = state.withLock { state -> Waiter? in
            guard var entry = state.hosts[host] else { return nil }
            defer {
                state.hosts[host] = entry.running == 0 && entry.waiting.isEmpty ? nil : entry
            }
            if entry.waiting.isEmpty {
                entry.running -= 1
                return nil
            }
            // The slot passes straight to the first waiter: `running` stays the same.
            return entry.waiting.removeFirst()
        }
        next?.continuation.resume()
    }
}
