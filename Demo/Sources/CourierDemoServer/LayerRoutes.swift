#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Courier
import HTTPTypes
import Hummingbird

/// Routes for the mobile-layer features (per server, in memory):
///
/// - `GET /layer/newest/:name` — versioned data. A request whose `X-Data-Version` header equals the current
///   version gets HSNet's "already the newest" answer: HTTP 200 with business code 2001 and no data.
///   `POST /layer/newest/:name/bump` raises the version.
/// - `GET /layer/count/:name?delay=ms` — counts the requests for `name` as they arrive, waits `delay`
///   milliseconds, and answers `data.count` (the count when it arrived).
/// - `GET /layer/stats/:name` — `data.count` so far.
/// - `GET /layer/arrivals/:queue/:tag?delay=ms` — records `tag` in `queue`'s arrival order, waits `delay`;
///   `GET /layer/arrivals/:queue` answers `data.tags`, in order.
/// - `GET /layer/items` — 95 items `{id, name}` paged three ways: `?page=&size=` (from 1), `?offset=&limit=`, or
///   `?cursor=&limit=` (an opaque cursor; `data.next_cursor` is null after the last page). `data.items`,
///   `data.total`.
struct LayerRoutes: DemoRouteGroup {
    /// The business code meaning "what you have is already the newest".
    static let alreadyNewest = 2001
    /// How many items `/layer/items` pages through.
    static let itemCount = 95

    func register(on router: Router<BasicRequestContext>, state: DemoState, exchange: DemoExchange) {
        let versions = Locked<[String: Int]>([:])
        let counts = Locked<[String: Int]>([:])
        let arrivals = Locked<[String: [String]]>([:])

        router.get("/layer/arrivals/:queue/:tag") { request, context -> Response in
            state.countRequest()
            let queue = context.parameters.get("queue") ?? ""
            arrivals.withLock { $0[queue, default: []].append(context.parameters.get("tag") ?? "") }
            let delay = request.uri.queryParameters.get("delay").flatMap { Int($0) } ?? 0
            if delay > 0 { try await Task.sleep(for: .milliseconds(min(delay, 10_000))) }
            return exchange.respond(to: request, DemoExchange.envelope(data: nil), messageType: nil)
        }

        router.get("/layer/arrivals/:queue") { request, context -> Response in
            let tags = arrivals.withLock { $0[context.parameters.get("queue") ?? ""] ?? [] }
            return exchange.respond(
                to: request, DemoExchange.envelope(data: ["tags": .array(tags.map(Value.string))]), messageType: nil)
        }

        router.get("/layer/newest/:name") { request, context -> Response in
            state.countRequest()
            let name = context.parameters.get("name") ?? ""
            let version = versions.withLock { $0[name, default: 1] }
            if request.headers[HTTPField.Name("X-Data-Version")!] == String(version) {
                return exchange.respond(
                    to: request, DemoExchange.envelope(code: Self.alreadyNewest, message: "already the newest", data: nil),
                    messageType: nil)
            }
            let data: Value = ["version": .int(Int64(version)), "items": .array((1...3).map { .string("\(name)-\(version)-\($0)") })]
            return exchange.respond(to: request, DemoExchange.envelope(data: data), messageType: nil)
        }

        router.post("/layer/newest/:name/bump") { request, context -> Response in
            let name = context.parameters.get("name") ?? ""
            let version = versions.withLock { versions -> Int in
                versions[name, default: 1] += 1
                return versions[name]!
            }
            return exchange.respond(to: request, DemoExchange.envelope(data: ["version": .int(Int64(version))]), messageType: nil)
        }

        router.get("/layer/count/:name") { request, context -> Response in
            state.countRequest()
            let name = context.parameters.get("name") ?? ""
            let count = counts.withLock { counts -> Int in
                counts[name, default: 0] += 1
                return counts[name]!
            }
            let delay = request.uri.queryParameters.get("delay").flatMap { Int($0) } ?? 0
            if delay > 0 { try await Task.sleep(for: .milliseconds(min(delay, 10_000))) }
            return exchange.respond(to: request, DemoExchange.envelope(data: ["count": .int(Int64(count))]), messageType: nil)
        }

        router.get("/layer/items") { request, _ -> Response in
            state.countRequest()
            let query = request.uri.queryParameters
            let total = Self.itemCount
            let limit = max(1, min(100, query.get("limit").flatMap { Int($0) } ?? query.get("size").flatMap { Int($0) } ?? 10))
            var start = 0
            if let page = query.get("page").flatMap({ Int($0) }) {
                start = (max(1, page) - 1) * limit
            } else if let offset = query.get("offset").flatMap({ Int($0) }) {
                start = max(0, offset)
            } else if let cursor = query.get("cursor"), !cursor.isEmpty {
                guard cursor.hasPrefix("c"), let index = Int(cursor.dropFirst()), index >= 0 else {
                    return exchange.failure(to: request, code: 400, message: "unknown cursor", status: .badRequest)
                }
                start = index
            }
            let end = min(total, start + limit)
            let items: [Value] = start < end
                ? (start..<end).map { ["id": .int(Int64($0 + 1)), "name": .string("item-\($0 + 1)")] } : []
            let next: Value = end < total ? .string("c\(end)") : .null
            let data: Value = ["items": .array(items), "total": .int(Int64(total)), "next_cursor": next]
            return exchange.respond(to: request, DemoExchange.envelope(data: data), messageType: nil)
        }

        router.get("/layer/stats/:name") { request, context -> Response in
            let name = context.parameters.get("name") ?? ""
            let count = counts.withLock { $0[name, default: 0] }
            return exchange.respond(to: request, DemoExchange.envelope(data: ["count": .int(Int64(count))]), messageType: nil)
        }
    }
}
