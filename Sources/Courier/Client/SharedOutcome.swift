/// The outcome of a call that identical calls wait for (``DuplicateCallPolicy/share``): the leader completes
/// it once; each follower waits on its own continuation, so cancelling a follower ends only its wait.
final class SharedOutcome<T: Sendable>: Sendable {
    private struct State {
        var result: Result<Reply<T>, any Error>?
        var waiters: [Int: CheckedContinuation<Reply<T>, any Error>] = [:]
        var nextWaiter = 0
    }

    private let state = Locked(State())

    /// Hands `result` to every follower waiting now and later.
    func complete(_ result: Result<Reply<T>, any Error>) {
        let waiters = state.withLock { state -> [CheckedContinuation<Reply<T>, any Error>] in
            state.result = result
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume(with: result) }
    }

    /// The leader's reply; throws its failure, or ``CourierError/Code/cancelled`` when this task is
    /// cancelled first.
    func wait() async throws -> Reply<T> {
        let id = state.withLock { state -> Int in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Reply<T>, any Error>) in
                let ready = state.withLock { state -> Result<Reply<T>, any Error>? in
                    if let result = state.result { return result }
                    if Task.isCancelled { return .failure(CourierError(.cancelled, detail: "the shared call's wait was cancelled")) }
                    state.waiters[id] = continuation
                    return nil
                }
                if let ready { continuation.resume(with: ready) }
            }
        } onCancel: {
            let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
            waiter?.resume(throwing: CourierError(.cancelled, detail: "the shared call's wait was cancelled"))
        }
    }
}
