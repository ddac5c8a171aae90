#if Cache
#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
public import HTTPTypes

/// The key of one cache entry: everything that shapes the request as it is sent — method, URL, the sorted
/// query and body parameters (as `ParameterEncoding` renders them), the body, the values of the
/// header fields responses vary on (``CacheConfiguration/keyHeaderFields``), the identity of the credential
/// (a SHA-256 digest of ``CacheConfiguration/credentialHeaderFields`` — never the credential itself) — and
/// the module's ``CacheScope`` value as an explicit extra.
///
/// The cache stage sits after the shaping role (see `Interceptor`), so a module's common
/// parameters and auth are in the key even when the cache is registered globally: a response stored for
/// one credential is never served to a request with another (RFC 9111 §3.5).
///
/// ```swift
/// let key = CacheKey(request: request, endpoint: endpoint)
/// await cache.invalidate(key)
/// ```
public struct CacheKey: Hashable, Sendable, CustomStringConvertible {
    /// The key's text.
    public var rawValue: String

    /// A key with a given text.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// The key of `request` (as the cache stage sees it, after shaping) for `endpoint`.
    public init(
        request: CourierRequest, endpoint: Endpoint,
        keyHeaderFields: [HTTPField.Name] = CacheConfiguration.defaultKeyHeaderFields,
        credentialHeaderFields: [HTTPField.Name] = CacheConfiguration.defaultCredentialHeaderFields,
        excluding exclusions: Set<String> = []
    ) {
        let exclusions = exclusions.union(endpoint.cacheKeyExclusions)
        let target = RequestTarget(request.head.path)
        var parameters = target.queryItems.map { ($0.name, $0.value ?? "") }
        var extra = ""
        if let payload = request.payload {
            // The pairs the codec stage will send (ParameterEncoding, the one renderer of parameters).
            let encoding = endpoint.parameterEncoding ?? endpoint.module.parameterEncoding ?? .standard
            if case .object(let object) = payload, let pairs = try? encoding.pairs(object) {
                parameters += pairs.map { ($0.name, $0.value ?? "") }
            } else {
                extra = " body=" + Self.canonical(payload)
            }
        } else if let body = request.body {
            extra = " body#" + String(Self.fnv1a(body), radix: 16)
        }
        if !exclusions.isEmpty { parameters.removeAll { exclusions.contains($0.0) } }
        parameters.sort { $0.0 != $1.0 ? $0.0 < $1.0 : $0.1 < $1.1 }
        var text = Self.resource(method: request.head.method, scheme: request.head.scheme,
                                 authority: request.head.authority, path: target.path)
        if !parameters.isEmpty { text += "?" + QueryItem.encode(parameters.map { QueryItem($0.0, $0.1) }) }
        text += extra
        let fields = request.head.headerFields
        let varied = keyHeaderFields.compactMap { name -> String? in
            let values = fields[values: name]
            return values.isEmpty ? nil : name.canonicalName + "=" + QueryItem.percentEncode(values.joined(separator: ","))
        }
        if !varied.isEmpty { text += " vary{" + varied.joined(separator: "&") + "}" }
        var credential: [UInt8] = []
        for name in credentialHeaderFields {
            for value in fields[values: name] {
                credential += Array(name.canonicalName.utf8) + [0] + Array(value.utf8) + [0]
            }
        }
        if !credential.isEmpty { text += " credential=" + SHA256Digest.hex(credential) }
        if let scope = endpoint.module.cacheScope.value() { text += " scope=" + QueryItem.percentEncode(scope) }
        self.rawValue = text
    }

    /// `METHOD scheme://authority/path`: the start of every key of one resource.
    static func resource(method: HTTPRequest.Method, scheme: String?, authority: String?, path: String) -> String {
        "\(method.rawValue) \(scheme ?? "http")://\(authority ?? "")" + path
    }

    /// The key `client` would use for `endpoint` before any interceptor shapes the request (common
    /// parameters, credentials): for endpoints that no stage reshapes. ``CacheInterceptor/invalidate(_:client:)``
    /// removes every variant of an endpoint instead.
    public init(for endpoint: Endpoint, client: CourierClient) throws {
        self.init(request: try client.makeRequest(for: endpoint), endpoint: endpoint)
    }

    public var description: String { rawValue }

    /// A stable text for a value, object members sorted by key. Scalars read as
    /// ``Courier/ParameterEncoding/scalarText(_:)`` writes them into a query (`2.0` is `2`, as it is sent),
    /// so a body and a query holding the same number share one text.
    static func canonical(_ value: Value) -> String {
        switch value {
        case .null: return "null"
        case .double(let d) where !d.isFinite: return "\(d)"
        case .bool, .int, .uint, .double, .number, .string, .bytes: return ParameterEncoding.scalarText(value) ?? ""
        case .array(let a): return "[" + a.map(canonical).joined(separator: ",") + "]"
        case .object(let o):
            return "{" + o.sortedByKey().map { "\($0.key):\(canonical($0.value))" }.joined(separator: ",") + "}"
        }
    }

    static func fnv1a(_ data: Data) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in data {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01b3
        }
        return hash
    }
}

/// What a cache records beside a response: when it was stored, how long it stays fresh, the versions it
/// was stored under, and its validators.
public struct CacheMetadata: Sendable, Hashable, Codable {
    /// When the entry was first stored.
    public var createdAt: Date
    /// When it was last stored or revalidated.
    public var refreshedAt: Date
    /// How long after ``refreshedAt`` it stays fresh, in seconds.
    public var ttl: Double
    /// The endpoint's ``Courier/Endpoint/cacheVersion`` when stored.
    public var cacheVersion: Int
    /// The app version when stored.
    public var appVersion: String
    /// The response's `ETag`.
    public var eTag: String?
    /// The response's `Last-Modified`.
    public var lastModified: String?
    /// The cached body's "not modified" field (``CacheConfiguration/notModifiedField``), as text.
    public var versionEcho: String?
    /// The endpoint's ``Courier/Endpoint/cacheSensitiveValue`` when stored.
    public var sensitiveValue: String?

    /// Metadata.
    public init(
        createdAt: Date, refreshedAt: Date? = nil, ttl: Double, cacheVersion: Int = 0, appVersion: String = "",
        eTag: String? = nil, lastModified: String? = nil, versionEcho: String? = nil, sensitiveValue: String? = nil
    ) {
        self.sensitiveValue = sensitiveValue
        self.createdAt = createdAt
        self.refreshedAt = refreshedAt ?? createdAt
        self.ttl = ttl
        self.cacheVersion = cacheVersion
        self.appVersion = appVersion
        self.eTag = eTag
        self.lastModified = lastModified
        self.versionEcho = versionEcho
    }

    /// When the entry stops being fresh.
    public var expiresAt: Date { refreshedAt.addingTimeInterval(ttl) }

    /// Whether the entry is fresh at `now`.
    public func isFresh(at now: Date) -> Bool { now < expiresAt }

    /// Whether the entry has something to revalidate with.
    public var hasValidators: Bool { eTag != nil || lastModified != nil || versionEcho != nil }
}

/// One cached response: status, header fields, body bytes and format, with its ``CacheMetadata``.
///
/// ```swift
/// let entry = CacheEntry(key: key, module: "user", status: 200, headerFields: [:], body: data,
///                        format: .json, metadata: CacheMetadata(createdAt: .now, ttl: 60))
/// store.store(entry)
/// ```
public struct CacheEntry: Sendable, Hashable {
    /// The entry's key.
    public var key: CacheKey
    /// The module that stored it (invalidation by module).
    public var module: String
    /// The HTTP status.
    public var status: Int
    /// The response header fields.
    public var headerFields: HTTPFields
    /// The body bytes.
    public var body: Data
    /// The body's format, when known.
    public var format: ContentFormat?
    /// Times, TTL, versions and validators.
    public var metadata: CacheMetadata

    /// An entry.
    public init(
        key: CacheKey, module: String, status: Int, headerFields: HTTPFields, body: Data, format: ContentFormat?,
        metadata: CacheMetadata
    ) {
        self.key = key
        self.module = module
        self.status = status
        self.headerFields = headerFields
        self.body = body
        self.format = format
        self.metadata = metadata
    }

    /// The approximate memory the entry takes, in bytes.
    public var cost: Int {
        body.count + key.rawValue.utf8.count + headerFields.reduce(0) { $0 + $1.name.rawName.utf8.count + $1.value.utf8.count }
            + 256
    }
}

/// The persisted form of an entry's non-body parts.
struct StoredHead: Codable {
    var status: Int
    var headerFields: HTTPFields
    var formatName: String?
    var formatMediaType: String?
    var metadata: CacheMetadata

    init(_ entry: CacheEntry) {
        status = entry.status
        headerFields = entry.headerFields
        formatName = entry.format?.name
        formatMediaType = entry.format?.mediaType
        metadata = entry.metadata
    }

    func entry(key: CacheKey, module: String, body: Data) -> CacheEntry {
        let format = formatName.map { name in ContentFormat(name: name) ?? ContentFormat(name, mediaType: formatMediaType ?? "") }
        return CacheEntry(
            key: key, module: module, status: status, headerFields: headerFields, body: body, format: format,
            metadata: metadata)
    }
}
#endif
