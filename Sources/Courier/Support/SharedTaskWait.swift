extension Task where Failure == any Error {
    /// The task's result, or `nil` as soon as the task awaiting it is cancelled; the task itself goes on (other
    /// callers may share it).
    ///
    /// Awaiting `value` of an unstructured task ignores the awaiting task's cancellation: a call cancelled while it
    /// waits for a shared credential refresh or page load would wait for the work to end, however long that takes.
    package func resultUnlessCancelled() async -> Result<Success, any Error>? {
        let wait = Locked(SharedTaskWait<Success>.idle)
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<Success, any Error>?, Never>) in
                let cancelled = wait.withLock { state -> Bool in
                    guard case .idle = state else { return true }
                    state = .waiting(continuation)
                    return false
                }
                if cancelled {
                    continuation.resume(returning: nil)
                    return
                }
                // Watches the task for this caller: it ends with the task, whether or not the caller still waits.
                Task<Void, Never> {
                    let result = await self.result
                    wait.withLock { $0.take() }?.resume(returning: result)
                }
            }
        } onCancel: {
            wait.withLock { state -> CheckedContinuation<Result<Success, any Error>?, Never>? in
                guard case .idle = state else { return state.take() }
                state = .done
                return nil
            }?.resume(returning: nil)
        }
    }
}

/// Where ``Task/resultUnlessCancelled()`` is: not waiting yet, waiting, or answered (by the task or by the
/// caller's cancellation, whichever came first).
private enum SharedTaskWait<Success: Sendable> {
    case idle
    case waiting(CheckedContinuation<Result<Success, any Error>?, Never>)
    case done

    /// The continuation, once: the state is `done` afterwards.
    mutating func take() -> CheckedContinuation<Result<Success, any Error>?, Never>? {
        guard case .waiting(let continuation) = self else { return nil }
        self = .done
        return continuation
    }
}
