#if Cache
#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
import HTTPTypes
import Logging

/// What a cache does with one call, decided from the policy and the entry alone (no I/O), so the rules
/// can be tested as a table.
///
/// New cases may be added in later versions: a `switch` over it should have a `default` branch.
///
/// ```swift
/// CacheDecision.decide(policy: .normal(ttl: .seconds(60)), entry: nil, now: now)   // .fetch
/// ```
public enum CacheDecision: Sendable, Hashable {
    /// Go to the network and store nothing (``CachePolicy/ignore``).
    case bypass
    /// Go to the network and store the result.
    case fetch
    /// Answer the entry, marked with the source.
    case answer(ResponseSource)
    /// Go to the network with the entry's validators; a 304 (or "not modified" body) answers the entry.
    case revalidate
    /// Answer the entry at once as stale, and revalidate in the background.
    case answerStaleAndRevalidate
    /// Fail with `CourierError.Code.cacheMiss` (``CachePolicy/readOnly`` without an entry).
    case miss

    /// The decision for `policy` given the usable entry's metadata (nil: none, or from another version).
    public static func decide(policy: CachePolicy, entry: CacheMetadata?, now: Date) -> CacheDecision {
        switch policy {
        case .ignore:
            return .bypass
        case .noRead:
            return .fetch
        case .readOnly, .readOnlyRefreshing:
            guard let entry else { return .miss }
            return .answer(entry.isFresh(at: now) ? .cache : .staleCache)
        case .normal, .serverControlled:
            guard let entry else { return .fetch }
            return entry.isFresh(at: now) ? .answer(.cache) : .revalidate
        case .staleWhileRevalidate:
            guard let entry else { return .fetch }
            return entry.isFresh(at: now) ? .answer(.cache) : .answerStaleAndRevalidate
        }
    }
}

/// Why a cached entry was not used for a call: on `ResponseMetadata.cacheRejection`, on
/// `CourierResponse.cacheRejection` and in the trace (`cache entry rejected: expired`).
///
/// New cases may be added in later versions: a `switch` over it should have a `default` branch.
public enum CacheRejection: String, Sendable, Hashable, CaseIterable {
    /// Older than its TTL (it was revalidated or fetched again).
    case expired
    /// Stored under another ``Courier/Endpoint/cacheVersion``.
    case cacheVersionChanged = "cache version changed"
    /// Stored by another ``CacheConfiguration/appVersion``.
    case appVersionChanged = "app version changed"
    /// Stored under another ``Courier/Endpoint/cacheSensitiveValue``.
    case sensitiveValueChanged = "sensitive value changed"
    /// Its body could no longer be decoded.
    case unreadable
}

/// A fresher response found by a background revalidation (``CachePolicy/staleWhileRevalidate(ttl:)``),
/// published only when the body changed.
public struct CacheUpdate: Sendable {
    /// The entry's key.
    public var key: CacheKey
    /// The module's name.
    public var module: String
    /// The endpoint's name.
    public var endpoint: String
    /// The call that was answered with the stale entry.
    public var callID: CallID
    /// The fresh response (decoded value in `CourierResponse.value`).
    public var response: CourierResponse
    /// The fresh decoded body.
    public var value: Value? { response.value }
}

/// Answers calls from a ``CacheStore`` according to each endpoint's ``CachePolicy`` (the
/// `InterceptorRole.cache` role: after shaping, so its ``CacheKey`` covers the module's common
/// parameters and the credential whatever scope the cache was registered in; before encoding, so it stores
/// and answers decoded responses).
///
/// It stores successful responses (never a business failure), keyed by ``CacheKey``, with metadata that
/// records creation time, TTL, the endpoint's cache version and the app version — a version change makes an
/// entry unusable. Revalidation sends `If-None-Match`/`If-Modified-Since` from the stored `ETag`/
/// `Last-Modified`; a 304 (or a body whose ``CacheConfiguration/notModifiedField`` says so) renews the TTL and
/// answers the cached body. Answers from the cache carry `ResponseSource.cache` (or
/// `ResponseSource.staleCache`) in `ResponseMetadata.source`.
///
/// ```swift
/// let cache = CacheInterceptor(store: try SQLiteCacheStore(path: path))
/// let client = CourierClient(configuration: .init(interceptors: [cache]))
/// var feed = Endpoint(name: "feed", module: home, path: "/feed")
/// feed.cachePolicy = .staleWhileRevalidate(ttl: .seconds(30))
/// Task { for await update in cache.updates() { render(update.value) } }
/// let first = try await client.send(feed)
/// await cache.invalidate(module: "home")
/// ```
public final class CacheInterceptor: Interceptor {
    /// The store.
    public let store: any CacheStore
    /// The settings.
    public let configuration: CacheConfiguration

    private struct State {
        /// The key of each background refresh running now, with its task's id.
        var revalidating: [CacheKey: Int] = [:]
        var background: [Int: Task<Void, Never>] = [:]
        var nextTask = 0
        var subscribers: [Int: AsyncStream<CacheUpdate>.Continuation] = [:]
        var nextSubscriber = 0
    }

    private let state = Locked(State())

    /// A cache over `store`.
    public init(store: any CacheStore = MemoryCacheStore(), configuration: CacheConfiguration = CacheConfiguration()) {
        self.store = store
        self.configuration = configuration
    }

    /// `cache`.
    public var name: String { "cache" }
    /// `InterceptorRole.cache`.
    public var role: InterceptorRole { .cache }
    /// ``Courier/ChainFeature/cache``: ``Courier/Endpoint/cachePolicy`` takes effect.
    public var provides: Set<ChainFeature> { [.cache] }

    // MARK: - Invalidation

    /// Removes the entry for `key`.
    public func invalidate(_ key: CacheKey) async { await store.remove(key) }

    /// Removes every entry of `endpoint` as `client` would call it now: all its variants (each credential,
    /// common parameter value, query and body).
    public func invalidate(_ endpoint: Endpoint, client: CourierClient) async throws {
        let request = try client.makeRequest(for: endpoint)
        let resource = CacheKey.resource(
            method: request.head.method, scheme: request.head.scheme, authority: request.head.authority,
            path: RequestTarget(request.head.path).path)
        await store.remove(CacheKey(rawValue: resource))
        await store.removeAll(keyPrefix: resource + "?")
        await store.removeAll(keyPrefix: resource + " ")
    }

    /// Removes every entry of the module named `module`.
    public func invalidate(module: String) async { await store.removeAll(module: module) }

    /// Removes every entry.
    public func invalidateAll() async { await store.removeAll() }

    // MARK: - Updates

    /// A stream of fresher responses found by background revalidations. Each call returns a new stream;
    /// it ends when the consumer stops iterating.
    public func updates() -> AsyncStream<CacheUpdate> {
        let (stream, continuation) = AsyncStream.makeStream(of: CacheUpdate.self, bufferingPolicy: .bufferingNewest(64))
        let id = state.withLock { state -> Int in
            state.nextSubscriber += 1
            state.subscribers[state.nextSubscriber] = continuation
            return state.nextSubscriber
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.subscribers.removeValue(forKey: id) }
        }
        return stream
    }

    /// Waits until the background revalidations started so far have ended.
    public func waitForRevalidations() async {
        while true {
            let tasks = state.withLock { Array($0.background.values) }
            if tasks.isEmpty { return }
            for task in tasks { await task.value }
        }
    }

    // MARK: - The stage

    public func intercept(
        _ request: CourierRequest, context: InterceptorContext, next: InterceptorNext
    ) async throws -> CourierResponse {
        let endpoint = context.endpoint
        let policy = endpoint.cachePolicy
        if policy == .ignore { return try await next(request) }
        let key = CacheKey(
            request: request, endpoint: endpoint, keyHeaderFields: configuration.keyHeaderFields,
            credentialHeaderFields: configuration.credentialHeaderFields, excluding: configuration.keyExclusions)
        var entry = await store.entry(for: key)
        var rejected: CacheRejection?
        if let stored = entry, let reason = self.rejection(of: stored, endpoint: endpoint) {
            context.logger.debug("cache entry rejected", metadata: ["endpoint": "\(endpoint.name)", "reason": "\(reason.rawValue)"])
            await store.remove(key)
            entry = nil
            rejected = reason
        }
        let decision = CacheDecision.decide(policy: policy, entry: entry?.metadata, now: configuration.now())
        if case .revalidate = decision { rejected = rejected ?? .expired }
        if policy == .readOnlyRefreshing {
            refreshQuietly(request, key: key, context: context, next: next)
        }
        var response = try await decided(
            decision, request: request, key: key, entry: entry, policy: policy, context: context, next: next)
        if response.cacheRejection == nil { response.cacheRejection = rejected?.rawValue }
        return response
    }

    /// Carries out `decision`.
    private func decided(
        _ decision: CacheDecision, request: CourierRequest, key: CacheKey, entry: CacheEntry?, policy: CachePolicy,
        context: InterceptorContext, next: InterceptorNext
    ) async throws -> CourierResponse {
        let endpoint = context.endpoint
        switch decision {
        case .bypass:
            return try await next(request)
        case .miss:
            throw CourierError(.cacheMiss, detail: "no cached response for \(endpoint.name)",
                               context: context.errorContext)
        case .fetch:
            return try await fetch(request, key: key, entry: nil, policy: policy, context: context, next: next)
        case .revalidate:
            return try await fetch(request, key: key, entry: entry, policy: policy, context: context, next: next)
        case .answer(let source):
            guard let entry, let response = answer(entry, for: request, source: source, context: context) else {
                await store.remove(key)
                if policy == .readOnly || policy == .readOnlyRefreshing {
                    throw CourierError(.cacheMiss, detail: "the cached response for \(endpoint.name) is unreadable",
                                       context: context.errorContext)
                }
                var fetched = try await fetch(request, key: key, entry: nil, policy: policy, context: context, next: next)
                fetched.cacheRejection = CacheRejection.unreadable.rawValue
                return fetched
            }
            return response
        case .answerStaleAndRevalidate:
            guard let entry, let response = answer(entry, for: request, source: .staleCache, context: context) else {
                await store.remove(key)
                return try await fetch(request, key: key, entry: nil, policy: policy, context: context, next: next)
            }
            revalidateInBackground(request, key: key, entry: entry, policy: policy, context: context, next: next)
            return response
        }
    }

    // MARK: - Fetching and storing

    private func fetch(
        _ request: CourierRequest, key: CacheKey, entry: CacheEntry?, policy: CachePolicy,
        context: InterceptorContext, next: InterceptorNext
    ) async throws -> CourierResponse {
        let response = try await next(conditional(request, entry: entry))
        if let entry, isNotModified(response, comparedTo: entry, context: context) {
            let renewed = renew(entry, with: response, policy: policy)
            store.store(renewed)
            if let answer = answer(renewed, for: request, source: .cache, context: context) { return answer }
            return response
        }
        if let stored = makeEntry(key: key, response: response, policy: policy, context: context) {
            store.store(stored)
        }
        return response
    }

    private func revalidateInBackground(
        _ request: CourierRequest, key: CacheKey, entry: CacheEntry, policy: CachePolicy,
        context: InterceptorContext, next: InterceptorNext
    ) {
        let outgoing = conditional(request, entry: entry)
        inBackground(key: key, context: context, failure: "background revalidation failed") { [self] in
            let response = try await next(outgoing)
            if isNotModified(response, comparedTo: entry, context: context) {
                store.store(renew(entry, with: response, policy: policy))
                return
            }
            guard let fresh = makeEntry(key: key, response: response, policy: policy, context: context) else {
                context.logger.debug("background revalidation kept the stale entry",
                                     metadata: ["status": "\(response.head.status.code)"])
                return
            }
            store.store(fresh)
            if fresh.body != entry.body {
                publish(CacheUpdate(key: key, module: context.module.name, endpoint: context.endpoint.name,
                                    callID: context.callID, response: response))
            }
        }
    }

    /// Runs `work` for `key` in the background, once at a time per key, tracked by the client (so
    /// `cancelAll()` / `cancelAll(module:)` stop it) and by ``waitForRevalidations()``.
    private func inBackground(
        key: CacheKey, context: InterceptorContext, failure: String, _ work: @escaping @Sendable () async throws -> Void
    ) {
        let start = state.withLock { state -> Int? in
            guard state.revalidating[key] == nil else { return nil }
            state.nextTask += 1
            state.revalidating[key] = state.nextTask
            return state.nextTask
        }
        guard let id = start else { return }
        let task = context.startBackgroundWork { [self] in
            defer {
                state.withLock { state in
                    if state.revalidating[key] == id { state.revalidating[key] = nil }
                    state.background[id] = nil
                }
            }
            do {
                try await work()
            } catch {
                context.logger.debug("\(failure)", metadata: ["error": "\(error)"])
            }
        }
        state.withLock { state in
            // The task may already have finished and removed nothing; only keep it while it runs.
            // (By id: the task may have ended and another refresh of the key started since; keeping this one
            // then would keep a finished task forever, and `waitForRevalidations()` would wait for it.)
            if state.revalidating[key] == id { state.background[id] = task }
        }
    }

    private func publish(_ update: CacheUpdate) {
        let subscribers = state.withLock { Array($0.subscribers.values) }
        for subscriber in subscribers { subscriber.yield(update) }
    }

    /// `request` with the entry's validators.
    private func conditional(_ request: CourierRequest, entry: CacheEntry?) -> CourierRequest {
        guard let entry else { return request }
        var request = request
        if let eTag = entry.metadata.eTag { request.head.headerFields[.ifNoneMatch] = eTag }
        if let lastModified = entry.metadata.lastModified {
            request.head.headerFields[.ifModifiedSince] = lastModified
        }
        if let header = configuration.versionEchoHeader, let echo = entry.metadata.versionEcho {
            request.head.headerFields[header] = echo
        }
        return request
    }

    private func isNotModified(_ response: CourierResponse, comparedTo entry: CacheEntry, context: InterceptorContext) -> Bool {
        if response.head.status.code == 304 { return true }
        if !configuration.notModifiedCodes.isEmpty, let value = response.value {
            let path = context.endpoint.effectiveBusinessRule?.codePath ?? ["code"]
            if let code = value[path: path]?.int64Value, configuration.notModifiedCodes.contains(Int(code)) {
                return true
            }
        }
        guard response.isSuccessful, let field = configuration.notModifiedField,
            let value = response.value?[path: PathComponent.parse(dotted: field)]
        else { return false }
        if value.boolValue == true { return true }
        guard let echo = entry.metadata.versionEcho else { return false }
        return CacheKey.canonical(value) == echo
    }

    private func renew(_ entry: CacheEntry, with response: CourierResponse, policy: CachePolicy) -> CacheEntry {
        var renewed = entry
        renewed.metadata.refreshedAt = configuration.now()
        if let ttl = ttl(for: policy, response: response.head.status.code == 304 ? nil : response) {
            renewed.metadata.ttl = ttl
        } else if policy == .serverControlled, let ttl = headerTTL(response) {
            renewed.metadata.ttl = ttl
        }
        if let eTag = response.head.headerFields[.eTag] {
            renewed.metadata.eTag = eTag
            renewed.headerFields[.eTag] = eTag
        }
        if let lastModified = response.head.headerFields[.lastModified] {
            renewed.metadata.lastModified = lastModified
            renewed.headerFields[.lastModified] = lastModified
        }
        return renewed
    }

    /// The entry to store for `response`, or nil when it must not be stored.
    private func makeEntry(
        key: CacheKey, response: CourierResponse, policy: CachePolicy, context: InterceptorContext
    ) -> CacheEntry? {
        guard policy != .readOnly, policy != .readOnlyRefreshing, policy != .ignore, response.isSuccessful, response.head.status.code != 206,
            response.body.count <= configuration.maximumEntrySize, response.failure == nil,
            isKeyedOnItsVary(response), let ttl = ttl(for: policy, response: response)
        else { return nil }
        let now = configuration.now()
        var echo: String?
        if let field = configuration.notModifiedField, let value = response.value?[path: PathComponent.parse(dotted: field)] {
            echo = CacheKey.canonical(value)
        }
        let metadata = CacheMetadata(
            createdAt: now, ttl: ttl, cacheVersion: context.endpoint.cacheVersion,
            appVersion: configuration.appVersion, eTag: response.head.headerFields[.eTag],
            lastModified: response.head.headerFields[.lastModified], versionEcho: echo,
            sensitiveValue: context.endpoint.cacheSensitiveValue)
        return CacheEntry(
            key: key, module: context.module.name, status: Int(response.head.status.code),
            headerFields: response.head.headerFields, body: response.body, format: response.format,
            metadata: metadata)
    }

    /// Whether every field the response's `Vary` names is part of the key (else another variant could be
    /// served from its entry, so it is not stored).
    func isKeyedOnItsVary(_ response: CourierResponse) -> Bool {
        let keyed = Set((configuration.keyHeaderFields + configuration.credentialHeaderFields).map(\.canonicalName))
        for value in response.head.headerFields[values: .vary] {
            for name in value.split(separator: ",") {
                let field = name.filter { $0 != " " && $0 != "\t" }.lowercased()
                if field.isEmpty { continue }
                if field == "*" || !keyed.contains(field) { return false }
            }
        }
        return true
    }

    /// The TTL in seconds for a response under `policy`; nil: do not store.
    func ttl(for policy: CachePolicy, response: CourierResponse?) -> Double? {
        switch policy {
        case .ignore, .readOnly, .readOnlyRefreshing: return nil
        case .noRead: return 0
        case .normal(let ttl), .staleWhileRevalidate(let ttl): return Self.seconds(ttl)
        case .serverControlled:
            guard let response else { return nil }
            if let directives = response.head.headerFields[.cacheControl]?.lowercased() {
                if directives.contains("no-store") { return nil }
                if let ttl = headerTTL(response) { return ttl }
            }
            if let field = configuration.serverTTLField, let value = response.value?[path: PathComponent.parse(dotted: field)] {
                if let seconds = value.doubleValue { return max(0, seconds) }
                if let text = value.stringValue, let seconds = Double(text) { return max(0, seconds) }
            }
            return Self.seconds(configuration.defaultServerTTL)
        }
    }

    /// `Cache-Control: max-age=N` (`no-cache` counts as 0).
    private func headerTTL(_ response: CourierResponse) -> Double? {
        guard let header = response.head.headerFields[.cacheControl]?.lowercased() else { return nil }
        for directive in header.split(separator: ",") {
            let part = directive.filter { $0 != " " && $0 != "\t" }
            if part.hasPrefix("max-age="), let seconds = Double(part.dropFirst("max-age=".count)) {
                return max(0, seconds)
            }
            if part == "no-cache" { return 0 }
        }
        return nil
    }

    /// Why `entry` cannot be used for `endpoint` now, regardless of its age (nil: it can).
    private func rejection(of entry: CacheEntry, endpoint: Endpoint) -> CacheRejection? {
        if entry.metadata.cacheVersion != endpoint.cacheVersion { return .cacheVersionChanged }
        if entry.metadata.appVersion != configuration.appVersion { return .appVersionChanged }
        if entry.metadata.sensitiveValue != endpoint.cacheSensitiveValue { return .sensitiveValueChanged }
        return nil
    }

    /// ``CachePolicy/readOnlyRefreshing``: fetches in the background and stores the answer for the next call.
    private func refreshQuietly(_ request: CourierRequest, key: CacheKey, context: InterceptorContext, next: InterceptorNext) {
        inBackground(key: key, context: context, failure: "quiet refresh failed") { [self] in
            let response = try await next(request)
            // Stored as `noRead` would store it: readable by the next read-only call.
            if let fresh = makeEntry(key: key, response: response, policy: .noRead, context: context) {
                store.store(fresh)
            } else {
                context.logger.debug("quiet refresh stored nothing", metadata: ["status": "\(response.head.status.code)"])
            }
        }
    }

    /// The response answering `request` from `entry`, decoded as the codec stage would; nil if unreadable.
    private func answer(
        _ entry: CacheEntry, for request: CourierRequest, source: ResponseSource, context: InterceptorContext
    ) -> CourierResponse? {
        var head = HTTPResponse(status: .init(code: entry.status))
        head.headerFields = entry.headerFields
        var response = CourierResponse(head: head, body: entry.body, format: entry.format, source: source)
        guard !entry.body.isEmpty else { return response }
        if let format = request.responseFormat ?? entry.format {
            guard let value = try? context.codecs.decode(entry.body, format: format, hints: request.responseHints)
            else { return nil }
            response.value = value
            response.format = format
        } else if entry.headerFields[.contentType]?.lowercased().hasPrefix("text/") == true {
            response.value = .string(String(decoding: entry.body, as: UTF8.self))
        } else {
            response.value = .bytes(Array(entry.body))
        }
        return response
    }

    static func seconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
#endif
