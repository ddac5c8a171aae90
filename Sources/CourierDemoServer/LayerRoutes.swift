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
struct LayerRoutes: DemoRouteGroup {
    /// The business code meaning "what you have is already the newest".
    static let alreadyNewest = 2001

    func register(on router: Router<BasicRequestContext>, state: DemoState, exchange: DemoExchange) {
        let versions = Locked<[String: Int]>([:])
        let counts = Locked<[String: Int]>([:])

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

        router.get("/layer/stats/:name") { request, context -> Response in
            let name = context.parameters.get("name") ?? ""
            let count = counts.withLock { $0[name, default: 0] }
            return exchange.respond(to: request, DemoExchange.envelope(data: ["count": .int(Int64(count))]), messageType: nil)
        }
    }
}
