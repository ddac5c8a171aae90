import Courier
import CourierTesting
import Foundation
import HTTPTypes
import Testing

/// Records the order in which interceptors see the request and the response.
final class OrderLog: Sendable {
    let entries = Locked<[String]>([])
    func add(_ entry: String) { entries.withLock { $0.append(entry) } }
    var all: [String] { entries.withLock { $0 } }
}

struct Tagging: Interceptor {
    var name: String
    var role: InterceptorRole = .shaping
    var log: OrderLog

    func intercept(_ request: CourierRequest, context: InterceptorContext, next: InterceptorNext) async throws
        -> CourierResponse
    {
        log.add(">\(name)")
        var request = request
        request.head.headerFields.append(HTTPField(name: HTTPField.Name("X-Seen")!, value: name))
        let response = try await next(request)
        log.add("<\(name)")
        return response
    }
}

struct ShortCircuit: Interceptor {
    func intercept(_ request: CourierRequest, context: InterceptorContext, next: InterceptorNext) async throws
        -> CourierResponse
    {
        CourierResponse(status: .ok, value: ["code": 0, "from": "interceptor"], source: .synthesized)
    }
}

struct RetryOnce: Interceptor {
    func intercept(_ request: CourierRequest, context: InterceptorContext, next: InterceptorNext) async throws
        -> CourierResponse
    {
        let first = try await next(request)
        guard first.head.status == .serviceUnavailable else { return first }
        return try await next(request)
    }
}

enum UserError: Int, BusinessError, CaseIterable {
    case userNotFound = 301
    case nameTaken = 302

    var message: String {
        switch self {
        case .userNotFound: "The user does not exist."
        case .nameTaken: "That name is already taken."
        }
    }

    /// Registers the Simplified Chinese messages (idempotent).
    static func registerChinese() {
        MessageCatalog.update(.simplifiedChinese) {
            $0.setMessages([UserError.userNotFound: "用户不存在~", .nameTaken: "用户名已被占用~"])
        }
    }
}

func jsonResponse(_ json: String, status: HTTPResponse.Status = .ok) -> (HTTPResponse, Data) {
    (HTTPResponse(status: status, headerFields: [.contentType: "application/json"]), Data(json.utf8))
}

let service = APIService(name: "api", baseURL: URL(string: "http://api.test")!)

@Suite struct PipelineTests {
    @Test func orderIsGlobalThenModuleThenEndpointOutermostFirst() async throws {
        let log = OrderLog()
        let transport = InMemoryTransport { request, _ in
            log.add("transport:" + request.headerFields[values: HTTPField.Name("X-Seen")!].joined(separator: ","))
            return jsonResponse(#"{"code":0}"#)
        }
        var module = APIModule(name: "user", service: service)
        module.interceptors = [Tagging(name: "M1", log: log), Tagging(name: "M2net", role: .network, log: log)]
        var endpoint = Endpoint(name: "get", module: module, path: "/u")
        endpoint.interceptors = [Tagging(name: "E1net", role: .network, log: log), Tagging(name: "E2", log: log)]
        let client = CourierClient(
            transport: transport,
            configuration: .init(interceptors: [Tagging(name: "G1", log: log), Tagging(name: "G2net", role: .network, log: log)]))

        #expect(client.pipeline(for: endpoint).stageNames == [
            "result", "G1", "M1", "E2", "routing", "errorMapping", "codec", "redirects", "G2net", "M2net", "E1net", "transport",
        ])
        _ = try await client.send(endpoint)
        #expect(log.all == [
            ">G1", ">M1", ">E2", ">G2net", ">M2net", ">E1net",
            "transport:G1,M1,E2,G2net,M2net,E1net",
            "<E1net", "<M2net", "<G2net", "<E2", "<M1", "<G1",
        ])
    }

    @Test func moduleInterceptorsDoNotLeakToOtherModules() async throws {
        let log = OrderLog()
        let transport = InMemoryTransport.successful()
        var users = APIModule(name: "user", service: service)
        users.interceptors = [Tagging(name: "UserOnly", log: log)]
        let topics = APIModule(name: "topic", service: service)
        let client = CourierClient(transport: transport)
        _ = try await client.send(Endpoint(name: "t", module: topics, path: "/topics"))
        #expect(log.all.isEmpty)
        #expect(client.pipeline(for: Endpoint(name: "t", module: topics, path: "/t")).stageNames == [
            "result", "routing", "errorMapping", "codec", "redirects", "transport",
        ])
        _ = try await client.send(Endpoint(name: "u", module: users, path: "/users"))
        #expect(log.all == [">UserOnly", "<UserOnly"])
    }

    /// The client keeps the chains of endpoints without interceptors of their own, by module interceptor list:
    /// every module's calls still go through that module's interceptors, and a module changed in place (a new
    /// list) gets a new chain.
    @Test func keptChainsFollowTheModulesInterceptorLists() async throws {
        let log = OrderLog()
        let client = CourierClient(transport: InMemoryTransport.successful())
        var users = APIModule(name: "user", service: service)
        users.interceptors = [Tagging(name: "U", log: log)]
        var topics = APIModule(name: "topic", service: service)
        topics.interceptors = [Tagging(name: "T", log: log)]
        for _ in 0..<3 {
            _ = try await client.send(Endpoint(name: "u", module: users, path: "/u"))
            _ = try await client.send(Endpoint(name: "t", module: topics, path: "/t"))
        }
        #expect(log.all == Array(repeating: [">U", "<U", ">T", "<T"], count: 3).flatMap { $0 })
        topics.interceptors.append(Tagging(name: "T2", log: log))
        var own = Endpoint(name: "t", module: topics, path: "/t")
        #expect(client.pipeline(for: own).stageNames.filter { $0.hasPrefix("T") } == ["T", "T2"])
        own.interceptors = [Tagging(name: "E", log: log)]
        #expect(client.pipeline(for: own).stageNames.filter { $0.hasPrefix("T") || $0 == "E" } == ["T", "T2", "E"])
        #expect(client.pipeline(for: Endpoint(name: "u", module: users, path: "/u")).stageNames.contains("U"))
        var noRedirects = Endpoint(name: "t", module: topics, path: "/t")
        noRedirects.redirectPolicy = RedirectPolicy.never
        #expect(client.pipeline(for: noRedirects).stages.compactMap { ($0 as? RedirectInterceptor)?.policy }.first == RedirectPolicy.never)
    }

    /// The client keeps the last endpoints' parsed URLs: every call still goes to its own path and query, on the
    /// service's current host, past the number kept.
    @Test func keptURLsFollowPathQueryAndHost() async throws {
        let seen = Locked<[String]>([])
        let transport = InMemoryTransport(recording: false) { head, _ in
            seen.withLock { $0.append("\(head.authority ?? "")\(head.path ?? "")") }
            return (HTTPResponse(status: .ok, headerFields: [.contentType: "application/json"]), Data("{}".utf8))
        }
        let client = CourierClient(transport: transport)
        let module = APIModule(name: "m", service: service)
        var expected: [String] = []
        for round in 0..<2 {
            for index in 0..<300 {
                var endpoint = Endpoint(name: "e", module: module, path: "/items/\(index)")
                if index % 3 == 0 { endpoint.query = [QueryItem("round", "\(round)")] }
                _ = try await client.send(endpoint)
                let authority = try #require(service.currentBaseURL.host)
                expected.append("\(authority)/items/\(index)" + (index % 3 == 0 ? "?round=\(round)" : ""))
            }
        }
        #expect(seen.withLock { $0 } == expected)
    }

    @Test func anInterceptorCanAnswerWithoutCallingNext() async throws {
        let transport = InMemoryTransport.successful()
        var endpoint = Endpoint(name: "cached", module: APIModule(name: "m", service: service), path: "/x")
        endpoint.interceptors = [ShortCircuit()]
        let reply = try await CourierClient(transport: transport).send(endpoint, options: .init(trace: true))
        #expect(reply.value["from"] == "interceptor")
        #expect(reply.metadata.source == .synthesized)
        #expect(transport.requests.isEmpty)
        let trace = try #require(reply.metadata.trace)
        #expect(trace.stages.map(\.name) == ["result", "ShortCircuit"])
        #expect(trace.stages[1].nextCalls == 0)
    }

    @Test func anInterceptorCanRetryByCallingNextAgain() async throws {
        let attempts = Locked(0)
        let transport = InMemoryTransport { _, _ in
            let n = attempts.withLock { $0 += 1; return $0 }
            return n == 1 ? jsonResponse(#"{"code":0}"#, status: .serviceUnavailable) : jsonResponse(#"{"code":0,"ok":true}"#)
        }
        var endpoint = Endpoint(name: "flaky", module: APIModule(name: "m", service: service), path: "/x")
        endpoint.interceptors = [RetryOnce()]
        let reply = try await CourierClient(transport: transport).send(endpoint, options: .init(trace: true))
        #expect(reply.value["ok"] == true)
        #expect(attempts.withLock { $0 } == 2)
        #expect(reply.metadata.trace?.stages.first { $0.name == "RetryOnce" }?.nextCalls == 2)
    }

    @Test func traceRecordsWhatEachStageChanged() async throws {
        let log = OrderLog()
        var endpoint = Endpoint(name: "create", module: APIModule(name: "m", service: service), method: .post, path: "/users")
        endpoint.body = ["name": "Ada"]
        endpoint.interceptors = [Tagging(name: "Stamp", log: log)]
        let transport = InMemoryTransport { _, body in jsonResponse(String(decoding: body ?? Data(), as: UTF8.self)) }
        let reply = try await CourierClient(transport: transport).send(endpoint, options: .init(trace: true))
        let trace = try #require(reply.metadata.trace)
        #expect(trace.stages.map(\.name) == ["result", "Stamp", "routing", "errorMapping", "codec", "redirects", "transport"])
        #expect(trace.stages[1].requestChanges == ["+header X-Seen: Stamp"])
        #expect(trace.stages[4].requestChanges.contains { $0.hasPrefix("body none → ") && $0.hasSuffix("B json") })
        #expect(trace.stages[4].responseChanges.contains("decoded json → object(1)"))
        #expect(trace.stages[6].requestChanges == ["POST http://api.test/users"])
        #expect(String(describing: trace).contains("2. Stamp"))
        #expect(String(describing: trace).contains("4. errorMapping"))
    }

    @Test func getPayloadGoesToTheQuery() async throws {
        let transport = InMemoryTransport.successful()
        var endpoint = Endpoint(name: "list", module: APIModule(name: "m", service: service), path: "/users")
        endpoint.query = [QueryItem("page", "2")]
        endpoint.body = ["size": 10, "q": "a b"]
        _ = try await CourierClient(transport: transport).send(endpoint)
        let request = try #require(transport.requests.first)
        #expect(request.head.path == "/users?page=2&size=10&q=a%20b")
        #expect(request.body == nil)
    }

    @Test func headersMergeModuleThenEndpoint() async throws {
        let transport = InMemoryTransport.successful()
        var module = APIModule(name: "m", service: service)
        module.headers = [.userAgent: "module", HTTPField.Name("X-Module")!: "1"]
        var endpoint = Endpoint(name: "e", module: module, path: "/")
        endpoint.headers = [.userAgent: "endpoint"]
        _ = try await CourierClient(transport: transport).send(endpoint)
        let fields = try #require(transport.requests.first).head.headerFields
        #expect(fields[.userAgent] == "endpoint")
        #expect(fields[HTTPField.Name("X-Module")!] == "1")
    }

    @Test func environmentSwitchesAtRunTime() async throws {
        let transport = InMemoryTransport.successful()
        let api = APIService(name: "api", baseURLs: [
            .test: [URL(string: "http://test.local:8080")!],
            .release: [URL(string: "https://api.example.com")!],
        ], environment: .release)
        let endpoint = Endpoint(name: "e", module: APIModule(name: "m", service: api), path: "/ping")
        let client = CourierClient(transport: transport)
        _ = try await client.send(endpoint)
        #expect(api.switchEnvironment(to: .test))
        #expect(!api.switchEnvironment(to: .develop))
        _ = try await client.send(endpoint)
        let authorities = transport.requests.map { $0.head.authority }
        #expect(authorities == ["api.example.com", "test.local:8080"])
        #expect(transport.requests.map { $0.head.scheme } == ["https", "http"])
    }
}
