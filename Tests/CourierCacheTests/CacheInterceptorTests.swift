#if Cache
import CourierCache
import CourierTesting
import Foundation
import HTTPTypes
import CourierTestSupport
import Testing

@Suite struct CacheDecisionTests {
    let now = Date(timeIntervalSince1970: 1_000)
    var fresh: CacheMetadata { CacheMetadata(createdAt: now, ttl: 60) }
    var stale: CacheMetadata { CacheMetadata(createdAt: now.addingTimeInterval(-120), ttl: 60) }

    @Test func decisionTable() {
        let ttl = CachePolicy.normal(ttl: .seconds(60))
        let swr = CachePolicy.staleWhileRevalidate(ttl: .seconds(60))
        #expect(CacheDecision.decide(policy: .ignore, entry: fresh, now: now) == .bypass)
        #expect(CacheDecision.decide(policy: .noRead, entry: fresh, now: now) == .fetch)
        #expect(CacheDecision.decide(policy: ttl, entry: nil, now: now) == .fetch)
        #expect(CacheDecision.decide(policy: ttl, entry: fresh, now: now) == .answer(.cache))
        #expect(CacheDecision.decide(policy: ttl, entry: stale, now: now) == .revalidate)
        #expect(CacheDecision.decide(policy: .serverControlled, entry: stale, now: now) == .revalidate)
        #expect(CacheDecision.decide(policy: .readOnly, entry: nil, now: now) == .miss)
        #expect(CacheDecision.decide(policy: .readOnly, entry: fresh, now: now) == .answer(.cache))
        #expect(CacheDecision.decide(policy: .readOnly, entry: stale, now: now) == .answer(.staleCache))
        #expect(CacheDecision.decide(policy: swr, entry: nil, now: now) == .fetch)
        #expect(CacheDecision.decide(policy: swr, entry: fresh, now: now) == .answer(.cache))
        #expect(CacheDecision.decide(policy: swr, entry: stale, now: now) == .answerStaleAndRevalidate)
    }
}

@Suite struct CacheInterceptorTests {
    let server = FakeServer()
    let now = TestNow()

    func makeClient(store: any CacheStore = MemoryCacheStore(), appVersion: String = "1.0")
        -> (CourierClient, CacheInterceptor)
    {
        var configuration = CacheConfiguration()
        configuration.now = now.function
        configuration.appVersion = appVersion
        let cache = CacheInterceptor(store: store, configuration: configuration)
        return (CourierClient(transport: server.transport, configuration: .init(interceptors: [cache])), cache)
    }

    /// Calls from several tasks at once, each starting a background refresh of one key: every refresh that ends
    /// is forgotten, so `waitForRevalidations()` returns. A refresh that ended before it was recorded, while
    /// another of the same key began, used to be kept forever, and the wait spun on it. (That needs the calls,
    /// the refreshes and the lock to meet in one order: this stress finds it only now and then.)
    @Test(.timeLimit(.minutes(2))) func overlappingRefreshesOfOneKeyAreAllForgotten() async throws {
        server["/feed"] = .init(body: #"{"code":0,"items":[1,2,3]}"#)
        let cache = CacheInterceptor(store: MemoryCacheStore())     // the real clock
        let client = CourierClient(transport: server.transport, configuration: .init(interceptors: [cache]))
        let endpoint = Fixture.endpoint("/feed", policy: .readOnlyRefreshing)
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<8 {
                group.addTask { for _ in 0..<200 { _ = try? await client.send(endpoint) } }
            }
        }
        await cache.waitForRevalidations()
        #expect(await eventually { client.runningCalls.isEmpty })
        // How many refreshes ran depends on scheduling (a busy machine may run the first only after every call).
        #expect(server.hits("/feed") >= 1)
    }

    @Test func ignoreNeverReadsNorWrites() async throws {
        server["/a"] = .init(body: #"{"n":1}"#)
        let (client, cache) = makeClient()
        let endpoint = Fixture.endpoint("/a", policy: .ignore)
        for _ in 0..<2 {
            let reply = try await client.send(endpoint)
            #expect(reply.metadata.source == .network)
        }
        #expect(server.hits("/a") == 2)
        #expect(await cache.store.entry(for: try CacheKey(for: endpoint, client: client)) == nil)
    }

    @Test func normalAnswersFromCacheWhileFreshThenRevalidatesWithETag() async throws {
        server["/a"] = .init(body: #"{"n":1}"#, eTag: "\"v1\"")
        let (client, _) = makeClient()
        let endpoint = Fixture.endpoint("/a", policy: .normal(ttl: .seconds(60)))

        let first = try await client.send(endpoint)
        #expect(first.metadata.source == .network)
        let second = try await client.send(endpoint)
        #expect(second.metadata.source == .cache)
        #expect(second.value["n"]?.int64Value == 1)
        #expect(server.hits("/a") == 1)

        now.advance(61)
        let third = try await client.send(endpoint)
        #expect(server.hits("/a") == 2)
        #expect(server.lastRequest?.headerFields[.ifNoneMatch] == "\"v1\"")
        #expect(third.metadata.source == .cache)          // the 304 answered the cached body
        #expect(third.metadata.status.code == 200)
        #expect(third.value["n"]?.int64Value == 1)

        // The 304 renewed the TTL: another call within 60 s does not go out.
        now.advance(30)
        _ = try await client.send(endpoint)
        #expect(server.hits("/a") == 2)

        // Changed on the server: after expiry the new body replaces the entry.
        server["/a"] = .init(body: #"{"n":2}"#, eTag: "\"v2\"")
        now.advance(61)
        let changed = try await client.send(endpoint)
        #expect(changed.metadata.source == .network)
        #expect(changed.value["n"]?.int64Value == 2)
        let cached = try await client.send(endpoint)
        #expect(cached.metadata.source == .cache)
        #expect(cached.value["n"]?.int64Value == 2)
    }

    @Test func lastModifiedRevalidation() async throws {
        server["/lm"] = .init(body: #"{"n":1}"#, lastModified: "Sun, 06 Nov 1994 08:49:37 GMT")
        let (client, _) = makeClient()
        let endpoint = Fixture.endpoint("/lm", policy: .normal(ttl: .seconds(10)))
        _ = try await client.send(endpoint)
        now.advance(11)
        let reply = try await client.send(endpoint)
        #expect(server.lastRequest?.headerFields[.ifModifiedSince] == "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(reply.metadata.source == .cache)
        #expect(server.hits("/lm") == 2)
    }

    @Test func noReadAlwaysFetchesButStoresForReadOnly() async throws {
        server["/launch"] = .init(body: #"{"banner":"hello"}"#)
        let (client, _) = makeClient()
        let fetch = Fixture.endpoint("/launch", policy: .noRead)
        let replies = [try await client.send(fetch), try await client.send(fetch)]
        #expect(replies.allSatisfy { $0.metadata.source == .network })
        #expect(server.hits("/launch") == 2)

        let readOnly = Fixture.endpoint("/launch", policy: .readOnly)
        let cached = try await client.send(readOnly)
        #expect(cached.value["banner"]?.stringValue == "hello")
        #expect(cached.metadata.source == .staleCache)     // noRead stores with no freshness
        #expect(server.hits("/launch") == 2)
    }

    @Test func readOnlyWithoutEntryIsACacheMiss() async throws {
        server["/launch"] = .init(body: #"{"banner":"hello"}"#)
        let (client, _) = makeClient()
        let error = await #expect(throws: CourierError.self) {
            _ = try await client.send(Fixture.endpoint("/launch", policy: .readOnly))
        }
        #expect(error?.code == .cacheMiss)
        #expect(error?.context.endpoint == "get/launch")
        #expect(server.hits("/launch") == 0)
    }

    @Test func staleWhileRevalidateAnswersAtOnceAndPublishesChanges() async throws {
        server["/feed"] = .init(body: #"{"items":[1]}"#)
        let (client, cache) = makeClient()
        let endpoint = Fixture.endpoint("/feed", policy: .staleWhileRevalidate(ttl: .seconds(30)))
        let updates = cache.updates()

        #expect(try await client.send(endpoint).metadata.source == .network)
        #expect(try await client.send(endpoint).metadata.source == .cache)
        #expect(server.hits("/feed") == 1)

        // Stale, unchanged on the server: answered stale, revalidated, nothing published.
        now.advance(31)
        let stale = try await client.send(endpoint)
        #expect(stale.metadata.source == .staleCache)
        await cache.waitForRevalidations()
        #expect(server.hits("/feed") == 2)

        // Stale and changed: the stale body comes at once, the new one through the stream.
        now.advance(31)
        server["/feed"] = .init(body: #"{"items":[1,2]}"#)
        let second = try await client.send(endpoint)
        #expect(second.metadata.source == .staleCache)
        #expect(second.value["items"]?.arrayValue?.count == 1)
        var iterator = updates.makeAsyncIterator()
        let update = try #require(await iterator.next())
        #expect(update.value?["items"]?.arrayValue?.count == 2)
        #expect(update.callID == second.metadata.callID)
        #expect(update.endpoint == "get/feed")
        await cache.waitForRevalidations()
        #expect(server.hits("/feed") == 3)

        // The background result was stored and is fresh.
        let fresh = try await client.send(endpoint)
        #expect(fresh.metadata.source == .cache)
        #expect(fresh.value["items"]?.arrayValue?.count == 2)
        #expect(server.hits("/feed") == 3)
    }

    @Test(arguments: [true, false])
    func backgroundRevalidationIsCancelledWithTheClientsCalls(byModule: Bool) async throws {
        let served = Locked(0)
        let sawCancellation = Locked(false)
        let transport = InMemoryTransport { _, _ in
            let n = served.withLock { $0 += 1; return $0 }
            if n == 1 { return jsonResponse(.ok, #"{"items":[1]}"#) }
            // The revalidation hangs until it is cancelled.
            do {
                try await Task.sleep(for: .seconds(60))
            } catch {
                sawCancellation.withLock { $0 = true }
                throw error
            }
            return jsonResponse(.ok, #"{"items":[1,2]}"#)
        }
        var configuration = CacheConfiguration()
        configuration.now = now.function
        let cache = CacheInterceptor(configuration: configuration)
        let client = CourierClient(transport: transport, configuration: .init(interceptors: [cache]))
        let endpoint = Fixture.endpoint("/feed", policy: .staleWhileRevalidate(ttl: .seconds(30)))
        _ = try await client.send(endpoint)
        now.advance(31)
        #expect(try await client.send(endpoint).metadata.source == .staleCache)

        // The revalidation is listed as the module's background work until cancelled with the client's calls.
        #expect(await eventually { served.withLock { $0 } == 2 })
        let running = client.runningCalls
        #expect(running.count == 1)
        #expect(running.first?.module == "feed")
        #expect(running.first?.endpoint == "get/feed (background)")
        #expect(client.cancelAll(module: "other") == 0)
        #expect((byModule ? client.cancelAll(module: "feed") : client.cancelAll()) == 1)
        await cache.waitForRevalidations()
        #expect(sawCancellation.withLock { $0 })
        #expect(client.runningCalls.isEmpty)
        // The stale entry is kept and a later stale read starts a new revalidation.
        #expect(try await client.send(endpoint).metadata.source == .staleCache)
        #expect(await eventually { served.withLock { $0 } == 3 })
        client.cancelAll()
        await cache.waitForRevalidations()
    }

    @Test func staleWhileRevalidateWithETagPublishesNothingOn304() async throws {
        server["/feed"] = .init(body: #"{"items":[1]}"#, eTag: "\"f1\"")
        let (client, cache) = makeClient()
        let endpoint = Fixture.endpoint("/feed", policy: .staleWhileRevalidate(ttl: .seconds(30)))
        let collected = Locked(0)
        let updates = cache.updates()
        let listener = Task { for await _ in updates { collected.withLock { $0 += 1 } } }
        _ = try await client.send(endpoint)
        now.advance(31)
        #expect(try await client.send(endpoint).metadata.source == .staleCache)
        await cache.waitForRevalidations()
        #expect(server.requests.withLock { $0.last?.headerFields[.ifNoneMatch] } == "\"f1\"")
        // Renewed by the 304: fresh again.
        #expect(try await client.send(endpoint).metadata.source == .cache)
        listener.cancel()
        #expect(collected.withLock { $0 } == 0)
    }

    @Test func serverControlledUsesMaxAge() async throws {
        server["/cc"] = .init(body: #"{"n":1}"#, cacheControl: "public, max-age=60")
        let (client, _) = makeClient()
        let endpoint = Fixture.endpoint("/cc", policy: .serverControlled)
        _ = try await client.send(endpoint)
        now.advance(59)
        #expect(try await client.send(endpoint).metadata.source == .cache)
        now.advance(2)
        #expect(try await client.send(endpoint).metadata.source == .network)
        #expect(server.hits("/cc") == 2)
    }

    @Test func serverControlledUsesBodyFieldAndNoStore() async throws {
        server["/span"] = .init(body: #"{"code":0,"cache_span":5,"data":{"n":1}}"#)
        server["/nostore"] = .init(body: #"{"n":1}"#, cacheControl: "no-store")
        let (client, _) = makeClient()
        let span = Fixture.endpoint("/span", policy: .serverControlled)
        _ = try await client.send(span)
        now.advance(4)
        #expect(try await client.send(span).metadata.source == .cache)
        now.advance(2)
        #expect(try await client.send(span).metadata.source == .network)

        let noStore = Fixture.endpoint("/nostore", policy: .serverControlled)
        _ = try await client.send(noStore)
        #expect(try await client.send(noStore).metadata.source == .network)
        #expect(server.hits("/nostore") == 2)
    }

    @Test func versionEchoFieldMeansNotModified() async throws {
        // The server echoes the data version; when it matches the cached one the cached body is used.
        let echoed = Locked<[String?]>([])
        let transport = InMemoryTransport { request, _ in
            let header = HTTPField.Name("X-Data-Version")!
            echoed.withLock { $0.append(request.headerFields[header]) }
            let body = request.headerFields[header] == "7"
                ? #"{"data_version":7}"# : #"{"data_version":7,"items":["a","b"]}"#
            return (HTTPResponse(status: .ok, headerFields: [.contentType: "application/json"]), Data(body.utf8))
        }
        var configuration = CacheConfiguration()
        configuration.now = now.function
        configuration.notModifiedField = "data_version"
        configuration.versionEchoHeader = HTTPField.Name("X-Data-Version")
        let cache = CacheInterceptor(configuration: configuration)
        let client = CourierClient(transport: transport, configuration: .init(interceptors: [cache]))
        let endpoint = Fixture.endpoint("/versioned", policy: .normal(ttl: .seconds(10)))
        _ = try await client.send(endpoint)
        now.advance(11)
        let reply = try await client.send(endpoint)
        #expect(echoed.withLock { $0 } == [nil, "7"])
        #expect(reply.metadata.source == .cache)
        #expect(reply.value["items"]?.arrayValue?.count == 2)
    }

    @Test func cacheVersionAndAppVersionChangesInvalidate() async throws {
        server["/v"] = .init(body: #"{"n":1}"#)
        let store = MemoryCacheStore()
        let (client, _) = makeClient(store: store, appVersion: "1.0")
        var endpoint = Fixture.endpoint("/v", policy: .normal(ttl: .seconds(600)))
        _ = try await client.send(endpoint)
        #expect(try await client.send(endpoint).metadata.source == .cache)

        endpoint.cacheVersion = 2
        #expect(try await client.send(endpoint).metadata.source == .network)
        #expect(try await client.send(endpoint).metadata.source == .cache)

        let (upgraded, _) = makeClient(store: store, appVersion: "1.1")
        #expect(try await upgraded.send(endpoint).metadata.source == .network)
        #expect(try await upgraded.send(endpoint).metadata.source == .cache)
        #expect(server.hits("/v") == 3)
    }

    @Test func twoUsersNeverShareAnEntry() async throws {
        let user = Locked("alice")
        let transport = InMemoryTransport { request, _ in
            let who = request.headerFields[HTTPField.Name("X-User")!] ?? "?"
            return (HTTPResponse(status: .ok, headerFields: [.contentType: "application/json"]),
                    Data(#"{"owner":"\#(who)"}"#.utf8))
        }
        var configuration = CacheConfiguration()
        configuration.now = now.function
        let cache = CacheInterceptor(configuration: configuration)
        let client = CourierClient(transport: transport, configuration: .init(interceptors: [cache]))
        var module = Fixture.module("account")
        module.cacheScope = CacheScope { user.withLock { $0 } }
        func endpoint() -> Endpoint {
            var endpoint = Fixture.endpoint("/me", policy: .normal(ttl: .seconds(600)), module: module)
            endpoint.headers[HTTPField.Name("X-User")!] = user.withLock { $0 }
            return endpoint
        }
        #expect(try await client.send(endpoint()).value["owner"]?.stringValue == "alice")
        user.withLock { $0 = "bob" }
        let bob = try await client.send(endpoint())
        #expect(bob.metadata.source == .network)
        #expect(bob.value["owner"]?.stringValue == "bob")
        user.withLock { $0 = "alice" }
        let alice = try await client.send(endpoint())
        #expect(alice.metadata.source == .cache)
        #expect(alice.value["owner"]?.stringValue == "alice")
    }

    @Test func keySortsParametersAndSeparatesValues() throws {
        let client = CourierClient(transport: server.transport)
        let a = Fixture.endpoint("/list", policy: .ignore, query: [QueryItem("b", "2"), QueryItem("a", "1")])
        let b = Fixture.endpoint("/list", policy: .ignore, query: [QueryItem("a", "1"), QueryItem("b", "2")])
        let c = Fixture.endpoint("/list", policy: .ignore, query: [QueryItem("a", "1"), QueryItem("b", "3")])
        var post = a
        post.method = .post
        #expect(try CacheKey(for: a, client: client) == CacheKey(for: b, client: client))
        #expect(try CacheKey(for: a, client: client) != CacheKey(for: c, client: client))
        #expect(try CacheKey(for: a, client: client) != CacheKey(for: post, client: client))
        var withBody = post
        withBody.body = ["z": 1, "y": ["k": true]]
        var reordered = post
        reordered.body = ["y": ["k": true], "z": 1]
        #expect(try CacheKey(for: withBody, client: client) == CacheKey(for: reordered, client: client))
        #expect(try CacheKey(for: withBody, client: client) != CacheKey(for: post, client: client))
    }

    @Test func invalidateByKeyModuleAndAll() async throws {
        server["/x"] = .init(body: #"{"n":1}"#)
        server["/y"] = .init(body: #"{"n":2}"#)
        let (client, cache) = makeClient()
        let x = Fixture.endpoint("/x", policy: .normal(ttl: .seconds(600)), module: Fixture.module("one"))
        let y = Fixture.endpoint("/y", policy: .normal(ttl: .seconds(600)), module: Fixture.module("two"))
        func sources() async throws -> [ResponseSource] {
            [try await client.send(x).metadata.source, try await client.send(y).metadata.source]
        }
        _ = try await sources()
        #expect(try await sources() == [.cache, .cache])
        try await cache.invalidate(x, client: client)
        #expect(try await sources() == [.network, .cache])
        await cache.invalidate(module: "two")
        #expect(try await sources() == [.cache, .network])
        await cache.invalidateAll()
        #expect(try await sources() == [.network, .network])
    }

    @Test func failuresAndBusinessErrorsAreNotStored() async throws {
        server["/broken"] = .init(body: #"{"message":"down"}"#, status: 500)
        server["/biz"] = .init(body: #"{"code":301,"message":"no such user"}"#)
        let (client, _) = makeClient()
        var module = Fixture.module("user")
        module.businessRule = BusinessRule()
        let broken = Fixture.endpoint("/broken", policy: .normal(ttl: .seconds(60)), module: module)
        let business = Fixture.endpoint("/biz", policy: .normal(ttl: .seconds(60)), module: module)
        for _ in 0..<2 {
            let brokenError = await #expect(throws: CourierError.self) { _ = try await client.send(broken) }
            #expect(brokenError?.code == .internalServerError)
            let businessError = await #expect(throws: CourierError.self) { _ = try await client.send(business) }
            #expect(businessError?.code == .business)
        }
        #expect(server.hits("/broken") == 2)
        #expect(server.hits("/biz") == 2)
    }
}
#endif
