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
/// waiting call with ``CourierError/Code/authentication``, and calls rejected with that same old token
/// within ``failureCooldown`` fail at once instead of refreshing again.
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

    private var credential: Credential?
    private var generation: UInt64 = 0
    private var inFlight: (generation: UInt64, task: Task<Credential, any Error>)?
    private var lastFailure: (generation: UInt64, at: ContinuousClock.Instant)?
    private let refresher: Refresher
    private let now: @Sendable () -> Date
    private let clock = ContinuousClock()

    /// A token known to expire within this interval is refreshed before it is sent.
    public let refreshLeeway: Duration
    /// How long a failed refresh is remembered for the token it tried to replace.
    public let failureCooldown: Duration
    /// How many times the refresher has been started (for metrics and tests).
    public private(set) var refreshCount = 0

    /// A store holding `credential`, refreshed by `refresher`.
    public init(
        credential: Credential?, refreshLeeway: Duration = .seconds(30), failureCooldown: Duration = .seconds(5),
        now: @escaping @Sendable () -> Date = { Date() }, refresher: @escaping Refresher
    ) {
        self.credential = credential
        self.refreshLeeway = refreshLeeway
        self.failureCooldown = failureCooldown
        self.now = now
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
    }

    /// A token to send now, refreshing first when it is known to be expired; with its generation, to pass
    /// to ``refresh(rejected:)`` if the server rejects it.
    public func validToken() async throws -> (token: String, generation: UInt64) {
        guard let credential else {
            throw CourierError(.authentication, detail: "there is no credential; sign in first")
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
                throw CourierError(.authentication, detail: "there is no credential; sign in first")
            }
            return (credential.accessToken, generation)
        }
        if let failure = lastFailure, failure.generation == rejectedGeneration,
           clock.now - failure.at < failureCooldown {
            throw CourierError(.authentication, detail: "the credential could not be refreshed")
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
        do {
            let fresh = try await task.value
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
            if let courier = error as? CourierError, courier.code == .authentication { throw courier }
            throw CourierError(.authentication, detail: "the credential could not be refreshed", underlying: error)
        }
    }
}

/// Sends `Authorization: Bearer <token>` from a ``CredentialStore`` (``Courier/InterceptorRole/shaping`` role, named `BearerAuth`).
/// When the server says the token expired — an HTTP status in ``Options/expiryStatuses`` (401) or a
/// business code in ``Options/expiryCodes`` — it refreshes once (single flight across concurrent calls)
/// and replays the original call once with the new token. A replay that is rejected again fails with
/// ``CourierError/Code/authentication``.
///
/// Requests with ``CourierRequest/isReplayable`` false (streamed bodies) are not replayed: the credential
/// is still refreshed for later calls, and the rejection is returned as it came.
///
/// Business codes are read with the module's ``BusinessRule`` when it has one, else at
/// ``Options/codePath`` of the decoded response.
///
/// ```swift
/// var options = BearerAuth.Options()
/// options.expiryCodes = [40101]            // "token expired" in the response body
/// module.interceptors.append(BearerAuth(store: tokens, options: options))
/// ```
public struct BearerAuth: Interceptor {
    /// Settings.
    public struct Options: Sendable {
        /// HTTP statuses meaning "the token is no longer valid". Default: 401.
        public var expiryStatuses: Set<Int>
        /// Business codes meaning the same. Default: none.
        public var expiryCodes: Set<Int>
        /// Where the business code is, when the module has no ``BusinessRule``. Default `code`.
        public var codePath: [PathComponent]
        /// The header field. Default `Authorization`.
        public var headerField: HTTPField.Name
        /// The scheme before the token. Default `Bearer`.
        public var scheme: String

        /// Defaults: 401, no business codes, `Authorization: Bearer …`.
        public init() {
            expiryStatuses = [401]
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
        if options.expiryStatuses.contains(Int(response.head.status.code)) { return true }
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
