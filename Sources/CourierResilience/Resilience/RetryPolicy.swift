#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
public import HTTPTypes

/// When and how often a failed call is tried again: the attempts, exponential backoff with jitter, which
/// failures are worth retrying, and which methods may be replayed. Defaults follow Alamofire's
/// `RetryPolicy`: idempotent methods only; timeouts and connection failures; 408, 429, 502, 503, 504;
/// `Retry-After` honoured.
///
/// ```swift
/// var endpoint = Endpoint(name: "feed", module: home, path: "/feed")
/// endpoint.retryPolicy = .exponential(attempts: 4, initialDelay: .milliseconds(200))
///
/// var submit = Endpoint(name: "submit", module: orders, method: .post, path: "/orders")
/// submit.retryPolicy = RetryPolicy.exponential(attempts: 3).allowingNonIdempotent()  // the server dedupes
/// ```
public struct RetryPolicy: Sendable, Hashable {
    /// Attempts in total, the first included (1: never retry).
    public var maximumAttempts: Int
    /// The delay before the first retry.
    public var initialDelay: Duration
    /// Each further retry waits this many times longer.
    public var multiplier: Double
    /// The longest computed delay.
    public var maximumDelay: Duration
    /// The random spread around each delay, as a fraction (0.2: ±20 %).
    public var jitter: Double
    /// HTTP statuses that are retried.
    public var retryableStatuses: Set<Int>
    /// Failure codes that are retried.
    public var retryableCodes: Set<CourierError.Code>
    /// Methods that are retried (idempotent ones by default).
    public var retryableMethods: Set<HTTPRequest.Method>
    /// Retry any method, POST and PATCH included (only when the server tolerates duplicates).
    public var retriesNonIdempotentMethods: Bool
    /// Wait as long as a `Retry-After` header asks (up to ``maximumRetryAfter``) instead of the backoff.
    public var honoursRetryAfter: Bool
    /// A `Retry-After` longer than this ends the retries.
    public var maximumRetryAfter: Duration

    /// Three attempts, 0.5 s doubling up to 30 s with ±20 % jitter, Alamofire's retryable failures.
    public init() {
        maximumAttempts = 3
        initialDelay = .milliseconds(500)
        multiplier = 2
        maximumDelay = .seconds(30)
        jitter = 0.2
        retryableStatuses = [408, 429, 502, 503, 504]
        retryableCodes = [.timedOut, .cannotConnect, .connectionLost, .notConnected, .hostNotFound]
        retryableMethods = [.get, .head, .put, .delete, .options, .trace]
        retriesNonIdempotentMethods = false
        honoursRetryAfter = true
        maximumRetryAfter = .seconds(120)
    }

    /// Never retry.
    public static var none: RetryPolicy {
        var policy = RetryPolicy()
        policy.maximumAttempts = 1
        return policy
    }

    /// `attempts` attempts with delays starting at `initialDelay` and doubling.
    public static func exponential(attempts: Int, initialDelay: Duration = .milliseconds(500)) -> RetryPolicy {
        var policy = RetryPolicy()
        policy.maximumAttempts = max(1, attempts)
        policy.initialDelay = initialDelay
        return policy
    }

    /// This policy, applied to POST and PATCH too.
    public func allowingNonIdempotent() -> RetryPolicy {
        var policy = self
        policy.retriesNonIdempotentMethods = true
        return policy
    }

    /// The backoff before retry number `retry` (1 for the first retry), before jitter.
    public func backoff(retry: Int) -> Duration {
        var factor = 1.0
        for _ in 0..<(retry <= 1 ? 0 : min(retry - 1, 64)) { factor *= multiplier }
        return Self.duration(seconds: min(Self.seconds(initialDelay) * factor, Self.seconds(maximumDelay)))
    }

    /// `seconds` as a `Duration` to the nanosecond: zero for a negative or NaN number (a multiplier or a
    /// jitter of NaN, zero times infinity), at most `Int64.max` nanoseconds (about 292 years).
    static func duration(seconds: Double) -> Duration {
        guard seconds > 0 else { return .zero }
        let nanoseconds = seconds * 1e9
        guard nanoseconds < 9.2e18 else { return .nanoseconds(Int64.max) }
        return .nanoseconds(Int64(nanoseconds.rounded()))
    }

    static func seconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}

enum RetryPolicyOption: FeatureOptionKey {
    static let defaultValue: RetryPolicy? = nil
    static func requirement(for value: RetryPolicy?) -> ChainRequirement? {
        value == nil ? nil : ChainRequirement(feature: .retry, option: "retryPolicy", provider: "RetryInterceptor")
    }
}

extension ChainFeature {
    /// Retrying failed attempts (``RetryInterceptor``); ``Courier/Endpoint/retryPolicy`` needs it.
    public static let retry = ChainFeature("retry")
}

extension Endpoint {
    /// The endpoint's retry policy; nil: the module's, else the ``RetryInterceptor``'s default.
    public var retryPolicy: RetryPolicy? {
        get { options[RetryPolicyOption.self] ?? module.retryPolicy }
        set { options[RetryPolicyOption.self] = newValue }
    }
}

extension APIModule {
    /// The default retry policy of the module's endpoints (nil: the interceptor's default).
    public var retryPolicy: RetryPolicy? {
        get { options[RetryPolicyOption.self] }
        set { options[RetryPolicyOption.self] = newValue }
    }
}

/// The retry decisions of one call as a pure state machine: feed it each attempt's outcome, it answers
/// whether to stop or to retry after a delay.
///
/// ```swift
/// var state = RetryState(policy: .exponential(attempts: 3), method: .get)
/// state.record(.failure(.timedOut))                       // .retry(after: ~0.5 s)
/// state.record(.response(status: 503, retryAfter: .seconds(2)))  // .retry(after: 2 s)
/// state.record(.response(status: 503, retryAfter: nil))   // .finish (3 attempts made)
/// ```
public struct RetryState: Sendable {
    /// What one attempt ended with.
    ///
    /// New cases may be added in later versions: a `switch` over it should have a `default` branch.
    public enum Outcome: Sendable, Hashable {
        /// An HTTP response, with its `Retry-After` if any.
        case response(status: Int, retryAfter: Duration?)
        /// A failure without a response.
        case failure(CourierError.Code)
    }

    /// What to do next.
    ///
    /// New cases may be added in later versions: a `switch` over it should have a `default` branch.
    public enum Action: Sendable, Hashable {
        /// Keep this outcome (success, a failure not worth retrying, or attempts exhausted).
        case finish
        /// Wait, then send the request again.
        case retry(after: Duration)
    }

    /// The policy.
    public let policy: RetryPolicy
    /// Whether the request may be replayed at all (method and body allow it).
    public let mayReplay: Bool
    /// Attempts made so far (the one being recorded included).
    public private(set) var attempts = 0
    private let random: @Sendable () -> Double

    /// The state for a request with `method`; `isReplayable: false` (a streamed body) never retries.
    /// `random` returns values in `0..<1` for the jitter.
    public init(
        policy: RetryPolicy, method: HTTPRequest.Method, isReplayable: Bool = true,
        random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) }
    ) {
        self.policy = policy
        self.mayReplay = isReplayable && (policy.retriesNonIdempotentMethods || policy.retryableMethods.contains(method))
        self.random = random
    }

    /// Records one attempt's outcome and answers what to do.
    public mutating func record(_ outcome: Outcome) -> Action {
        attempts += 1
        guard mayReplay, attempts < policy.maximumAttempts else { return .finish }
        let retryAfter: Duration?
        switch outcome {
        case .response(let status, let after):
            guard policy.retryableStatuses.contains(status) else { return .finish }
            retryAfter = after
        case .failure(let code):
            guard policy.retryableCodes.contains(code) else { return .finish }
            retryAfter = nil
        }
        if policy.honoursRetryAfter, let retryAfter {
            guard retryAfter <= policy.maximumRetryAfter else { return .finish }
            return .retry(after: max(.zero, retryAfter))
        }
        let base = RetryPolicy.seconds(policy.backoff(retry: attempts))
        let spread = policy.jitter.isNaN ? 0 : min(max(policy.jitter, 0), 1)
        let factor = 1 + spread * (2 * random() - 1)
        return .retry(after: RetryPolicy.duration(seconds: base * factor))
    }

    /// The delay a `Retry-After` field asks for: seconds, or an HTTP date relative to `now`.
    public static func retryAfter(in fields: HTTPFields, now: Date) -> Duration? {
        guard let text = fields[.retryAfter]?.trimmingSpaces else { return nil }
        if let seconds = Int(text) { return .seconds(max(0, seconds)) }
        guard let date = HTTPDate.parse(text) else { return nil }
        // Whole milliseconds, as the field's own precision is a second.
        let interval = (date.timeIntervalSince(now) * 1000).rounded(.down) / 1000
        return RetryPolicy.duration(seconds: interval)
    }
}

extension String {
    var trimmingSpaces: String {
        var text = Substring(self)
        while text.first == " " || text.first == "\t" { text.removeFirst() }
        while text.last == " " || text.last == "\t" { text.removeLast() }
        return String(text)
    }
}

/// Parses IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), the HTTP date format.
enum HTTPDate {
    static let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]

    static func parse(_ text: String) -> Date? {
        let parts = text.split(separator: " ")
        // The year has four digits (RFC 9110's IMF-fixdate), which also keeps the arithmetic below in range.
        guard parts.count == 6, parts[5].uppercased() == "GMT", let day = Int(parts[1]),
            let monthIndex = months.firstIndex(of: parts[2].lowercased()), parts[3].utf8.count == 4,
            parts[3].utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }), let year = Int(parts[3])
        else { return nil }
        let time = parts[4].split(separator: ":").compactMap { Int($0) }
        guard time.count == 3, (1...31).contains(day), (0..<24).contains(time[0]), (0..<60).contains(time[1]),
            (0...60).contains(time[2])
        else { return nil }
        let days = daysFromCivil(year: year, month: monthIndex + 1, day: day)
        let seconds = days * 86_400 + time[0] * 3_600 + time[1] * 60 + time[2]
        return Date(timeIntervalSince1970: TimeInterval(seconds))
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
    static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
