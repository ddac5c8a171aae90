/// Calls run together whose every result or error is wanted (HHNetworkTaskGroup): the group is notified
/// once, when all have ended. Members decode into one type `T` (`Value` for raw calls); for
/// members of different types, see `CourierClient.group(_:options:)`.
///
/// ```swift
/// let group = client.group([.banner, .feed, .badges]) { results in
///     print("all done:", results.filter { (try? $0.get()) != nil }.count, "succeeded")
/// }
/// for result in await group.results { ... }
/// ```
public struct CallGroup<T: Sendable>: Sendable {
    /// The member calls, in the order given.
    public let calls: [Call<T>]
    private let collector: Task<[Result<Reply<T>, CourierError>], Never>

    init(calls: [Call<T>], completion: (@Sendable ([Result<Reply<T>, CourierError>]) -> Void)?) {
        self.calls = calls
        self.collector = Task {
            var results: [Result<Reply<T>, CourierError>] = []
            for call in calls { results.append(await call.result) }
            completion?(results)
            return results
        }
    }

    /// Every member's result, in order, once all have ended.
    public var results: [Result<Reply<T>, CourierError>] {
        get async { await collector.value }
    }

    /// Cancels every member (their results become `CourierError.Code.cancelled`).
    public func cancel() {
        for call in calls { call.cancel() }
    }
}

extension Call {
    /// The call's outcome as a `Result` (never throws).
    var result: Result<Reply<T>, CourierError> {
        get async {
            do { return .success(try await reply) } catch { return .failure(CourierError.wrap(error, as: .transportFailure)) }
        }
    }
}

extension CourierClient {
    /// Starts every endpoint now as one ``CallGroup`` of raw replies; `completion` runs once, when all have
    /// ended.
    public func group(
        _ endpoints: [Endpoint], options: CallOptions = CallOptions(),
        completion: (@Sendable ([Result<Reply<Value>, CourierError>]) -> Void)? = nil
    ) -> CallGroup<Value> {
        CallGroup(calls: endpoints.map { dispatch($0, options: options) }, completion: completion)
    }

    /// Starts every endpoint now as one ``CallGroup``, each reply decoded into `type`.
    public func group<T: Decodable & Sendable>(
        _ endpoints: [Endpoint], decoding type: T.Type, options: CallOptions = CallOptions(),
        completion: (@Sendable ([Result<Reply<T>, CourierError>]) -> Void)? = nil
    ) -> CallGroup<T> {
        CallGroup(calls: endpoints.map { dispatch($0, decoding: type, options: options) }, completion: completion)
    }

    /// Sends members that decode into different types together and returns every member's result, in order,
    /// once all have ended (a failure does not cancel the others). Cancelling the awaiting task cancels every
    /// member.
    ///
    /// ```swift
    /// let (banner, feed) = await client.group((.banner, Banner.self), (.feed, Feed.self))
    /// if case .success(let reply) = feed { show(reply.value) }
    /// ```
    public func group<each T: Decodable & Sendable>(
        _ members: repeat (Endpoint, (each T).Type), options: CallOptions = CallOptions()
    ) async -> (repeat Result<Reply<each T>, CourierError>) {
        let calls = (repeat dispatch((each members).0, decoding: (each members).1, options: options))
        var cancels: [@Sendable () -> Void] = []
        for call in repeat each calls { cancels.append(call.cancel) }
        let cancelAll = cancels
        return await withTaskCancellationHandler {
            (repeat await (each calls).result)
        } onCancel: {
            for cancel in cancelAll { cancel() }
        }
    }
}
