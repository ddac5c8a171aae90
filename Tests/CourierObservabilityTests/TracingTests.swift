#if Tracing
import CourierObservability
import CourierTestSupport
import CourierTesting
import Foundation
import HTTPTypes
import InMemoryTracing
import Instrumentation
import Testing
import Tracing

/// A tracer that records spans in memory (swift-distributed-tracing's `InMemoryTracer`, with W3C-sized
/// hexadecimal ids) and propagates them as W3C Trace Context does: `traceparent: 00-<trace>-<parent span>-01`.
struct W3CTestTracer: Tracer {
    let recorder = InMemoryTracer(idGenerator: .init(
        nextTraceID: { randomHex(bytes: 16) }, nextSpanID: { randomHex(bytes: 8) }))

    func startSpan<Instant: TracerInstant>(
        _ operationName: String, context: @autoclosure () -> ServiceContext, ofKind kind: SpanKind,
        at instant: @autoclosure () -> Instant, function: String, file fileID: String, line: UInt
    ) -> InMemorySpan {
        recorder.startSpan(operationName, context: context(), ofKind: kind, at: instant(), function: function,
                           file: fileID, line: line)
    }

    func forceFlush() {}

    func inject<Carrier, Inject: Injector>(_ context: ServiceContext, into carrier: inout Carrier, using injector: Inject)
    where Inject.Carrier == Carrier {
        guard let span = context.inMemorySpanContext else { return }
        injector.inject("00-\(span.traceID)-\(span.spanID)-01", forKey: "traceparent", into: &carrier)
    }

    func extract<Carrier, Extract: Extractor>(_ carrier: Carrier, into context: inout ServiceContext, using extractor: Extract)
    where Extract.Carrier == Carrier {
        guard let header = extractor.extract(key: "traceparent", from: carrier) else { return }
        let parts = header.split(separator: "-").map(String.init)
        guard parts.count == 4 else { return }
        context.inMemorySpanContext = InMemorySpanContext(traceID: parts[1], spanID: parts[2], parentSpanID: nil)
    }

    var finishedSpans: [FinishedInMemorySpan] { recorder.finishedSpans }
}

private func randomHex(bytes: Int) -> String {
    (0..<bytes).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
}

@Suite struct TracingTests {
    /// A server-side view of each request the transport was given.
    final class Captured: Sendable {
        let requests = Locked<[HTTPRequest]>([])
    }

    func client(_ tracer: W3CTestTracer, captured: Captured, status: HTTPResponse.Status = .ok,
                extra: [any Interceptor] = []) -> CourierClient {
        let transport = InMemoryTransport { request, _ in
            captured.requests.withLock { $0.append(request) }
            return jsonResponse(status, #"{"code":0,"data":{"id":7}}"#)
        }
        return CourierClient(transport: transport,
                             configuration: .init(interceptors: [TracingInterceptor(tracer: tracer)] + extra))
    }

    @Test func aSpanPerCallAndPerStageWithTheParentInTraceparent() async throws {
        let tracer = W3CTestTracer()
        let captured = Captured()
        var endpoint = Fixture.endpoint("/users/7", module: Fixture.module("users"))
        endpoint.tags = ["profile"]
        let client = client(tracer, captured: captured)
        let stageNames = client.pipeline(for: endpoint).stageNames
        _ = try await client.send(endpoint)

        let spans = tracer.finishedSpans
        let call = try #require(spans.first { $0.operationName == "users get/users/7" })
        #expect(call.kind == .client)
        #expect(call.parentSpanID == nil)
        #expect(call.attributes["http.request.method"]?.toSpanAttribute() == "GET")
        #expect(call.attributes["http.response.status_code"]?.toSpanAttribute() == 200)
        #expect(call.attributes["url.full"]?.toSpanAttribute() == "http://api.test/users/7")
        #expect(call.attributes["courier.tags"]?.toSpanAttribute() == "profile")

        // One span per stage after the tracing stage, the transport included, each the child of the one around it.
        let stages = spans.filter { $0.operationName.hasPrefix("stage ") }
        let expected = Array(stageNames.drop { $0 != "Tracing" }.dropFirst())
        #expect(stages.map { String($0.operationName.dropFirst("stage ".count)) }.sorted() == expected.sorted())
        var parent = call.spanID
        for name in expected {
            let span = try #require(stages.first { $0.operationName == "stage \(name)" })
            #expect(span.parentSpanID == parent, "stage \(name)")
            #expect(span.traceID == call.traceID)
            parent = span.spanID
        }
        #expect(stages.last { $0.operationName == "stage transport" }?.kind == .client)

        // The request on the wire carries the call's span as the W3C parent.
        let sent = try #require(captured.requests.withLock { $0.first })
        let traceparent = try #require(sent.headerFields[HTTPField.Name("traceparent")!])
        #expect(traceparent == "00-\(call.traceID)-\(call.spanID)-01")
        #expect(traceparent.wholeMatch(of: /00-[0-9a-f]{32}-[0-9a-f]{16}-01/) != nil)
    }

    @Test func aCallerSpanBecomesTheCallSpansParent() async throws {
        let tracer = W3CTestTracer()
        let captured = Captured()
        let client = client(tracer, captured: captured)
        try await tracer.withSpan("screen load") { outer in
            _ = try await client.send(Fixture.endpoint("/feed"))
            let call = try #require(tracer.recorder.finishedSpans.first { $0.operationName == "feed get/feed" })
            #expect(call.parentSpanID == outer.spanID)
            #expect(call.traceID == outer.traceID)
        }
    }

    @Test func aFailedCallRecordsTheErrorOnTheCallAndTheStages() async throws {
        let tracer = W3CTestTracer()
        let captured = Captured()
        let client = client(tracer, captured: captured, status: .notFound)
        let error = try await #require(throws: CourierError.self) { try await client.send(Fixture.endpoint("/gone")) }
        #expect(error.code == .notFound)
        let call = try #require(tracer.finishedSpans.first { $0.operationName == "feed get/gone" })
        #expect(call.status?.code == .error)
        #expect(call.status?.message == "notFound")
        #expect(call.attributes["http.response.status_code"]?.toSpanAttribute() == 404)
        let transport = try #require(tracer.finishedSpans.first { $0.operationName == "stage transport" })
        #expect(transport.status == nil)
    }

    @Test func stageSpansCanBeTurnedOff() async throws {
        let tracer = W3CTestTracer()
        let client = CourierClient(
            transport: InMemoryTransport { _, _ in jsonResponse() },
            configuration: .init(interceptors: [TracingInterceptor(tracer: tracer, tracesStages: false)]))
        _ = try await client.send(Fixture.endpoint("/quiet"))
        #expect(tracer.finishedSpans.map(\.operationName) == ["feed get/quiet"])
    }
}
#endif
