#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
public import HTTPTypes

/// A record/replay ("VCR") transport: record real exchanges once into a ``Cassette``, then replay them in
/// tests — offline, fast and deterministic.
///
/// - ``Mode/record(_:)`` forwards every request to a live transport and appends the exchange (response or
///   transport failure) to the cassette.
/// - ``Mode/replay`` answers only from the cassette; a request with no recorded match fails with
///   `CourierError.Code.noRecordedExchange`, whose message names the method and URL and the nearest
///   recording's difference.
/// - ``Mode/replayOrRecord(_:)`` answers from the cassette when it can, else forwards and records.
///
/// Requests match by method, scheme and authority, path, query (item order does not matter) and body bytes;
/// ``Options/matching`` can ignore query items (timestamps, nonces), compare headers (all but volatile
/// ones, or only some) or compare bodies another way. Identical requests replay their recordings in order;
/// once they are used up the last one repeats (or the call fails: ``Options/whenExhausted``). Secret
/// header and query values (``Options/redaction``: `Authorization`, `Cookie`, `X-Session-Token`,
/// `auth_token`, … by default) never reach the cassette; they are saved as
/// `RedactionPolicy.placeholder`, which matches any value on replay. Recorded failures replay as the same `CourierError.Code`. Like every transport it honours
/// `TransportOptions.timeout` (a recording that times out is recorded as `TransportFailure.timedOut`),
/// `TransportOptions.maximumResponseSize` and task cancellation (`TransportFailure.cancelled`, never
/// recorded).
///
/// ```swift
/// let file = URL(filePath: "Fixtures/users.cassette.json")
///
/// // Once, against the real server:
/// let recorder = ReplayTransport(.record(FoundationTransport()))
/// _ = try await CourierClient(transport: recorder).send(.user(7, in: users))
/// try recorder.save(to: file)
///
/// // In every test run after that:
/// let replay = ReplayTransport(.replay, cassette: try Cassette.load(from: file))
/// let user = try await CourierClient(transport: replay).send(.user(7, in: users), decoding: User.self)
/// ```
public final class ReplayTransport: Transport {
    /// What the transport does with requests: record, replay, or both.
    public let mode: Mode
    /// How requests are matched, replays ordered and secrets redacted.
    public let options: Options

    private struct State {
        var cassette: Cassette
        /// Whether each exchange of the cassette has been replayed (or was recorded by this transport).
        var played: [Bool]
    }

    private let state: Locked<State>

    /// A transport in `mode`, starting from `cassette` (empty by default; recordings are appended to it).
    public init(_ mode: Mode, cassette: Cassette = Cassette(), options: Options = Options()) {
        self.mode = mode
        self.options = options
        self.state = Locked(State(cassette: cassette, played: Array(repeating: false, count: cassette.exchanges.count)))
    }

    /// The cassette as it is now: the one given at creation plus everything recorded since, redacted.
    public var cassette: Cassette { state.withLock { $0.cassette } }

    /// The exchanges of the cassette no request has replayed yet, in order (a test can assert it is empty).
    /// Exchanges this transport recorded count as played.
    public var unplayedExchanges: [Cassette.Exchange] {
        state.withLock { state in
            zip(state.cassette.exchanges, state.played).filter { !$0.1 }.map(\.0)
        }
    }

    /// Saves ``cassette`` to `url` (see ``Cassette/save(to:)``).
    public func save(to url: URL) throws {
        try cassette.save(to: url)
    }

    /// Answers `request` from the cassette or the live transport, as the ``mode`` says.
    public func send(_ request: HTTPRequest, body: Data?, options transportOptions: TransportOptions) async throws
        -> (HTTPResponse, Data)
    {
        do {
            try Task.checkCancellation()
            switch mode.base {
            case .record(let live):
                return try await forward(request, body: body, to: live, options: transportOptions)
            case .replay:
                switch lookUp(request, body: body) {
                case .found(let exchange): return try play(exchange, options: transportOptions)
                case .missing(let reason): throw noRecording(for: request, reason: reason)
                }
            case .replayOrRecord(let live):
                if case .found(let exchange) = lookUp(request, body: body) {
                    return try play(exchange, options: transportOptions)
                }
                return try await forward(request, body: body, to: live, options: transportOptions)
            }
        } catch is CancellationError {
            throw TransportFailure.cancelled.error()
        }
    }

    // MARK: Recording

    private func forward(
        _ request: HTTPRequest, body: Data?, to live: any Transport, options transportOptions: TransportOptions
    ) async throws -> (HTTPResponse, Data) {
        do {
            let (head, responseBody) = try await withTimeout(transportOptions.timeout) {
                try await live.send(request, body: body, options: transportOptions)
            }
            record(Cassette.Exchange(request: request, requestBody: body, response: head, responseBody: responseBody))
            return (head, responseBody)
        } catch {
            var failure = CourierError.wrap(error, as: .transportFailure)
            if failure.code == .cancelled || (Task.isCancelled && failure.category == .transport) {
                throw TransportFailure.cancelled.error(underlying: error)
            }
            guard failure.category == .transport else { throw failure }
            if failure.context.stage == nil { failure.context.stage = "transport" }
            let recorded = Cassette.Failure(code: failure.code, detail: failure.detail)
            record(Cassette.Exchange(request: request, requestBody: body, failure: recorded))
            throw failure
        }
    }

    private func record(_ exchange: Cassette.Exchange) {
        let redacted = options.redacting(exchange)
        state.withLock { state in
            state.cassette.exchanges.append(redacted)
            state.played.append(true)
        }
    }

    // MARK: Replaying

    private enum LookUp {
        case found(Cassette.Exchange)
        case missing(reason: String)
    }

    /// Claims the first unplayed recording matching the request (or repeats the last one when all are played
    /// and the options say so).
    private func lookUp(_ request: HTTPRequest, body: Data?) -> LookUp {
        let options = options
        return state.withLock { state in
            let exchanges = state.cassette.exchanges
            let matches = exchanges.indices.filter {
                options.matching.difference(between: request, body: body, and: exchanges[$0]) == nil
            }
            guard let last = matches.last else {
                return .missing(reason: options.nearestMiss(for: request, body: body, in: exchanges))
            }
            if let next = matches.first(where: { !state.played[$0] }) {
                state.played[next] = true
                return .found(exchanges[next])
            }
            if options.whenExhausted == .repeatLast { return .found(exchanges[last]) }
            let count = matches.count == 1 ? "its one recording was" : "all \(matches.count) of its recordings were"
            return .missing(reason: "\(count) already replayed and Options.whenExhausted is .fail")
        }
    }

    private func play(_ exchange: Cassette.Exchange, options transportOptions: TransportOptions) throws
        -> (HTTPResponse, Data)
    {
        switch exchange.outcome {
        case .response(let head, let body):
            guard body.count <= transportOptions.maximumResponseSize else {
                var error = CourierError(
                    .responseTooLarge,
                    detail: "the recorded response is \(body.count) bytes; the limit is "
                        + "\(transportOptions.maximumResponseSize)")
                error.context.stage = "transport"
                throw error
            }
            return (head, body)
        case .failure(let failure):
            throw failure.error()
        }
    }

    private func noRecording(for request: HTTPRequest, reason: String) -> CourierError {
        var error = CourierError(.noRecordedExchange, detail: "\(options.describe(request)): \(reason).")
        error.context.stage = "transport"
        return error
    }
}

// MARK: - Mode

extension ReplayTransport {
    /// What a ``ReplayTransport`` does with a request.
    ///
    /// ```swift
    /// let recorder = ReplayTransport(.record(FoundationTransport()))
    /// let player = ReplayTransport(.replay, cassette: cassette)
    /// let both = ReplayTransport(.replayOrRecord(FoundationTransport()), cassette: cassette)
    /// ```
    public struct Mode: Sendable {
        fileprivate enum Base: Sendable {
            case record(any Transport)
            case replay
            case replayOrRecord(any Transport)
        }

        fileprivate let base: Base

        /// Forward every request to `live` and record the exchange; the cassette is never consulted.
        public static func record(_ live: any Transport) -> Mode { Mode(base: .record(live)) }

        /// Answer only from the cassette; an unmatched request fails with
        /// `CourierError.Code.noRecordedExchange`.
        public static let replay = Mode(base: .replay)

        /// Answer from the cassette when a recording matches; otherwise forward to `live` and record.
        public static func replayOrRecord(_ live: any Transport) -> Mode { Mode(base: .replayOrRecord(live)) }
    }
}

// MARK: - Options

extension ReplayTransport {
    /// How a ``ReplayTransport`` matches requests, orders replays and redacts secrets. The defaults match by
    /// method, URL and body, repeat the last recording when identical requests outnumber their recordings,
    /// and redact every header and query value the default `RedactionPolicy` calls secret.
    ///
    /// ```swift
    /// var options = ReplayTransport.Options()
    /// options.matching.ignoredQueryItems = ["timestamp", "nonce_str", "sign"]
    /// options.matching.headers = .all(except: [.date, HTTPField.Name("X-Request-ID")!])
    /// options.whenExhausted = .fail
    /// options.redaction.names.insert("sid")
    /// let transport = ReplayTransport(.replay, cassette: cassette, options: options)
    /// ```
    public struct Options: Sendable {
        /// Which parts of a request must equal a recording's for it to replay. Default: method, scheme and
        /// authority, path, query and body.
        public var matching = Matching()
        /// What a request gets once every recording it matches has been replayed. Default
        /// ``Exhaustion/repeatLast``.
        public var whenExhausted = Exhaustion.repeatLast
        /// Which header fields (in requests and responses alike) and request query items are saved as
        /// `RedactionPolicy.placeholder`: by default every name containing token, secret,
        /// password, session, auth, key, signature, cookie or credential (`Authorization`, `Set-Cookie`,
        /// `X-Session-Token`, `auth_token`, `api_key`). A replayed response carries the placeholder, not the
        /// secret; secret query values are also hidden in error messages.
        public var redaction = RedactionPolicy()

        /// The default options.
        public init() {}
    }

    /// Which parts of a live request must equal a recorded one for the recording to answer it. A recorded
    /// value equal to `RedactionPolicy.placeholder` matches any value.
    ///
    /// ```swift
    /// var matching = ReplayTransport.Matching()
    /// matching.ignoredQueryItems = ["timestamp", "nonce"]      // signed requests carry fresh ones
    /// matching.headers = .only([.accept, .contentType])
    /// matching.body = .ignored
    /// ```
    public struct Matching: Sendable {
        /// Whether scheme and authority (host and port) must match. Turn off to replay a cassette recorded
        /// against another environment. Default `true`.
        public var matchesSchemeAndAuthority = true
        /// Query items left out of the comparison, by name (the others must match, in any order).
        /// Default: none.
        public var ignoredQueryItems: Set<String> = []
        /// Which header fields must match. Default ``HeaderMatching/ignored``.
        public var headers = HeaderMatching.ignored
        /// How bodies are compared. Default ``BodyMatching/exact``.
        public var body = BodyMatching.exact

        /// Matching by method, scheme and authority, path, query and body bytes.
        public init() {}
    }

    /// Which header fields a request must share with a recording.
    ///
    /// ```swift
    /// matching.headers = .ignored                               // the default
    /// matching.headers = .all()                                 // all but the volatile ones
    /// matching.headers = .all(except: [.date, .userAgent])
    /// matching.headers = .only([.accept, HTTPField.Name("X-Api-Version")!])
    /// ```
    public struct HeaderMatching: Sendable {
        fileprivate enum Base: Sendable {
            case ignored
            case all(except: Set<HTTPField.Name>)
            case only(Set<HTTPField.Name>)
        }

        fileprivate let base: Base

        /// Headers play no part in matching.
        public static let ignored = HeaderMatching(base: .ignored)

        /// Every header field of either request must have the same values in both, except the fields named
        /// in `ignored` (by default ``volatileHeaders``).
        public static func all(except ignored: Set<HTTPField.Name> = volatileHeaders) -> HeaderMatching {
            HeaderMatching(base: .all(except: ignored))
        }

        /// Only the fields named in `names` must have the same values (or be absent from both).
        public static func only(_ names: Set<HTTPField.Name>) -> HeaderMatching {
            HeaderMatching(base: .only(names))
        }

        /// Fields that differ from one send to the next: `Date`, `Authorization`, request and trace ids, and
        /// the signing stage's timestamp, nonce and signature.
        public static let volatileHeaders: Set<HTTPField.Name> = [
            .date, .authorization, HTTPField.Name("X-Request-ID")!, HTTPField.Name("X-Correlation-ID")!,
            HTTPField.Name("Traceparent")!, HTTPField.Name("Tracestate")!,
            HTTPField.Name("X-Courier-Timestamp")!, HTTPField.Name("X-Courier-Nonce")!,
            HTTPField.Name("X-Courier-Signature")!,
        ]
    }

    /// How a request body is compared with a recording's.
    ///
    /// ```swift
    /// matching.body = .exact                                    // the default
    /// matching.body = .ignored
    /// matching.body = .custom { recorded, live in               // e.g. ignore a signed timestamp
    ///     stripTimestamp(recorded) == stripTimestamp(live)
    /// }
    /// ```
    public struct BodyMatching: Sendable {
        fileprivate let matches: @Sendable (_ recorded: Data?, _ live: Data?) -> Bool

        /// The bytes must be equal (no body and an empty body are equal).
        public static let exact = BodyMatching { ($0 ?? Data()) == ($1 ?? Data()) }

        /// Bodies play no part in matching.
        public static let ignored = BodyMatching { _, _ in true }

        /// `matches` decides; it gets the recorded body and the live one. It runs under the transport's lock,
        /// so it must be quick and must not call the transport.
        public static func custom(_ matches: @escaping @Sendable (_ recorded: Data?, _ live: Data?) -> Bool)
            -> BodyMatching
        {
            BodyMatching(matches: matches)
        }
    }

    /// What a request gets once every recording it matches has been replayed.
    ///
    /// ```swift
    /// options.whenExhausted = .fail     // a third identical call with two recordings fails
    /// ```
    public struct Exhaustion: Hashable, Sendable, CustomStringConvertible {
        private enum Base: Hashable, Sendable {
            case repeatLast, fail
        }

        private let base: Base

        /// Replay the last matching recording again (the default).
        public static let repeatLast = Exhaustion(base: .repeatLast)
        /// Fail with `CourierError.Code.noRecordedExchange` in ``Mode/replay``; forward and record in
        /// ``Mode/replayOrRecord(_:)``.
        public static let fail = Exhaustion(base: .fail)

        /// The policy's name (`repeatLast`).
        public var description: String { "\(base)" }
    }
}

// MARK: - Matching and redaction

/// A part of a request in which it differs from a recording.
enum RequestDifference: Equatable {
    case method, schemeOrAuthority, path, query, header(HTTPField.Name), body

    var description: String {
        switch self {
        case .method: return "its method"
        case .schemeOrAuthority: return "its scheme or authority"
        case .path: return "its path"
        case .query: return "its query"
        case .header(let name): return "its \(name) header"
        case .body: return "its body"
        }
    }
}

extension ReplayTransport.Matching {
    /// The first part in which `request` and `body` differ from `exchange`'s request, or `nil` when they match.
    func difference(between request: HTTPRequest, body: Data?, and exchange: Cassette.Exchange) -> RequestDifference? {
        let recorded = exchange.request
        if request.method != recorded.method { return .method }
        if matchesSchemeAndAuthority,
            request.scheme?.lowercased() != recorded.scheme?.lowercased()
                || request.authority?.lowercased() != recorded.authority?.lowercased()
        {
            return .schemeOrAuthority
        }
        let live = MatchTarget(request.path, ignoring: ignoredQueryItems)
        let saved = MatchTarget(recorded.path, ignoring: ignoredQueryItems)
        if live.path != saved.path { return .path }
        if !live.sameQuery(as: saved) { return .query }
        if let name = headerDifference(live: request.headerFields, recorded: recorded.headerFields) {
            return .header(name)
        }
        if !self.body.matches(exchange.requestBody, body) { return .body }
        return nil
    }

    private func headerDifference(live: HTTPFields, recorded: HTTPFields) -> HTTPField.Name? {
        let names: [HTTPField.Name]
        switch headers.base {
        case .ignored:
            return nil
        case .all(let ignored):
            var seen = Set<HTTPField.Name>()
            names = (Array(recorded) + Array(live)).map(\.name).filter {
                !ignored.contains($0) && seen.insert($0).inserted
            }
        case .only(let selected):
            names = selected.sorted { $0.canonicalName < $1.canonicalName }
        }
        return names.first { !sameValues(recorded: recorded[values: $0], live: live[values: $0]) }
    }
}

/// Whether `live` holds the same values as `recorded` in any order, a recorded
/// ``Courier/RedactionPolicy/placeholder`` standing for any value.
private func sameValues(recorded: [String], live: [String]) -> Bool {
    guard recorded.count == live.count else { return false }
    var remaining = live
    for value in recorded where value != RedactionPolicy.placeholder {
        guard let index = remaining.firstIndex(of: value) else { return false }
        remaining.remove(at: index)
    }
    return true
}

/// A request's path and its query items (percent-decoded, grouped by name), for matching.
private struct MatchTarget {
    var path: String
    var query: [String: [String]]

    init(_ target: String?, ignoring ignored: Set<String>) {
        let split = RequestTarget(target)
        path = split.path
        query = [:]
        for item in split.queryItems where !ignored.contains(item.name) {
            query[item.name, default: []].append(item.value ?? "")
        }
    }

    func sameQuery(as recorded: MatchTarget) -> Bool {
        guard Set(query.keys) == Set(recorded.query.keys) else { return false }
        return query.allSatisfy { name, values in sameValues(recorded: recorded.query[name] ?? [], live: values) }
    }
}

extension ReplayTransport.Options {
    /// `exchange` with the redacted header and query values replaced by the placeholder.
    func redacting(_ exchange: Cassette.Exchange) -> Cassette.Exchange {
        var exchange = exchange
        exchange.request.headerFields = redaction.redacting(exchange.request.headerFields)
        exchange.request.path = exchange.request.path.map { redaction.redacting(target: $0) }
        if case .response(var head, let body) = exchange.outcome {
            head.headerFields = redaction.redacting(head.headerFields)
            exchange.outcome = .response(head, body: body)
        }
        return exchange
    }

    /// `GET https://api.example.com/users?page=2`, with redacted query values hidden.
    func describe(_ request: HTTPRequest) -> String {
        redaction.summary(of: request)
    }

    /// Why nothing in `exchanges` matches: the cassette's size and, when a recording has the same method and
    /// path, the first part in which the first such recording differs.
    func nearestMiss(for request: HTTPRequest, body: Data?, in exchanges: [Cassette.Exchange]) -> String {
        guard !exchanges.isEmpty else { return "the cassette is empty" }
        let size = exchanges.count == 1 ? "1 exchange" : "\(exchanges.count) exchanges"
        let path = RequestTarget(request.path).path
        let near = exchanges.first {
            $0.request.method == request.method && RequestTarget($0.request.path).path == path
        }
        guard let near, let difference = matching.difference(between: request, body: body, and: near) else {
            return "the cassette has \(size), none for \(request.method) \(path)"
        }
        return "the cassette has \(size); the nearest, \(describe(near.request)), differs in \(difference.description)"
    }
}
