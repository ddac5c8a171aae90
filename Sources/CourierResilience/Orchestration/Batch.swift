/// Several calls started together that succeed only together (YTKBatchRequest): on the first failure the
/// other members are cancelled and the failure is reported with the call that failed. Members decode into
/// one type `T` (`Value` for raw calls); for members of different types, see
/// `CourierClient.batch(_:options:)`.
///
/// ```swift
/// let batch = client.batch([.profile(id: 7), .profile(id: 8)], decoding: Profile.self)
/// do {
///     let replies = try await batch.replies        // [Reply<Profile>], in the order given
/// } catch let error as CourierError {
///     print(error.context.endpoint ?? "", error.context.callID ?? "")   // the member that failed
/// }
/// batch.cancel()                                    // cancels every member still running
/// ```
public struct CallBatch<T: Sendable>: Sendable {
    /// The member calls, in the order given.
    public let calls: [Call<T>]
    /// The members' endpoint names, in the same order.
    public let endpointNames: [String]

    /// Every member's reply, in order. Throws the first member failure (its context names the endpoint
    /// and call; its detail says which member), after cancelling the others. Cancelling the awaiting task
    /// cancels the batch.
    public var replies: [Reply<T>] {
        get async throws {
            try await withTaskCancellationHandler {
                try await BatchMembers(calls.map(BatchMember.init), names: endpointNames).awaitAll()
                var replies: [Reply<T>] = []
                for call in calls { replies.append(try await call.reply) }
                return replies
            } onCancel: {
                cancel()
            }
        }
    }

    /// Cancels every member.
    public func cancel() {
        for call in calls { call.cancel() }
    }
}

/// One batch member, whatever it decodes into: how to wait for it and how to cancel it.
struct BatchMember: Sendable {
    let wait: @Sendable () async -> CourierError?
    let cancel: @Sendable () -> Void

    init<T: Sendable>(_ call: Call<T>) {
        wait = {
            do {
                _ = try await call.reply
                return nil
            } catch {
                return CourierError.wrap(error, as: .transportFailure)
            }
        }
        cancel = { call.cancel() }
    }
}

/// Waits for batch members together: returns when all succeeded, or throws the first failure (annotated with
/// the member) after cancelling the others.
struct BatchMembers: Sendable {
    let members: [BatchMember]
    let names: [String]

    init(_ members: [BatchMember], names: [String]) {
        self.members = members
        self.names = names
    }

    func awaitAll() async throws {
        try await withThrowingTaskGroup(of: (Int, CourierError?).self) { group in
            for (index, member) in members.enumerated() {
                group.addTask { (index, await member.wait()) }
            }
            while let (index, failure) = try await group.next() {
                guard var error = failure else { continue }
                for member in members { member.cancel() }
                group.cancelAll()
                let note = "batch member \(index + 1) of \(members.count) (\(names[index])) failed"
                error.detail = [note, error.detail].compactMap { $0 }.joined(separator: ": ")
                throw error
            }
        }
    }
}

extension CourierClient {
    /// Starts every endpoint now as one ``CallBatch`` of raw replies.
    public func batch(_ endpoints: [Endpoint], options: CallOptions = CallOptions()) -> CallBatch<Value> {
        CallBatch(calls: endpoints.map { dispatch($0, options: options) }, endpointNames: endpoints.map(\.name))
    }

    /// Starts every endpoint now as one ``CallBatch``, each reply decoded into `type`.
    public func batch<T: Decodable & Sendable>(
        _ endpoints: [Endpoint], decoding type: T.Type, options: CallOptions = CallOptions()
    ) -> CallBatch<T> {
        CallBatch(
            calls: endpoints.map { dispatch($0, decoding: type, options: options) }, endpointNames: endpoints.map(\.name))
    }

    /// Sends members that decode into different types together and returns their typed replies, in order;
    /// the first failure cancels the others and is thrown with the member named (as ``CallBatch``).
    /// Cancelling the awaiting task cancels every member.
    ///
    /// ```swift
    /// let (profile, friends, settings) = try await client.batch(
    ///     (.profile(id: 7), Profile.self), (.friends(id: 7), [Friend].self), (.settings, Value.self))
    /// print(profile.value.name, friends.value.count)
    /// ```
    public func batch<each T: Decodable & Sendable>(
        _ members: repeat (Endpoint, (each T).Type), options: CallOptions = CallOptions()
    ) async throws -> (repeat Reply<each T>) {
        let calls = (repeat dispatch((each members).0, decoding: (each members).1, options: options))
        var waiters: [BatchMember] = []
        for call in repeat each calls { waiters.append(BatchMember(call)) }
        var names: [String] = []
        for member in repeat each members { names.append(member.0.name) }
        let all = BatchMembers(waiters, names: names)
        try await withTaskCancellationHandler {
            try await all.awaitAll()
        } onCancel: {
            for member in all.members { member.cancel() }
        }
        return (repeat try await (each calls).reply)
    }
}
