#if Metrics
public import CoreMetrics
import Foundation
public import Logging
package import Courier

/// Captures log lines (message and metadata rendered as text).
public final class CapturingLog: Sendable {
    public init() {}
    package let lines = Locked<[(level: Logger.Level, text: String)]>([])

    public struct Handler: LogHandler {
        let sink: CapturingLog
        public var metadata: Logger.Metadata = [:]
        public var metadataProvider: Logger.MetadataProvider?
        public var logLevel: Logger.Level = .trace
        public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        public func log(event: LogEvent) {
            let all = metadata.merging(event.metadata ?? [:]) { $1 }
            let text = "\(event.message) \(all.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " "))"
            sink.lines.withLock { $0.append((event.level, text)) }
        }
    }

    public var logger: Logger { Logger(label: "test") { _ in Handler(sink: self) } }
    public var texts: [String] { lines.withLock { $0.map(\.text) } }
}

/// A metrics factory keeping every counter total and timer sample by label and dimensions.
public final class TestMetrics: MetricsFactory {
    public init() {}
    public final class Counter: CounterHandler {
        package let value = Locked<Int64>(0)
        public func increment(by amount: Int64) { value.withLock { $0 += amount } }
        public func reset() { value.withLock { $0 = 0 } }
    }
    public final class Timer: TimerHandler {
        package let samples = Locked<[Int64]>([])
        public func recordNanoseconds(_ duration: Int64) { samples.withLock { $0.append(duration) } }
    }
    public final class Recorder: RecorderHandler {
        public func record(_ value: Int64) {}
        public func record(_ value: Double) {}
    }

    private let counters = Locked<[String: Counter]>([:])
    private let timers = Locked<[String: Timer]>([:])

    public static func key(_ label: String, _ dimensions: [(String, String)]) -> String {
        label + "{" + dimensions.map { "\($0.0)=\($0.1)" }.joined(separator: ",") + "}"
    }

    public func makeCounter(label: String, dimensions: [(String, String)]) -> any CounterHandler {
        counters.withLock { counters in
            let key = Self.key(label, dimensions)
            if let existing = counters[key] { return existing }
            let made = Counter()
            counters[key] = made
            return made
        }
    }
    public func makeRecorder(label: String, dimensions: [(String, String)], aggregate: Bool) -> any RecorderHandler { Recorder() }
    public func makeTimer(label: String, dimensions: [(String, String)]) -> any TimerHandler {
        timers.withLock { timers in
            let key = Self.key(label, dimensions)
            if let existing = timers[key] { return existing }
            let made = Timer()
            timers[key] = made
            return made
        }
    }
    public func destroyCounter(_ handler: any CounterHandler) {}
    public func destroyRecorder(_ handler: any RecorderHandler) {}
    public func destroyTimer(_ handler: any TimerHandler) {}

    public func counter(_ key: String) -> Int64 { counters.withLock { $0[key]?.value.withLock { $0 } ?? 0 } }
    public func timerSamples(_ key: String) -> [Int64] { timers.withLock { $0[key]?.samples.withLock { $0 } ?? [] } }
    public var counterKeys: [String] { counters.withLock { Array($0.keys).sorted() } }
}
#endif
