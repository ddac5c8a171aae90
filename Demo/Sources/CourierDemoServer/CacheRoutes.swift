import Courier
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// The bytes `GET /cache/download` serves: a deterministic pseudo-random stream (SplitMix64 of each 8-byte
/// word's index, little-endian), so any range can be generated on demand and checked without storing it.
///
/// ```swift
/// let expected = DownloadPattern.bytes(at: 1_000, count: 64)
/// ```
public enum DownloadPattern {
    /// `count` bytes of the stream starting at `offset`.
    public static func bytes(at offset: Int64, count: Int) -> [UInt8] {
        guard count > 0 else { return [] }
        let firstWord = offset >> 3
        let skip = Int(offset & 7)
        let words = (skip + count + 7) >> 3
        var buffer = [UInt8](repeating: 0, count: words << 3)
        buffer.withUnsafeMutableBytes { raw in
            for index in 0..<words {
                raw.storeBytes(of: word(firstWord + Int64(index)).littleEndian, toByteOffset: index << 3, as: UInt64.self)
            }
        }
        return Array(buffer[skip..<(skip + count)])
    }

    static func word(_ index: Int64) -> UInt64 {
        var z = UInt64(bitPattern: index) &+ 0x9E37_79B9_7F4A_7C15
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// What the cache routes count, per server (read it with `GET /cache/stats`).
final class CacheRouteState: Sendable {
    struct Counters {
        var hits: [String: Int] = [:]
        var versions: [String: Int] = [:]
        var notModified = 0
        var serial = 0
        var slowStarted = 0
        var slowFinished = 0
        var slowCancelled = 0
        var rangeRequests: [String] = []
        var dropped: Set<String> = []
        var flaky: [String: Int] = [:]
    }

    let counters = Locked(Counters())

    func hit(_ key: String) -> Int { counters.withLock { $0.hits[key, default: 0] += 1; return $0.hits[key]! } }
    func nextSerial() -> Int { counters.withLock { $0.serial += 1; return $0.serial } }
    func version(_ name: String) -> Int { counters.withLock { $0.versions[name] ?? 1 } }
}

/// Routes for the cache, orchestration and download features (all under `/cache`):
///
/// - `GET /cache/counter/:name` — a plain resource whose body counts its hits (no validators).
/// - `GET /cache/etag/:name` — versioned, with `ETag` and `Last-Modified`; `If-None-Match` → 304.
///   `POST /cache/etag/:name/bump` changes the version.
/// - `GET /cache/lastmodified/:name` — only `Last-Modified`; `If-Modified-Since` → 304.
/// - `GET /cache/maxage/:seconds` — `Cache-Control: max-age`; `GET /cache/span/:seconds` — a `cache_span` field.
/// - `GET /cache/whoami` — echoes the `X-User` header.
/// - `GET /cache/items?page=&size=` — 95 items, paged.
/// - `GET /cache/slow/:ms` — sleeps, counting started, finished and cancelled work.
/// - `GET /cache/flaky/:key?failures=N&retryAfter=S` — the first N calls answer 503 with `Retry-After`.
/// - `GET /cache/download?size=N&drop=M&key=K` — N deterministic bytes (``DownloadPattern``), with `Range`
///   and `If-Range` support; with `drop`, the first response for `key` that passes byte M is cut there.
/// - `GET /cache/stats` — the counters.
struct CacheRoutes: DemoRouteGroup {
    static let itemCount = 95

    func register(on router: Router<BasicRequestContext>, state: DemoState, exchange: DemoExchange) {
        let cache = CacheRouteState()

        router.get("/cache/counter/:name") { request, context -> Response in
            state.countRequest()
            let name = context.parameters.get("name") ?? "default"
            let hits = cache.hit("counter/\(name)")
            return exchange.respond(
                to: request, DemoExchange.envelope(data: ["name": .string(name), "hits": .int(Int64(hits))]),
                messageType: nil)
        }

        router.get("/cache/etag/:name") { request, context -> Response in
            state.countRequest()
            let name = context.parameters.get("name") ?? "default"
            _ = cache.hit("etag/\(name)")
            let version = cache.version(name)
            var fields: HTTPFields = [.eTag: "\"\(name)-\(version)\"", .lastModified: Self.httpDate(version: version)]
            if request.headers[.ifNoneMatch] == fields[.eTag] {
                cache.counters.withLock { $0.notModified += 1 }
                return Response(status: .notModified, headers: fields)
            }
            fields[.cacheControl] = "no-cache"
            return exchange.respond(
                to: request,
                DemoExchange.envelope(data: ["name": .string(name), "version": .int(Int64(version))]),
                messageType: nil, headers: fields)
        }

        router.post("/cache/etag/:name/bump") { request, context -> Response in
            state.countRequest()
            let name = context.parameters.get("name") ?? "default"
            let version = cache.counters.withLock { counters -> Int in
                counters.versions[name] = (counters.versions[name] ?? 1) + 1
                return counters.versions[name]!
            }
            return exchange.respond(to: request, DemoExchange.envelope(data: ["version": .int(Int64(version))]),
                                    messageType: nil)
        }

        router.get("/cache/lastmodified/:name") { request, context -> Response in
            state.countRequest()
            let name = context.parameters.get("name") ?? "default"
            _ = cache.hit("lastmodified/\(name)")
            let version = cache.version(name)
            let fields: HTTPFields = [.lastModified: Self.httpDate(version: version)]
            if request.headers[.ifModifiedSince] == fields[.lastModified] {
                cache.counters.withLock { $0.notModified += 1 }
                return Response(status: .notModified, headers: fields)
            }
            return exchange.respond(
                to: request, DemoExchange.envelope(data: ["name": .string(name), "version": .int(Int64(version))]),
                messageType: nil, headers: fields)
        }

        router.get("/cache/maxage/:seconds") { request, context -> Response in
            state.countRequest()
            let seconds = max(0, context.parameters.get("seconds", as: Int.self) ?? 60)
            _ = cache.hit("maxage/\(seconds)")
            return exchange.respond(
                to: request, DemoExchange.envelope(data: ["serial": .int(Int64(cache.nextSerial()))]),
                messageType: nil, headers: [.cacheControl: "max-age=\(seconds)"])
        }

        router.get("/cache/span/:seconds") { request, context -> Response in
            state.countRequest()
            let seconds = max(0, context.parameters.get("seconds", as: Int.self) ?? 60)
            _ = cache.hit("span/\(seconds)")
            var body = DemoExchange.envelope(data: ["serial": .int(Int64(cache.nextSerial()))])
            body["cache_span"] = .int(Int64(seconds))
            return exchange.respond(to: request, body, messageType: nil)
        }

        router.get("/cache/whoami") { request, _ -> Response in
            state.countRequest()
            let user = request.headers[HTTPField.Name("X-User")!] ?? "anonymous"
            _ = cache.hit("whoami/\(user)")
            return exchange.respond(
                to: request,
                DemoExchange.envelope(data: ["user": .string(user), "serial": .int(Int64(cache.nextSerial()))]),
                messageType: nil)
        }

        router.get("/cache/items") { request, _ -> Response in
            state.countRequest()
            let page = max(1, request.uri.queryParameters["page"].flatMap { Int(String($0)) } ?? 1)
            let size = min(100, max(1, request.uri.queryParameters["size"].flatMap { Int(String($0)) } ?? 20))
            _ = cache.hit("items/\(page)")
            let start = min(Self.itemCount, (page - 1) * size)
            let end = min(Self.itemCount, start + size)
            let items: [Value] = (start..<end).map { ["id": .int(Int64($0 + 1)), "title": .string("item \($0 + 1)")] }
            return exchange.respond(
                to: request,
                DemoExchange.envelope(data: ["total": .int(Int64(Self.itemCount)), "page": .int(Int64(page)),
                                             "items": .array(items)]),
                messageType: nil)
        }

        router.get("/cache/slow/:ms") { request, context -> Response in
            state.countRequest()
            let ms = min(60_000, max(0, context.parameters.get("ms", as: Int.self) ?? 1000))
            cache.counters.withLock { $0.slowStarted += 1 }
            do {
                // The work stops when the client goes away (the connection closes), as a real server's should.
                try await request.body.consumeWithCancellationOnInboundClose { _ in
                    try await Task.sleep(for: .milliseconds(ms))
                }
            } catch {
                cache.counters.withLock { $0.slowCancelled += 1 }
                throw error
            }
            cache.counters.withLock { $0.slowFinished += 1 }
            return exchange.respond(to: request, DemoExchange.envelope(data: ["waited": .int(Int64(ms))]),
                                    messageType: nil)
        }

        router.on("/cache/flaky/:key", method: .post) { request, context -> Response in
            try await Self.flaky(request, context: context, state: state, cache: cache, exchange: exchange)
        }
        router.get("/cache/flaky/:key") { request, context -> Response in
            try await Self.flaky(request, context: context, state: state, cache: cache, exchange: exchange)
        }

        router.get("/cache/download") { request, _ -> Response in
            state.countRequest()
            return Self.download(request, cache: cache)
        }

        registerStats(on: router, cache: cache, exchange: exchange)
    }

    static func flaky(
        _ request: Request, context: BasicRequestContext, state: DemoState, cache: CacheRouteState,
        exchange: DemoExchange
    ) async throws -> Response {
        state.countRequest()
        let key = context.parameters.get("key") ?? "default"
        let failures = request.uri.queryParameters["failures"].flatMap { Int(String($0)) } ?? 1
        let retryAfter = request.uri.queryParameters["retryAfter"].flatMap { Int(String($0)) } ?? 1
        let call = cache.counters.withLock { counters -> Int in
            counters.flaky[key, default: 0] += 1
            return counters.flaky[key]!
        }
        if call <= failures {
            return exchange.respond(
                to: request, DemoExchange.envelope(code: 503, message: "Service Unavailable", data: nil),
                status: .serviceUnavailable, messageType: "demo.ErrorResponse",
                headers: [.retryAfter: "\(retryAfter)"])
        }
        return exchange.respond(to: request, DemoExchange.envelope(data: ["calls": .int(Int64(call))]),
                                messageType: nil)
    }

    /// `GET /cache/stats`.
    func registerStats(on router: Router<BasicRequestContext>, cache: CacheRouteState, exchange: DemoExchange) {
        router.get("/cache/stats") { request, _ -> Response in
            let counters = cache.counters.withLock { $0 }
            var hits = Value.Object()
            for (key, count) in counters.hits.sorted(by: { $0.key < $1.key }) { hits[key] = .int(Int64(count)) }
            let data: Value = [
                "hits": .object(hits), "notModified": .int(Int64(counters.notModified)),
                "slow": ["started": .int(Int64(counters.slowStarted)), "finished": .int(Int64(counters.slowFinished)),
                         "cancelled": .int(Int64(counters.slowCancelled))],
                "rangeRequests": .array(counters.rangeRequests.map(Value.string)),
            ]
            return exchange.respond(to: request, DemoExchange.envelope(data: data), messageType: nil)
        }
    }

    /// A `Last-Modified` date that changes with the version.
    static func httpDate(version: Int) -> String {
        let date = Date(timeIntervalSince1970: 1_700_000_000 + Double(version) * 86_400)
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "GMT")!
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second, .weekday], from: date)
        let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        func two(_ value: Int?) -> String { let v = value ?? 0; return v < 10 ? "0\(v)" : "\(v)" }
        return "\(days[(parts.weekday ?? 1) - 1]), \(two(parts.day)) \(months[(parts.month ?? 1) - 1]) "
            + "\(parts.year ?? 1970) \(two(parts.hour)):\(two(parts.minute)):\(two(parts.second)) GMT"
    }

    static func download(_ request: Request, cache: CacheRouteState) -> Response {
        let query = request.uri.queryParameters
        let size = min(Int64(1) << 32, max(0, query["size"].flatMap { Int64(String($0)) } ?? 1 << 20))
        let drop = query["drop"].flatMap { Int64(String($0)) }
        let key = query["key"].map(String.init) ?? "default"
        return rangedResponse(
            request, size: size, eTag: "\"pattern-\(size)\"", drop: drop.map { (key, $0) }, ignoresRange: false,
            record: { range, _ in cache.counters.withLock { $0.rangeRequests.append(range) } },
            claimDrop: { key in cache.counters.withLock { $0.dropped.insert(key).inserted } },
            read: { offset, count in Data(DownloadPattern.bytes(at: offset, count: count)) })
    }
}
