#if Cache
#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
public import HTTPTypes

/// How a ``CacheInterceptor`` treats one endpoint's responses. Set it per endpoint (or per module as the
/// default of its endpoints) with ``Courier/Endpoint/cachePolicy``.
///
/// New cases may be added in later versions: a `switch` over it should have a `default` branch.
///
/// ```swift
/// var endpoint = Endpoint(name: "banner", module: home, path: "/banner")
/// endpoint.cachePolicy = .normal(ttl: .seconds(300))
/// let reply = try await client.send(endpoint)
/// reply.metadata.source    // .network the first time, .cache for five minutes after
/// ```
public enum CachePolicy: Sendable, Hashable {
    /// Never read, never write.
    case ignore
    /// Always fetch; store the result (immediately stale, but readable by ``readOnly``).
    case noRead
    /// Answer from the cache while the entry is younger than `ttl`; otherwise fetch (revalidating with
    /// `ETag`/`Last-Modified` when the entry has them) and store.
    case normal(ttl: Duration)
    /// Answer only from the cache (fresh or not), never fetch: a launch screen. No entry fails with
    /// `CourierError.Code.cacheMiss`.
    case readOnly
    /// Like ``readOnly`` (answer only from the cache, or fail with `CourierError.Code.cacheMiss`), and
    /// also fetch quietly in the background and store the answer for the next launch (HSNet's
    /// read-cache-only); the caller never waits for the network.
    case readOnlyRefreshing
    /// Within `ttl` like ``normal(ttl:)``. After it, answer the stale entry at once (source
    /// `ResponseSource.staleCache`), revalidate in the background, and publish the fresh result
    /// on ``CacheInterceptor/updates()`` only if it changed.
    case staleWhileRevalidate(ttl: Duration)
    /// Like ``normal(ttl:)`` with the TTL taken from each response: `Cache-Control: max-age` (`no-store`
    /// stores nothing), else the body field ``CacheConfiguration/serverTTLField`` (seconds), else
    /// ``CacheConfiguration/defaultServerTTL``.
    case serverControlled
}

/// A module's "sensitive" value that is part of every cache key of its endpoints, so two users never share
/// an entry. It is read at each call, so it follows sign-in and sign-out.
///
/// ```swift
/// users.cacheScope = CacheScope { session.currentUserID }
/// ```
public struct CacheScope: Sendable {
    /// Returns the value for the current call (nil: shared by everyone).
    public var value: @Sendable () -> String?

    /// A scope computed at each call.
    public init(_ value: @escaping @Sendable () -> String?) { self.value = value }

    /// No scope: entries are shared.
    public static let shared = CacheScope { nil }
}

enum CachePolicyOption: FeatureOptionKey {
    static let defaultValue = CachePolicy.ignore
    static func requirement(for value: CachePolicy) -> ChainRequirement? {
        value == .ignore ? nil : ChainRequirement(feature: .cache, option: "cachePolicy", provider: "CacheInterceptor")
    }
}

extension ChainFeature {
    /// Answering from and storing into a cache (``CacheInterceptor``); ``Courier/Endpoint/cachePolicy`` needs it.
    public static let cache = ChainFeature("cache")
}
enum CacheSensitiveValueOption: OptionKey { static let defaultValue: String? = nil }
enum CacheKeyExclusionsOption: OptionKey { static let defaultValue: Set<String> = [] }
enum CacheVersionOption: OptionKey { static let defaultValue = 0 }
enum CacheScopeOption: OptionKey { static let defaultValue = CacheScope.shared }

extension Endpoint {
    /// The endpoint's cache policy; unset, the module's ``Courier/APIModule/cachePolicy`` applies.
    public var cachePolicy: CachePolicy {
        get { options.contains(CachePolicyOption.self) ? options[CachePolicyOption.self] : module.cachePolicy }
        set { options[CachePolicyOption.self] = newValue }
    }

    /// A value stored with each entry (YTKNetwork's `cacheSensitiveData`): an entry stored under another
    /// value is rejected (``CacheRejection/sensitiveValueChanged``) and replaced. Unlike ``Courier/APIModule/cacheScope``
    /// it does not keep two entries apart: the newer value replaces the older one.
    ///
    /// ```swift
    /// feed.cacheSensitiveValue = settings.contentLanguage
    /// ```
    public var cacheSensitiveValue: String? {
        get { options[CacheSensitiveValueOption.self] }
        set { options[CacheSensitiveValueOption.self] = newValue }
    }

    /// Query and body parameters left out of the cache key (timestamps, nonces, request ids: YTKNetwork's
    /// key filter), added to ``CacheConfiguration/keyExclusions``.
    ///
    /// ```swift
    /// endpoint.cacheKeyExclusions = ["ts", "nonce"]
    /// ```
    public var cacheKeyExclusions: Set<String> {
        get { options[CacheKeyExclusionsOption.self] }
        set { options[CacheKeyExclusionsOption.self] = newValue }
    }

    /// The version of the endpoint's cached data (YTKNetwork's `cacheVersion`): raise it when the response
    /// layout changes, and older entries stop being used. Unset, the module's version applies.
    public var cacheVersion: Int {
        get { options.contains(CacheVersionOption.self) ? options[CacheVersionOption.self] : module.cacheVersion }
        set { options[CacheVersionOption.self] = newValue }
    }
}

extension APIModule {
    /// The default cache policy of the module's endpoints (``CachePolicy/ignore`` when unset).
    public var cachePolicy: CachePolicy {
        get { options[CachePolicyOption.self] }
        set { options[CachePolicyOption.self] = newValue }
    }

    /// The default cache version of the module's endpoints (0 when unset).
    public var cacheVersion: Int {
        get { options[CacheVersionOption.self] }
        set { options[CacheVersionOption.self] = newValue }
    }

    /// The value that separates users in the cache keys of the module's endpoints.
    public var cacheScope: CacheScope {
        get { options[CacheScopeOption.self] }
        set { options[CacheScopeOption.self] = newValue }
    }
}

/// Settings of a ``CacheInterceptor``.
///
/// ```swift
/// var configuration = CacheConfiguration()
/// configuration.appVersion = "3.2.0"              // a new app version drops older entries
/// configuration.serverTTLField = "data.cache_span"
/// configuration.notModifiedField = "data_version"
/// configuration.versionEchoHeader = HTTPField.Name("X-Data-Version")
/// ```
public struct CacheConfiguration: Sendable {
    /// The app's version; entries stored by another version are not used.
    public var appVersion: String
    /// The current time (injectable for tests of TTLs).
    public var now: @Sendable () -> Date
    /// For ``CachePolicy/serverControlled``: a dotted path to a body field holding the TTL in seconds
    /// (used when the response has no `Cache-Control: max-age`). Nil: header only.
    public var serverTTLField: String?
    /// For ``CachePolicy/serverControlled``: the TTL when the response gives none.
    public var defaultServerTTL: Duration
    /// A dotted path to a body field meaning "not modified": the response counts as a 304 when the field is
    /// `true`, or when it equals the same field of the cached body (a version echo).
    public var notModifiedField: String?
    /// When set (with ``notModifiedField``), revalidating requests carry the cached body's
    /// ``notModifiedField`` value in this header field, so the server can answer "unchanged".
    public var versionEchoHeader: HTTPField.Name?
    /// Responses larger than this are not stored.
    public var maximumEntrySize: Int
    /// Request header fields whose values are part of every key, so responses that vary on them are kept
    /// apart. A response whose `Vary` names a field outside this list and ``credentialHeaderFields`` (or
    /// `Vary: *`) is not stored. Default: `Accept`, `Accept-Language`.
    public var keyHeaderFields: [HTTPField.Name]
    /// Request header fields that carry a credential: their values enter the key as a SHA-256 digest, so a
    /// response stored for one credential is never served for another. Default: `Authorization`,
    /// `Proxy-Authorization`, `Cookie`, `X-API-Key`.
    public var credentialHeaderFields: [HTTPField.Name]

    /// ``keyHeaderFields``' default.
    public static let defaultKeyHeaderFields: [HTTPField.Name] = [.accept, .acceptLanguage]
    /// Query and body parameters left out of every cache key (timestamps, nonces: YTKNetwork's key filter).
    /// Default: none. Endpoints add their own with ``Courier/Endpoint/cacheKeyExclusions``.
    public var keyExclusions: Set<String>
    /// Business codes meaning "what you have is already the newest" (HSNet's newest-result code): such an
    /// answer renews the cached entry and the call gets the cached body, like a 304. Read at the business
    /// rule's code path (`Endpoint.effectiveBusinessRule`, else `code`). Default: none.
    public var notModifiedCodes: Set<Int>

    /// ``credentialHeaderFields``' default.
    public static let defaultCredentialHeaderFields: [HTTPField.Name] = [
        .authorization, .proxyAuthorization, .cookie, HTTPField.Name("X-API-Key")!,
    ]

    /// Defaults: no app version, the system clock, `cache_span` as the server TTL field, no TTL when the
    /// server gives none, no "not modified" field, entries up to 8 MiB, the default key and credential
    /// header fields.
    public init() {
        self.appVersion = ""
        self.now = { Date() }
        self.serverTTLField = "cache_span"
        self.defaultServerTTL = .zero
        self.notModifiedField = nil
        self.versionEchoHeader = nil
        self.maximumEntrySize = 8 << 20
        self.keyHeaderFields = Self.defaultKeyHeaderFields
        self.credentialHeaderFields = Self.defaultCredentialHeaderFields
        self.keyExclusions = []
        self.notModifiedCodes = []
    }
}
#endif
