/// How far a call's body transfer is: bytes done in one direction and the total when known.
///
/// Every call's handle offers it as an `AsyncSequence` (``Call/progress``); uploads report the request
/// body as the transport reads it, downloads the bytes written to the file (a resumed download starts from
/// the bytes kept earlier). In each direction the reports never go backwards, and a transfer that completes
/// ends with `completed == total`.
///
/// ```swift
/// let call = client.upload(.avatar, form: form)
/// Task { for await step in call.progress { print(step.direction, step.fraction ?? 0) } }
/// let reply = try await call.reply
/// ```
public struct TransferProgress: Sendable, Hashable, CustomStringConvertible {
    /// Which body is moving.
    public enum Direction: Sendable, Hashable {
        /// The request body, to the server.
        case upload
        /// The response body, from the server.
        case download
    }

    /// Which body is moving.
    public var direction: Direction
    /// Bytes transferred so far.
    public var completed: Int64
    /// The body's size, when known.
    public var total: Int64?

    /// A progress report.
    public init(direction: Direction, completed: Int64, total: Int64?) {
        self.direction = direction
        self.completed = completed
        self.total = total
    }

    /// `completed / total` (0...1), when the total is known (1 for an empty body).
    public var fraction: Double? {
        guard let total else { return nil }
        return total > 0 ? min(1, Double(completed) / Double(total)) : 1
    }

    public var description: String {
        "\(direction) \(completed)" + (total.map { "/\($0)" } ?? "") + (fraction.map { " (\(Int($0 * 100))%)" } ?? "")
    }
}

/// One call's progress reports, fanned out to every ``Call/progress`` sequence: monotonic per direction,
/// the latest report replayed to a late subscriber, finished when the call ends.
final class ProgressChannel: Sendable {
    private struct State {
        var latest: [TransferProgress.Direction: TransferProgress] = [:]
        var subscribers: [Int: AsyncStream<TransferProgress>.Continuation] = [:]
        var nextID = 0
        var finished = false
    }

    private let state = Locked(State())

    /// Publishes `progress` unless it goes backwards (or repeats) in its direction.
    func report(_ progress: TransferProgress) {
        // Yielded under the lock, so every subscriber sees the reports in the order they were accepted.
        state.withLock { state in
            guard !state.finished else { return }
            if let last = state.latest[progress.direction] {
                guard progress.completed > last.completed
                    || (progress.completed == last.completed && progress.total != last.total)
                else { return }
            }
            state.latest[progress.direction] = progress
            for target in state.subscribers.values { target.yield(progress) }
        }
    }

    /// A new sequence of the reports: the latest ones first, then each new one until the call ends.
    func subscribe() -> AsyncStream<TransferProgress> {
        let (stream, continuation) = AsyncStream.makeStream(
            of: TransferProgress.self, bufferingPolicy: .bufferingNewest(1024))
        state.withLock { state in
            for progress in [state.latest[.upload], state.latest[.download]].compactMap({ $0 }) {
                continuation.yield(progress)
            }
            if state.finished {
                continuation.finish()
                return
            }
            let id = state.nextID
            state.nextID += 1
            state.subscribers[id] = continuation
            continuation.onTermination = { [weak self] _ in
                self?.state.withLock { _ = $0.subscribers.removeValue(forKey: id) }
            }
        }
        return stream
    }

    /// Ends every sequence (the call is over).
    func finish() {
        let targets = state.withLock { state -> [AsyncStream<TransferProgress>.Continuation] in
            state.finished = true
            defer { state.subscribers = [:] }
            return Array(state.subscribers.values)
        }
        for target in targets { target.finish() }
    }
}
