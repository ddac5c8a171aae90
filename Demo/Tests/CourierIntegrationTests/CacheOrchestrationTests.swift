import Courier
import CourierTesting
import CourierCache
import CourierResilience
import CourierDemoServer
import Foundation
import HTTPTypes
import Testing

@Suite(.serialized) struct CacheOrchestrationTests {
    @Test func batchFailureCancelsTheOthersServerSide() async throws {
        try await withDemoServer { server, _ in
            let bench = CacheBench(server: server)
            let batch = bench.client.batch([
                bench.endpoint("/cache/slow/20000"), bench.endpoint("/status/404"), bench.endpoint("/cache/slow/20000"),
            ])
            #expect(try await waitUntil { try await bench.stats()["slow"]?["started"]?.int64Value == 2 })
            let error = try await #require(throws: CourierError.self) { try await batch.replies }
            #expect(error.code == .notFound)
            #expect(error.context.endpoint == "/status/404")
            #expect(error.detail?.contains("batch member 2 of 3") == true)
            // The server sees the slow work stop: cancelled, never finished.
            #expect(try await waitUntil { try await bench.stats()["slow"]?["cancelled"]?.int64Value == 2 })
            #expect(try await bench.stats()["slow"]?["finished"]?.int64Value == 0)
        }
    }

    @Test func chainAndGroupOverHTTP() async throws {
        try await withDemoServer { server, _ in
            let bench = CacheBench(server: server)
            let chain = CallChain(bench.endpoint("/cache/items", query: [QueryItem("page", "1"), QueryItem("size", "3")]))
                .then { page in
                    let id = page.value["data"]?["items"]?[2]?["id"]?.int64Value ?? 0
                    return bench.endpoint("/cache/counter/item-\(id)")
                }
            let replies = try await bench.client.run(chain).replies
            #expect(replies[1].value["data"]?["name"]?.stringValue == "item-3")

            let failing = CallChain(bench.endpoint("/cache/counter/a"))
                .then { _ in bench.endpoint("/status/503") }
                .then { _ in bench.endpoint("/cache/counter/never") }
            let error = try await #require(throws: CourierError.self) { try await bench.client.run(failing).replies }
            #expect(error.code == .serviceUnavailable)
            #expect(error.detail?.hasPrefix("chain step 2 of 3") == true)
            #expect(try await bench.hits("counter/never") == 0)

            let results = await bench.client.group([
                bench.endpoint("/cache/counter/g1"), bench.endpoint("/status/500"), bench.endpoint("/cache/counter/g2"),
            ]).results
            #expect(results.map { (try? $0.get()) != nil } == [true, false, true])
        }
    }

    @Test func pagerOverThePagedEndpoint() async throws {
        try await withDemoServer { server, _ in
            let bench = CacheBench(server: server)
            let pager = Pager(client: bench.client, pageSize: 40) { page, size in
                var endpoint = bench.endpoint(
                    "/cache/items", query: [QueryItem("page", "\(page)"), QueryItem("size", "\(size)")])
                // Page 2 waits 2 s before it is sent, so the second `loadMore` below joins it.
                if page == 2 { endpoint.interceptors = [HoldRequest(duration: .seconds(2))] }
                return endpoint
            }
            #expect(try await pager.refresh().count == 40)
            #expect(await pager.total == 95)
            async let a = pager.loadMore()
            async let b = pager.loadMore()
            let (first, second) = try await (a, b)
            #expect(first.count == 40 && second.count == 40)
            #expect(try await bench.hits("items/2") == 1)            // the overlapping calls coalesced
            #expect(try await pager.loadMore().count == 15)
            #expect(await pager.hasMore == false)
            #expect(await pager.items.map { $0["id"]?.int64Value ?? 0 } == Array(1...95))
        }
    }

    @Test func retryHonoursRetryAfterFromTheServer() async throws {
        try await withDemoServer { server, _ in
            let clock = RecordingClock()
            let bench = CacheBench(server: server, interceptors: [RetryInterceptor(defaultPolicy: .exponential(attempts: 4))],
                                   clock: clock)
            let reply = try await bench.client.send(
                bench.endpoint("/cache/flaky/r1", query: [QueryItem("failures", "2"), QueryItem("retryAfter", "7")]))
            #expect(reply.value["data"]?["calls"]?.int64Value == 3)
            #expect(clock.sleeps == [.seconds(7), .seconds(7)])

            // POST is not idempotent: one attempt, the 503 is the answer; the next call is the server's second.
            var post = bench.endpoint("/cache/flaky/r2", query: [QueryItem("failures", "1")])
            post.method = .post
            let error = try await #require(throws: CourierError.self) { try await bench.client.send(post) }
            #expect(error.code == .serviceUnavailable)
            #expect(clock.sleeps.count == 2)
            let after = try await bench.client.send(bench.endpoint("/cache/flaky/r2", query: [QueryItem("failures", "1")]))
            #expect(after.value["data"]?["calls"]?.int64Value == 2)
        }
    }
}
