import Courier
import Hummingbird

/// Business codes of the demo API (HTTP 200 with `code` ≠ 200).
enum DemoBusinessCode {
    static let userNotFound = 301
    static let nameTaken = 302
    static let invalidParameter = 303
    static let topicNotFound = 401
}

/// `GET /users/:id`, `GET /users?page=&size=`, `POST /users`.
struct UserRoutes: DemoRouteGroup {
    func register(on router: Router<BasicRequestContext>, state: DemoState, exchange: DemoExchange) {
        router.get("/users/:id") { request, context -> Response in
            state.countRequest()
            guard let id = context.parameters.get("id", as: Int64.self) else {
                return exchange.failure(to: request, code: DemoBusinessCode.invalidParameter, message: "id must be an integer")
            }
            guard let user = state.user(id: id) else {
                return exchange.failure(to: request, code: DemoBusinessCode.userNotFound, message: "user \(id) does not exist")
            }
            return exchange.respond(to: request, DemoExchange.envelope(data: user.value), messageType: "demo.UserResponse")
        }
        router.get("/users") { request, _ -> Response in
            state.countRequest()
            let page = max(1, request.uri.queryParameters.get("page", as: Int.self) ?? 1)
            let size = min(100, max(1, request.uri.queryParameters.get("size", as: Int.self) ?? 10))
            let (users, total) = state.users(page: page, size: size)
            let data: Value = ["page": .int(Int64(page)), "total": .int(Int64(total)), "users": .array(users.map(\.value))]
            return exchange.respond(to: request, DemoExchange.envelope(data: data), messageType: "demo.UserListResponse")
        }
        router.post("/users") { request, _ -> Response in
            state.countRequest()
            let body: Value
            do {
                body = try await exchange.body(of: request, messageType: "demo.NewUser")
            } catch {
                return exchange.failure(to: request, code: DemoBusinessCode.invalidParameter, message: "unreadable body: \(error)",
                                        status: .badRequest)
            }
            guard let name = body["name"]?.stringValue, !name.isEmpty else {
                return exchange.failure(to: request, code: DemoBusinessCode.invalidParameter, message: "name is required")
            }
            let tags = body["tags"]?.arrayValue?.compactMap(\.stringValue) ?? []
            guard let user = state.addUser(
                name: name, email: body["email"]?.stringValue ?? "", age: body["age"]?.int64Value ?? 0, tags: tags,
                address: body["address"])
            else {
                return exchange.failure(to: request, code: DemoBusinessCode.nameTaken, message: "the name \(name) is taken")
            }
            return exchange.respond(to: request, DemoExchange.envelope(data: user.value), status: .created,
                                    messageType: "demo.UserResponse")
        }
    }
}

/// `GET /topics/:id`, `GET /topics?page=&size=`, `POST /topics`.
struct TopicRoutes: DemoRouteGroup {
    func register(on router: Router<BasicRequestContext>, state: DemoState, exchange: DemoExchange) {
        router.get("/topics/:id") { request, context -> Response in
            state.countRequest()
            guard let id = context.parameters.get("id", as: Int64.self), let topic = state.topic(id: id) else {
                return exchange.failure(to: request, code: DemoBusinessCode.topicNotFound, message: "no such topic")
            }
            return exchange.respond(to: request, DemoExchange.envelope(data: topic.value), messageType: "demo.TopicResponse")
        }
        router.get("/topics") { request, _ -> Response in
            state.countRequest()
            let page = max(1, request.uri.queryParameters.get("page", as: Int.self) ?? 1)
            let size = min(100, max(1, request.uri.queryParameters.get("size", as: Int.self) ?? 10))
            let (topics, total) = state.topics(page: page, size: size)
            let data: Value = ["page": .int(Int64(page)), "total": .int(Int64(total)), "topics": .array(topics.map(\.value))]
            return exchange.respond(to: request, DemoExchange.envelope(data: data), messageType: "demo.TopicListResponse")
        }
        router.post("/topics") { request, _ -> Response in
            state.countRequest()
            let body = (try? await exchange.body(of: request, messageType: "demo.NewTopic")) ?? .null
            guard let title = body["title"]?.stringValue, !title.isEmpty else {
                return exchange.failure(to: request, code: DemoBusinessCode.invalidParameter, message: "title is required")
            }
            let topic = state.addTopic(
                title: title, body: body["body"]?.stringValue ?? "", authorID: body["authorId"]?.int64Value ?? 0,
                tags: body["tags"]?.arrayValue?.compactMap(\.stringValue) ?? [])
            return exchange.respond(to: request, DemoExchange.envelope(data: topic.value), status: .created,
                                    messageType: "demo.TopicResponse")
        }
    }
}

/// Failure and timing helpers: `/status/:code`, `/delay/:ms`, `/echo`, `/invalid/users/:id`.
struct ControlRoutes: DemoRouteGroup {
    func register(on router: Router<BasicRequestContext>, state: DemoState, exchange: DemoExchange) {
        router.get("/status/:code") { request, context -> Response in
            state.countRequest()
            let code = context.parameters.get("code", as: Int.self) ?? 500
            let status = HTTPResponse.Status(code: code)
            var headers: HTTPFields = [:]
            if code == 503 || code == 429 { headers[.retryAfter] = "1" }
            return exchange.respond(
                to: request, DemoExchange.envelope(code: code, message: status.reasonPhrase.isEmpty ? "status \(code)" : status.reasonPhrase, data: nil), status: status,
                messageType: "demo.ErrorResponse", headers: headers)
        }
        router.get("/delay/:ms") { request, context -> Response in
            state.countRequest()
            let ms = min(60_000, max(0, context.parameters.get("ms", as: Int.self) ?? 1000))
            state.delayStarted()
            do {
                // The work stops when the client goes away (the connection closes), as a real server's should.
                try await request.body.consumeWithCancellationOnInboundClose { _ in
                    try await Task.sleep(for: .milliseconds(ms))
                }
            } catch {
                state.delayEnded(cancelled: true)
                throw error
            }
            state.delayEnded(cancelled: false)
            return exchange.respond(to: request, DemoExchange.envelope(data: ["waited": .int(Int64(ms))]),
                                    messageType: nil)
        }
        router.on("/echo", method: .post) { request, _ in try await echo(request, state: state, exchange: exchange) }
        router.on("/echo", method: .get) { request, _ in try await echo(request, state: state, exchange: exchange) }
        router.on("/echo", method: .put) { request, _ in try await echo(request, state: state, exchange: exchange) }
        router.get("/invalid/users/:id") { request, context -> Response in
            state.countRequest()
            let id = context.parameters.get("id", as: Int64.self) ?? 1
            var user = state.user(id: id)?.value ?? ["id": .int(id)]
            user["age"] = -1
            user["address"]?["zip"] = "ABCDE"
            return exchange.respond(to: request, DemoExchange.envelope(data: user), messageType: "demo.UserResponse")
        }
    }

    private func echo(_ request: Request, state: DemoState, exchange: DemoExchange) async throws -> Response {
        state.countRequest()
        var request = request
        let buffer = try await request.collectBody(upTo: 8 << 20)
        var headers = Value.Object()
        for field in request.headers { headers[field.name.canonicalName] = .string(field.value) }
        var query = Value.Object()
        for (name, value) in request.uri.queryParameters { query[String(name)] = .string(String(value)) }
        let data: Value = [
            "method": .string(request.method.rawValue), "path": .string(request.uri.path), "query": .object(query),
            "headers": .object(headers), "bodyBytes": .int(Int64(buffer.readableBytes)),
            "body": .string(String(decoding: buffer.readableBytesView, as: UTF8.self)),
        ]
        return exchange.respond(to: request, DemoExchange.envelope(data: data), messageType: nil)
    }
}
