#if Metrics
import CourierObservability
import CourierTesting
import CoreMetrics
import Foundation
import HTTPTypes
import Logging
import CourierTestSupport
import Testing

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
        _ = try await client.send(Fixture.endpoint("/x"))
        #expect(box.events == ["a.willStart get/x", "b.willStart get/x", "a.willStop true", "b.willStop true",
                               "a.didStop true", "b.didStop true"])
        let failing = CourierClient(transport: InMemoryTransport.failing(.timedOut),
                             configuration: .init(interceptors: [LifecycleInterceptor(observers: [a])]))
        let failure = await #expect(throws: CourierError.self) { _ = try await failing.send(Fixture.endpoint("/y")) }
        #expect(failure?.code == .timedOut)
        #expect(box.events.suffix(3) == ["a.willStart get/y", "a.willStop false", "a.didStop false"])
    }

    @Test func loggingRedactsSecrets() async throws {
        let log = CapturingLog()
        let client = CourierClient(transport: InMemoryTransport.successful(),
                            configuration: .init(interceptors: [LoggingInterceptor(logger: log.logger)]))
        var endpoint = Fixture.endpoint("/me", query: [
            QueryItem("token", "s3cr3t-token"), QueryItem("auth_token", "s3cr3t-auth"), QueryItem("page", "2"),
            QueryItem("q", "a b"),
        ])
        endpoint.headers[.authorization] = "Bearer s3cr3t-bearer"
        endpoint.headers[HTTPField.Name("X-Session-Token")!] = "s3cr3t-session"
        endpoint.headers[HTTPField.Name("X-Trace")!] = "trace-1"
        _ = try await client.send(endpoint)
        let all = log.texts.joined(separator: "\n")
        #expect(!all.contains("s3cr3t"))
        // The URL as sent (still percent-encoded), only the secret values replaced.
        #expect(all.contains("/me?token=REDACTED&auth_token=REDACTED&page=2&q=a%20b"))
        #expect(all.contains(#""authorization": "REDACTED""#))
        #expect(all.contains(#""x-session-token": "REDACTED""#))
        #expect(all.contains(#""x-trace": "trace-1""#))
        #expect(all.contains("← 200"))
        #expect(all.contains("call=#"))
    }

    @Test func loggingFollowsItsRedactionPolicy() async throws {
        let log = CapturingLog()
        var logging = LoggingInterceptor(logger: log.logger)
        logging.redaction.names.insert("tenant")
        logging.redaction.exemptions.insert("keyword")
        let client = CourierClient(transport: InMemoryTransport.successful(), configuration: .init(interceptors: [logging]))
        let endpoint = Fixture.endpoint("/s",
                                        query: [QueryItem("tenant", "acme"), QueryItem("keyword", "swift")])
        _ = try await client.send(endpoint)
        let all = log.texts.joined(separator: "\n")
        #expect(all.contains("tenant=REDACTED&keyword=swift"))
    }

    @Test func endpointTagsAreLogMetadataAndMetricsDimensions() async throws {
        let log = CapturingLog()
        let metrics = TestMetrics()
        let client = CourierClient(
            transport: InMemoryTransport.successful(),
            configuration: .init(interceptors: [LoggingInterceptor(logger: log.logger), MetricsInterceptor(factory: metrics)]))
        var tagged = Fixture.endpoint("/t", module: Fixture.module("shop"))
        tagged.tags = ["screen:cart", "checkout"]
        _ = try await client.send(tagged)
        _ = try await client.send(Fixture.endpoint("/u", module: Fixture.module("shop")))
        let lines = log.texts
        #expect(lines.filter { $0.contains("endpoint=get/t") }.allSatisfy { $0.contains("tags=checkout,screen:cart") })
        #expect(lines.filter { $0.contains("endpoint=get/t") }.count == 2)
        #expect(lines.filter { $0.contains("endpoint=get/u") }.allSatisfy { !$0.contains("tags=") })
        #expect(metrics.counter(
            "courier_calls_total{module=shop,endpoint=get/t,tags=checkout,screen:cart,outcome=success,source=network}") == 1)
        #expect(metrics.counter("courier_calls_total{module=shop,endpoint=get/u,tags=,outcome=success,source=network}") == 1)
        #expect(metrics.timerSamples("courier_call_duration{module=shop,endpoint=get/t,tags=checkout,screen:cart}").count == 1)
    }

    @Test func loggingLogsFailuresAtWarning() async throws {
        let log = CapturingLog()
        let client = CourierClient(transport: InMemoryTransport.failing(.cannotConnect),
                            configuration: .init(interceptors: [LoggingInterceptor(logger: log.logger)]))
        let failure = await #expect(throws: CourierError.self) { _ = try await client.send(Fixture.endpoint("/x")) }
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
        let endpoint = Fixture.endpoint("/m", module: Fixture.module("shop"))
        _ = try await client.send(endpoint)
        let notFound = await #expect(throws: CourierError.self) { _ = try await client.send(endpoint) }
        #expect(notFound?.code == .notFound)
        let timedOut = await #expect(throws: CourierError.self) { _ = try await client.send(endpoint) }
        #expect(timedOut?.code == .timedOut)
        let base = "module=shop,endpoint=get/m,tags="
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
#endif
