#if Security
#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
public import HTTPTypes
import Logging

/// An access token, with what is needed to refresh it. Its description never shows the tokens.
///
/// ```swift
/// let credential = Credential(accessToken: token, refreshToken: refresh, expiresAt: Date() + 3600)
/// print(credential)   // Credential(‹access token›, ‹refresh token›, expires 2026-…)
/// ```
public struct Credential: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible,
    CustomReflectable
{
    /// The token sent as `Authorization: Bearer …`.
    public var accessToken: String
    /// The token the refresher uses, if any.
    public var refreshToken: String?
    /// When the access token expires, if known (it is then refreshed before use).
    public var expiresAt: Date?

    /// A credential.
    public init(accessToken: String, refreshToken: String? = nil, expiresAt: Date? = nil) {
        self.accessToken = accessToken
        self.refreshToken = refreshToken
        self.expiresAt = expiresAt
    }

    public var description: String {
        "Credential(‹access token›" + (refreshToken == nil ? "" : ", ‹refresh token›")
            + (expiresAt.map { ", expires \($0)" } ?? "") + ")"
    }
    public var debugDescription: String { description }
    public var customMirror: Mirror {
        Mirror(self, children: ["expiresAt": expiresAt as Any], displayStyle: .struct)
    }
}

/// Holds the current ``Credential`` and refreshes it with a single flight: however many calls find the
/// token expired at once, the refresher runs once and they all get its result. A failed refresh fails every
/// waiting call with `CourierError.Code.authentication`, and calls rejected with that same old token
/// within ``failureCooldown`` fail at once instead of refreshing again.
///
/// **Re-login, then replay.** With a ``ReLogin`` handler, a refresh that fails — or a call made while signed
/// out — does not fail the waiting calls: the handler runs once (single flight, whatever the number of calls
/// waiting), typically showing the sign-in screen, and every waiting call is then replayed once with the
/// credential it returns. When the handler declines (returns nil), throws or is cancelled, every waiting call
/// fails with `CourierError.Code.authentication` and the reason, and calls holding that same rejected token
/// within ``failureCooldown`` fail at once: a declined sign-in never loops.
///
/// ```swift
/// let tokens = CredentialStore(credential: saved, reLogin: { reason in
///     await signInScreen.present(because: reason)      // nil when the user cancels
/// }) { old in try await refresh(old) }
/// ```
///
/// ```swift
/// let tokens = CredentialStore(credential: saved) { old in
///     let reply = try await refreshClient.send(.refreshToken(old?.refreshToken ?? ""), decoding: TokenReply.self)
///     return Credential(accessToken: reply.value.accessToken, refreshToken: reply.value.refreshToken)
/// }
/// module.interceptors.append(BearerAuth(store: tokens))
/// await tokens.update(nil)   // sign out
/// ```
public actor CredentialStore {
    /// Makes a fresh credential from the current one (nil when signed out).
    public typealias Refresher = @Sendable (Credential?) async throws -> Credential
    /// Signs in again (e.g. shows the sign-in screen) and returns the new credential, or nil when the user
    /// declines.
    public typealias ReLogin = @Sendable (ReLoginReason) async throws -> Credential?

    /// Why a sign-in is needed.
    ///
    /// New cases may be added in later versions: a `switch` over it should have a `default` branch.
    public enum ReLoginReason: Sendable, CustomStringConvertible {
        /// There is no credential (never signed in, or signed out).
        case signedOut
        /// The refresher failed with this error.
        case refreshFailed(CourierError)

        public var description: String {
            switch self {
            case .signedOut: return "signed out"
            case .refreshFailed(let error):
                let cause = (error.underlying as? CourierError).map { $0.detail ?? $0.message } ?? error.detail
                return "the refresh failed" + (cause.map { ": " + $0 } ?? "")
            }
        }
    }

    private var credential: Credential?
    private var generation: UInt64 = 0
    private var inFlight: (generation: UInt64, task: Task<Credential, any Error>)?
    private var lastFailure: (generation: UInt64, at: ContinuousClock.Instant)?
    private let refresher: Refresher
    private let reLogin: ReLogin?
    private var reLoginInFlight: (generation: UInt64, task: Task<Credential?, any Error>)?
    private var lastReLoginFailure: (generation: UInt64, at: ContinuousClock.Instant, reason: String)?
    private let now: @Sendable () -> Date
    private let clock = ContinuousClock()

    /// A token known to expire within this interval is refreshed before it is sent.
    public let refreshLeeway: Duration
    /// How long a failed refresh is remembered for the token it tried to replace.
    public let failureCooldown: Duration
    /// How many times the refresher has been started (for metrics and tests).
    public private(set) var refreshCount = 0
    /// How many times the re-login handler has been started (for metrics and tests).
    public private(set) var reLoginCount = 0

    /// A store holding `credential`, refreshed by `refresher`; `reLogin` (optional) signs in again when the
    /// refresh fails or there is no credential.
    public init(
        credential: Credential?, refreshLeeway: Duration = .seconds(30), failureCooldown: Duration = .seconds(5),
        now: @escaping @Sendable () -> Date = { Date() }, reLogin: ReLogin? = nil,
        refresher: @escaping Refresher
    ) {
        self.credential = credential
        self.refreshLeeway = refreshLeeway
        self.failureCooldown = failureCooldown
        self.now = now
        self.reLogin = reLogin
        self.refresher = refresher
    }

    /// The current credential.
    public var current: Credential? { credential }

    /// Replaces the credential (sign in, sign out with nil); a refresh in flight no longer applies.
    public func update(_ credential: Credential?) {
        self.credential = credential
        generation &+= 1
        inFlight = nil
        lastFailure = nil
        reLoginInFlight = nil
        lastReLoginFailure = nil
    }

    /// A token to send now, refreshing first when it is known to be expired; with its generation, to pass
    /// to ``refresh(rejected:)`` if the server rejects it.
    public func validToken() async throws -> (token: String, generation: UInt64) {
        guard let credential else {
            guard reLogin != nil else {
                throw CourierError(.authentication, detail: "there is no credential; sign in first")
            }
            return try await signInAgain(replacing: generation, reason: .signedOut)
        }
        if let expiry = credential.expiresAt,
           expiry.timeIntervalSince(now()) <= Double(refreshLeeway.components.seconds) {
            return try await refresh(rejected: generation)
        }
        return (credential.accessToken, generation)
    }

    /// Replaces the token of `generation` (one the server rejected): joins the refresh in flight, or starts
    /// one, or — if another call already refreshed — returns the newer token at once.
    public func refresh(rejected rejectedGeneration: UInt64) async throws -> (token: String, generation: UInt64) {
        if rejectedGeneration != generation {
            guard let credential else {
                guard reLogin != nil else {
                    throw CourierError(.authentication, detail: "there is no credential; sign in first")
                }
                return try await signInAgain(replacing: generation, reason: .signedOut)
            }
            return (credential.accessToken, generation)
        }
        if let running = reLoginInFlight, running.generation == rejectedGeneration {
            return try await signInAgain(replacing: rejectedGeneration, reason: .signedOut)
        }
        if let failure = lastFailure, failure.generation == rejectedGeneration,
           clock.now - failure.at < failureCooldown {
            let error = CourierError(.authentication, detail: "the credential could not be refreshed")
            guard reLogin != nil else { throw error }
            return try await signInAgain(replacing: rejectedGeneration, reason: .refreshFailed(error))
        }
        let task: Task<Credential, any Error>
        if let running = inFlight, running.generation == rejectedGeneration {
            task = running.task
        } else {
            let refresher = refresher
            let old = credential
            task = Task { try await refresher(old) }
            inFlight = (rejectedGeneration, task)
            refreshCount += 1
        }
        // A caller cancelled while it waits stops waiting; the refresh goes on for the others (and is no failure).
        guard let outcome = await task.resultUnlessCancelled() else {
            throw CourierError(.cancelled, detail: "cancelled while the credential was refreshed")
        }
        do {
            let fresh = try outcome.get()
            if generation == rejectedGeneration {
                credential = fresh
                generation &+= 1
                lastFailure = nil
            }
            if inFlight?.generation == rejectedGeneration { inFlight = nil }
            guard let credential else {
                throw CourierError(.authentication, detail: "signed out while the credential was refreshed")
            }
            return (credential.accessToken, generation)
        } catch {
            if inFlight?.generation == rejectedGeneration {
                inFlight = nil
                lastFailure = (rejectedGeneration, clock.now)
            }
            let failure: CourierError
            if let courier = error as? CourierError, courier.code == .authentication {
                failure = courier
            } else {
                failure = CourierError(.authentication, detail: "the credential could not be refreshed", underlying: error)
            }
            guard reLogin != nil, generation == rejectedGeneration else { throw failure }
            return try await signInAgain(replacing: rejectedGeneration, reason: .refreshFailed(failure))
        }
    }

    /// Runs the re-login handler once for `rejectedGeneration` (joining a run in flight) and installs its
    /// credential; every caller waiting gets the new token or the same failure.
    private func signInAgain(
        replacing rejectedGeneration: UInt64, reason: ReLoginReason
    ) async throws -> (token: String, generation: UInt64) {
        guard let reLogin else { throw CourierError(.authentication, detail: "there is no credential; sign in first") }
        if rejectedGeneration != generation, let credential {
            return (credential.accessToken, generation)
        }
        if let failure = lastReLoginFailure, failure.generation == rejectedGeneration,
           clock.now - failure.at < failureCooldown {
            throw CourierError(.authentication, detail: failure.reason)
        }
        let task: Task<Credential?, any Error>
        if let running = reLoginInFlight, running.generation == rejectedGeneration {
            task = running.task
        } else {
            task = Task { try await reLogin(reason) }
            reLoginInFlight = (rejectedGeneration, task)
            reLoginCount += 1
        }
        // A caller cancelled while it waits (a sign-in screen may stay up for minutes) stops waiting; the sign-in
        // goes on for the others.
        guard let outcome = await task.resultUnlessCancelled() else {
            throw CourierError(.cancelled, detail: "cancelled while signing in again")
        }
        if reLoginInFlight?.generation == rejectedGeneration { reLoginInFlight = nil }
        switch outcome {
        case .success(let fresh?):
            if generation == rejectedGeneration {
                credential = fresh
                generation &+= 1
                lastFailure = nil
                lastReLoginFailure = nil
            }
            guard let credential else {
                throw CourierError(.authentication, detail: "signed out while signing in again")
            }
            return (credential.accessToken, generation)
        case .success(nil):
            let detail = "sign-in was declined (\(reason))"
            if generation == rejectedGeneration { lastReLoginFailure = (rejectedGeneration, clock.now, detail) }
            throw CourierError(.authentication, detail: detail)
        case .failure(let error):
            let cancelled = error is CancellationError || (error as? CourierError)?.code == .cancelled
            let detail = cancelled ? "sign-in was cancelled (\(reason))" : "sign-in failed (\(reason))"
            if generation == rejectedGeneration { lastReLoginFailure = (rejectedGeneration, clock.now, detail) }
            throw CourierError(.authentication, detail: detail, underlying: error)
        }
    }
}

/// Sends `Authorization: Bearer <token>` from a ``CredentialStore`` (`InterceptorRole.shaping`
/// role, named `BearerAuth`). When the server says the token expired — by ``Options/expiry`` (default: a
/// `401` whose `WWW-Authenticate` says `Bearer error="invalid_token"`, RFC 6750 §3.1) or a business code in
/// ``Options/expiryCodes`` — it refreshes once (single flight across concurrent calls; a failed refresh
/// signs in again when the store has a ``CredentialStore/ReLogin`` handler) and replays the original call
/// once with the new token. A replay that is rejected again fails with `CourierError.Code.authentication`.
/// Any other `401` (a bad signature, a missing scope) is a plain HTTP error: no refresh.
///
/// Requests with `CourierRequest.isReplayable` false (streamed bodies) are not replayed: the credential
/// is still refreshed for later calls, and the rejection is returned as it came.
///
/// Business codes are read from the outcome the `errorMapping` stage decided (the module's
/// `BusinessRule`), else at ``Options/codePath`` of the decoded response.
///
/// ```swift
/// var options = BearerAuth.Options()
/// options.expiryCodes = [40101]            // "token expired" in the response body
/// options.expiry = .anyOf([.invalidTokenChallenge, .status([419])])
/// module.interceptors.append(BearerAuth(store: tokens, options: options))
/// ```
public struct BearerAuth: Interceptor {
    /// When a response means "the token is no longer valid".
    ///
    /// ```swift
    /// let rule = BearerAuth.ExpiryRule { response, _ in response.head.headerFields[.init("X-Token-Expired")!] == "1" }
    /// ```
    public struct ExpiryRule: Sendable {
        let matches: @Sendable (CourierResponse, InterceptorContext) -> Bool

        /// A rule from a predicate.
        public init(_ predicate: @escaping @Sendable (CourierResponse, InterceptorContext) -> Bool) {
            self.matches = predicate
        }

        /// A `401` with `WWW-Authenticate: Bearer … error="invalid_token"` (RFC 6750 §3.1).
        public static let invalidTokenChallenge = ExpiryRule { response, _ in
            guard response.head.status.code == 401 else { return false }
            return response.head.headerFields[values: .wwwAuthenticate].contains(where: Self.saysInvalidToken)
        }

        /// Any response with one of `statuses` (e.g. `[401]` for servers that send no challenge).
        public static func status(_ statuses: Set<Int>) -> ExpiryRule {
            ExpiryRule { response, _ in statuses.contains(Int(response.head.status.code)) }
        }

        /// Either of `rules`.
        public static func anyOf(_ rules: [ExpiryRule]) -> ExpiryRule {
            ExpiryRule { response, context in rules.contains { $0.matches(response, context) } }
        }

        /// Whether a `WWW-Authenticate` value is a Bearer challenge with `error="invalid_token"`.
        static func saysInvalidToken(_ challenge: String) -> Bool {
            let lowered = challenge.lowercased()
            guard lowered.hasPrefix("bearer") else { return false }
            // auth-params are comma-separated `name=value` or `name="value"` (RFC 9110 §11.2).
            let parameters = lowered.dropFirst("bearer".count).split(separator: ",").map {
                $0.filter { $0 != " " && $0 != "\t" && $0 != "\"" }
            }
            return parameters.contains("error=invalid_token")
        }
    }

    /// Settings.
    public struct Options: Sendable {
        /// When a response means the token expired. Default ``ExpiryRule/invalidTokenChallenge``.
        public var expiry: ExpiryRule
        /// Business codes meaning the same. Default: none.
        public var expiryCodes: Set<Int>
        /// Where the business code is, when the module has no `BusinessRule`. Default `code`.
        public var codePath: [PathComponent]
        /// The header field. Default `Authorization`.
        public var headerField: HTTPField.Name
        /// The scheme before the token. Default `Bearer`.
        public var scheme: String

        /// Defaults: a `401` with an `invalid_token` challenge, no business codes, `Authorization: Bearer …`.
        public init() {
            expiry = .invalidTokenChallenge
            expiryCodes = []
            codePath = ["code"]
            headerField = .authorization
            scheme = "Bearer"
        }
    }

    /// The credential store.
    public var store: CredentialStore
    /// The settings.
    public var options: Options

    /// An auth stage.
    public init(store: CredentialStore, options: Options = Options()) {
        self.store = store
        self.options = options
    }

    /// `BearerAuth`.
    public var name: String { "BearerAuth" }

    public func intercept(
        _ request: CourierRequest, context: InterceptorContext, next: InterceptorNext
    ) async throws -> CourierResponse {
        let (token, generation) = try await store.validToken()
        let response = try await next(authorized(request, token))
        guard isExpiry(response, context) else { return response }
        context.logger.debug("credential rejected; refreshing", metadata: [
            "status": "\(response.head.status.code)", "replayable": "\(request.isReplayable)"])
        guard request.isReplayable else {
            _ = try? await store.refresh(rejected: generation)
            return response
        }
        let (fresh, _) = try await store.refresh(rejected: generation)
        let replay = try await next(authorized(request, fresh))
        guard !isExpiry(replay, context) else {
            throw CourierError(.authentication, detail: "the server rejected the refreshed credential")
        }
        return replay
    }

    private func authorized(_ request: CourierRequest, _ token: String) -> CourierRequest {
        var request = request
        request.head.headerFields[options.headerField] = options.scheme.isEmpty ? token : options.scheme + " " + token
        return request
    }

    /// Whether `response` says the token expired.
    func isExpiry(_ response: CourierResponse, _ context: InterceptorContext) -> Bool {
        if options.expiry.matches(response, context) { return true }
        guard !options.expiryCodes.isEmpty else { return false }
        if context.module.businessRule != nil {
            // The outcome the errorMapping stage decided (once) for this response.
            let business = response.failure?.businessFailure ?? context.businessFailure(in: response)
            return business.map { options.expiryCodes.contains($0.code) } ?? false
        }
        guard let code = response.value?[path: options.codePath]?.int64Value else { return false }
        return options.expiryCodes.contains(Int(code))
    }
}
#endif
