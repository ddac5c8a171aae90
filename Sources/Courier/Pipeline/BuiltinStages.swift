#if canImport(FoundationEssentials)
package import FoundationEssentials
#else
package import Foundation
#endif
import HTTPTypes
import Logging

/// The built-in stage that decides, once per response, whether it is a failure (named `errorMapping`, just
/// above the codec stage): a status the endpoint's ``Endpoint/statusValidator`` refuses (default: outside
/// 2xx) is ``CourierError/Code/http(status:)`` (with the server's message when the body carries one), and an
/// accepted status whose decoded value carries a business failure code (``Endpoint/businessRule``, else
/// ``APIModule/businessRule``) is ``CourierError/Code/business``. The result goes into
/// ``CourierResponse/failure``; the stage itself throws nothing, so the stages above it (cache, auth,
/// validation, retry, observation) read one verdict instead of each deciding again. The built-in `result`
/// stage turns the verdict into the error the caller gets.
///
/// ```swift
/// let failure = ErrorMappingStage.failure(of: response, context: context)
/// ```
package struct ErrorMappingStage: Interceptor {
    /// Always `errorMapping`.
    public var name: String { "errorMapping" }

    /// The stage.
    public init() {}

    public func intercept(
        _ request: CourierRequest, context: InterceptorContext, next: InterceptorNext
    ) async throws -> CourierResponse {
        var response = try await next(request)
        Self.map(&response, context: context)
        return response
    }

    /// Sets `response`'s verdict (out of line: its temporaries stay off the stage's async frame).
    @inline(never)
    static func map(_ response: inout CourierResponse, context: InterceptorContext) {
        if response.failure == nil { response.failure = failure(of: response, context: context) }
        response.isMapped = true
    }

    /// The failure `response` stands for under the call's module, or nil when it is a success. The failure
    /// keeps a ``ResponseSnapshot`` of the response (``CourierError/response``).
    public static func failure(of response: CourierResponse, context: InterceptorContext) -> CourierError? {
        guard var failure = classify(response, context: context) else { return nil }
        failure.response = ResponseSnapshot(response)
        return failure
    }

    private static func classify(_ response: CourierResponse, context: InterceptorContext) -> CourierError? {
        let status = Int(response.head.status.code)
        let business = context.businessFailure(in: response)
        guard context.endpoint.statusValidator.accepts(response.head.status) else {
            var error = CourierError(.http(status: status))
            error.context.status = status
            if let business, let message = business.serverMessage, !message.isEmpty {
                error.detail = "The server said: \(message) (code \(business.code))"
            } else if let message = response.value?["message"]?.stringValue, !message.isEmpty {
                error.detail = "The server said: \(message)"
            }
            error.businessFailure = business
            return error
        }
        guard let business else { return nil }
        var error = CourierError(.business)
        error.businessFailure = business
        error.context.status = status
        return error
    }
}

/// The built-in stage just inside the observation role (named `result`): it throws the outcome's
/// ``CourierResponse/failure`` and, for a typed call, decodes the caller's model from the value — so
/// metrics, logs and lifecycle observers see HTTP, business and decoding failures as the failures they are.
struct ResultStage: Interceptor {
    var name: String { "result" }

    func intercept(
        _ request: CourierRequest, context: InterceptorContext, next: InterceptorNext
    ) async throws -> CourierResponse {
        var response = try await next(request)
        try Self.settle(&response, context: context)
        return response
    }

    /// Throws `response`'s failure, or decodes the caller's model into it (out of line: its temporaries stay
    /// off the stage's async frame).
    @inline(never)
    static func settle(_ response: inout CourierResponse, context: InterceptorContext) throws {
        if let failure = response.failure { throw failure }
        guard let decoder = context.resultDecoder else { return }
        do {
            response.decoded = try decoder(response.value ?? .null)
        } catch {
            var failure = CourierError.wrap(error, as: .typeMismatch)
            failure.context.status = Int(response.head.status.code)
            if failure.response == nil { failure.response = ResponseSnapshot(response) }
            throw failure
        }
    }
}

/// The built-in stage that picks the host of every attempt at send time (named `routing`, the innermost
/// stage of the routing role): a request built on its service's base URL goes to the service's current host
/// — or, when that host already failed to connect during this call, to the next host of the service that has
/// not. A connection that could not be made (refused, unknown host: the request never reached a server) is
/// tried again at once on the next host, so one dead host costs the call nothing but the failed
/// connect; a failure after the request may have arrived (timeout, lost connection) only moves the call's
/// *later* attempts (a retry) to another host. Endpoints with an absolute URL are not routed.
///
/// Each attempt is recorded (``attempts(in:)``); `FailoverInterceptor` reads them to decide when the whole
/// service should move to another host.
///
/// ```swift
/// for attempt in RoutingStage.attempts(in: context) { print(attempt.baseURL, attempt.failure ?? "ok") }
/// ```
package struct RoutingStage: Interceptor {
    /// One attempt of a call: the base URL it went to and how it ended.
    public struct Attempt: Sendable, Hashable {
        /// The base URL (host) the attempt was sent to.
        public var baseURL: URL
        /// The failure code, or nil when a response came back (whatever its status).
        public var failure: CourierError.Code?
    }

    private enum FailedHosts: CallStorageKey { typealias Value = Set<URL> }

    /// Failures that prove the request never reached a server: safe to send again elsewhere at once. (Not
    /// ``CourierError/Code/notConnected``: the device is offline, every host would fail the same way.)
    static let unreached: Set<CourierError.Code> = [.cannotConnect, .hostNotFound]
    /// Failures after which a later attempt of the call should go elsewhere.
    static let hostFailures: Set<CourierError.Code> = unreached.union([.timedOut, .connectionLost, .tlsFailure])

    /// Always `routing`.
    public var name: String { "routing" }

    /// The stage.
    public init() {}

    /// The attempts of the call `context` belongs to so far, in order.
    public static func attempts(in context: InterceptorContext) -> [Attempt] {
        context.storage.attempts
    }

    public func intercept(
        _ request: CourierRequest, context: InterceptorContext, next: InterceptorNext
    ) async throws -> CourierResponse {
        guard let base = request.baseURL else { return try await next(request) }
        var route = Route(context: context)
        while true {
            do {
                let response = try await next(route.request(moving: request, from: base))
                route.record(failure: nil, context: context)
                return response
            } catch {
                try route.next(after: error, request: request, context: context)
            }
        }
    }

    /// Where the attempts of one call go: the current host first, then (after a host that could not be reached)
    /// the service's others. Its work runs out of line, so the stage's async frame stays small.
    private struct Route {
        let service: APIService
        let current: URL
        let failed: Set<URL>
        /// The usual call has no failed host yet: the current host goes first, and the others are listed only
        /// when it cannot be reached.
        var candidates: [URL]?
        var index = 0
        var host: URL

        init(context: InterceptorContext) {
            service = context.module.service
            current = service.currentBaseURL
            failed = context.storage[FailedHosts.self] ?? []
            candidates = failed.isEmpty ? nil : RoutingStage.candidates(of: service, current: current, failed: failed)
            host = candidates?[0] ?? current
        }

        /// `request` moved from `base` to this attempt's host.
        @inline(never)
        mutating func request(moving request: CourierRequest, from base: URL) -> CourierRequest {
            host = candidates?[index] ?? current
            var routed = request
            RoutingStage.move(&routed, from: base, to: host)
            return routed
        }

        @inline(never)
        func record(failure: CourierError.Code?, context: InterceptorContext) {
            context.storage.addAttempt(Attempt(baseURL: host, failure: failure))
        }

        /// Records the failed attempt and moves to the next host, or rethrows `error` when there is none to try.
        @inline(never)
        mutating func next(after error: any Error, request: CourierRequest, context: InterceptorContext) throws {
            let code = CourierError.wrap(error, as: .transportFailure).code
            guard !Task.isCancelled, code != .cancelled else { throw error }
            record(failure: code, context: context)
            if RoutingStage.hostFailures.contains(code) {
                let host = host
                context.storage.update(FailedHosts.self, default: []) { _ = $0.insert(host) }
            }
            let all = candidates ?? RoutingStage.candidates(of: service, current: current, failed: failed)
            candidates = all
            let last = index == all.count - 1
            guard !last, request.isReplayable, RoutingStage.unreached.contains(code) else { throw error }
            context.logger.debug(
                "routing: trying the next host", metadata: ["failed": "\(host)", "error": "\(code)"])
            index += 1
        }
    }

    /// The hosts a call tries in order: the current one, then the service's others, without those that
    /// already failed during the call (the current one alone when all did).
    private static func candidates(of service: APIService, current: URL, failed: Set<URL>) -> [URL] {
        var candidates = [current] + service.currentHosts.filter { $0 != current }
        candidates.removeAll { failed.contains($0) }
        return candidates.isEmpty ? [current] : candidates
    }

    /// Moves `request` from base URL `old` to `new`: scheme, authority and the base path prefix.
    static func move(_ request: inout CourierRequest, from old: URL, to new: URL) {
        request.baseURL = new
        guard old != new else { return }
        request.head.scheme = new.scheme
        request.head.authority = new.courierAuthority
        let oldPrefix = old.courierBasePath
        let newPrefix = new.courierBasePath
        if let path = request.head.path, path.hasPrefix(oldPrefix) {
            request.head.path = newPrefix + path.dropFirst(oldPrefix.count)
        }
    }
}

extension URL {
    /// `host[:port]`, with an IPv6 literal in brackets, as an HTTP request's authority.
    package var courierAuthority: String {
        var authority = host ?? ""
        if authority.contains(":") { authority = "[\(authority)]" }
        if let port { authority += ":\(port)" }
        return authority
    }

    /// The percent-encoded path of a base URL without its trailing slashes ("" for the root).
    var courierBasePath: String {
        var path = URLComponents(url: self, resolvingAgainstBaseURL: false)?.percentEncodedPath ?? ""
        while path.hasSuffix("/") { path.removeLast() }
        return path
    }
}
