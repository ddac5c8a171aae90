
/// A clock for tests of retry, backoff and timeout logic: its sleeps return at once, advance its own time
/// to the deadline, and are recorded, so a test can assert the delays a policy asked for without waiting.
/// Hand it to the client (`CourierClient.Configuration.clock`); interceptors sleep on `context.clock`.
///
/// ```swift
/// let clock = RecordingClock()
/// let client = CourierClient(transport: transport, configuration: .init(clock: clock))
/// _ = try? await client.send(flakyEndpoint)
/// #expect(clock.sleeps == [.milliseconds(100), .milliseconds(200)])
/// ```
public final class RecordingClock: Clock, Sendable {
    /// A point in the clock's own time: an offset from its start.
    public struct Instant: InstantProtocol {
        /// The offset from the clock's start.
        public var offset: Duration
        public func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        public func duration(to other: Instant) -> Duration { other.offset - offset }
        public static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
    }

    private let state = Locked<(now: Instant, sleeps: [Duration])>((Instant(offset: .zero), []))

    /// A clock at offset zero with no sleeps recorded.
    public init() {}

    public var now: Instant { state.withLock { $0.now } }
    public var minimumResolution: Duration { .nanoseconds(1) }
    /// Every sleep requested so far, in order.
    public var sleeps: [Duration] { state.withLock { $0.sleeps } }

    public func sleep(until deadline: Instant, tolerance: Duration?) async throws {
        try Task.checkCancellation()
        state.withLock { state in
            state.sleeps.append(state.now.duration(to: deadline))
            if deadline > state.now { state.now = deadline }
        }
        await Task.yield()
    }
}
