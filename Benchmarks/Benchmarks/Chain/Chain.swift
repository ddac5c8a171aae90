import Benchmark
import BenchmarkSupport
import Courier
import CourierTesting
import Foundation
import HTTPTypes

/// The pipeline's own cost: whole `send()` calls through 0 and 10 no-op interceptors on the in-memory transport
/// (with and without its timeout emulation), the transport alone (the floor), and one send's steps.
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

/// The request a call would send (the client's own request builder is internal; this is the same head for a GET
/// without a body).
func request(for endpoint: Endpoint) throws -> CourierRequest {
    let url = try endpoint.url()
    return CourierRequest(
        head: HTTPRequest(
            method: endpoint.method, scheme: url.scheme,
            authority: url.host.map { host in url.port.map { "\(host):\($0)" } ?? host },
            path: url.path.isEmpty ? "/" : url.path))
}

/// The floor of a cancellable call through 10 interceptors: what any design that gives each call its own task (so
/// that `cancel(id)` stops that call alone) pays before doing any work of its own. One `Task.immediate` per call,
/// ten no-op stages called through an existential (as user interceptors are), the in-memory handler at the end.
protocol FloorStage: Sendable {
    func run(_ request: Int, _ rest: ArraySlice<any FloorStage>) async throws -> Int
}

struct FloorNoOp: FloorStage {
    func run(_ request: Int, _ rest: ArraySlice<any FloorStage>) async throws -> Int {
        guard let next = rest.first else { return request &+ 1 }
        return try await next.run(request, rest.dropFirst())
    }
}

let benchmarks: @Sendable () -> Void = {
    let body = Data(#"{"code":0}"#.utf8)
    let transport = InMemoryTransport(recording: false) { _, _ in
        (HTTPResponse(status: .ok, headerFields: [.contentType: "application/json"]), body)
    }
    let service = APIService(name: "bench", baseURL: URL(string: "http://bench.local")!)
    let plain = APIModule(name: "plain", service: service)
    var tenModule = APIModule(name: "ten", service: service)
    tenModule.interceptors = Array(repeating: NoOp(), count: 10)
    let client = CourierClient(transport: transport)
    // The in-memory transport emulates the 60 s default timeout with a task group (two child tasks and a timer
    // per call); real transports time out natively.
    let untimed = CourierClient(transport: transport, configuration: .init(defaultTimeout: nil))
    let zero = Endpoint(name: "e", module: plain, path: "/x")
    let ten = Endpoint(name: "e", module: tenModule, path: "/x")
    let direct = try! request(for: zero)

    let timed = BenchmarkSupport.timed(seconds: 2, iterations: 200_000)

    Benchmark("chain.transport - InMemoryTransport", configuration: timed) { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try! await transport.send(direct.head, body: nil, options: TransportOptions()))
        }
    }
    Benchmark("chain.send0 - Courier", configuration: timed) { benchmark in
        for _ in benchmark.scaledIterations { blackHole(try! await client.send(zero)) }
    }
    Benchmark("chain.send10 - Courier", configuration: timed) { benchmark in
        for _ in benchmark.scaledIterations { blackHole(try! await client.send(ten)) }
    }
    // The same calls back to back, 1,000 per sample (the table's script divides by 1,000): the steady cost of a
    // call, without the harness's own start of every sample.
    var steady = timed
    steady.scalingFactor = .kilo
    Benchmark("chain.send10.steady - Courier", configuration: steady) { benchmark in
        for _ in benchmark.scaledIterations { blackHole(try! await client.send(ten)) }
    }
    Benchmark("chain.send0.steady - Courier", configuration: steady) { benchmark in
        for _ in benchmark.scaledIterations { blackHole(try! await client.send(zero)) }
    }
    // One timed call per sample after an untimed one in the same sample: a single call's own time, without the
    // harness's start of the sample (each async sample is a new task, started from a Dispatch thread on a pool
    // thread that has just woken), which the one-call figure of `chain.send10` includes.
    Benchmark("chain.send10.warm - Courier", configuration: timed) { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try! await client.send(ten))
            benchmark.startMeasurement()
            blackHole(try! await client.send(ten))
            benchmark.stopMeasurement()
        }
    }
    Benchmark("chain.send10.untimed - Courier", configuration: timed) { benchmark in
        for _ in benchmark.scaledIterations { blackHole(try! await untimed.send(ten)) }
    }

    // The chain alone, without the client's call bookkeeping: 10 no-ops then an answering stage.
    var chainOnly = ten
    chainOnly.interceptors = [Answer()]
    let pipeline = client.pipeline(for: chainOnly)
    let chainRequest = try! request(for: chainOnly)
    let chainContext = InterceptorContext(endpoint: chainOnly)
    Benchmark("chain.pipeline10.answer - Courier", configuration: timed) { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try! await pipeline.execute(chainRequest, context: chainContext))
        }
    }

    // Where a send() spends its time, step by step.
    let tenPipeline = client.pipeline(for: ten)
    let tenRequest = try! request(for: ten)
    let tenContext = InterceptorContext(endpoint: ten)
    Benchmark("chain.step.execute10 - Courier", configuration: timed) { benchmark in
        for _ in benchmark.scaledIterations { blackHole(try! await tenPipeline.execute(tenRequest, context: tenContext)) }
    }
    Benchmark("chain.step.url - Courier", configuration: timed) { benchmark in
        for _ in benchmark.scaledIterations { blackHole(try! zero.url()) }
    }
    Benchmark("chain.step.pipelineFor - Courier", configuration: timed) { benchmark in
        for _ in benchmark.scaledIterations { blackHole(client.pipeline(for: ten)) }
    }
    let floorStages: [any FloorStage] = Array(repeating: FloorNoOp(), count: 11)
    Benchmark("chain.floor10 - Swift", configuration: timed) { benchmark in
        for _ in benchmark.scaledIterations {
            let task = Task.immediate { try await floorStages[0].run(0, floorStages.dropFirst()) }
            blackHole(try! await task.value)
        }
    }
    Benchmark("chain.step.task - Swift", configuration: timed) { benchmark in
        for _ in benchmark.scaledIterations { await Task { () }.value }
    }
    Benchmark("chain.step.decode - Courier", configuration: timed) { benchmark in
        for _ in benchmark.scaledIterations { blackHole(try! JSONCodec().decode(body, hints: CodingHints())) }
    }
    Benchmark("chain.step.contentFormat - Courier", configuration: timed) { benchmark in
        for _ in benchmark.scaledIterations { blackHole(ContentFormat(contentType: "application/json")) }
    }
}
