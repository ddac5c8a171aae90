import Courier
import CourierTesting
import Foundation
import HTTPTypes
import Testing

// The Swift code blocks of the DocC articles of Courier (Sources/Courier/Courier.docc) and CourierTesting
// (Sources/CourierTesting/CourierTesting.docc), compiled and run against in-memory servers. Each block stands
// between `// doc-snippet: <article>` and `// end-doc-snippet`, word for word as in the article:
// `DocArticleSnippetCheck` fails when an article's block has no identical copy in a test.

/// Types the articles declare, kept apart from the other tests' types of the same names.
enum GettingStartedDoc {
    // doc-snippet: GettingStarted
    enum UserError: Int, BusinessError {
        case userNotFound = 301
        var message: String { "The user does not exist." }
    }
    // end-doc-snippet
}

enum PipelineOrderDoc {
    // doc-snippet: ThePipelinesOrder
    struct Audit: Interceptor {
        var role: InterceptorRole { .observation }
        func intercept(_ request: CourierRequest, context: InterceptorContext,
                       next: InterceptorNext) async throws -> CourierResponse {
            context.onSend { sent in print("sending", sent.summary) }
            return try await next(request)
        }
    }
    // end-doc-snippet
}

enum WritingAnInterceptorDoc {
    // doc-snippet: WritingAnInterceptor
    struct AppVersionHeader: Interceptor {
        var version: String
        func intercept(_ request: CourierRequest, context: InterceptorContext,
                       next: InterceptorNext) async throws -> CourierResponse {
            var request = request
            request.head.headerFields[HTTPField.Name("X-App-Version")!] = version
            return try await next(request)
        }
    }
    // end-doc-snippet

    // doc-snippet: WritingAnInterceptor
    struct AttemptHeader: Interceptor {
        enum Attempts: CallStorageKey { typealias Value = Int }

        var role: InterceptorRole { .network }
        func intercept(_ request: CourierRequest, context: InterceptorContext,
                       next: InterceptorNext) async throws -> CourierResponse {
            let attempt = context.storage.update(Attempts.self, default: 0) { count in
                count += 1
                return count
            }
            var request = request
            request.head.headerFields[HTTPField.Name("X-Attempt")!] = String(attempt)
            return try await next(request)
        }
    }
    // end-doc-snippet

    // doc-snippet: WritingAnInterceptor
    struct FailureReporter: Interceptor {
        var report: @Sendable (CourierError) -> Void
        var role: InterceptorRole { .observation }
        func intercept(_ request: CourierRequest, context: InterceptorContext,
                       next: InterceptorNext) async throws -> CourierResponse {
            do {
                return try await next(request)
            } catch let error as CourierError {
                report(error)
                throw error
            }
        }
    }
    // end-doc-snippet
}

enum TestingDoc {
    // doc-snippet: TestingYourAPICode
    struct User: Codable, Equatable, Sendable { var id: Int64; var name: String }
    // end-doc-snippet
}

@Suite(.timeLimit(.minutes(10))) struct DocArticleSnippetTests {
    typealias UserError = GettingStartedDoc.UserError

    /// A server for the getting-started calls: user 7 exists, any other id is business code 301.
    static let userServer = InMemoryTransport { request, _ in
        let json = request.path == "/users/7"
            ? #"{"code":0,"message":"ok","data":{"id":7,"name":"Ada","email":"ada@example.com"}}"#
            : #"{"code":301,"message":"no such user"}"#
        return (HTTPResponse(status: .ok, headerFields: [.contentType: "application/json"]), Data(json.utf8))
    }

    @Test func gettingStarted() async throws {
        let transport = Self.userServer
        // doc-snippet: GettingStarted
        let api = APIService(name: "api", baseURLs: [
            .test: [URL(string: "http://127.0.0.1:8080")!],
            .release: [URL(string: "https://api.example.com")!],
        ], environment: .release)

        var users = APIModule(name: "user", service: api, businessRule: BusinessRule(mapping: UserError.self))
        users.interceptors = [SetHeaders([.userAgent: "MyApp/2.1"])]

        let getUser = Endpoint(name: "getUser", module: users, path: "/users/7")
        // end-doc-snippet

        // doc-snippet: GettingStarted
        struct User: Codable, Sendable { var id: Int64; var name: String; var email: String }
        struct Envelope<T: Codable & Sendable>: Codable, Sendable { var code: Int; var message: String; var data: T }

        let client = CourierClient(transport: transport, configuration: .init(interceptors: [RequestID()]))
        api.switchEnvironment(to: .test)

        let reply = try await client.send(getUser, decoding: Envelope<User>.self, options: .init(trace: true))
        print(reply.value.data.name, reply.metadata.status, reply.metadata.duration)

        let raw = try await client.send(getUser)              // the same call, as a raw Value
        print(raw.value["data"]?["email"] ?? "none")
        // end-doc-snippet

        #expect(reply.value.data.name == "Ada")
        #expect(reply.metadata.trace?.stages.map(\.name).contains("RequestID") == true)
        #expect(raw.value["data"]?["email"] == "ada@example.com")
        let sent = try #require(transport.requests.last?.head)
        #expect(sent.authority == "127.0.0.1:8080")                    // switched to the test environment
        #expect(sent.headerFields[.userAgent] == "MyApp/2.1")

        // doc-snippet: GettingStarted
        do {
            _ = try await client.send(Endpoint(name: "getUser", module: users, path: "/users/8"))
        } catch let error as CourierError {
            switch error.code {
            case .timedOut, .cannotConnect: print("offline?", error.message)
            case .notFound: print("no such endpoint")
            case .business where error.business(as: UserError.self) == .userNotFound: print("sign up first")
            default: print(error)                             // [category.code number] message (context)
            }
        }
        // end-doc-snippet

        let error = try await #require(throws: CourierError.self) {
            try await client.send(Endpoint(name: "getUser", module: users, path: "/users/8"))
        }
        #expect(error.code == .business)
        #expect(error.business(as: UserError.self) == .userNotFound)
    }

    @Test func thePipelinesOrder() {
        typealias Audit = PipelineOrderDoc.Audit
        let api = APIService(name: "api", baseURL: URL(string: "https://api.example.com")!)
        // doc-snippet: ThePipelinesOrder
        let orders = APIModule(name: "orders", service: api, interceptors: [Audit()])
        var list = Endpoint(name: "list", module: orders, path: "/orders")
        list.interceptors = [SetHeaders([.accept: "application/json"])]

        let client = CourierClient(configuration: .init(interceptors: [RequestID()]))
        print(client.pipeline(for: list).stageNames)
        // ["Audit", "result", "RequestID", "SetHeaders", "routing", "errorMapping", "codec", "redirects", "transport"]
        // end-doc-snippet
        #expect(client.pipeline(for: list).stageNames == [
            "Audit", "result", "RequestID", "SetHeaders", "routing", "errorMapping", "codec", "redirects", "transport",
        ])
    }

    @Test func writingAnInterceptor() async throws {
        typealias AppVersionHeader = WritingAnInterceptorDoc.AppVersionHeader
        typealias AttemptHeader = WritingAnInterceptorDoc.AttemptHeader
        let api = APIService(name: "api", baseURL: URL(string: "https://api.example.com")!)
        let transport = InMemoryTransport { request, _ in
            (HTTPResponse(status: .ok, headerFields: [.contentType: "application/json"]), Data(#"{"ok":true}"#.utf8))
        }
        // doc-snippet: WritingAnInterceptor
        let client = CourierClient(transport: transport, configuration: .init(interceptors: [AppVersionHeader(version: "2.1")]))
        var orders = APIModule(name: "orders", service: api)
        orders.interceptors = [AttemptHeader()]
        // end-doc-snippet

        _ = try await client.send(Endpoint(name: "list", module: orders, path: "/orders"))
        let sent = try #require(transport.requests.last?.head)
        #expect(sent.headerFields[HTTPField.Name("X-App-Version")!] == "2.1")
        #expect(sent.headerFields[HTTPField.Name("X-Attempt")!] == "1")
        #expect(client.pipeline(for: Endpoint(name: "list", module: orders, path: "/orders")).stageNames == [
            "result", "AppVersionHeader", "routing", "errorMapping", "codec", "redirects", "AttemptHeader", "transport",
        ])

        // doc-snippet: WritingAnInterceptor
        let endpoint = Endpoint(name: "list", module: orders, path: "/orders")
        let next = InterceptorNext { request in
            CourierResponse(status: .ok, value: ["version": .string(request.head.headerFields[HTTPField.Name("X-App-Version")!] ?? "")])
        }
        let response = try await AppVersionHeader(version: "2.1").intercept(
            CourierRequest(head: HTTPRequest(method: .get, scheme: "https", authority: "api.example.com", path: "/orders")),
            context: InterceptorContext(endpoint: endpoint), next: next)
        print(response.value?["version"] ?? "none")   // "2.1"
        // end-doc-snippet
        #expect(response.value?["version"] == "2.1")
    }

    /// An attempt counter kept in the call's storage counts every attempt of one call.
    @Test func theAttemptHeaderCountsEachAttempt() async throws {
        let endpoint = Endpoint(
            name: "list", module: APIModule(name: "orders", service: APIService(name: "api", baseURL: URL(string: "https://api.example.com")!)),
            path: "/orders")
        let context = InterceptorContext(endpoint: endpoint)
        let seen = Locked<[String]>([])
        let next = InterceptorNext { request in
            seen.withLock { $0.append(request.head.headerFields[HTTPField.Name("X-Attempt")!] ?? "") }
            return CourierResponse(status: .ok)
        }
        let request = CourierRequest(head: HTTPRequest(method: .get, scheme: "https", authority: "api.example.com", path: "/orders"))
        for _ in 0..<3 {
            _ = try await WritingAnInterceptorDoc.AttemptHeader().intercept(request, context: context, next: next)
        }
        #expect(seen.withLock { $0 } == ["1", "2", "3"])
    }

    @Test func theFailureReporterSeesTheCallersError() async throws {
        let reported = Locked<[CourierError]>([])
        let reporter = WritingAnInterceptorDoc.FailureReporter { error in reported.withLock { $0.append(error) } }
        let transport = InMemoryTransport { _, _ in (HTTPResponse(status: .internalServerError), Data()) }
        let client = CourierClient(transport: transport, configuration: .init(interceptors: [reporter]))
        let module = APIModule(name: "orders", service: APIService(name: "api", baseURL: URL(string: "https://api.example.com")!))
        let thrown = try await #require(throws: CourierError.self) {
            try await client.send(Endpoint(name: "list", module: module, path: "/orders"))
        }
        #expect(thrown.category == .http)
        let seen = reported.withLock { $0 }
        #expect(seen.count == 1)
        #expect(seen.first?.code == thrown.code)
    }

    @Test func testingYourAPICode() async throws {
        typealias User = TestingDoc.User
        let api = APIService(name: "api", baseURL: URL(string: "https://api.example.com")!)
        var users = APIModule(name: "user", service: api)
        users.interceptors = [SetHeaders([.userAgent: "MyApp/2.1"])]
        let getUser = Endpoint(name: "getUser", module: users, path: "/users/7")
        let getMissingUser = Endpoint(name: "getUser", module: users, path: "/users/8")

        // doc-snippet: TestingYourAPICode
        let transport = InMemoryTransport { request, body in
            guard request.path == "/users/7" else {
                return (HTTPResponse(status: .notFound), Data())
            }
            return (HTTPResponse(status: .ok, headerFields: [.contentType: "application/json"]),
                    Data(#"{"id":7,"name":"Ada"}"#.utf8))
        }
        let client = CourierClient(transport: transport)

        let user = try await client.send(getUser, decoding: User.self).value
        #expect(user.name == "Ada")
        #expect(transport.requests.first?.head.headerFields[.userAgent] == "MyApp/2.1")

        let error = try await #require(throws: CourierError.self) { try await client.send(getMissingUser) }
        #expect(error.code == .notFound)
        // end-doc-snippet

        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("courier-doc-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let cassetteFile = folder.appendingPathComponent("users.cassette.json")
        let live = transport
        // doc-snippet: TestingYourAPICode
        // Once, against the real server:
        let recorder = ReplayTransport(.record(live))
        _ = try await CourierClient(transport: recorder).send(getUser)
        try recorder.save(to: cassetteFile)

        // In tests:
        var options = ReplayTransport.Options()
        options.matching.ignoredQueryItems = ["timestamp", "nonce_str", "sign"]
        let replay = ReplayTransport(.replay, cassette: try Cassette.load(from: cassetteFile), options: options)
        let replayed = try await CourierClient(transport: replay).send(getUser, decoding: User.self).value
        // end-doc-snippet
        #expect(replayed == User(id: 7, name: "Ada"))
        let liveCalls = transport.requests.count
        _ = try await CourierClient(transport: replay).send(getUser)
        #expect(transport.requests.count == liveCalls)                   // replayed, not forwarded
        let unrecorded = try await #require(throws: CourierError.self) {
            try await CourierClient(transport: replay).send(getMissingUser)
        }
        #expect(unrecorded.code == .noRecordedExchange)

        // doc-snippet: TestingYourAPICode
        var generator = ModelGenerator(seed: 7)
        let sample = try generator.next(User.self)
        #expect(RoundTrip.typed(sample, codec: JSONCodec()) == nil)

        let failures = RoundTrip.check(User.self, codecs: [JSONCodec()], count: 1_000, seed: 7)
        #expect(failures.isEmpty)
        // end-doc-snippet

        // doc-snippet: TestingYourAPICode
        let oracle = FuzzOracle(codec: JSONCodec())
        #expect(oracle.check(Data(#"{"a":[1,2.5,"x",null]}"#.utf8)) == nil)
        #expect(oracle.check(Data("{\"a\":".utf8)) == nil)       // a clean decoding error holds too
        // end-doc-snippet
    }
}
