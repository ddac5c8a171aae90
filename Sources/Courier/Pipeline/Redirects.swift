public import Foundation
public import HTTPTypes

/// How a call follows HTTP redirects (`301`, `302`, `303`, `307`, `308` with a `Location`). Transports never
/// follow redirects themselves: the chain's `redirects` stage does, by this policy, so every hop passes again
/// through the network-side stages below it (signing signs the new path, cookies are chosen for the new
/// host) and shows in the trace.
///
/// Set it for every call on ``CourierClient/Configuration/redirectPolicy`` (default ``follow(limit:)`` with 10
/// hops, as URLSession), and override it per module (``APIModule/redirectPolicy``) or per endpoint
/// (``Endpoint/redirectPolicy``).
///
/// Each hop, as browsers, OkHttp and curl do:
/// - `301`, `302` and `303` turn a method other than `GET` and `HEAD` into `GET` without a body;
///   `307` and `308` keep the method and the body (a body that cannot be sent again is refused with
///   ``CourierError/Code/redirectRefused``).
/// - A hop to another origin (scheme, host or port) drops `Authorization`, `Cookie` and
///   `Proxy-Authorization`.
/// - `Location` may be relative; it resolves against the URL that answered. A target that is not http(s)
///   is refused with ``CourierError/Code/redirectRefused``.
/// - More hops than the limit (a redirect loop among them) fail with ``CourierError/Code/tooManyRedirects``.
///
/// The hops a call took are in ``ResponseMetadata/redirects``, and its final URL in ``ResponseMetadata/url``.
///
/// ```swift
/// var configuration = CourierClient.Configuration()
/// configuration.redirectPolicy = .sameOrigin(limit: 5)
/// var login = Endpoint(name: "login", module: users, method: .post, path: "/login")
/// login.redirectPolicy = .never          // the 303 is the answer
/// ```
public struct RedirectPolicy: Hashable, Sendable, CustomStringConvertible {
    /// What the policy follows.
    ///
    /// New cases may be added in later versions: a `switch` over it should have a `default` branch.
    public enum Mode: Hashable, Sendable {
        /// Every http(s) redirect.
        case follow
        /// Redirects to the origin (scheme, host, port) the call started on; another origin is refused.
        case sameOrigin
        /// None: a redirect is the call's answer (an HTTP status error, with the `Location` in its head).
        case never
    }

    /// What the policy follows.
    public var mode: Mode
    /// The most hops a call may take (0 for ``never``).
    public var limit: Int

    /// Follows every http(s) redirect, at most `limit` hops.
    public static func follow(limit: Int = 10) -> RedirectPolicy {
        RedirectPolicy(mode: .follow, limit: max(0, limit))
    }

    /// Follows redirects that stay on the call's origin, at most `limit` hops; a redirect to another origin
    /// fails with ``CourierError/Code/redirectRefused``.
    public static func sameOrigin(limit: Int = 10) -> RedirectPolicy {
        RedirectPolicy(mode: .sameOrigin, limit: max(0, limit))
    }

    /// Follows no redirect: the `3xx` response is the call's answer.
    public static let never = RedirectPolicy(mode: .never, limit: 0)

    /// The default: ``follow(limit:)`` with 10 hops.
    public static let `default` = RedirectPolicy.follow(limit: 10)

    public var description: String {
        switch mode {
        case .follow: return "follow(limit: \(limit))"
        case .sameOrigin: return "sameOrigin(limit: \(limit))"
        case .never: return "never"
        }
    }
}

/// One redirect a call followed.
///
/// ```swift
/// for hop in reply.metadata.redirects { print(hop) }   // 302 http://a.test/old → GET http://a.test/new
/// ```
public struct RedirectHop: Hashable, Sendable, CustomStringConvertible {
    /// The redirect's status (301, 302, 303, 307 or 308).
    public var status: Int
    /// The URL that answered with the redirect.
    public var from: URL
    /// The URL the call went on to (the `Location`, resolved).
    public var to: URL
    /// The method of the request sent to ``to``.
    public var method: HTTPRequest.Method

    /// A hop.
    public init(status: Int, from: URL, to: URL, method: HTTPRequest.Method) {
        self.status = status
        self.from = from
        self.to = to
        self.method = method
    }

    public var description: String { "\(status) \(from.absoluteString) → \(method) \(to.absoluteString)" }
}

/// The chain's `redirects` stage: follows redirects by a ``RedirectPolicy``. The ``CourierClient`` puts one in
/// every chain, first of the network stages, so each hop goes again through signing, encryption,
/// cookies and any other network-role interceptor (each sees every hop), and the stages
/// above see the final answer, with the hops in ``CourierResponse/redirects``.
///
/// ```swift
/// let pipeline = client.pipeline(for: .user(7, in: users))
/// print(pipeline.stageNames)   // ["codec", "redirects", "transport"]
/// ```
package struct RedirectInterceptor: Interceptor {
    /// The policy the stage follows.
    public var policy: RedirectPolicy

    /// A stage following `policy`.
    public init(policy: RedirectPolicy = .default) {
        self.policy = policy
    }

    public var name: String { "redirects" }
    public var role: InterceptorRole { .network }

    /// The statuses that redirect (with a `Location`).
    static let statuses: Set<Int> = [301, 302, 303, 307, 308]

    public func intercept(
        _ request: CourierRequest, context: InterceptorContext, next: InterceptorNext
    ) async throws -> CourierResponse {
        var current = request
        var hops: [RedirectHop] = []
        while true {
            var response = try await next(current)
            guard try follow(&response, current: &current, first: request, hops: &hops) else { return response }
            try Task.checkCancellation()
        }
    }

    /// Whether `response` redirects under the policy: if it does, `current` becomes the next hop's request and
    /// the hop is added to `hops`; if not, `response` gets the hops. Out of line, so the stage's async frame
    /// holds only the request and the response.
    @inline(never)
    func follow(
        _ response: inout CourierResponse, current: inout CourierRequest, first request: CourierRequest,
        hops: inout [RedirectHop]
    ) throws -> Bool {
        let status = Int(response.head.status.code)
        guard policy.mode != .never, Self.statuses.contains(status),
            let location = response.head.headerFields[.location]
        else {
            if !hops.isEmpty { response.redirects = hops + response.redirects }
            return false
        }
        guard let from = Self.url(of: current) else {
            throw Self.refused("the redirected request has no valid URL")
        }
        guard hops.count < policy.limit else {
            throw CourierError(
                .tooManyRedirects,
                detail: "more than \(policy.limit) redirects (the last, \(status) from \(from.absoluteString) to '\(location)')")
        }
        guard let target = Self.resolve(location, against: from) else {
            throw Self.refused("the redirect's Location '\(location)' is not an http or https URL")
        }
        let targetOrigin = Origin(target)
        // The first request's origin, worked out only when a redirect comes (most calls have none).
        if policy.mode == .sameOrigin, targetOrigin != Self.url(of: request).map(Origin.init) {
            throw Self.refused(
                "the redirect goes to another origin (\(target.absoluteString)); the policy follows the same origin only")
        }
        current = try Self.follow(current, status: status, to: target, crossOrigin: targetOrigin != Origin(from))
        hops.append(RedirectHop(status: status, from: from, to: target, method: current.head.method))
        return true
    }

    /// The request for the hop to `target`.
    static func follow(_ request: CourierRequest, status: Int, to target: URL, crossOrigin: Bool) throws -> CourierRequest {
        var next = request
        let method = request.head.method
        if [301, 302, 303].contains(status), method != .get, method != .head {
            next.head.method = .get
            next.body = nil
            next.payload = nil
            for name in [HTTPField.Name.contentType, .contentLength, .contentEncoding, .transferEncoding] {
                next.head.headerFields[name] = nil
            }
        } else if request.body != nil || request.payload != nil, !request.isReplayable {
            throw refused("a \(status) asks to send the body again, and this request's body cannot be replayed")
        }
        if crossOrigin {
            for name in [HTTPField.Name.authorization, .cookie, .proxyAuthorization] {
                next.head.headerFields[name] = nil
            }
        }
        let components = URLComponents(url: target, resolvingAgainstBaseURL: false)
        var path = components?.percentEncodedPath ?? "/"
        if path.isEmpty { path = "/" }
        if let query = components?.percentEncodedQuery { path += "?" + query }
        next.head.scheme = target.scheme?.lowercased()
        next.head.authority = authority(of: target)
        next.head.path = path
        return next
    }

    /// `Location` resolved against `base`, without its fragment; nil unless it is an http(s) URL with a host.
    static func resolve(_ location: String, against base: URL) -> URL? {
        let trimmed = location.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty, let resolved = URL(string: trimmed, relativeTo: base)?.absoluteURL,
            var components = URLComponents(url: resolved, resolvingAgainstBaseURL: false),
            let scheme = components.scheme?.lowercased(), scheme == "http" || scheme == "https",
            let host = components.host, !host.isEmpty
        else { return nil }
        if let port = components.port, !(1...65535).contains(port) { return nil }
        components.fragment = nil
        return components.url
    }

    /// The URL of `request` (nil when its head has no scheme or authority).
    static func url(of request: CourierRequest) -> URL? {
        guard let scheme = request.head.scheme, let authority = request.head.authority else { return nil }
        return URL(string: "\(scheme)://\(authority)\(request.head.path ?? "/")")
    }

    /// `host[:port]` of `url`, with brackets around an IPv6 address.
    static func authority(of url: URL) -> String {
        var host = url.host ?? ""
        if host.contains(":"), !host.hasPrefix("[") { host = "[\(host)]" }
        if let port = url.port { host += ":\(port)" }
        return host
    }

    static func refused(_ detail: String) -> CourierError {
        CourierError(.redirectRefused, detail: detail)
    }

    /// A URL's origin: scheme, host and effective port, compared case-insensitively.
    struct Origin: Hashable {
        var scheme: String
        var host: String
        var port: Int

        init(_ url: URL) {
            scheme = url.scheme?.lowercased() ?? ""
            host = url.host?.lowercased() ?? ""
            port = url.port ?? (scheme == "https" ? 443 : 80)
        }
    }
}

enum RedirectPolicyOption: OptionKey {
    static let defaultValue: RedirectPolicy? = nil
}

extension Endpoint {
    /// How this endpoint's calls follow redirects; nil (the default) takes the module's, else the client's
    /// ``CourierClient/Configuration/redirectPolicy``.
    ///
    /// ```swift
    /// endpoint.redirectPolicy = .never
    /// ```
    public var redirectPolicy: RedirectPolicy? {
        get { options[RedirectPolicyOption.self] ?? module.redirectPolicy }
        set { options[RedirectPolicyOption.self] = newValue }
    }
}

extension APIModule {
    /// How the module's calls follow redirects when an endpoint sets no policy; nil (the default) takes the
    /// client's ``CourierClient/Configuration/redirectPolicy``.
    ///
    /// ```swift
    /// payments.redirectPolicy = .sameOrigin(limit: 3)
    /// ```
    public var redirectPolicy: RedirectPolicy? {
        get { options[RedirectPolicyOption.self] }
        set { options[RedirectPolicyOption.self] = newValue }
    }
}
