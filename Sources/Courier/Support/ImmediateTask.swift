/// Starts `operation` as a new unstructured task that runs on the calling thread until it first suspends: what
/// `Task.immediate(priority:operation:)` does, with the result erased to `any Sendable` (callers cast it back).
///
/// Why not call `Task.immediate` directly: out of line, it hands the runtime its default executor preference
/// (`nil`) as a value, and the runtime then gives the task an empty executor-preference record. While a task
/// holds one, every switch to the generic executor in it (at least two per interceptor of a call) reads the
/// task's records under its status lock. Measured with callgrind on Swift 6.3: about 8,000 of the 90,000
/// instructions of a `send()` through ten no-op interceptors. Inlined, the `nil` is a constant, and no record
/// is made. The optimizer inlines `Task.immediate` into code that is not generic, and here only inside a loop
/// (its inlining threshold is higher there): hence the loop of exactly one turn, and the erased result.
/// `Benchmarks/` (`chain.*`) shows it if a later compiler no longer does this.
@inline(never)
func immediateTask(
    priority: TaskPriority? = nil, _ operation: @escaping @Sendable () async throws -> any Sendable
) -> Task<any Sendable, any Error> {
    var task: Task<any Sendable, any Error>?
    repeat {
        task = Task.immediate(priority: priority) { try await operation() }
    } while task == nil
    return task!
}
