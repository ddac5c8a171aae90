import Courier
import CourierTesting
import Foundation
import HTTPTypes

/// The pipeline's own cost: calls through 0 and 10 no-op interceptors on the in-memory transport.
enum ChainBenchmarks {
    struct NoOp: Interceptor {
        var name: String { "NoOp" }
        func intercept(_ request: CourierRequest, context: InterceptorContext, next: InterceptorNext) async throws
            -> CourierResponse
        {
            try await next(request)
        }
    }

    /// Answers itself with an already-decoded value, so only the chain is measured.
    struct Answer: Interceptor {
        var name: String { "Answer" }
        func intercept(_ request: CourierRequest, context: InterceptorContext, next: InterceptorNext) async throws
            -> CourierResponse
        {
            CourierResponse(status: .ok, value: ["code": 0])
        }
    }

    static func run(_ h: inout Harness) async throws {
        let body = Data(#"{"code":0}"#.utf8)
        let transport = InMemoryTransport(recording: false) { _, _ in
            (HTTPResponse(status: .ok, headerFields: [.contentType: "application/json"]), body)
        }
        let service = APIService(name: "bench", baseURL: URL(string: "http://bench.local")!)
        let plain = APIModule(name: "plain", service: service)
        var tenModule = APIModule(name: "ten", service: service)
        tenModule.interceptors = Array(repeating: NoOp(), count: 10)
        let client = CourierClient(transport: transport)

        let zero = Endpoint(name: "e", module: plain, path: "/x")
        let ten = Endpoint(name: "e", module: tenModule, path: "/x")
        // The floor: the in-memory transport called directly, with the request a call would send (the
        // client's own request builder is internal; this is the same head for a GET without a body).
        func request(for endpoint: Endpoint) throws -> CourierRequest {
            let url = try endpoint.url()
            return CourierRequest(head: HTTPRequest(method: endpoint.method, scheme: url.scheme,
                                                    authority: url.host.map { host in url.port.map { "\(host):\($0)" } ?? host },
                                                    path: url.path.isEmpty ? "/" : url.path))
        }
        let direct = try request(for: zero)
        let floor = try await h.measureAsync("in-memory transport alone (no Courier)") {
            _ = try await transport.send(direct.head, body: nil, options: TransportOptions())
        }
        let baseline = try await h.measureAsync("send, 0 interceptors (codec + in-memory transport)") {
            _ = try await client.send(zero)
        }
        let full = try await h.measureAsync("send, 10 no-op interceptors") {
            _ = try await client.send(ten)
        }
        _ = baseline

        // The chain alone, without the client's call bookkeeping: 10 no-ops then an answering stage.
        var chainOnly = ten
        chainOnly.interceptors = [Answer()]
        let pipeline = client.pipeline(for: chainOnly)
        let chainRequest = try request(for: chainOnly)
        let context = InterceptorContext(endpoint: chainOnly)
        let chain = try await h.measureAsync("pipeline.execute, 10 no-ops + answering stage") {
            _ = try await pipeline.execute(chainRequest, context: context)
        }

        // Where a send() spends its time, step by step.
        print("  breakdown of one send():")
        try h.measure("  endpoint.url()") { _ = try zero.url() }
        h.measure("  client.pipeline(for:)") { _ = client.pipeline(for: ten) }
        let tenPipeline = client.pipeline(for: ten)
        let tenRequest = try request(for: ten)
        let tenContext = InterceptorContext(endpoint: ten)
        try await h.measureAsync("  pipeline.execute, 10 no-ops + codec + in-memory transport") {
            _ = try await tenPipeline.execute(tenRequest, context: tenContext)
        }
        await h.measureAsync("  Task { } created and awaited") { await Task { () }.value }
        try h.measure("  JSONCodec().decode(#\"{\"code\":0}\"#)") { _ = try JSONCodec().decode(body, hints: CodingHints()) }
        h.measure("  ContentFormat(contentType:)") { _ = ContentFormat(contentType: "application/json") }

        // The in-memory transport emulates the 60 s default timeout with a task group (two child tasks and a
        // timer per call); real transports time out natively. The same calls without it:
        let untimed = CourierClient(transport: transport, configuration: .init(defaultTimeout: nil))
        let untimedFull = try await h.measureAsync("send, 10 no-op interceptors, no timeout emulation") {
            _ = try await untimed.send(ten)
        }

        let overhead = full.nanosPerOp - floor.nanosPerOp
        let perInterceptor = (full.nanosPerOp - baseline.nanosPerOp) / 10
        print(String(format: "  => Courier's overhead per send() through 10 no-op interceptors (call table, chain, codec): "
                     + "%.2f µs (target < 10 µs: %@)", overhead / 1000, overhead < 10_000 ? "met" : "MISSED"))
        print(String(format: "  => the same without the in-memory transport's timeout emulation: %.2f µs (target < 10 µs: %@)",
                     (untimedFull.nanosPerOp - floor.nanosPerOp) / 1000,
                     untimedFull.nanosPerOp - floor.nanosPerOp < 10_000 ? "met" : "MISSED"))
        print(String(format: "  => whole send() with 10 no-ops: %.2f µs = %.0f calls/s; each no-op adds %.3f µs; "
                     + "the bare chain (10 no-ops + answering stage) %.2f µs",
                     full.nanosPerOp / 1000, 1e9 / full.nanosPerOp, perInterceptor / 1000, chain.nanosPerOp / 1000))
    }
}
