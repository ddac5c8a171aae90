import Courier
import CourierCache
import CourierDemoServer
import HTTPTypes

extension Tour {
    /// The cache and orchestration steps: a cached answer, a stale-while-revalidate answer with its
    /// background update, a batch whose failing member cancels the others, and a chain passing data on.
    /// Returns the number of steps that did not behave as expected.
    func runCacheSteps(from first: Int) async -> Int {
        var failures = 0
        let cache = CacheInterceptor(store: MemoryCacheStore())
        let cached = CourierClient(configuration: .init(interceptors: [RequestID(), cache], codecs: DemoCodecs.make()))
        let module = APIModule(name: "cache", service: APIService(name: "demo", baseURL: server.baseURL))
        func endpoint(_ path: String, _ policy: CachePolicy = .ignore, query: [QueryItem] = []) -> Endpoint {
            var endpoint = Endpoint(name: path, module: module, path: path, query: query)
            endpoint.cachePolicy = policy
            return endpoint
        }

        heading(first, "A cached answer: GET /cache/etag/tour with .normal(ttl: 60 s), twice")
        for expected in [ResponseSource.network, .cache] {
            do {
                let reply = try await cached.send(endpoint("/cache/etag/tour", .normal(ttl: .seconds(60))))
                print("   \(reply.metadata.source == expected ? "✓" : "✗") from \(reply.metadata.source) in "
                    + "\(milliseconds(reply.metadata.duration)), ETag \(reply.metadata.headerFields[.eTag] ?? "-")")
                if reply.metadata.source != expected { failures += 1 }
            } catch {
                print("   ✗ \(error)")
                failures += 1
            }
        }

        heading(first + 1, "Stale-while-revalidate: GET /cache/counter/tour answered stale at once, refreshed behind")
        do {
            let swr = endpoint("/cache/counter/tour", .staleWhileRevalidate(ttl: .zero))
            let updates = cache.updates()
            let fresh = try await cached.send(swr)
            let stale = try await cached.send(swr)
            print("   first answer from \(fresh.metadata.source): hits \(fresh.value["data"]?["hits"]?.int64Value ?? 0)")
            print("   second answer from \(stale.metadata.source): hits \(stale.value["data"]?["hits"]?.int64Value ?? 0)")
            // The refresh runs behind the answer; wait for it, but not forever.
            let waiter = Task { () -> CacheUpdate? in
                var iterator = updates.makeAsyncIterator()
                return await iterator.next()
            }
            let deadline = Task {
                try await Task.sleep(for: .seconds(5))
                waiter.cancel()
            }
            let update = await waiter.value
            deadline.cancel()
            if let update {
                print("   ✓ background update delivered: hits \(update.value?["data"]?["hits"]?.int64Value ?? 0)")
            } else {
                print("   ✗ no background update within 5 s")
                failures += 1
            }
            if stale.metadata.source != .staleCache { failures += 1 }
        } catch {
            print("   ✗ \(error)")
            failures += 1
        }

        heading(first + 2, "A batch: two slow calls and a 404 — the failure cancels the others")
        let batch = client.batch([endpoint("/cache/slow/3000"), endpoint("/status/404"), endpoint("/cache/slow/3000")])
        do {
            _ = try await batch.replies
            print("   ✗ expected the batch to fail")
            failures += 1
        } catch let error as CourierError {
            show(error)
            try? await Task.sleep(for: .milliseconds(200))
            let stats = try? await client.send(endpoint("/cache/stats"))
            let slow = stats?.value["data"]?["slow"]
            print("   server-side slow work: started \(slow?["started"]?.int64Value ?? 0), "
                + "cancelled \(slow?["cancelled"]?.int64Value ?? 0), finished \(slow?["finished"]?.int64Value ?? 0)")
            if error.code != .notFound || (slow?["finished"]?.int64Value ?? 0) != 0 { failures += 1 }
        } catch {
            failures += 1
        }

        heading(first + 3, "A chain: the first page of items, then the user named by its third item")
        let chain = CallChain(endpoint("/cache/items", query: [QueryItem("page", "1"), QueryItem("size", "3")]))
            .then { page in api.user(id: page.value["data"]?["items"]?[2]?["id"]?.int64Value ?? 1) }
        do {
            let replies = try await client.run(chain).replies
            let named = replies[0].value["data"]?["items"]?[2]?["id"]?.int64Value
            let fetched = replies[1].value["data"]?["id"]?.int64Value
            print("   \(named != nil && named == fetched ? "✓" : "✗") \(replies.count) steps; the page names user "
                + "\(named ?? 0), the second step fetched user \(fetched ?? 0): "
                + "\(replies[1].value["data"]?["name"]?.stringValue ?? "?")")
            if named == nil || named != fetched { failures += 1 }
        } catch {
            print("   ✗ \(error)")
            failures += 1
        }
        return failures
    }
}
