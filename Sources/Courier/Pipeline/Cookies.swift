public import Foundation
import HTTPTypes

/// A cookie as a ``CookieStore`` keeps it (RFC 6265).
public struct Cookie: Hashable, Sendable, Codable, CustomStringConvertible {
    /// The name.
    public var name: String
    /// The value, as the server sent it.
    public var value: String
    /// The host (host-only cookies) or domain it is sent to, lowercased, without a leading dot.
    public var domain: String
    /// Whether it goes to exactly ``domain`` only (no `Domain` attribute) rather than its subdomains too.
    public var isHostOnly: Bool
    /// The path it is sent under.
    public var path: String
    /// When it expires; nil: a session cookie, kept in memory only.
    public var expires: Date?
    /// Sent over https only.
    public var isSecure: Bool
    /// `HttpOnly` (kept; a client has no scripts to hide it from).
    public var isHTTPOnly: Bool
    /// `SameSite` as sent (kept, not applied: a client makes no cross-site requests).
    public var sameSite: String?
    /// When it was first stored.
    public var created: Date

    /// `name=value (domain path)`.
    public var description: String { "\(name)=\(value) (\(isHostOnly ? "" : ".")\(domain)\(path))" }
}

/// Opt-in cookie storage for a ``CookieJar`` interceptor, in memory or persisted to a file. Bounded like a
/// browser's: a cookie whose name and value pass 4096 bytes is dropped, each domain keeps at most 50 cookies
/// and the store 3000 (the oldest go first). Thread-safe; share one store between modules only when they
/// should share cookies.
///
/// Expiry (`Expires`, `Max-Age`) is judged by the store's `now` function, the wall clock unless a test
/// injects its own.
///
/// ```swift
/// let store = CookieStore()                                    // in memory
/// let persisted = try CookieStore(file: URL(fileURLWithPath: "/var/lib/app/cookies.json"))
/// print(store.cookies.map(\.name))
/// ```
public final class CookieStore: Sendable {
    /// The store's bounds.
    public struct Limits: Hashable, Sendable {
        /// The largest name plus value, in bytes (browsers: 4096).
        public var maximumCookieSize: Int
        /// The most cookies per domain (browsers: 50 or more).
        public var maximumCookiesPerDomain: Int
        /// The most cookies in the store (browsers: 3000).
        public var maximumCookies: Int

        /// Limits (defaults: 4096 bytes, 50 per domain, 3000 in all).
        public init(maximumCookieSize: Int = 4096, maximumCookiesPerDomain: Int = 50, maximumCookies: Int = 3000) {
            self.maximumCookieSize = maximumCookieSize
            self.maximumCookiesPerDomain = maximumCookiesPerDomain
            self.maximumCookies = maximumCookies
        }
    }

    /// The bounds.
    public let limits: Limits
    /// The file the persistent cookies are written to (nil: memory only).
    public let file: URL?
    private let now: @Sendable () -> Date
    private let state = Locked<[Cookie]>([])

    /// The largest cookie file read (a larger one is ignored).
    static let maximumFileSize = 16 << 20

    /// A store in memory.
    ///
    /// - Parameters:
    ///   - limits: The bounds.
    ///   - now: The current time, for expiry (default: the wall clock).
    public init(limits: Limits = Limits(), now: @escaping @Sendable () -> Date = { Date() }) {
        self.limits = limits
        self.file = nil
        self.now = now
    }

    /// A store persisted to `file`: the cookies with an expiry date already there (unexpired, within the
    /// limits) are loaded, and every change is written back atomically (a temporary file renamed over it).
    /// Session cookies stay in memory. A file that is missing, unreadable, larger than 16 MiB or not a
    /// cookie file starts an empty store, which the next change overwrites.
    ///
    /// - Throws: ``CourierError/Code/invalidConfiguration`` when the file's folder does not exist.
    public init(file: URL, limits: Limits = Limits(), now: @escaping @Sendable () -> Date = { Date() }) throws {
        let folder = file.deletingLastPathComponent().path
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: folder, isDirectory: &isFolder), isFolder.boolValue else {
            throw CourierError(.invalidConfiguration, detail: "the cookie file's folder \(folder) does not exist")
        }
        self.limits = limits
        self.file = file
        self.now = now
        let attributes = try? FileManager.default.attributesOfItem(atPath: file.path)
        let size = (attributes?[.size] as? NSNumber)?.intValue ?? 0
        guard size <= Self.maximumFileSize, let data = FileManager.default.contents(atPath: file.path),
            let loaded = try? JSONDecoder().decode([Cookie].self, from: data)
        else { return }
        let time = now()
        state.withLock { cookies in
            for cookie in loaded where cookie.expires.map({ $0 > time }) == true && self.isValid(cookie) {
                Self.insert(cookie, into: &cookies, limits: limits)
            }
        }
    }

    /// The cookies stored now (expired ones left out).
    public var cookies: [Cookie] {
        let time = now()
        return state.withLock { $0.filter { $0.expires.map { $0 > time } ?? true } }
    }

    /// Forgets every cookie (and empties the file).
    public func removeAll() {
        state.withLock { $0.removeAll() }
        persist()
    }

    // MARK: - Receiving

    /// Stores the cookies of `setCookie` lines received from `url`; malformed, oversized or foreign-domain
    /// lines are ignored.
    public func receive(setCookie lines: [String], from url: URL) {
        guard let host = url.host?.lowercased(), !host.isEmpty else { return }
        let secureOrigin = url.scheme?.lowercased() == "https"
        let time = now()
        var changed = false
        state.withLock { cookies in
            for line in lines {
                guard let cookie = parse(line, host: host, path: url.path, secureOrigin: secureOrigin, now: time)
                else { continue }
                let same = { (other: Cookie) in
                    other.name == cookie.name && other.domain == cookie.domain && other.path == cookie.path
                }
                var stored = cookie
                if let old = cookies.first(where: same) { stored.created = old.created }   // RFC 6265 §5.3 11.3
                cookies.removeAll(where: same)
                changed = true
                guard cookie.expires.map({ $0 > time }) ?? true else { continue }   // an expiry deletes
                Self.insert(stored, into: &cookies, limits: limits)
            }
            cookies.removeAll { $0.expires.map { $0 <= time } ?? false }
        }
        if changed { persist() }
    }

    /// One `Set-Cookie` line as a cookie from `host`, or nil when it must be ignored (RFC 6265 §5.2, §5.3).
    func parse(_ line: String, host: String, path requestPath: String, secureOrigin: Bool, now: Date) -> Cookie? {
        // A line far beyond any acceptable cookie is not read at all.
        guard line.utf8.count <= limits.maximumCookieSize + 4096 else { return nil }
        var parts = line.split(separator: ";", omittingEmptySubsequences: false)[...]
        guard let pair = parts.popFirst(), let equals = pair.firstIndex(of: "=") else { return nil }
        let name = pair[..<equals].trimmingCharacters(in: .whitespaces)
        let value = pair[pair.index(after: equals)...].trimmingCharacters(in: .whitespaces)
        guard !name.isEmpty, name.utf8.count + value.utf8.count <= limits.maximumCookieSize,
            !Self.hasControlCharacters(name), !Self.hasControlCharacters(value)
        else { return nil }
        var expires: Date?
        var maxAge: Date?
        var domainAttribute: String?
        var path: String?
        var secure = false
        var httpOnly = false
        var sameSite: String?
        for attribute in parts {
            let (key, rawValue): (Substring, Substring) = {
                guard let equals = attribute.firstIndex(of: "=") else { return (attribute, "") }
                return (attribute[..<equals], attribute[attribute.index(after: equals)...])
            }()
            let attributeValue = rawValue.trimmingCharacters(in: .whitespaces)
            switch key.trimmingCharacters(in: .whitespaces).lowercased() {
            case "expires":
                if let date = Self.parseDate(attributeValue) { expires = date }
            case "max-age":
                guard let first = attributeValue.first, first == "-" || first.isASCII && first.isNumber,
                    attributeValue.dropFirst().allSatisfy({ $0.isASCII && $0.isNumber })
                else { continue }
                let seconds = Int(attributeValue) ?? (first == "-" ? Int.min : Int.max)
                maxAge = seconds <= 0 ? .distantPast : now.addingTimeInterval(Double(min(seconds, 400 * 86_400)))
            case "domain":
                var domain = attributeValue.lowercased()
                if domain.hasPrefix(".") { domain.removeFirst() }
                if !domain.isEmpty { domainAttribute = domain }
            case "path":
                path = attributeValue.hasPrefix("/") ? attributeValue : nil
            case "secure": secure = true
            case "httponly": httpOnly = true
            case "samesite": sameSite = attributeValue
            default: continue
            }
        }
        // RFC 6265bis: an http origin may not set (or overwrite) a Secure cookie.
        if secure && !secureOrigin { return nil }
        let domain: String
        let hostOnly: Bool
        if let attribute = domainAttribute {
            if attribute == host {
                domain = host
                hostOnly = !attribute.contains(".")   // a single label (localhost) is a host-only cookie
            } else {
                // Domain must domain-match the host, the host must be a name (not an address), and a single
                // label (`com`) is refused as a public suffix.
                guard attribute.contains("."), host.hasSuffix("." + attribute), !Self.isIPAddress(host) else {
                    return nil
                }
                domain = attribute
                hostOnly = false
            }
        } else {
            domain = host
            hostOnly = true
        }
        return Cookie(
            name: name, value: value, domain: domain, isHostOnly: hostOnly,
            path: path ?? Self.defaultPath(requestPath), expires: maxAge ?? expires, isSecure: secure,
            isHTTPOnly: httpOnly, sameSite: sameSite, created: now)
    }

    // MARK: - Sending

    /// The `Cookie` header value for a request to `url` (nil: no cookie applies): longer paths first, then
    /// older cookies (RFC 6265 §5.4).
    public func cookieHeader(for url: URL) -> String? {
        guard let host = url.host?.lowercased(), !host.isEmpty else { return nil }
        let secure = url.scheme?.lowercased() == "https"
        var requestPath = url.path
        if requestPath.isEmpty { requestPath = "/" }
        let time = now()
        let matching = state.withLock { cookies in
            cookies.filter { cookie in
                (cookie.expires.map { $0 > time } ?? true)
                    && (cookie.isHostOnly ? host == cookie.domain
                        : host == cookie.domain || (host.hasSuffix("." + cookie.domain) && !Self.isIPAddress(host)))
                    && Self.pathMatches(requestPath, cookie.path)
                    && (!cookie.isSecure || secure)
            }
        }
        guard !matching.isEmpty else { return nil }
        // Ties keep the order of storage (the order the cookies were received in).
        return matching.enumerated()
            .sorted { a, b in
                if a.element.path.count != b.element.path.count { return a.element.path.count > b.element.path.count }
                if a.element.created != b.element.created { return a.element.created < b.element.created }
                return a.offset < b.offset
            }
            .map { "\($0.element.name)=\($0.element.value)" }
            .joined(separator: "; ")
    }

    // MARK: - Rules

    /// Adds `cookie`, evicting the oldest of its domain past the per-domain limit and the oldest overall past
    /// the total.
    private static func insert(_ cookie: Cookie, into cookies: inout [Cookie], limits: Limits) {
        cookies.append(cookie)
        let sameDomain = cookies.indices.filter { cookies[$0].domain == cookie.domain }
        if sameDomain.count > limits.maximumCookiesPerDomain {
            let oldest = sameDomain.min { cookies[$0].created < cookies[$1].created }!
            cookies.remove(at: oldest)
        }
        if cookies.count > limits.maximumCookies {
            let oldest = cookies.indices.min { cookies[$0].created < cookies[$1].created }!
            cookies.remove(at: oldest)
        }
    }

    private func isValid(_ cookie: Cookie) -> Bool {
        !cookie.name.isEmpty && cookie.name.utf8.count + cookie.value.utf8.count <= limits.maximumCookieSize
            && !Self.hasControlCharacters(cookie.name) && !Self.hasControlCharacters(cookie.value)
            && !cookie.name.contains("=") && !cookie.name.contains(";") && !cookie.value.contains(";")
            && !cookie.domain.isEmpty && cookie.path.hasPrefix("/")
    }

    /// Writes the persistent cookies to the file, atomically.
    private func persist() {
        guard let file else { return }
        let time = now()
        let persistent = state.withLock { $0.filter { $0.expires.map { $0 > time } ?? false } }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        guard let data = try? encoder.encode(persistent) else { return }
        try? data.write(to: file, options: .atomic)
    }

    /// RFC 6265 §5.1.4's default path: the request path up to its last `/` (`/` when there is none).
    static func defaultPath(_ path: String) -> String {
        guard path.hasPrefix("/"), let slash = path.lastIndex(of: "/"), slash != path.startIndex else { return "/" }
        return String(path[..<slash])
    }

    /// RFC 6265 §5.1.4 path-match.
    static func pathMatches(_ requestPath: String, _ cookiePath: String) -> Bool {
        guard requestPath.hasPrefix(cookiePath) else { return false }
        return requestPath.count == cookiePath.count || cookiePath.hasSuffix("/")
            || requestPath.dropFirst(cookiePath.count).hasPrefix("/")
    }

    static func hasControlCharacters(_ text: String) -> Bool {
        text.unicodeScalars.contains { $0.value < 0x20 && $0 != "\t" || $0.value == 0x7F }
    }

    static func isIPAddress(_ host: String) -> Bool {
        host.contains(":") || host.split(separator: ".").count == 4 && host.allSatisfy { $0 == "." || $0.isASCII && $0.isNumber }
    }

    /// An RFC 6265 §5.1.1 cookie date (`Wed, 21 Oct 2015 07:28:00 GMT`, and the older forms it accepts).
    static func parseDate(_ text: String) -> Date? {
        guard text.utf8.count <= 256 else { return nil }
        let delimiters: Set<Character> = ["\t", " ", "!", "\"", "#", "$", "%", "&", "'", "(", ")", "*", "+", ",",
                                          "-", ".", "/", ";", "<", "=", ">", "?", "@", "[", "\\", "]", "^", "_",
                                          "`", "{", "|", "}", "~"]
        let tokens = text.split { delimiters.contains($0) }
        var time: (Int, Int, Int)?
        var day: Int?
        var month: Int?
        var year: Int?
        let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
        func digits(_ token: Substring, _ range: ClosedRange<Int>) -> Int? {
            let leading = token.prefix { $0.isASCII && $0.isNumber }
            guard range.contains(leading.count) else { return nil }
            return Int(leading)
        }
        for token in tokens {
            if time == nil {
                let fields = token.split(separator: ":", omittingEmptySubsequences: false)
                if fields.count == 3, let h = digits(fields[0], 1...2), let m = digits(fields[1], 1...2),
                    let s = digits(fields[2], 1...2), fields[0].allSatisfy(\.isNumber), fields[1].allSatisfy(\.isNumber)
                {
                    time = (h, m, s)
                    continue
                }
            }
            if day == nil, let value = digits(token, 1...2), token.count <= 2 || !token.dropFirst(2).first!.isNumber {
                day = value
                continue
            }
            if month == nil, token.count >= 3, let index = months.firstIndex(of: token.prefix(3).lowercased()) {
                month = index + 1
                continue
            }
            if year == nil, let value = digits(token, 2...4) {
                year = value
                continue
            }
        }
        guard var year, let day, let month, let (hour, minute, second) = time else { return nil }
        if (70...99).contains(year) { year += 1900 } else if (0...69).contains(year) { year += 2000 }
        guard (1...31).contains(day), year >= 1601, hour <= 23, minute <= 59, second <= 59 else { return nil }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let components = DateComponents(year: year, month: month, day: day, hour: hour, minute: minute, second: second)
        guard let date = calendar.date(from: components),
            calendar.component(.day, from: date) == day   // 31 Feb does not roll over into March
        else { return nil }
        return date
    }

    /// The cookie lines of one `Set-Cookie` field value. FoundationNetworking joins repeated `Set-Cookie`
    /// fields with `, `, so a comma starts a new cookie when `name=` follows it before the next `;` (an
    /// `Expires` date's comma does not).
    package static func splitLines(_ value: String) -> [String] {
        var lines: [String] = []
        var current = ""
        var rest = Substring(value)
        while let comma = rest.firstIndex(of: ",") {
            let after = rest[rest.index(after: comma)...]
            let segment = after.prefix { $0 != ";" && $0 != "," }
            if let equals = segment.firstIndex(of: "="),
                !segment[..<equals].trimmingCharacters(in: .whitespaces).isEmpty,
                !segment[..<equals].trimmingCharacters(in: .whitespaces).contains(" ")
            {
                current += rest[..<comma]
                lines.append(current)
                current = ""
            } else {
                current += rest[...comma]
            }
            rest = after
        }
        current += rest
        lines.append(current)
        return lines.map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }
}

/// The cookie interceptor: sends a ``CookieStore``'s matching cookies in a `Cookie` header and stores
/// every `Set-Cookie` that comes back. Opt-in, and scoped by where you register it: on one module's
/// interceptors, only that module's calls use its store, so modules never share cookies unless they share a
/// store (register it on the client for one jar for all).
///
/// A network-role stage below the `redirects` stage: each redirect hop gets the cookies for its own URL,
/// and the `Set-Cookie` of a `302` is kept. Register it before a signing stage if the signature should cover
/// the `Cookie` header. A `Cookie` header the request already carries is kept, the store's cookies after it.
/// The transports keep no cookies of their own.
///
/// ```swift
/// let jar = CookieJar(store: try CookieStore(file: cookiesFile))
/// let shop = APIModule(name: "shop", service: service, interceptors: [jar])
/// ```
public struct CookieJar: Interceptor {
    /// The store the jar reads and fills.
    public let store: CookieStore

    /// A jar over `store` (default: a new store in memory).
    public init(store: CookieStore = CookieStore()) {
        self.store = store
    }

    public var name: String { "CookieJar" }
    public var role: InterceptorRole { .network }

    public func intercept(
        _ request: CourierRequest, context: InterceptorContext, next: InterceptorNext
    ) async throws -> CourierResponse {
        guard let url = RedirectInterceptor.url(of: request) else { return try await next(request) }
        var request = request
        if let cookies = store.cookieHeader(for: url) {
            let existing = request.head.headerFields[.cookie]
            request.head.headerFields[.cookie] = existing.map { $0 + "; " + cookies } ?? cookies
        }
        let response = try await next(request)
        let lines = response.head.headerFields[values: .setCookie].flatMap(CookieStore.splitLines)
        if !lines.isEmpty { store.receive(setCookie: lines, from: url) }
        return response
    }
}
