public import HTTPTypes

/// Which header fields and query parameters hold secrets, so that no log, trace, cassette or command-line
/// output shows their values. Every Courier module that prints or saves a request asks one policy: the
/// client's (``CourierClient/Configuration/redaction``) for traces, `LoggingInterceptor`'s for logs,
/// `ReplayTransport.Options`'s for cassettes, and the `courier` tool's for its output.
///
/// A name is secret when, compared case-insensitively, it contains one of ``patterns`` (`token`, `secret`,
/// `password`, `passwd`, `session`, `auth`, `key`, `signature`, `cookie`, `credential` by default — so
/// `Authorization`, `X-Session-Token`, `auth_token`, `X-Api-Key` and `Set-Cookie` all are), or equals one of
/// ``names``, and it is not one of ``exemptions``. A secret value is replaced by ``placeholder`` and
/// nothing else: its length is not shown either. Patterns match by substring on purpose: a missed secret
/// costs more than a hidden harmless value (`keyword`, `author`); exempt those by name.
///
/// ```swift
/// var redaction = RedactionPolicy()
/// redaction.names.insert("sid")               // also hide `?sid=…`
/// redaction.exemptions.insert("keyword")      // show `?keyword=…`
/// let client = CourierClient(configuration: .init(redaction: redaction))
/// redaction.isSecret("X-Session-Token")       // true
/// redaction.redacting(target: "/x?auth_token=abc&page=2")   // "/x?auth_token=REDACTED&page=2"
/// ```
public struct RedactionPolicy: Hashable, Sendable {
    /// The text that stands for a hidden value everywhere (logs, traces, cassettes, CLI output): `REDACTED`.
    /// Plain ASCII letters, so it reads the same in a header field, a query, JSON and a terminal. In a
    /// cassette, a recorded value equal to it matches any live value.
    public static let placeholder = "REDACTED"

    /// The patterns used by ``init()``.
    public static let defaultPatterns = [
        "token", "secret", "password", "passwd", "session", "auth", "key", "signature", "cookie", "credential",
    ]

    /// The names used by ``init()``: short secret names that no pattern catches (`sig`, `sign`, `pwd`).
    public static let defaultNames: Set<String> = ["sig", "sign", "pwd", "pin", "otp", "sid"]

    /// Fragments (lower-case) that make any name containing them secret.
    public var patterns: [String] {
        didSet { patterns = patterns.map { $0.lowercased() }.filter { !$0.isEmpty } }
    }
    /// Exact names (compared case-insensitively) that are secret whatever ``patterns`` say.
    public var names: Set<String>
    /// Exact names (compared case-insensitively) that are never secret, even when a pattern matches.
    public var exemptions: Set<String>

    /// The default policy: ``defaultPatterns``, ``defaultNames``, no exemptions.
    public init() {
        self.patterns = Self.defaultPatterns
        self.names = Self.defaultNames
        self.exemptions = []
    }

    /// A policy with the given patterns, names and exemptions.
    public init(patterns: [String], names: Set<String> = [], exemptions: Set<String> = []) {
        self.patterns = patterns.map { $0.lowercased() }.filter { !$0.isEmpty }
        self.names = names
        self.exemptions = exemptions
    }

    /// A policy that hides nothing: for debugging against a local server only.
    public static var disabled: RedactionPolicy { RedactionPolicy(patterns: []) }

    // MARK: Deciding

    /// Whether a header field or query parameter called `name` holds a secret.
    public func isSecret(_ name: some StringProtocol) -> Bool {
        let lower = name.lowercased()
        if !exemptions.isEmpty, exemptions.contains(where: { $0.lowercased() == lower }) { return false }
        if names.contains(where: { $0.lowercased() == lower }) { return true }
        return patterns.contains { lower.contains($0) }
    }

    /// Whether the header field `name` holds a secret.
    public func isSecret(_ name: HTTPField.Name) -> Bool { isSecret(name.canonicalName) }

    // MARK: Redacting

    /// `field`'s value, or ``placeholder`` when its name is secret.
    public func value(of field: HTTPField) -> String {
        isSecret(field.name) ? Self.placeholder : field.value
    }

    /// `fields` in order, each secret value replaced by ``placeholder``.
    public func redacting(_ fields: HTTPFields) -> HTTPFields {
        guard fields.contains(where: { isSecret($0.name) }) else { return fields }
        return HTTPFields(fields.map { field in
            isSecret(field.name) ? HTTPField(name: field.name, value: Self.placeholder) : field
        })
    }

    /// A request target (`/path?query`) or URL text with the value of every secret query parameter replaced
    /// by ``placeholder``. Names are compared percent-decoded (`auth%5Ftoken` is `auth_token`); every other
    /// byte is kept as it was, so the result still reads as the request that was sent. A secret name without
    /// a value (`?token`) has nothing to hide and stays.
    public func redacting(target: String) -> String {
        var split = RequestTarget(target)
        guard let query = split.query, !query.isEmpty else { return target }
        var changed = false
        let segments = query.split(separator: "&", omittingEmptySubsequences: false).map { segment -> Substring in
            guard let equals = segment.firstIndex(of: "=") else { return segment }
            let name = segment[..<equals]
            guard isSecret(QueryItem.percentDecode(name)) else { return segment }
            changed = true
            return name + "=" + Self.placeholder
        }
        guard changed else { return target }
        split.query = segments.joined(separator: "&")
        return split.text
    }

    /// `GET https://host/path?query` for messages: the request's method, scheme, authority and target with
    /// secret query values hidden.
    public func summary(of request: HTTPRequest) -> String {
        "\(request.method) \(request.scheme ?? "http")://\(request.authority ?? "")"
            + redacting(target: request.path ?? "/")
    }
}
