/// A request target as it is sent (`/users/7?page=2&q=a%20b`), or a URL's text, split once into its bare
/// path, its raw query and its fragment. Nothing is decoded: the query keeps the exact bytes it had, so a
/// stage that rewrites one parameter (signing, redaction) leaves every other byte as it was.
///
/// The split is by the first `?` and the first `#` (RFC 3986 §3): a `#` before any `?` starts the fragment,
/// so `/a#b?c` has no query. Every Courier module splits paths with this type, and nothing else.
///
/// ```swift
/// let target = RequestTarget("/search?q=a%20b&page=2#top")
/// target.path            // "/search"
/// target.query           // "q=a%20b&page=2"
/// target.querySegments   // ["q=a%20b", "page=2"]
/// target.queryItems      // [QueryItem("q", "a b"), QueryItem("page", "2")]
/// target.fragment        // "top"
/// ```
public struct RequestTarget: Hashable, Sendable, CustomStringConvertible {
    /// The part before the first `?` or `#`, as given (`/` when it is empty).
    public var path: String
    /// The raw query between the first `?` and the following `#`; nil without a `?`, empty for `/x?`.
    public var query: String?
    /// The raw fragment after the first `#`; nil without one. Requests never carry one on the wire.
    public var fragment: String?

    /// Splits `target` (nil: `/`).
    public init(_ target: String?) {
        guard let target else {
            self.init(path: "/", query: nil)
            return
        }
        let utf8 = target.utf8
        var mark = utf8.startIndex
        while mark != utf8.endIndex, utf8[mark] != UInt8(ascii: "?"), utf8[mark] != UInt8(ascii: "#") {
            mark = utf8.index(after: mark)
        }
        let path = String(target[..<mark])
        guard mark != utf8.endIndex else {
            self.init(path: path, query: nil)
            return
        }
        let rest = target[target.index(after: mark)...]
        if utf8[mark] == UInt8(ascii: "#") {
            self.init(path: path, query: nil, fragment: String(rest))
            return
        }
        if let hash = rest.utf8.firstIndex(of: UInt8(ascii: "#")) {
            self.init(path: path, query: String(rest[..<hash]), fragment: String(rest[rest.index(after: hash)...]))
        } else {
            self.init(path: path, query: String(rest))
        }
    }

    /// A target from its parts (an empty `path` is `/`).
    public init(path: String, query: String?, fragment: String? = nil) {
        self.path = path.isEmpty ? "/" : path
        self.query = query
        self.fragment = fragment
    }

    /// The raw `&`-separated segments of the query, each still percent-encoded (empty segments dropped).
    public var querySegments: [Substring] {
        guard let query else { return [] }
        return query.split(separator: "&", omittingEmptySubsequences: true)
    }

    /// The query's items, percent-decoded (`+` stays a plus; see ``ParameterEncoding/parse(_:plusAsSpace:)``).
    public var queryItems: [QueryItem] {
        guard let query else { return [] }
        return ParameterEncoding.parse(query)
    }

    /// The target with `text` (already percent-encoded `name=value&…`) appended to its query with one `&`
    /// (none after a query that ends in `&` or is empty); unchanged when `text` is empty.
    public func appendingQuery(_ text: String) -> RequestTarget {
        guard !text.isEmpty else { return self }
        var copy = self
        if let query, !query.isEmpty {
            copy.query = query + (query.hasSuffix("&") ? "" : "&") + text
        } else {
            copy.query = text
        }
        return copy
    }

    /// The target as text again: `path?query#fragment`.
    public var text: String {
        var out = path
        if let query { out += "?" + query }
        if let fragment { out += "#" + fragment }
        return out
    }

    /// ``text``.
    public var description: String { text }
}
