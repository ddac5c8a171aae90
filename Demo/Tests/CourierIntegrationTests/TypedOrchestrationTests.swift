import Courier
import CourierCache
import CourierResilience
import CourierDemoServer
import Foundation
import HTTPTypes
import Testing

/// Typed batch, group, chain and pager against the demo server; the typed results equal what decoding the
/// raw `Value` forms gives.
@Suite(.serialized, .timeLimit(.minutes(10))) struct TypedOrchestrationTests {
    struct Item: Codable, Sendable, Hashable {
        var id: Int
        var name: String
    }

    struct Envelope<T: Codable & Sendable>: Codable, Sendable {
        var code: Int
        var data: T
    }

    struct Count: Codable, Sendable { var count: Int }

    static func module(_ api: DemoAPI) -> APIModule {
        APIModule(name: "layer", service: api.service, businessRule: BusinessRule())
    }

    @Test(arguments: TransportUnderTest.allCases)
    func aHeterogeneousBatchReturnsEachMembersType(_ kind: TransportUnderTest) async throws {
        try await kind.run { transport in
            try await withDemoServer { _, api in
                let client = CourierClient(transport: transport)
                let (user, count, raw) = try await client.batch(
                    (api.user(id: 1), DemoAPI.UserEnvelope.self),
                    (Endpoint(name: "count", module: Self.module(api), path: "/layer/count/batch"), Envelope<Count>.self),
                    (api.user(id: 2), Value.self))
                #expect(user.value.data.id == 1)
                #expect(count.value.data.count == 1)
                #expect(raw.value["data"]?["id"] == 2)
                // The typed reply equals decoding the raw one.
                let again = try await client.send(api.user(id: 1))
                let decoded = try ValueDecoder().decode(DemoAPI.UserEnvelope.self, from: again.value)
                #expect(decoded == user.value)
            }
        }
    }

    /// Sends its request once the demo server has started `count` delays.
    struct AfterDelaysStart: Interceptor {
        let server: DemoServer
        let count: Int
        func intercept(_ request: CourierRequest, context: InterceptorContext, next: InterceptorNext)
            async throws -> CourierResponse
        {
            _ = await waitUntil { server.state.delays.started >= count }
            return try await next(request)
        }
    }

    @Test func aHeterogeneousBatchFailsFastAndNamesTheMember() async throws {
        try await withDemoServer { server, api in
            let client = CourierClient()
            // The failing member is sent once the slow one is at the server (so its cancellation is seen there),
            // and the slow one would take a minute.
            var failing = api.user(id: 404404)
            failing.interceptors = [AfterDelaysStart(server: server, count: 1)]
            let error = try await #require(throws: CourierError.self) {
                _ = try await client.batch(
                    (Endpoint(name: "slow", module: Self.module(api), path: "/delay/60000"), Value.self),
                    (failing, DemoAPI.UserEnvelope.self))
            }
            #expect(error.code == .business)
            #expect(error.detail?.contains("batch member 2 of 2 (getUser) failed") == true)
            #expect(await waitUntil { server.state.delays.cancelled == 1 })   // the slow member was cancelled
        }
    }

    @Test func aTypedBatchOfOneType() async throws {
        try await withDemoServer { _, api in
            let batch = CourierClient().batch([api.user(id: 3), api.user(id: 4)], decoding: DemoAPI.UserEnvelope.self)
            let replies = try await batch.replies
            #expect(replies.map(\.value.data.id) == [3, 4])
        }
    }

    @Test func typedGroupsKeepEveryResult() async throws {
        try await withDemoServer { _, api in
            let client = CourierClient()
            let (found, missing) = await client.group(
                (api.user(id: 5), DemoAPI.UserEnvelope.self), (api.user(id: 404404), DemoAPI.UserEnvelope.self))
            let foundReply = try found.get()
            #expect(foundReply.value.data.id == 5)
            guard case .failure(let error) = missing else { Issue.record("expected a failure"); return }
            #expect(error.code == .business)
            let results = await client.group([api.user(id: 6), api.user(id: 7)], decoding: DemoAPI.UserEnvelope.self).results
            let ids = try results.map { try $0.get().value.data.id }
            #expect(ids == [6, 7])
        }
    }

    @Test func aTypedChainBuildsEachStepFromTheLastTypedReply() async throws {
        try await withDemoServer { _, api in
            let module = Self.module(api)
            let running = CourierClient().chain { chain in
                let page = try await chain.step(
                    Endpoint(name: "items", module: module, path: "/layer/items", query: [QueryItem("limit", "3")]),
                    decoding: Envelope<Page>.self)
                let third = page.value.data.items[2]
                let user = try await chain.step(api.user(id: Int64(third.id)), decoding: DemoAPI.UserEnvelope.self)
                return (third.name, user.value.data.id)
            }
            let (name, id) = try await running.value
            #expect(name == "item-3")
            #expect(id == 3)

            let failing = CourierClient().chain { chain in
                _ = try await chain.step(api.user(id: 1))
                return try await chain.step(api.user(id: 404404), decoding: DemoAPI.UserEnvelope.self).value
            }
            let error = try await #require(throws: CourierError.self) { try await failing.value }
            #expect(error.code == .business)
            #expect(error.detail?.contains("chain step 2 (getUser) failed") == true)
        }
    }

    struct Page: Codable, Sendable {
        var items: [Item]
        var total: Int
    }

    static func itemsEndpoint(_ api: DemoAPI, _ query: [QueryItem]) -> Endpoint {
        Endpoint(name: "items", module: module(api), path: "/layer/items", query: query)
    }

    @Test(arguments: ["pages", "offsets", "cursors"])
    func aTypedPagerWalksEveryPageByEachStrategy(_ strategy: String) async throws {
        try await withDemoServer { _, api in
            let paging: Paging = switch strategy {
            case "pages": .pageNumbers(first: 1)
            case "offsets": .offsets
            default: .cursor(path: "data.next_cursor")
            }
            let layout = Pager<Item>.Layout(totalPath: strategy == "cursors" ? nil : "data.total")
            let pager = Pager(client: CourierClient(), pageSize: 20, decoding: Item.self, layout: layout, paging: paging) { request in
                switch strategy {
                case "pages": Self.itemsEndpoint(api, [QueryItem("page", "\(request.page)"), QueryItem("size", "\(request.size)")])
                case "offsets": Self.itemsEndpoint(api, [QueryItem("offset", "\(request.offset)"), QueryItem("limit", "\(request.size)")])
                default: Self.itemsEndpoint(api, [QueryItem("cursor", request.cursor ?? ""), QueryItem("limit", "\(request.size)")])
                }
            }
            let first = try await pager.refresh()
            #expect(first.map(\.id) == Array(1...20))
            var pages = 1
            while await pager.hasMore {
                _ = try await pager.loadMore()
                pages += 1
            }
            #expect(pages == 5)
            #expect(await pager.items.map(\.id) == Array(1...95))
            #expect(await pager.items.last?.name == "item-95")
            let none = try await pager.loadMore()
            #expect(none.isEmpty)
            // refresh starts over.
            let again = try await pager.refresh()
            #expect(again.map(\.id) == Array(1...20))
            #expect(await pager.items.count == 20)
        }
    }

    @Test func overlappingLoadMoreCallsShareOneRequest() async throws {
        try await withDemoServer { server, api in
            let pager = Pager(client: CourierClient(), pageSize: 10, decoding: Item.self, paging: .cursor(path: "data.next_cursor")) {
                var endpoint = Self.itemsEndpoint(api, [QueryItem("cursor", $0.cursor ?? ""), QueryItem("limit", "\($0.size)")])
                // The second page waits 2 s before it is sent, so the second `loadMore` below joins it.
                if $0.cursor != nil { endpoint.interceptors = [HoldRequest(duration: .seconds(2))] }
                return endpoint
            }
            try await pager.refresh()
            let before = server.state.requestCount
            async let a = pager.loadMore()
            async let b = pager.loadMore()
            let (pageA, pageB) = try await (a, b)
            #expect(pageA.map(\.id) == Array(11...20))
            #expect(pageB.map(\.id) == Array(11...20))
            #expect(server.state.requestCount == before + 1)
        }
    }
}

/// The README's typed orchestration snippet, compiled and run against the demo server.
@Suite(.timeLimit(.minutes(10))) struct ReadmeTypedOrchestrationTests {
    struct User: Codable, Sendable { var id: Int64; var name: String; var email: String }
    struct Envelope<T: Codable & Sendable>: Codable, Sendable { var code: Int; var message: String; var data: T }
    struct Item: Codable, Sendable { var id: Int; var name: String }
    struct ItemPage: Codable, Sendable { var items: [Item] }
    typealias Banner = Value
    typealias Feed = Value

    @Test func theReadmeSnippetRuns() async throws {
        try await withDemoServer { _, api in
            let client = CourierClient()
            let users = api.users
            let layer = APIModule(name: "layer", service: api.service)
            @Sendable func user(_ id: Int64) -> Endpoint { Endpoint(name: "getUser", module: users, path: "/users/\(id)") }
            @Sendable func items(limit: Int, after cursor: String? = nil) -> Endpoint {
                Endpoint(name: "items", module: layer, path: "/layer/items",
                         query: [QueryItem("cursor", cursor ?? ""), QueryItem("limit", "\(limit)")])
            }
            let banner = Endpoint(name: "banner", module: layer, path: "/layer/count/banner")
            let feed = Endpoint(name: "feed", module: layer, path: "/layer/count/feed")
            // README: begin (with the README's static endpoints as local functions)
            let (userReply, page) = try await client.batch((user(7), Envelope<User>.self),
                                                           (items(limit: 3), Envelope<ItemPage>.self))
            let (bannerResult, feedResult) = await client.group((banner, Banner.self), (feed, Feed.self))
            let name = try await client.chain { chain in
                let first = try await chain.step(items(limit: 3), decoding: Envelope<ItemPage>.self)
                return try await chain.step(user(Int64(first.value.data.items[0].id)), decoding: Envelope<User>.self)
                    .value.data.name
            }.value
            let pager = Pager(client: client, pageSize: 20, decoding: Item.self, paging: .cursor(path: "data.next_cursor")) {
                items(limit: $0.size, after: $0.cursor)
            }
            let loaded = try await pager.refresh()
            while await pager.hasMore { _ = try await pager.loadMore() }
            // README: end
            #expect(userReply.value.data.id == 7)
            #expect(page.value.data.items.count == 3)
            #expect((try? bannerResult.get()) != nil && (try? feedResult.get()) != nil)
            #expect(!name.isEmpty)
            #expect(loaded.count == 20)
            #expect(await pager.items.count == 95)
        }
    }
}
