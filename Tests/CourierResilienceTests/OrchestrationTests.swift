import CourierResilience
import CourierTesting
import Foundation
import HTTPTypes
import CourierTestSupport
import Testing

/// A server whose `/slow/*` paths work until cancelled (counting started, finished and cancelled work),
/// `/fail/*` answer 404 at once, `/users/N` answer a user, and `/items?page=&size=` a page of 25 items.
final class WorkServer: Sendable {
    let started = Locked(0)
    let finished = Locked(0)
    let cancelled = Locked(0)
    let pageRequests = Locked<[Int]>([])
    let pageGate = Locked<Gate?>(nil)
    /// Whether the gate holds the first page too (else only the later ones).
    let gatesFirstPage = Locked(false)

    var transport: InMemoryTransport {
        InMemoryTransport { request, _ in try await self.handle(request) }
    }

    func handle(_ request: HTTPRequest) async throws -> (HTTPResponse, Data) {
        let full = request.path ?? "/"
        let parts = full.split(separator: "?", maxSplits: 1).map(String.init)
        let path = parts[0]
        let query = parts.count > 1 ? QueryItem.decode(parts[1]) : []
        if path.hasPrefix("/slow") {
            started.withLock { $0 += 1 }
            do {
                try await Task.sleep(for: .seconds(600))
            } catch {
                cancelled.withLock { $0 += 1 }
                throw error
            }
            finished.withLock { $0 += 1 }
            return jsonResponse()
        }
        if path.hasPrefix("/quick") { return jsonResponse(.ok, #"{"code":0,"path":"\#(path)"}"#) }
        if path.hasPrefix("/fail") { return jsonResponse(.notFound, #"{"message":"gone"}"#) }
        if path == "/login" { return jsonResponse(.ok, #"{"data":{"id":7,"token":"t7"}}"#) }
        if path.hasPrefix("/users/") {
            let id = path.dropFirst("/users/".count)
            return jsonResponse(.ok, #"{"data":{"id":\#(id),"name":"user \#(id)"}}"#)
        }
        if path == "/items" {
            let page = Int(query.first { $0.name == "page" }?.value ?? "1") ?? 1
            let size = Int(query.first { $0.name == "size" }?.value ?? "10") ?? 10
            pageRequests.withLock { $0.append(page) }
            if page > 1 || gatesFirstPage.withLock({ $0 }), let gate = pageGate.withLock({ $0 }) { await gate.wait() }
            let all = 25
            let range = ((page - 1) * size)..<min(page * size, all)
            let items = range.map { #"{"id":\#($0)}"# }.joined(separator: ",")
            return jsonResponse(.ok, #"{"code":0,"data":{"total":\#(all),"items":[\#(items)]}}"#)
        }
        return jsonResponse(.notFound, "{}")
    }
}

@Suite struct OrchestrationTests {
    let server = WorkServer()
    var client: CourierClient { CourierClient(transport: server.transport) }

    func endpoint(_ path: String) -> Endpoint { Fixture.endpoint(path) }

    @Test func batchReturnsRepliesInOrder() async throws {
        let replies = try await client.batch([endpoint("/quick/a"), endpoint("/quick/b"), endpoint("/quick/c")]).replies
        #expect(replies.map { $0.value["path"]?.stringValue } == ["/quick/a", "/quick/b", "/quick/c"])
    }

    @Test func batchFailureCancelsTheOthersAndNamesTheFailedCall() async throws {
        let client = client
        let batch = client.batch([endpoint("/slow/1"), endpoint("/fail/2"), endpoint("/slow/3")])
        #expect(await eventually { server.started.withLock { $0 } == 2 })
        let error = await #expect(throws: CourierError.self) { _ = try await batch.replies }
        #expect(error?.code == .notFound)
        #expect(error?.context.endpoint == "get/fail/2")
        #expect(error?.context.callID == batch.calls[1].id)
        #expect(error?.detail?.contains("batch member 2 of 3 (get/fail/2) failed") == true)
        // The slow members were cancelled: their work stopped and never finished.
        #expect(await eventually { server.cancelled.withLock { $0 } == 2 })
        #expect(server.finished.withLock { $0 } == 0)
        for call in [batch.calls[0], batch.calls[2]] {
            let member = await #expect(throws: CourierError.self) { _ = try await call.reply }
            #expect(member?.code == .cancelled)
        }
        #expect(client.runningCalls.isEmpty)
    }

    @Test func batchCancelledAsAWhole() async throws {
        let batch = client.batch([endpoint("/slow/1"), endpoint("/slow/2")])
        #expect(await eventually { server.started.withLock { $0 } == 2 })
        batch.cancel()
        let error = await #expect(throws: CourierError.self) { _ = try await batch.replies }
        #expect(error?.code == .cancelled)
        #expect(await eventually { server.cancelled.withLock { $0 } == 2 })
    }

    @Test func chainPassesDataFromStepToStep() async throws {
        let chain = CallChain(endpoint("/login"))
            .then { login in
                Fixture.endpoint("/users/\(login.value["data"]?["id"]?.int64Value ?? 0)")
            }
            .then { user in
                Fixture.endpoint("/quick/\(user.value["data"]?["name"]?.stringValue?.count ?? 0)")
            }
        let replies = try await client.run(chain).replies
        #expect(replies.count == 3)
        #expect(replies[1].value["data"]?["name"]?.stringValue == "user 7")
        #expect(replies[2].value["path"]?.stringValue == "/quick/6")
    }

    @Test func chainStopsAtTheFailingStepAndSaysWhich() async throws {
        let later = Locked(false)
        let chain = CallChain(endpoint("/login"))
            .then { _ in Fixture.endpoint("/fail/profile") }
            .then { _ in
                later.withLock { $0 = true }
                return Fixture.endpoint("/quick/never")
            }
        let error = await #expect(throws: CourierError.self) { _ = try await client.run(chain).replies }
        #expect(error?.code == .notFound)
        #expect(error?.detail?.hasPrefix("chain step 2 of 3 (get/fail/profile) failed") == true)
        #expect(later.withLock { $0 } == false)
    }

    @Test func chainStepMayEndItEarly() async throws {
        let chain = CallChain(endpoint("/login")).then { _ in nil }.then { _ in Fixture.endpoint("/x") }
        #expect(try await client.run(chain).replies.count == 1)
    }

    @Test func chainCancelledCancelsTheRunningStep() async throws {
        let chain = CallChain(endpoint("/login")).then { _ in Fixture.endpoint("/slow/step") }
        let running = client.run(chain)
        #expect(await eventually { server.started.withLock { $0 } == 1 })
        running.cancel()
        let error = await #expect(throws: CourierError.self) { _ = try await running.replies }
        #expect(error?.code == .cancelled)
        #expect(await eventually { server.cancelled.withLock { $0 } == 1 })
    }

    @Test func groupDeliversEveryResultOnce() async throws {
        let notified = Locked<[[Bool]]>([])
        let group = client.group([endpoint("/quick/1"), endpoint("/fail/2"), endpoint("/quick/3")]) { results in
            notified.withLock { $0.append(results.map { (try? $0.get()) != nil }) }
        }
        let results = await group.results
        #expect(results.map { (try? $0.get()) != nil } == [true, false, true])
        if case .failure(let error) = results[1] { #expect(error.code == .notFound) }
        _ = await group.results
        #expect(notified.withLock { $0 } == [[true, false, true]])
    }

    @Test func groupCancelledReportsCancelledMembers() async throws {
        let group = client.group([endpoint("/slow/1"), endpoint("/quick/2")])
        #expect(await eventually { server.started.withLock { $0 } == 1 })
        group.cancel()
        let results = await group.results
        if case .failure(let error) = results[0] { #expect(error.code == .cancelled) } else {
            Issue.record("the slow member should have been cancelled")
        }
    }

    func pager() -> Pager<Value> {
        Pager(client: client, pageSize: 10) { page, size in
            Fixture.endpoint("/items", query: [QueryItem("page", "\(page)"), QueryItem("size", "\(size)")])
        }
    }

    @Test func pagerRefreshesAndLoadsUntilTheEnd() async throws {
        let pager = pager()
        #expect(try await pager.refresh().count == 10)
        #expect(await pager.total == 25)
        #expect(await pager.currentPage == 1)
        #expect(await pager.hasMore)
        #expect(try await pager.loadMore().count == 10)
        #expect(try await pager.loadMore().count == 5)
        #expect(await pager.hasMore == false)
        #expect(await pager.items.count == 25)
        #expect(await pager.items.last?["id"]?.int64Value == 24)
        #expect(try await pager.loadMore().isEmpty)
        #expect(server.pageRequests.withLock { $0 } == [1, 2, 3])
        try await pager.refresh()
        #expect(await pager.items.count == 10)
        #expect(await pager.currentPage == 1)
        #expect(await pager.hasMore)
    }

    /// A pager at page `Int.max` has no next page to ask for: `loadMore()` ends the list instead of
    /// overflowing the page number.
    @Test func thePageAfterIntMaxIsTheEnd() async throws {
        let asked = Locked<[String]>([])
        let transport = InMemoryTransport { request, _ in
            asked.withLock { $0.append(request.path ?? "") }
            return jsonResponse(.ok, #"{"data":{"items":[{"id":1}],"more":true}}"#)
        }
        let client = CourierClient(transport: transport)
        let pager = Pager(client: client, pageSize: 1, layout: .init(hasMorePath: "data.more", firstPage: .max)) {
            page, _ in Fixture.endpoint("/items", query: [QueryItem("page", "\(page)")])
        }
        #expect(try await pager.refresh().count == 1)
        #expect(await pager.currentPage == .max)
        #expect(await pager.hasMore)
        #expect(try await pager.loadMore().isEmpty)
        #expect(await pager.hasMore == false)
        #expect(await pager.items.count == 1)
        #expect(asked.withLock { $0 } == ["/items?page=\(Int.max)"])
    }

    @Test func refreshSupersedesARunningLoadMore() async throws {
        let pager = pager()
        try await pager.refresh()
        let gate = Gate()
        server.pageGate.withLock { $0 = gate }
        let loading = Task { try await pager.loadMore() }
        #expect(await eventually { server.pageRequests.withLock { $0 } == [1, 2] })
        #expect(try await pager.refresh().count == 10)
        gate.open()
        let error = await #expect(throws: CourierError.self) { _ = try await loading.value }
        #expect(error?.code == .cancelled)
        #expect(await pager.items.count == 10)
        #expect(await pager.currentPage == 1)
        #expect(try await pager.loadMore().first?["id"]?.int64Value == 10)
    }

    @Test func overlappingLoadMoreCallsCoalesce() async throws {
        let pager = pager()
        try await pager.refresh()
        let gate = Gate()
        server.pageGate.withLock { $0 = gate }
        async let first = pager.loadMore()
        async let second = pager.loadMore()
        #expect(await eventually { server.pageRequests.withLock { $0 } == [1, 2] })
        // Page 2 is held a second more, for the second `loadMore` to join it (it is not observable).
        try await Task.sleep(for: .seconds(1))
        gate.open()
        let (a, b) = try await (first, second)
        #expect(a.count == 10 && b.count == 10)
        #expect(a == b)
        #expect(server.pageRequests.withLock { $0 } == [1, 2])
        #expect(await pager.items.count == 20)
    }

    /// A caller whose task is cancelled while its page loads stops waiting at once (the page is held until after
    /// it has), and the request stops with it: nothing of that page is kept, and the next call asks again.
    @Test(.timeLimit(.minutes(1)), arguments: [false, true])
    func aCancelledCallerStopsWaitingAtOnce(refreshing: Bool) async throws {
        let pager = pager()
        try await pager.refresh()
        let gate = Gate()
        server.pageGate.withLock { $0 = gate }
        server.gatesFirstPage.withLock { $0 = true }
        let caller = Task { refreshing ? try await pager.refresh() : try await pager.loadMore() }
        let page = refreshing ? 1 : 2
        #expect(await eventually { server.pageRequests.withLock { $0 } == [1, page] })
        caller.cancel()
        let error = try await #require(throws: CourierError.self) { try await caller.value }
        #expect(error.code == .cancelled)
        gate.open()
        #expect(await pager.items.count == 10)
        #expect(await pager.currentPage == 1)
        let next = refreshing ? try await pager.refresh() : try await pager.loadMore()
        #expect(next.first?["id"] == (refreshing ? 0 : 10))
        #expect(server.pageRequests.withLock { $0 } == [1, page, page])
    }

    /// Two callers share a page; the one cancelled stops waiting, the other gets the page from the same request.
    @Test(.timeLimit(.minutes(1))) func aCancelledCallerLeavesTheOthersTheirPage() async throws {
        let pager = pager()
        try await pager.refresh()
        let gate = Gate()
        server.pageGate.withLock { $0 = gate }
        let first = Task { try await pager.loadMore() }
        #expect(await eventually { server.pageRequests.withLock { $0 } == [1, 2] })
        let second = Task { try await pager.loadMore() }
        // The second joins the first's request (there is no other way to see it join than to give it time).
        try await Task.sleep(for: .seconds(2))
        first.cancel()
        let error = try await #require(throws: CourierError.self) { try await first.value }
        #expect(error.code == .cancelled)
        gate.open()
        #expect(try await second.value.first?["id"] == 10)
        #expect(server.pageRequests.withLock { $0 } == [1, 2])
        #expect(await pager.items.count == 20)
    }

    @Test func cancellingThePagerStopsTheRunningLoadAndKeepsThePages() async throws {
        let pager = pager()
        try await pager.refresh()
        let gate = Gate()
        server.pageGate.withLock { $0 = gate }
        let running = Task { try await pager.loadMore() }
        #expect(await eventually { server.pageRequests.withLock { $0 } == [1, 2] })
        await pager.cancel()
        gate.open()
        let error = try await #require(throws: CourierError.self) { try await running.value }
        #expect(error.code == .cancelled)
        // Nothing of the cancelled page was kept; the next loadMore asks for the same page again.
        #expect(await pager.items.count == 10)
        #expect(await pager.currentPage == 1)
        let next = try await pager.loadMore()
        #expect(next.count == 10)
        #expect(server.pageRequests.withLock { $0 } == [1, 2, 2])
        #expect(await pager.currentPage == 2)
    }
}
