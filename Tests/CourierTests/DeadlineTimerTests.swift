import Courier
import CourierTestSupport
import Foundation
import Testing

/// The one timer thread behind every transport's timeout (`DeadlineTimer`): it runs what is due, never what was
/// cancelled, in deadline order, and keeps memory proportional to what is pending.
@Suite struct DeadlineTimerTests {
    /// Flags set by timer actions, read by the test.
    final class Flags: Sendable {
        let fired = Locked<[Int]>([])
        func fire(_ index: Int) { fired.withLock { $0.append(index) } }
        var all: [Int] { fired.withLock { $0 } }
    }

    @Test func aDueActionRunsAndCannotBeCancelledAfterwards() async {
        let timer = DeadlineTimer()
        let flags = Flags()
        let registration = timer.schedule(after: .milliseconds(5)) { flags.fire(1) }
        #expect(await eventually { flags.all == [1] })
        #expect(!timer.cancel(registration))
    }

    @Test func aCancelledActionNeverRuns() async {
        let timer = DeadlineTimer()
        let flags = Flags()
        // Seconds away: a test thread paused between scheduling and cancelling must not see the action run.
        let cancelled = timer.schedule(after: .seconds(2)) { flags.fire(1) }
        #expect(timer.cancel(cancelled))
        #expect(!timer.cancel(cancelled))
        // A later deadline fires only after the cancelled one's time has passed.
        _ = timer.schedule(after: .seconds(2) + .milliseconds(30)) { flags.fire(2) }
        #expect(await eventually { flags.all == [2] })
    }

    @Test func actionsRunInDeadlineOrderWhateverTheOrderOfScheduling() async {
        let timer = DeadlineTimer()
        let flags = Flags()
        // A second apart: a pause of the test thread between two of these calls must not reorder the deadlines.
        _ = timer.schedule(after: .seconds(3)) { flags.fire(3) }
        _ = timer.schedule(after: .seconds(2)) { flags.fire(2) }
        _ = timer.schedule(after: .seconds(1)) { flags.fire(1) }
        _ = timer.schedule(after: .seconds(-1)) { flags.fire(0) }
        #expect(await eventually { flags.all.count == 4 })
        #expect(flags.all == [0, 1, 2, 3])
    }

    @Test func cancelledDeadlinesDoNotAccumulate() {
        let timer = DeadlineTimer()
        for _ in 0..<100_000 {
            let registration = timer.schedule(after: .seconds(60)) {}
            #expect(timer.cancel(registration))
        }
        // Compaction keeps at most a bounded number of cancelled entries (plus the pending ones: none).
        #expect(timer.storedCount <= 130)
    }

    /// A call schedules its timeout and cancels it a few microseconds later; the thread must not be woken for
    /// every call (it sleeps until the earliest deadline, cancelled or not, and drops it then).
    /// The deadlines are an hour away: a test starved for minutes (ThreadSanitizer on two cores) must not see
    /// them pass, or the emptied heap rightly wakes the thread for the next one.
    @Test func callsThatCancelTheirTimeoutsDoNotWakeTheThreadEachTime() async throws {
        let timer = DeadlineTimer()
        for _ in 0..<10 {
            let registration = timer.schedule(after: .seconds(3600)) {}
            #expect(timer.cancel(registration))
            // Time for the thread to wake and look at its heap.
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(timer.wakeCount == 1)
    }

    /// A short deadline scheduled while the thread sleeps until a long (cancelled) one still fires on time.
    @Test func anEarlierDeadlineWakesTheThreadSleepingUntilALaterOne() async throws {
        let timer = DeadlineTimer()
        let flags = Flags()
        let long = timer.schedule(after: .seconds(3600)) { flags.fire(1) }
        #expect(timer.cancel(long))
        try await Task.sleep(for: .milliseconds(10))
        _ = timer.schedule(after: .milliseconds(5)) { flags.fire(2) }
        #expect(await eventually { flags.all == [2] })
        #expect(timer.wakeCount == 2)
    }

    @Test func anAbsurdDurationIsAcceptedAndNeverFiresSoon() {
        let timer = DeadlineTimer()
        let registration = timer.schedule(after: .seconds(Int64.max)) {}
        #expect(timer.cancel(registration))
    }
}
