import Courier
import CourierCache
import CourierResilience
import CourierDemoServer
import Foundation
import HTTPTypes
import Testing

/// What the classic mobile network layers (YTKNetwork, HSNet, casatwy's layer) do, over loopback against the
/// demo server: newest-result codes, read-only with a quiet refresh, rejection reasons, key filters,
/// business rules and status validators per endpoint, shared or cancelled duplicate calls, offline-aware
/// failover and priorities.
@Suite(.serialized, .timeLimit(.minutes(10))) struct MobileLayerTests {
    static func module(_ api: DemoAPI, rule: BusinessRule? = BusinessRule()) -> APIModule {
        APIModule(name: "layer", service: api.service, businessRule: rule)
    }

    static func count(_ name: String, api: DemoAPI) async throws -> Int64 {
        try await CourierClient().send(Endpoint(name: "stats", module: module(api), path: "/layer/stats/\(name)"))
            .value["data"]?["count"]?.int64Value ?? -1
    }

    static func bump(_ name: String, api: DemoAPI) async throws {
        _ = try await CourierClient().send(Endpoint(name: "bump", module: module(api), method: .post, path: "/layer/newest/\(name)/bump"))
    }

    @Test(arguments: TransportUnderTest.allCases)
    func anAlreadyNewestCodeAnswersTheCachedData(_ kind: TransportUnderTest) async throws {
        try await kind.run { transport in
            try await withDemoServer { server, api in
                var configuration = CacheConfiguration()
                configuration.notModifiedField = "data.version"
                configuration.versionEchoHeader = HTTPField.Name("X-Data-Version")!
                configuration.notModifiedCodes = [2001]
                let client = CourierClient(transport: transport, configuration: .init(interceptors: [CacheInterceptor(configuration: configuration)]))
                var endpoint = Endpoint(name: "feed", module: Self.module(api), path: "/layer/newest/feed")
                endpoint.cachePolicy = .normal(ttl: .zero)          // always revalidate

                let first = try await client.send(endpoint)
                #expect(first.value["data"]?["version"] == 1)
                let second = try await client.send(endpoint)     // the server says "already the newest" (2001)
                #expect(second.metadata.source == .cache)
                #expect(second.value["data"]?["items"]?[0] == "feed-1-1")
                #expect(second.metadata.cacheRejection == "expired")
                try await Self.bump("feed", api: api)
                let third = try await client.send(endpoint)
                #expect(third.metadata.source == .network)
                #expect(third.value["data"]?["version"] == 2)
                #expect(server.state.requestCount == 3)
            }
        }
    }

    @Test func readOnlyRefreshingAnswersFromTheCacheAndRefreshesForNextTime() async throws {
        try await withDemoServer { _, api in
            let cache = CacheInterceptor()
            let client = CourierClient(configuration: .init(interceptors: [cache]))
            var endpoint = Endpoint(name: "launch", module: Self.module(api), path: "/layer/count/launch")
            endpoint.cachePolicy = .readOnlyRefreshing
            let miss = try await #require(throws: CourierError.self) { try await client.send(endpoint) }
            #expect(miss.code == .cacheMiss)                  // nothing stored yet: no waiting for the network
            await cache.waitForRevalidations()
            let second = try await client.send(endpoint)      // the quiet refresh stored count 1
            #expect(second.value["data"]?["count"] == 1)
            #expect(second.metadata.source == .staleCache)
            await cache.waitForRevalidations()
            let third = try await client.send(endpoint)
            #expect(third.value["data"]?["count"] == 2)
            await cache.waitForRevalidations()
            #expect(try await Self.count("launch", api: api) == 3)
        }
    }

    @Test func theReasonACachedEntryWasRejectedIsOnTheReplyAndInTheTrace() async throws {
        try await withDemoServer { _, api in
            var configuration = CacheConfiguration()
            configuration.appVersion = "1.0"
            let store = MemoryCacheStore()
            let client = CourierClient(configuration: .init(interceptors: [CacheInterceptor(store: store, configuration: configuration)]))
            var endpoint = Endpoint(name: "reasons", module: Self.module(api), path: "/layer/count/reasons")
            endpoint.cachePolicy = .normal(ttl: .seconds(600))
            _ = try await client.send(endpoint)
            #expect(try await client.send(endpoint).metadata.cacheRejection == nil)

            endpoint.cacheVersion = 2
            let versioned = try await client.send(endpoint, options: .init(trace: true))
            #expect(versioned.metadata.cacheRejection == "cache version changed")
            #expect(versioned.metadata.trace?.description.contains("cache entry rejected: cache version changed") == true)

            endpoint.cacheSensitiveValue = "lang=de"
            #expect(try await client.send(endpoint).metadata.cacheRejection == "sensitive value changed")
            #expect(try await client.send(endpoint).metadata.source == .cache)

            configuration.appVersion = "2.0"
            let upgraded = CourierClient(configuration: .init(interceptors: [CacheInterceptor(store: store, configuration: configuration)]))
            #expect(try await upgraded.send(endpoint).metadata.cacheRejection == "app version changed")

            var expiring = endpoint
            expiring.cachePolicy = .normal(ttl: .zero)
            expiring.cacheVersion = 3                          // stored anew, with a zero TTL
            #expect(try await upgraded.send(expiring).metadata.cacheRejection == "cache version changed")
            #expect(try await upgraded.send(expiring).metadata.cacheRejection == "expired")
        }
    }

    @Test func parametersLeftOutOfTheKeyStillHit() async throws {
        try await withDemoServer { _, api in
            let client = CourierClient(configuration: .init(interceptors: [CacheInterceptor()]))
            func endpoint() -> Endpoint {
                var endpoint = Endpoint(name: "filtered", module: Self.module(api), path: "/layer/count/filtered",
                                        query: [QueryItem("page", "1"), QueryItem("ts", "\(UUID().uuidString)")])
                endpoint.cachePolicy = .normal(ttl: .seconds(600))
                endpoint.cacheKeyExclusions = ["ts"]
                return endpoint
            }
            _ = try await client.send(endpoint())
            #expect(try await client.send(endpoint()).metadata.source == .cache)
            #expect(try await Self.count("filtered", api: api) == 1)
        }
    }

    @Test func businessRulesAndStatusValidatorsPerEndpoint() async throws {
        try await withDemoServer { _, api in
            let client = CourierClient()
            // The module has no rule; the endpoint's maps the demo's 301 to a business error.
            var user = Endpoint(name: "user", module: Self.module(api, rule: nil), path: "/users/404404")
            #expect(try await client.send(user).value["code"] == 301)
            user.businessRule = BusinessRule(mapping: DemoAPI.UserError.self)
            let error = try await #require(throws: CourierError.self) { try await client.send(user) }
            #expect(error.code == .business)
            #expect(error.business(as: DemoAPI.UserError.self) == .userNotFound)
            // The endpoint's rule wins over the module's: code 200 is a failure where only 0 succeeds.
            var strict = Endpoint(name: "strict", module: Self.module(api), path: "/users/1")
            strict.businessRule = BusinessRule(successCodes: [0])
            let strictError = try await #require(throws: CourierError.self) { try await client.send(strict) }
            #expect(strictError.code == .business)

            var notFound = Endpoint(name: "probe", module: Self.module(api, rule: nil), path: "/status/404")
            notFound.statusValidator = .statuses([200, 404])
            #expect(try await client.send(notFound).metadata.status == .notFound)
            var onlyCreated = Endpoint(name: "created", module: Self.module(api, rule: nil), path: "/status/200")
            onlyCreated.statusValidator = .statuses([201])
            let refused = try await #require(throws: CourierError.self) { try await client.send(onlyCreated) }
            #expect(refused.code == .http(status: 200))
        }
    }

    @Test(arguments: TransportUnderTest.allCases)
    func identicalCallsShareOneExchange(_ kind: TransportUnderTest) async throws {
        try await kind.run { transport in
            try await withDemoServer { _, api in
                let client = CourierClient(transport: transport)
                var endpoint = Endpoint(name: "shared", module: Self.module(api), path: "/layer/count/shared",
                                        query: [QueryItem("delay", "2000")])
                endpoint.duplicatePolicy = .share
                let calls = (0..<5).map { _ in client.dispatch(endpoint) }
                var counts: [Value?] = []
                for call in calls { counts.append(try await call.reply.value["data"]?["count"]) }
                #expect(counts == Array(repeating: 1, count: 5))
                #expect(Set(calls.map(\.id)).count == 5)
                #expect(try await Self.count("shared", api: api) == 1)
                // Without the policy every call is its own exchange.
                endpoint.duplicatePolicy = .allow
                _ = try await client.send(endpoint)
                #expect(try await Self.count("shared", api: api) == 2)
            }
        }
    }

    @Test func cancelPreviousLetsTheNewestCallWin() async throws {
        try await withDemoServer { _, api in
            let client = CourierClient()
            var endpoint = Endpoint(name: "search", module: Self.module(api), path: "/layer/count/search",
                                    query: [QueryItem("delay", "6000")])
            endpoint.duplicatePolicy = .cancelPrevious
            let first = client.dispatch(endpoint)
            // The first call must reach the server before the second replaces it (not a fixed sleep: a loaded
            // machine loses that race), and must still be waiting there when it does: the server holds each call
            // 6 s, because polling the count took more than 0.5 s on a loaded CI machine.
            try #require(await waitUntil { try await Self.count("search", api: api) >= 1 })
            let second = client.dispatch(endpoint)
            let error = try await #require(throws: CourierError.self) { try await first.reply }
            #expect(error.code == .cancelled)
            #expect(try await second.reply.value["data"]?["count"] == 2)
        }
    }

    @Test func failoverDoesNotBlameTheServerWhileTheDeviceIsOffline() async throws {
        let gone = try await DemoServer.start()
        let dead = gone.baseURL
        await gone.stop()
        try await withDemoServer { server, _ in
            let offline = Locked(true)
            var configuration = FailoverInterceptor.Configuration()
            configuration.isOffline = { offline.withLock { $0 } }
            configuration.window = FailoverWindow(size: 4, threshold: 0.1, minimumCalls: 1)
            let failover = FailoverInterceptor(configuration: configuration)
            let service = APIService(name: "api", baseURLs: [.release: [dead, server.baseURL]], environment: .release)
            let client = CourierClient(configuration: .init(interceptors: [failover]))
            let endpoint = Endpoint(name: "user", module: APIModule(name: "user", service: service), path: "/users/1")
            _ = try await client.send(endpoint)               // routed on to the live host
            #expect(failover.window(of: service).count == 0)
            #expect(service.currentBaseURL == dead)
            offline.withLock { $0 = false }
            _ = try await client.send(endpoint)
            #expect(service.currentBaseURL == server.baseURL)  // online, the refused connection counts
        }
    }

    @Test func priorityReachesTheCallsTask() async throws {
        struct RecordPriority: Interceptor {
            let seen: Locked<[TaskPriority]>
            func intercept(_ request: CourierRequest, context: InterceptorContext, next: InterceptorNext)
                async throws -> CourierResponse
            {
                seen.withLock { $0.append(Task.currentPriority) }
                return try await next(request)
            }
        }
        try await withDemoServer { _, api in
            let seen = Locked<[TaskPriority]>([])
            let client = CourierClient(configuration: .init(interceptors: [RecordPriority(seen: seen)]))
            // Awaiting a task raises its priority to the waiter's, so each call is observed before anyone
            // awaits it.
            for (index, priority) in [Priority.low, .normal, .high].enumerated() {
                var endpoint = api.user(id: 1)
                endpoint.priority = priority
                let call = client.dispatch(endpoint)
                #expect(await waitUntil { seen.withLock { $0.count } > index })
                _ = try await call.reply
            }
            #expect(seen.withLock { $0 } == [.low, .medium, .high])
        }
    }
}

/// The README's "What mobile network layers taught" snippet, compiled and sent.
@Suite(.timeLimit(.minutes(10))) struct ReadmeMobileLayerExampleTests {
    @Test func theReadmeSnippetCompilesAndSends() async throws {
        try await withDemoServer { _, api in
            let home = APIModule(name: "home", service: api.service, businessRule: BusinessRule())
            // README: begin
            var configuration = CacheConfiguration()
            configuration.notModifiedCodes = [2001]           // HSNet's "already the newest" business code → cached data
            configuration.keyExclusions = ["ts", "nonce"]     // YTKNetwork's key filter: never part of a cache key
            let cache = CacheInterceptor(configuration: configuration)

            var launch = Endpoint(name: "home", module: home, path: "/home")
            launch.cachePolicy = .readOnlyRefreshing          // answer from the cache now, refresh quietly for next time
            launch.cacheSensitiveValue = "lang=de"            // an entry stored under another value is rejected
            launch.businessRule = BusinessRule(successCodes: [1])      // this endpoint's codes, not the module's
            launch.statusValidator = .statuses([200, 304])             // YTKNetwork's status validator
            launch.duplicatePolicy = .share                   // identical calls in flight share one exchange
            launch.priority = .high                           // the call's task priority and its place in queues
            // README: end
            launch.path = "/layer/count/home"
            launch.businessRule = BusinessRule(successCodes: [200])
            let client = CourierClient(configuration: .init(interceptors: [cache]))
            let miss = try await #require(throws: CourierError.self) { try await client.send(launch) }
            #expect(miss.code == .cacheMiss)
            await cache.waitForRevalidations()
            #expect(try await client.send(launch).value["data"]?["count"] == 1)
            await cache.waitForRevalidations()     // the quiet refresh this call started, before the server stops
        }
    }
}

/// Cancelling a call that shares an exchange ends only its own wait.
@Suite(.timeLimit(.minutes(10))) struct SharedCallCancellationTests {
    @Test func cancellingAFollowerLeavesTheLeaderRunning() async throws {
        try await withDemoServer { _, api in
            let client = CourierClient()
            var endpoint = Endpoint(name: "shared", module: MobileLayerTests.module(api), path: "/layer/count/follower",
                                    query: [QueryItem("delay", "6000")])   // outlasts polling on a loaded machine
            endpoint.duplicatePolicy = .share
            let leader = client.dispatch(endpoint)
            let leaderDone = Locked(false)
            let watcher = Task {
                let reply = try await leader.reply
                leaderDone.withLock { $0 = true }
                return reply
            }
            try #require(await waitUntil { try await MobileLayerTests.count("follower", api: api) >= 1 })
            let follower = client.dispatch(endpoint)
            follower.cancel()
            let error = try await #require(throws: CourierError.self) { try await follower.reply }
            #expect(error.code == .cancelled)
            #expect(leaderDone.withLock { $0 } == false)             // its wait ended; the leader's exchange goes on
            #expect(try await watcher.value.value["data"]?["count"] == 1)
        }
    }
}

/// Over loopback: calls queued behind a ConcurrencyLimiter reach the server by priority.
@Suite(.timeLimit(.minutes(10))) struct PriorityQueueLoopbackTests {
    @Test func queuedCallsReachTheServerByPriority() async throws {
        try await withDemoServer { server, api in
            let limiter = ConcurrencyLimiter(maximumPerHost: 1)
            let client = CourierClient(configuration: .init(interceptors: [limiter]))
            let module = APIModule(name: "queue", service: api.service)
            func endpoint(_ tag: String, _ priority: Priority, delay: Int = 0) -> Endpoint {
                var endpoint = Endpoint(name: tag, module: module, path: "/layer/arrivals/q/\(tag)",
                                        query: [QueryItem("delay", "\(delay)")])
                endpoint.priority = priority
                return endpoint
            }
            // The blocker holds the one slot until it is cancelled, after the three others have queued (no window
            // of wall-clock time to win: each is seen waiting before the next is dispatched).
            let host = "127.0.0.1:\(server.port)"
            let blocker = client.dispatch(endpoint("blocker", .normal, delay: 10_000))
            #expect(await waitUntil {
                (try? await CourierClient().send(Endpoint(name: "log", module: module, path: "/layer/arrivals/q")))?
                    .value["data"]?["tags"]?.arrayValue?.count == 1
            })
            var queued: [Call<Value>] = []
            for (index, call) in [endpoint("low", .low), endpoint("normal", .normal), endpoint("high", .high)].enumerated() {
                queued.append(client.dispatch(call))
                #expect(await waitUntil { limiter.waiting(host: host) == index + 1 })
            }
            blocker.cancel()
            _ = try? await blocker.reply
            for call in queued { _ = try await call.reply }
            let log = try await CourierClient().send(Endpoint(name: "log", module: module, path: "/layer/arrivals/q"))
            #expect(log.value["data"]?["tags"] == ["blocker", "high", "normal", "low"])
        }
    }
}
