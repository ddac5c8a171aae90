#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
import HTTPTypes
import Logging

/// A sliding window over a service's last calls, as a pure state machine: when the share of network
/// failures (timeouts, refused or lost connections) over the window passes the threshold, it asks for a
/// switch to the next host and starts over.
///
/// ```swift
/// var window = FailoverWindow()              // 40 calls, 10 %, at least 10 calls seen
/// for _ in 0..<36 { _ = window.record(.success) }
/// for _ in 0..<4 { _ = window.record(.networkFailure) }   // 4/40 = 10 %: not past it
/// window.record(.networkFailure)             // 5/40 > 10 % → .switchHost
/// ```
public struct FailoverWindow: Sendable, Hashable {
    /// One call's outcome, as failover sees it.
    ///
    /// New cases may be added in later versions: a `switch` over it should have a `default` branch.
    public enum Outcome: Sendable, Hashable {
        /// The server answered (whatever the status).
        case success
        /// No answer: timeout, refused or lost connection, unknown host.
        case networkFailure
    }

    /// What to do after an outcome.
    ///
    /// New cases may be added in later versions: a `switch` over it should have a `default` branch.
    public enum Action: Sendable, Hashable {
        /// Nothing.
        case none
        /// Move to the next host (the window has been reset).
        case switchHost
    }

    /// How many recent calls the window holds (at least 1: a smaller value is taken as 1).
    public var size: Int {
        didSet { if size < 1 { size = 1 } }
    }
    /// The failure share that, once exceeded, triggers a switch.
    public var threshold: Double
    /// The fewest calls in the window before a switch can happen.
    public var minimumCalls: Int

    private var ring: [Bool] = []
    private var position = 0
    /// Failures currently in the window.
    public private(set) var failures = 0

    /// A window of `size` calls switching when failures exceed `threshold` of them.
    public init(size: Int = 40, threshold: Double = 0.1, minimumCalls: Int = 10) {
        self.size = max(1, size)
        self.threshold = threshold
        self.minimumCalls = max(1, minimumCalls)
    }

    /// Calls currently in the window.
    public var count: Int { ring.count }

    /// The failure share over the window.
    public var failureRate: Double { ring.isEmpty ? 0 : Double(failures) / Double(ring.count) }

    /// Records one call and answers whether to switch hosts.
    public mutating func record(_ outcome: Outcome) -> Action {
        let failed = outcome == .networkFailure
        if ring.count < size {
            ring.append(failed)
        } else {
            if ring[position] { failures -= 1 }
            ring[position] = failed
            position = (position + 1) % size
        }
        if failed { failures += 1 }
        guard ring.count >= minimumCalls, failureRate > threshold else { return .none }
        reset()
        return .switchHost
    }

    /// Forgets every recorded call.
    public mutating func reset() {
        ring.removeAll(keepingCapacity: true)
        position = 0
        failures = 0
    }
}

/// Switches a service to its next host when too many of its calls fail at the network level (see
/// ``FailoverWindow``), one window per `APIService`. It sits in the `InterceptorRole.routing`
/// role, above the built-in `routing` stage that picks each attempt's host: the failing call itself already
/// moves to the next host (the built-in `routing` stage); this stage moves the *service*, so later calls start
/// on the host that works. A switch can also be ordered from outside,
/// e.g. when a push message names the host to use.
///
/// Outcomes of calls that were sent to a host the service has already left are ignored, so a burst of
/// failures from the old host does not immediately switch away from the new one.
///
/// ```swift
/// let failover = FailoverInterceptor()
/// let client = CourierClient(configuration: .init(interceptors: [failover]))
/// // later, from a push message:
/// failover.switchHost(of: api, to: "api-backup.example.com")
/// ```
public final class FailoverInterceptor: Interceptor {
    /// Settings.
    public struct Configuration: Sendable {
        /// The window every service starts with.
        public var window: FailoverWindow
        /// The failure codes that count as network failures.
        public var networkFailureCodes: Set<CourierError.Code>
        /// Whether the device is offline now (e.g. from a reachability monitor). While it is, no outcome
        /// counts against a server; a `CourierError.Code.notConnected` failure never does.
        public var isOffline: @Sendable () -> Bool

        /// 40 calls, 10 %, at least 10 calls; timeouts, refused and lost connections, unknown hosts (not
        /// "not connected": the device is offline, the server is not at fault).
        public init() {
            window = FailoverWindow()
            networkFailureCodes = [.timedOut, .cannotConnect, .connectionLost, .hostNotFound]
            isOffline = { false }
        }
    }

    /// The settings.
    public let configuration: Configuration
    private let windows = Locked(Windows())
    private let onSwitch: (@Sendable (APIService, URL) -> Void)?

    /// A failover stage; `onSwitch` hears of every switch (new base URL).
    public init(configuration: Configuration = Configuration(), onSwitch: (@Sendable (APIService, URL) -> Void)? = nil) {
        self.configuration = configuration
        self.onSwitch = onSwitch
    }

    /// `failover`.
    public var name: String { "failover" }
    /// `InterceptorRole.routing`.
    public var role: InterceptorRole { .routing }

    /// Each service's window, held by the service's identity only while the service lives (an app may make a
    /// service per call, and a freed service's address may be reused by a new one, which starts afresh).
    private struct Windows {
        struct Tracked {
            weak var service: APIService?
            var window: FailoverWindow
        }

        var byService: [ObjectIdentifier: Tracked] = [:]
        /// When the map reaches this size, the windows of freed services are dropped.
        var pruneAt = 64

        func window(of service: APIService) -> FailoverWindow? {
            guard let tracked = byService[ObjectIdentifier(service)], tracked.service === service else { return nil }
            return tracked.window
        }

        mutating func set(_ window: FailoverWindow, of service: APIService) {
            let key = ObjectIdentifier(service)
            if byService[key] == nil, byService.count >= pruneAt {
                byService = byService.filter { $0.value.service != nil }
                pruneAt = max(64, 2 * byService.count)
            }
            byService[key] = Tracked(service: service, window: window)
        }
    }

    /// The window of `service` now.
    public func window(of service: APIService) -> FailoverWindow {
        windows.withLock { $0.window(of: service) } ?? configuration.window
    }

    /// How many services' windows are held (freed services' are dropped as the map grows).
    package var trackedServiceCount: Int { windows.withLock { $0.byService.count } }

    /// Switches `service` to its host named `host` (an order from outside) and resets its window. Returns
    /// false when the service has no such host.
    @discardableResult
    public func switchHost(of service: APIService, to host: String) -> Bool {
        guard service.switchHost(to: host) else { return false }
        windows.withLock { $0.set(configuration.window, of: service) }
        onSwitch?(service, service.currentBaseURL)
        return true
    }

    public func intercept(
        _ request: CourierRequest, context: InterceptorContext, next: InterceptorNext
    ) async throws -> CourierResponse {
        let service = context.module.service
        let seen = RoutingStage.attempts(in: context).count
        defer {
            // Every attempt the routing stage made below (each host tried) counts for the host it went to.
            if !Task.isCancelled, !configuration.isOffline() {
                for attempt in RoutingStage.attempts(in: context).dropFirst(seen) where attempt.failure != .notConnected {
                    let outcome: FailoverWindow.Outcome =
                        attempt.failure.map { configuration.networkFailureCodes.contains($0) } == true
                        ? .networkFailure : .success
                    record(outcome, host: attempt.baseURL, service: service, context: context)
                }
            }
        }
        return try await next(request)
    }

    private func record(
        _ outcome: FailoverWindow.Outcome, host: URL, service: APIService, context: InterceptorContext
    ) {
        // Only attempts sent to the service's current host count.
        guard host == service.currentBaseURL else { return }
        let switched = windows.withLock { windows -> URL? in
            var window = windows.window(of: service) ?? configuration.window
            let action = window.record(outcome)
            windows.set(window, of: service)
            guard action == .switchHost else { return nil }
            return service.advanceHost()
        }
        if let switched {
            context.logger.warning(
                "failover: switching host", metadata: ["service": "\(service.name)", "host": "\(switched.host ?? "")"])
            onSwitch?(service, switched)
        }
    }
}
