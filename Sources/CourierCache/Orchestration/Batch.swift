/// Several calls started together that succeed only together (YTKBatchRequest): on the first failure the
/// other members are cancelled and the failure is reported with the call that failed.
///
/// ```swift
/// let batch = client.batch([.profile(id: 7), .friends(id: 7), .settings])
/// do {
///     let replies = try await batch.replies        // in the order given
/// } catch let error as CourierError {
///     print(error.context.endpoint ?? "", error.context.callID ?? "")   // the member that failed
/// }
/// batch.cancel()                                    // cancels every member still running
/// ```
public struct CallBatch: Sendable {
    /// The member calls, in the order given.
    public let calls: [Call<Value>]
    /// The members' endpoint names, in the same order.
    public let endpointNames: [String]

    /// Every member's reply, in order. Throws the first member failure (its context names the endpoint
    /// and call; its detail says which member), after cancelling the others. Cancelling the awaiting task
    /// cancels the batch.
    public var replies: [Reply<Value>] {
        get async throws {
            try await withTaskCancellationHandler {
                try await collect()
            } onCancel: {
                cancel()
            }
        }
    }

    private func collect() async throws -> [Reply<Value>] {
        try await withThrowingTaskGroup(of: (Int, Result<Reply<Value>, CourierError>).self) { group in
            for (index, call) in calls.enumerated() {
                group.addTask {
                    do {
                        return (index, .success(try await call.reply))
                    } catch {
                        return (index, .failure(CourierError.wrap(error, as: .transportFailure)))
                    }
                }
            }
            var replies = [Reply<Value>?](repeating: nil, count: calls.count)
            while let (index, result) = try await group.next() {
                switch result {
                case .success(let reply):
                    replies[index] = reply
                case .failure(var error):
                    cancel()
                    group.cancelAll()
                    let note = "batch member \(index + 1) of \(calls.count) (\(endpointNames[index])) failed"
                    error.detail = [note, error.detail].compactMap { $0 }.joined(separator: ": ")
                    throw error
                }
            }
            return replies.compactMap { $0 }
        }
    }

    /// Cancels every member.
    public func cancel() {
        for call in calls { call.cancel() }
    }
}

extension Client {
    /// Starts every endpoint now as one ``CallBatch``.
    public func batch(_ endpoints: [Endpoint], options: CallOptions = CallOptions()) -> CallBatch {
        CallBatch(calls: endpoints.map { dispatch($0, options: options) }, endpointNames: endpoints.map(\.name))
    }
}
