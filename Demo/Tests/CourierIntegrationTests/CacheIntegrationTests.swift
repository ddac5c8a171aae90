import Courier
import CourierCache
import CourierDemoServer
import Foundation
import HTTPTypes
import Testing

@Suite(.serialized) struct CacheIntegrationTests {
    func cache(_ now: CacheTestNow, store: any CacheStore = MemoryCacheStore(), appVersion: String = "1")
        -> CacheInterceptor
    {
        var configuration = CacheConfiguration()
        configuration.now = { now.date }
        configuration.appVersion = appVersion
        return CacheInterceptor(store: store, configuration: configuration)
    }

    @Test func eachPolicyOverHTTP() async throws {
        try await withDemoServer { server, _ in
            let now = CacheTestNow()
            let bench = CacheBench(server: server, interceptors: [cache(now)])
            func hits(_ endpoint: Endpoint) async throws -> String {
                let reply = try await bench.client.send(endpoint)
                return "\(reply.value["data"]?["hits"]?.int64Value ?? -1) \(reply.metadata.source)"
            }
            // ignore
            let ignore = bench.endpoint("/cache/counter/ignore", policy: .ignore)
            #expect(try await hits(ignore) == "1 network")
            #expect(try await hits(ignore) == "2 network")
            // readOnly before anything is stored
            let readOnly = bench.endpoint("/cache/counter/shared", policy: .readOnly)
            let miss = try await #require(throws: CourierError.self) { try await bench.client.send(readOnly) }
            #expect(miss.code == .cacheMiss)
            // noRead stores what it fetches; readOnly then answers it
            let noRead = bench.endpoint("/cache/counter/shared", policy: .noRead)
            #expect(try await hits(noRead) == "1 network")
            #expect(try await hits(noRead) == "2 network")
            #expect(try await hits(readOnly) == "2 stale-cache")
            // normal
            let normal = bench.endpoint("/cache/counter/normal", policy: .normal(ttl: .seconds(60)))
            #expect(try await hits(normal) == "1 network")
            #expect(try await hits(normal) == "1 cache")
            now.advance(61)
            #expect(try await hits(normal) == "2 network")
            // stale-while-revalidate
            let swr = bench.endpoint("/cache/counter/swr", policy: .staleWhileRevalidate(ttl: .seconds(10)))
            let updates = bench.client.configuration.interceptors.compactMap { $0 as? CacheInterceptor }.first!.updates()
            #expect(try await hits(swr) == "1 network")
            #expect(try await hits(swr) == "1 cache")
            now.advance(11)
            #expect(try await hits(swr) == "1 stale-cache")
            var iterator = updates.makeAsyncIterator()
            let update = try #require(await iterator.next())
            #expect(update.value?["data"]?["hits"]?.int64Value == 2)
            #expect(try await hits(swr) == "2 cache")
            #expect(try await bench.hits("counter/swr") == 2)
        }
    }

    @Test func revalidatesWithETagAnd304() async throws {
        try await withDemoServer { server, _ in
            let now = CacheTestNow()
            let bench = CacheBench(server: server, interceptors: [cache(now)])
            let endpoint = bench.endpoint("/cache/etag/doc", policy: .normal(ttl: .seconds(30)))
            #expect(try await bench.client.send(endpoint).metadata.source == .network)
            now.advance(31)
            let revalidated = try await bench.client.send(endpoint)
            #expect(revalidated.metadata.source == .cache)
            #expect(revalidated.value["data"]?["version"]?.int64Value == 1)
            #expect(try await bench.stats()["notModified"]?.int64Value == 1)
            // Renewed: no request within the TTL.
            now.advance(20)
            _ = try await bench.client.send(endpoint)
            #expect(try await bench.hits("etag/doc") == 2)
            // Changed on the server: the next revalidation brings the new version.
            var bump = bench.endpoint("/cache/etag/doc/bump")
            bump.method = .post
            _ = try await CourierClient().send(bump)
            now.advance(31)
            let changed = try await bench.client.send(endpoint)
            #expect(changed.metadata.source == .network)
            #expect(changed.value["data"]?["version"]?.int64Value == 2)
        }
    }

    @Test func revalidatesWithLastModified() async throws {
        try await withDemoServer { server, _ in
            let now = CacheTestNow()
            let bench = CacheBench(server: server, interceptors: [cache(now)])
            let endpoint = bench.endpoint("/cache/lastmodified/doc", policy: .normal(ttl: .seconds(30)))
            _ = try await bench.client.send(endpoint)
            now.advance(31)
            #expect(try await bench.client.send(endpoint).metadata.source == .cache)
            #expect(try await bench.stats()["notModified"]?.int64Value == 1)
        }
    }

    @Test func serverControlledTTLFromMaxAgeAndCacheSpan() async throws {
        try await withDemoServer { server, _ in
            let now = CacheTestNow()
            let bench = CacheBench(server: server, interceptors: [cache(now)])
            let maxAge = bench.endpoint("/cache/maxage/120", policy: .serverControlled)
            _ = try await bench.client.send(maxAge)
            now.advance(119)
            #expect(try await bench.client.send(maxAge).metadata.source == .cache)
            now.advance(2)
            #expect(try await bench.client.send(maxAge).metadata.source == .network)

            let span = bench.endpoint("/cache/span/15", policy: .serverControlled)
            _ = try await bench.client.send(span)
            now.advance(14)
            #expect(try await bench.client.send(span).metadata.source == .cache)
            now.advance(2)
            #expect(try await bench.client.send(span).metadata.source == .network)
            #expect(try await bench.hits("maxage/120") == 2)
            #expect(try await bench.hits("span/15") == 2)
        }
    }

    @Test func versionChangesInvalidate() async throws {
        try await withDemoServer { server, _ in
            let now = CacheTestNow()
            let store = MemoryCacheStore()
            let bench = CacheBench(server: server, interceptors: [cache(now, store: store, appVersion: "1")])
            var endpoint = bench.endpoint("/cache/counter/versioned", policy: .normal(ttl: .seconds(600)))
            _ = try await bench.client.send(endpoint)
            #expect(try await bench.client.send(endpoint).metadata.source == .cache)
            endpoint.cacheVersion = 2
            #expect(try await bench.client.send(endpoint).metadata.source == .network)
            let upgraded = CacheBench(server: server, interceptors: [cache(now, store: store, appVersion: "2")])
            #expect(try await upgraded.client.send(endpoint).metadata.source == .network)
            #expect(try await upgraded.client.send(endpoint).metadata.source == .cache)
            #expect(try await bench.hits("counter/versioned") == 3)
        }
    }

    @Test func twoUsersDoNotShareEntries() async throws {
        try await withDemoServer { server, _ in
            let now = CacheTestNow()
            let user = Locked("alice")
            let bench = CacheBench(server: server, interceptors: [cache(now)]) { module in
                module.cacheScope = CacheScope { user.withLock { $0 } }
            }
            func whoami() async throws -> String {
                var endpoint = bench.endpoint("/cache/whoami", policy: .normal(ttl: .seconds(600)))
                endpoint.headers[HTTPField.Name("X-User")!] = user.withLock { $0 }
                let reply = try await bench.client.send(endpoint)
                return "\(reply.value["data"]?["user"]?.stringValue ?? "?") \(reply.metadata.source)"
            }
            let answer1 = try await whoami()
            #expect(answer1 == "alice network")
            user.withLock { $0 = "bob" }
            let answer2 = try await whoami()
            #expect(answer2 == "bob network")
            let answer3 = try await whoami()
            #expect(answer3 == "bob cache")
            user.withLock { $0 = "alice" }
            let answer4 = try await whoami()
            #expect(answer4 == "alice cache")
        }
    }

    @Test func corruptedSQLiteStoreIsRecovered() async throws {
        try await withDemoServer { server, _ in
            let now = CacheTestNow()
            let path = cacheTempPath()
            let endpoint = { (bench: CacheBench) in
                bench.endpoint("/cache/counter/disk", policy: .normal(ttl: .seconds(600)))
            }
            do {
                let store = try SQLiteCacheStore(path: path)
                let bench = CacheBench(server: server, interceptors: [cache(now, store: store)])
                _ = try await bench.client.send(endpoint(bench))
                #expect(try await bench.client.send(endpoint(bench)).metadata.source == .cache)
                await store.close()
            }
            // Overwrite the file with garbage, as a crash mid-write or a bad disk might.
            try Data((0..<8192).map { UInt8(truncatingIfNeeded: $0 &* 131 &+ 17) }).write(to: URL(fileURLWithPath: path))
            for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }

            let store = try SQLiteCacheStore(path: path)
            #expect(store.rebuildCount == 1)
            let bench = CacheBench(server: server, interceptors: [cache(now, store: store)])
            let again = try await bench.client.send(endpoint(bench))
            #expect(again.metadata.source == .network)
            #expect(again.value["data"]?["hits"]?.int64Value == 2)
            #expect(try await bench.client.send(endpoint(bench)).metadata.source == .cache)
        }
    }
}
