#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import HTTPTypes

/// What each stage of one call did, in order: what it changed in the request on the way out and in the
/// response on the way back, how long it took, and how often it called `next`. Secrets are never recorded:
/// values of credential-like header fields are redacted and bodies appear only as sizes and formats.
///
/// ```swift
/// let reply = try await client.send(.user(7, in: users), options: .init(trace: true))
/// print(reply.metadata.trace!)
/// // 1. CommonParameters  request: payload +app_version, +platform         0.01 ms
/// // 2. codec             request: body none → 96 B json  response: decoded json → object(3)
/// // 3. transport         GET http://127.0.0.1:8080/users/7 → 200 OK, 211 B  1.92 ms
/// ```
public struct CallTrace: CourierError.Detail, CustomStringConvertible {
    /// One stage's record.
    public struct Stage: Sendable {
        /// The stage's name.
        public var name: String
        /// What the stage changed in the request before passing it on (empty: nothing).
        public var requestChanges: [String]
        /// What the stage changed in the response before returning it (empty: nothing).
        public var responseChanges: [String]
        /// Time spent in the stage including the stages inside it.
        public var duration: Duration
        /// Time spent in the stage itself.
        public var ownDuration: Duration
        /// How many times the stage called `next` (0: it answered itself; 2+: it retried).
        public var nextCalls: Int
        /// The error the stage threw, if any.
        public var error: String?
    }

    /// The stages in the order they were entered.
    public var stages: [Stage]

    public var description: String {
        var lines: [String] = []
        let width = stages.map(\.name.count).max() ?? 0
        for (i, stage) in stages.enumerated() {
            let name = stage.name.padding(to: width)
            var parts: [String] = []
            if !stage.requestChanges.isEmpty { parts.append("→ " + stage.requestChanges.joined(separator: "; ")) }
            if !stage.responseChanges.isEmpty { parts.append("← " + stage.responseChanges.joined(separator: "; ")) }
            if stage.nextCalls == 0 && stage.name != "transport" { parts.append("(answered without calling next)") }
            if stage.nextCalls > 1 { parts.append("(called next \(stage.nextCalls)×)") }
            if let error = stage.error { parts.append("✗ " + error) }
            if parts.isEmpty { parts.append("(no change)") }
            lines.append("\(i + 1). \(name)  \(parts.joined(separator: "  "))  [\(stage.ownDuration.milliseconds) ms]")
        }
        return lines.joined(separator: "\n")
    }
}

extension Duration {
    fileprivate var milliseconds: String {
        let ms = Double(components.seconds) * 1000 + Double(components.attoseconds) / 1e15
        let hundredths = (ms * 100).rounded()
        let whole = Int(hundredths / 100)
        let frac = Int(hundredths) % 100
        return "\(whole).\(frac < 10 ? "0" : "")\(frac)"
    }
}

extension String {
    fileprivate func padding(to width: Int) -> String {
        count >= width ? self : self + String(repeating: " ", count: width - count)
    }
}

/// Collects a ``CallTrace`` while a call runs. Created by the client when a call asks for a trace.
package final class TraceRecorder: Sendable {
    private let stages = Locked<[CallTrace.Stage]>([])
    private let clock = ContinuousClock()
    /// Which header fields' values the trace hides.
    let redaction: RedactionPolicy

    /// An empty recorder that hides the values `redaction` calls secret.
    package init(redaction: RedactionPolicy = RedactionPolicy()) {
        self.redaction = redaction
    }

    /// The trace so far.
    package var trace: CallTrace { CallTrace(stages: stages.withLock { $0 }) }

    private final class Probe: Sendable {
        struct State {
            var inner: Duration = .zero
            var calls = 0
            var sentRequest: CourierRequest?
            var receivedResponse: CourierResponse?
        }
        let state = Locked(State())
    }

    func record(
        stage name: String, request: CourierRequest, next: InterceptorNext,
        _ body: (InterceptorNext) async throws -> CourierResponse
    ) async throws -> CourierResponse {
        let slot = stages.withLock { stages in
            stages.append(CallTrace.Stage(name: name, requestChanges: [], responseChanges: [], duration: .zero,
                                          ownDuration: .zero, nextCalls: 0, error: nil))
            return stages.count - 1
        }
        let probe = Probe()
        let clock = clock
        let probed = InterceptorNext { sent in
            probe.state.withLock {
                $0.calls += 1
                $0.sentRequest = sent
            }
            let start = clock.now
            defer { probe.state.withLock { $0.inner += clock.now - start } }
            let response = try await next(sent)
            probe.state.withLock { $0.receivedResponse = response }
            return response
        }
        let start = clock.now
        var result: Result<CourierResponse, any Error>
        do {
            result = .success(try await body(probed))
        } catch {
            result = .failure(error)
        }
        let total = clock.now - start
        let state = probe.state.withLock { $0 }
        var record = CallTrace.Stage(name: name, requestChanges: [], responseChanges: [], duration: total,
                                     ownDuration: total - state.inner, nextCalls: state.calls, error: nil)
        if let sent = state.sentRequest { record.requestChanges = Self.diff(request, sent, redaction: redaction) }
        switch result {
        case .success(let response):
            if let received = state.receivedResponse {
                record.responseChanges = Self.diff(received, response, redaction: redaction)
            } else {
                record.responseChanges = ["answered \(response.head.status.code) from \(response.source)"]
            }
        case .failure(let error):
            record.error = Self.describe(error)
        }
        stages.withLock { $0[slot] = record }
        return try result.get()
    }

    func recordTransport(
        request: CourierRequest, _ send: @Sendable () async throws -> CourierResponse
    ) async throws -> CourierResponse {
        let slot = stages.withLock { stages in
            stages.append(CallTrace.Stage(name: "transport", requestChanges: [], responseChanges: [],
                                          duration: .zero, ownDuration: .zero, nextCalls: 0, error: nil))
            return stages.count - 1
        }
        let start = clock.now
        var record = CallTrace.Stage(name: "transport", requestChanges: [request.summary], responseChanges: [],
                                     duration: .zero, ownDuration: .zero, nextCalls: 0, error: nil)
        defer { stages.withLock { $0[slot] = record } }
        do {
            let response = try await send()
            record.duration = clock.now - start
            record.ownDuration = record.duration
            let reason = response.head.status.reasonPhrase
            record.responseChanges = [
                "\(response.head.status.code)\(reason.isEmpty ? "" : " " + reason), \(response.body.count) B"
                    + (response.format.map { " \($0)" } ?? "")
            ]
            return response
        } catch {
            record.duration = clock.now - start
            record.ownDuration = record.duration
            record.error = Self.describe(error)
            throw error
        }
    }

    static func describe(_ error: any Error) -> String {
        let courier = CourierError.wrap(error, as: .interceptorFailure)
        return "\(courier.code.category).\(courier.code.name)"
    }

    // MARK: - Diffs

    /// `name: value`, the value replaced by the placeholder when `redaction` calls the name secret and
    /// shortened past 48 characters.
    static func redacted(_ field: HTTPField, _ redaction: RedactionPolicy) -> String {
        let value = redaction.value(of: field)
        return "\(field.name): " + (value.count > 48 ? String(value.prefix(45)) + "…" : value)
    }

    static func diff(_ before: HTTPFields, _ after: HTTPFields, redaction: RedactionPolicy) -> [String] {
        var changes: [String] = []
        for field in after where !before.contains(field) {
            let existed = before.contains(field.name)
            changes.append((existed ? "~" : "+") + "header " + redacted(field, redaction))
        }
        for field in before where !after.contains(field.name) {
            changes.append("-header \(field.name)")
        }
        return changes
    }

    static func describe(_ body: Data?, _ format: ContentFormat?) -> String {
        guard let body else { return "none" }
        return "\(body.count) B" + (format.map { " \($0)" } ?? "")
    }

    static func describe(_ value: Value?) -> String {
        guard let value else { return "none" }
        switch value {
        case .object(let o): return "object(\(o.count))"
        case .array(let a): return "array(\(a.count))"
        default: return value.kindName
        }
    }

    static func diff(_ before: CourierRequest, _ after: CourierRequest, redaction: RedactionPolicy) -> [String] {
        var changes: [String] = []
        if before.head.method != after.head.method { changes.append("method \(before.head.method) → \(after.head.method)") }
        if before.head.authority != after.head.authority {
            changes.append("host \(before.head.authority ?? "") → \(after.head.authority ?? "")")
        }
        if before.head.path != after.head.path {
            let names = { (path: String?) -> [String] in RequestTarget(path).queryItems.map(\.name) }
            let old = names(before.head.path)
            let new = names(after.head.path)
            let added = new.filter { !old.contains($0) }
            if !added.isEmpty {
                changes.append("query +" + added.joined(separator: ", +"))
            } else {
                changes.append("path changed")
            }
        }
        changes += diff(before.head.headerFields, after.head.headerFields, redaction: redaction)
        switch (before.payload, after.payload) {
        case (.object(let a)?, .object(let b)?) where a != b:
            let added = b.keys.filter { !a.contains($0) }
            let removed = a.keys.filter { !b.contains($0) }
            var parts: [String] = added.map { "+\($0)" } + removed.map { "-\($0)" }
            if parts.isEmpty { parts = ["values changed"] }
            changes.append("payload " + parts.joined(separator: ", "))
        case (let a, let b) where a != b:
            changes.append("payload \(describe(a)) → \(describe(b))")
        default: break
        }
        if before.body != after.body || before.format != after.format {
            changes.append("body \(describe(before.body, before.body == nil ? nil : before.format)) → "
                           + describe(after.body, after.body == nil ? nil : after.format))
        }
        if before.timeout != after.timeout { changes.append("timeout → \(after.timeout.map { "\($0)" } ?? "none")") }
        return changes
    }

    static func diff(_ before: CourierResponse, _ after: CourierResponse, redaction: RedactionPolicy) -> [String] {
        var changes: [String] = []
        if before.head.status != after.head.status {
            changes.append("status \(before.head.status.code) → \(after.head.status.code)")
        }
        changes += diff(before.head.headerFields, after.head.headerFields, redaction: redaction)
        if before.body != after.body || before.format != after.format {
            changes.append("body \(describe(before.body, before.format)) → \(describe(after.body, after.format))")
        }
        if before.value == nil, let value = after.value {
            changes.append("decoded \(after.format.map { "\($0)" } ?? "body") → \(describe(value))")
        } else if before.value != after.value {
            changes.append("value \(describe(before.value)) → \(describe(after.value))")
        }
        if before.source != after.source { changes.append("source → \(after.source)") }
        if let rejection = after.cacheRejection, before.cacheRejection != rejection {
            changes.append("cache entry rejected: \(rejection)")
        }
        if before.failure == nil, let failure = after.failure { changes.append("outcome → \(failure.code.name)") }
        return changes
    }
}

extension CourierError {
    /// The stages' trace up to the failure, when the call asked for one (`EndpointOptions.trace`): the
    /// ``CallTrace`` in ``details``.
    public var trace: CallTrace? {
        get { details[CallTrace.self] }
        set { details[CallTrace.self] = newValue }
    }
}
