/// Calls run together whose every result or error is wanted (HHNetworkTaskGroup): the group is notified
/// once, when all have ended.
///
/// ```swift
/// let group = client.group([.banner, .feed, .badges]) { results in
///     print("all done:", results.filter { (try? $0.get()) != nil }.count, "succeeded")
/// }
/// for result in await group.results { ... }
/// ```
public struct CallGroup: Sendable {
    /// The member calls, in the order given.
    public let calls: [Call<Value>]
    private let collector: Task<[Result<Reply<Value>, CourierError>], Never>

    init(calls: [Call<Value>], completion: (@Sendable ([Result<Reply<Value>, CourierError>]) -> Void)?) {
        self.calls = calls
        self.collector = Task {
            var results: [Result<Reply<Value>, CourierError>] = []
            for call in calls {
                do {
                    results.append(.success(try await call.reply))
                } catch {
                    results.append(.failure(CourierError.wrap(error, as: .transportFailure)))
                }
            }
            completion?(results)
            return results
        }
    }

    /// Every member's result, in order, once all have ended.
    public var results: [Result<Reply<Value>, CourierError>] {
        get async { await collector.value }
    }

    /// Cancels every member (their results become ``Courier/CourierError/Code/cancelled``).
    public func cancel() {
        for call in calls { call.cancel() }
    }
}

extension Client {
    /// Starts every endpoint now as one ``CallGroup``; `completion` runs once, when all have ended.
    public func group(
        _ endpoints: [Endpoint], options: CallOptions = CallOptions(),
        completion: (@Sendable ([Result<Reply<Value>, CourierError>]) -> Void)? = nil
    ) -> CallGroup {
        CallGroup(calls: endpoints.map { dispatch($0, options: options) }, completion: completion)
    }
}
