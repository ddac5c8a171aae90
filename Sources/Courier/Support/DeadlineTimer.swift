#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// One thread that runs actions at deadlines, for the transports' timeouts (package access).
///
/// A call's timeout is scheduled when its exchange starts and almost always cancelled a few milliseconds
/// later, when the answer arrives. Dispatch's `asyncAfter` wakes its manager thread for every schedule (a
/// write to an event descriptor, then an `epoll_wait`), which cost a quarter of a whole call through the
/// in-memory transport. Here scheduling takes the lock and pushes onto a min-heap; the thread is woken only
/// when the new deadline is earlier than the one it sleeps until. Cancelling marks the entry and leaves it in
/// the heap: the thread still sleeps until the earliest entry's deadline, cancelled or not, and drops it then
/// (dropping it at once would leave the thread waiting for the next schedule to wake it, a futex wake per
/// call). The heap is compacted once most of it is cancelled, so memory stays proportional to the pending
/// deadlines.
///
/// ```swift
/// let timeout = DeadlineTimer.shared.schedule(after: .seconds(2)) { task.cancel() }
/// let result = try await task.value
/// if !DeadlineTimer.shared.cancel(timeout) { /* the deadline passed first */ }
/// ```
package final class DeadlineTimer: @unchecked Sendable {
    /// A scheduled action. Its state is guarded by the timer's lock.
    package final class Registration: @unchecked Sendable {
        fileprivate let deadline: UInt64
        /// The action, until it runs or is cancelled.
        fileprivate var action: (@Sendable () -> Void)?

        fileprivate init(deadline: UInt64, action: @escaping @Sendable () -> Void) {
            self.deadline = deadline
            self.action = action
        }
    }

    /// The timer every transport shares.
    package static let shared = DeadlineTimer()

    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let condition: UnsafeMutablePointer<pthread_cond_t>
    /// Pending registrations (and cancelled ones not yet dropped), earliest deadline first.
    private var heap: [Registration] = []
    /// How many registrations in `heap` are cancelled.
    private var cancelledCount = 0
    private var started = false
    /// The deadline the thread sleeps until (`UInt64.max`: until it is woken).
    private var wakeAt = UInt64.max
    /// How many times a schedule woke the thread.
    private var signals = 0

    /// A timer whose thread starts with its first schedule.
    package init() {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
        condition = .allocate(capacity: 1)
        condition.initialize(to: pthread_cond_t())
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        #if !canImport(Darwin)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        #endif
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    /// Runs `action` on the timer's thread once `duration` has passed, unless cancelled first. The action
    /// must be quick (it runs on the one thread every deadline shares): cancel a task, set a flag.
    package func schedule(after duration: Duration, _ action: @escaping @Sendable () -> Void) -> Registration {
        let (seconds, attoseconds) = duration.components
        // A negative duration is due now; one beyond a century is as good as never.
        let delay: UInt64 =
            seconds < 0 ? 0
            : seconds > 3_000_000_000 ? 3_000_000_000 * 1_000_000_000
            : UInt64(seconds) * 1_000_000_000 + UInt64(max(0, attoseconds) / 1_000_000_000)
        let registration = Registration(deadline: Self.now() + delay, action: action)
        pthread_mutex_lock(mutex)
        if !started {
            started = true
            startThread()
        }
        heap.append(registration)
        siftUp(heap.count - 1)
        let wake = registration.deadline < wakeAt
        if wake {
            wakeAt = registration.deadline
            signals += 1
        }
        pthread_mutex_unlock(mutex)
        if wake { pthread_cond_signal(condition) }
        return registration
    }

    /// Cancels `registration`; returns `true` if it was still pending (its action will never run), `false`
    /// if the action already ran or is running, or it was cancelled before.
    @discardableResult
    package func cancel(_ registration: Registration) -> Bool {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        guard registration.action != nil else { return false }
        registration.action = nil
        cancelledCount += 1
        if cancelledCount > 64, cancelledCount * 2 > heap.count { compact() }
        return true
    }

    /// How many times scheduling woke the timer's thread (for tests).
    package var wakeCount: Int {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return signals
    }

    /// Pending and cancelled-but-kept registrations (for tests).
    package var storedCount: Int {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return heap.count
    }

    // MARK: The thread

    private func startThread() {
        var thread = pthread_t()
        let context = Unmanaged.passRetained(self).toOpaque()
        let status = pthread_create(&thread, nil, { context in
            let timer = Unmanaged<DeadlineTimer>.fromOpaque(context!).takeRetainedValue()
            timer.run()
            return nil
        }, context)
        precondition(status == 0, "pthread_create failed with \(status)")
        pthread_detach(thread)
    }

    private func run() {
        pthread_mutex_lock(mutex)
        while true {
            guard let top = heap.first else {
                wakeAt = .max
                pthread_cond_wait(condition, mutex)
                continue
            }
            if top.deadline <= Self.now() {
                removeTop()
                guard let action = top.action else {
                    cancelledCount -= 1
                    continue
                }
                top.action = nil
                pthread_mutex_unlock(mutex)
                action()
                pthread_mutex_lock(mutex)
                continue
            }
            wakeAt = top.deadline
            var wake = timespec(
                tv_sec: Int(top.deadline / 1_000_000_000), tv_nsec: Int(top.deadline % 1_000_000_000))
            pthread_cond_timedwait(condition, mutex, &wake)
        }
    }

    /// The monotonic clock in nanoseconds.
    private static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }

    // MARK: The heap (called with the lock held)

    private func compact() {
        heap.removeAll { $0.action == nil }
        cancelledCount = 0
        var index = heap.count / 2
        while index > 0 {
            index -= 1
            siftDown(index)
        }
    }

    private func removeTop() {
        let last = heap.removeLast()
        guard !heap.isEmpty else { return }
        heap[0] = last
        siftDown(0)
    }

    private func siftUp(_ start: Int) {
        var child = start
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].deadline < heap[parent].deadline else { return }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    private func siftDown(_ start: Int) {
        var parent = start
        while true {
            let left = 2 * parent + 1
            guard left < heap.count else { return }
            var smallest = left
            if left + 1 < heap.count, heap[left + 1].deadline < heap[left].deadline { smallest = left + 1 }
            guard heap[smallest].deadline < heap[parent].deadline else { return }
            heap.swapAt(smallest, parent)
            parent = smallest
        }
    }
}
