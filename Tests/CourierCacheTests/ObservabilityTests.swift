import CourierCache
import CourierTesting
import CoreMetrics
import Foundation
import HTTPTypes
import Logging
import Testing

/// Captures log lines (message and metadata rendered as text).
final class CapturingLog: Sendable {
    let lines = Locked<[(level: Logger.Level, text: String)]>([])

    struct Handler: LogHandler {
        let sink: CapturingLog
        var metadata: Logger.Metadata = [:]
        var metadataProvider: Logger.MetadataProvider?
        var logLevel: Logger.Level = .trace
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(event: LogEvent) {
            let all = metadata.merging(event.metadata ?? [:]) { $1 }
            let text = "\(event.message) \(all.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " "))"
            sink.lines.withLock { $0.append((event.level, text)) }
        }
    }

    var logger: Logger { Logger(label: "test") { _ in Handler(sink: self) } }
    var texts: [String] { lines.withLock { $0.map(\.text) } }
}

/// A metrics factory keeping every counter total and timer sample by label and dimensions.
final class TestMetrics: MetricsFactory {
    final class Counter: CounterHandler {
        let value = Locked<Int64>(0)
        func increment(by amount: Int64) { value.withLock { $0 += amount } }
        func reset() { value.withLock { $0 = 0 } }
    }
    final class Timer: TimerHandler {
        let samples = Locked<[Int64]>([])
        func recordNanoseconds(_ duration: Int64) { samples.withLock { $0.append(duration) } }
    }
    final class Recorder: RecorderHandler {
        func record(_ value: Int64) {}
        func record(_ value: Double) {}
    }

    private let counters = Locked<[String: Counter]>([:])
    private let timers = Locked<[String: Timer]>([:])

    static func key(_ label: String, _ dimensions: [(String, String)]) -> String {
        label + "{" + dimensions.map { "\($0.0)=\($0.1)" }.joined(separator: ",") + "}"
    }

    func makeCounter(label: String, dimensions: [(String, String)]) -> any CounterHandler {
        counters.withLock { counters in
            let key = Self.key(label, dimensions)
            if let existing = counters[key] { return existing }
            let made = Counter()
            counters[key] = made
            return made
        }
    }
    func makeRecorder(label: String, dimensions: [(String, String)], aggregate: Bool) -> any RecorderHandler { Recorder() }
    func makeTimer(label: String, dimensions: [(String, String)]) -> any TimerHandler {
        timers.withLock { timers in
            let key = Self.key(label, dimensions)
            if let existing = timers[key] { return existing }
            let made = Timer()
            timers[key] = made
            return made
        }
    }
    func destroyCounter(_ handler: any CounterHandler) {}
    func destroyRecorder(_ handler: any RecorderHandler) {}
    func destroyTimer(_ handler: any TimerHandler) {}

    func counter(_ key: String) -> Int64 { counters.withLock { $0[key]?.value.withLock { $0 } ?? 0 } }
    func timerSamples(_ key: String) -> [Int64] { timers.withLock { $0[key]?.samples.withLock { $0 } ?? [] } }
    var counterKeys: [String] { counters.withLock { Array($0.keys).sorted() } }
}

final class RecordingObserver: CallLifecycleObserver {
    let name: String
    let sink: SharedEvents
    init(_ name: String, into sink: SharedEvents) {
        self.name = name
        self.sink = sink
    }
    // Shared log of events across observers.
    func callWillStart(_ call: CallInfo) { log("\(name).willStart \(call.endpoint)") }
    func callWillStop(_ call: CallInfo, outcome: CallOutcome) { log("\(name).willStop \(outcome.isSuccess)") }
    func callDidStop(_ call: CallInfo, outcome: CallOutcome) { log("\(name).didStop \(outcome.isSuccess)") }
    private func log(_ event: String) { sink.append(event) }
}

@Suite struct ObservabilityTests {
    @Test func lifecycleObserversHearStartWillStopAndDidStopInOrder() async throws {
        let box = SharedEvents()
        let a = box.observer("a")
        let b = box.observer("b")
        let client = CourierClient(transport: InMemoryTransport.successful(),
                            configuration: .init(interceptors: [LifecycleInterceptor(observers: [a, b])]))
        _ = try await client.send(Fixture.endpoint("/x", policy: .ignore))
        #expect(box.events == ["a.willStart get/x", "b.willStart get/x", "a.willStop true", "b.willStop true",
                               "a.didStop true", "b.didStop true"])
        let failing = CourierClient(transport: InMemoryTransport.failing(.timedOut),
                             configuration: .init(interceptors: [LifecycleInterceptor(observers: [a])]))
        let failure = await #expect(throws: CourierError.self) { _ = try await failing.send(Fixture.endpoint("/y", policy: .ignore)) }
        #expect(failure?.code == .timedOut)
        #expect(box.events.suffix(3) == ["a.willStart get/y", "a.willStop false", "a.didStop false"])
    }

    @Test func loggingRedactsSecrets() async throws {
        let log = CapturingLog()
        let client = CourierClient(transport: InMemoryTransport.successful(),
                            configuration: .init(interceptors: [LoggingInterceptor(logger: log.logger)]))
        var endpoint = Fixture.endpoint("/me", policy: .ignore,
                                        query: [QueryItem("token", "s3cr3t-token"), QueryItem("page", "2")])
        endpoint.headers[.authorization] = "Bearer s3cr3t-bearer"
        endpoint.headers[HTTPField.Name("X-Trace")!] = "trace-1"
        _ = try await client.send(endpoint)
        let all = log.texts.joined(separator: "\n")
        #expect(!all.contains("s3cr3t"))
        #expect(all.contains("token=<redacted>"))
        #expect(all.contains("page=2"))
        #expect(all.contains(#""authorization": "<redacted>""#))
        #expect(all.contains(#""x-trace": "trace-1""#))
        #expect(all.contains("← 200"))
        #expect(all.contains("call=#"))
    }

    @Test func loggingLogsFailuresAtWarning() async throws {
        let log = CapturingLog()
        let client = CourierClient(transport: InMemoryTransport.failing(.cannotConnect),
                            configuration: .init(interceptors: [LoggingInterceptor(logger: log.logger)]))
        let failure = await #expect(throws: CourierError.self) { _ = try await client.send(Fixture.endpoint("/x", policy: .ignore)) }
        #expect(failure?.code == .cannotConnect)
        let warnings = log.lines.withLock { $0.filter { $0.level == .warning }.map(\.text) }
        #expect(warnings.count == 1)
        #expect(warnings.first?.contains("cannotConnect") == true)
    }

    @Test func metricsCountCallsAndTimeThemPerModule() async throws {
        let metrics = TestMetrics()
        let count = Locked(0)
        let transport = InMemoryTransport { _, _ in
            let n = count.withLock { $0 += 1; return $0 }
            if n == 3 { throw TransportFailure.timedOut.error() }
            return n == 2 ? jsonResponse(.notFound, "{}") : jsonResponse()
        }
        let client = CourierClient(transport: transport,
                            configuration: .init(interceptors: [MetricsInterceptor(factory: metrics)]))
        let endpoint = Fixture.endpoint("/m", policy: .ignore, module: Fixture.module("shop"))
        _ = try await client.send(endpoint)
        let notFound = await #expect(throws: CourierError.self) { _ = try await client.send(endpoint) }
        #expect(notFound?.code == .notFound)
        let timedOut = await #expect(throws: CourierError.self) { _ = try await client.send(endpoint) }
        #expect(timedOut?.code == .timedOut)
        let base = "module=shop,endpoint=get/m"
        #expect(metrics.counter("courier_calls_total{\(base),outcome=success,source=network}") == 1)
        #expect(metrics.counter("courier_calls_total{\(base),outcome=failure,source=network}") == 1)   // the 404
        #expect(metrics.counter("courier_calls_total{\(base),outcome=failure,source=none}") == 1)      // the timeout
        #expect(metrics.counter("courier_call_failures_total{\(base),code=notFound}") == 1)
        #expect(metrics.counter("courier_call_failures_total{\(base),code=timedOut}") == 1)
        let samples = metrics.timerSamples("courier_call_duration{\(base)}")
        #expect(samples.count == 3)
        #expect(samples.allSatisfy { $0 > 0 })
    }
}

/// Events shared by several observers, in order.
final class SharedEvents: Sendable {
    private let store = Locked<[String]>([])
    var events: [String] { store.withLock { $0 } }
    func observer(_ name: String) -> RecordingObserver { RecordingObserver(name, into: self) }
    func append(_ event: String) { store.withLock { $0.append(event) } }
}
