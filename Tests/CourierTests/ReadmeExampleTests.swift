import Courier
import CourierTesting
import Foundation
import Testing

/// The README's example, run against an in-memory server, so the documented API stays true.
@Suite struct ReadmeExampleTests {
    struct User: Codable, Sendable { var id: Int64; var name: String; var email: String }
    struct Envelope<T: Codable & Sendable>: Codable, Sendable { var code: Int; var message: String; var data: T }

    enum ReadmeUserError: Int, BusinessError {
        case userNotFound = 301
        var message: String { "The user does not exist." }
    }

    @Test func theReadmeExampleWorks() async throws {
        let transport = InMemoryTransport { request, _ in
            let fields = request.headerFields
            #expect(fields[.userAgent] == "MyApp/2.1")
            #expect(fields[HTTPField.Name("X-Request-ID")!] != nil)
            #expect(request.authority == "127.0.0.1:8080")
            let json = request.path == "/users/7"
                ? #"{"code":0,"message":"ok","data":{"id":7,"name":"Ada","email":"ada@example.com"}}"#
                : #"{"code":301,"message":"no such user"}"#
            return (HTTPResponse(status: .ok, headerFields: [.contentType: "application/json"]), Data(json.utf8))
        }
        let api = APIService(name: "api", baseURLs: [
            .test: [URL(string: "http://127.0.0.1:8080")!],
            .release: [URL(string: "https://api.example.com")!],
        ], environment: .release)
        MessageCatalog.update(.simplifiedChinese) { $0.setMessages([ReadmeUserError.userNotFound: "用户不存在~"]) }
        var users = APIModule(name: "user", service: api, businessRule: BusinessRule(mapping: ReadmeUserError.self))
        users.interceptors = [SetHeaders([.userAgent: "MyApp/2.1"])]
        var topics = APIModule(name: "topic", service: api)
        topics.interceptors = [SetHeaders([HTTPField.Name("X-Feature")!: "topics-v2"])]

        let client = CourierClient(transport: transport, configuration: .init(interceptors: [RequestID()]))
        api.switchEnvironment(to: .test)
        let getUser = { (id: Int64, module: APIModule) in Endpoint(name: "getUser", module: module, path: "/users/\(id)") }

        let reply = try await client.send(getUser(7, users), decoding: Envelope<User>.self, options: .init(trace: true))
        #expect(reply.value.data.name == "Ada")
        #expect(reply.metadata.trace?.stages.map(\.name) == [
            "result", "RequestID", "SetHeaders", "routing", "errorMapping", "codec", "redirects", "transport",
        ])
        let raw = try await client.send(getUser(7, users))
        #expect(raw.value["data"]?["email"] == "ada@example.com")
        #expect(client.pipeline(for: getUser(1, topics)).stageNames == [
            "result", "RequestID", "SetHeaders", "routing", "errorMapping", "codec", "redirects", "transport",
        ])

        let error = try await #require(throws: CourierError.self) { try await client.send(getUser(8, users)) }
        #expect(error.code == .business)
        #expect(error.business(as: ReadmeUserError.self) == .userNotFound)
        #expect(error.message(in: .simplifiedChinese) == "用户不存在~")
    }

    /// The README's "Uploads and downloads" snippet, over an in-memory transport (the default streaming,
    /// which buffers), so the documented API stays true.
    @Test func theReadmeTransferSnippetWorks() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("courier-readme-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let photoURL = folder.appendingPathComponent("photo.jpg")
        try Data(repeating: 7, count: 5 << 20).write(to: photoURL)
        let reportURL = folder.appendingPathComponent("report.pdf")
        let transport = InMemoryTransport { request, body in
            if request.method == .post {
                let text = String(decoding: body ?? Data(), as: UTF8.self)
                #expect(text.contains("name=\"photo\"; filename=\"photo.jpg\""))
                #expect(request.headerFields[.contentType]?.hasPrefix("multipart/form-data; boundary=") == true)
                return (HTTPResponse(status: .ok, headerFields: [.contentType: "application/json"]),
                        Data(#"{"code":0,"size":\#(body?.count ?? 0)}"#.utf8))
            }
            return (HTTPResponse(status: .ok, headerFields: [.eTag: "\"v1\""]), Data(repeating: 1, count: 3000))
        }
        let client = CourierClient(transport: transport)
        let api = APIService(name: "api", baseURL: URL(string: "http://127.0.0.1:8080")!)
        let files = APIModule(name: "files", service: api)
        let uploadPhoto = Endpoint(name: "uploadPhoto", module: files, method: .post, path: "/photos")
        let report = Endpoint(name: "report", module: files, path: "/reports/7")

        var form = MultipartForm()
        form.append(field: "title", "Holiday")
        try form.append(file: photoURL, name: "photo", contentType: "image/jpeg")   // read from disk as it is sent
        let upload = client.upload(uploadPhoto, form: form)                          // or body: try .file(videoURL)
        let steps = Task { var seen: [TransferProgress] = []; for await step in upload.progress { seen.append(step) }; return seen }
        let answer = try await upload.reply                                          // decoded like any reply
        #expect(answer.value["size"]?.int64Value == form.length)
        #expect(await steps.value.last == TransferProgress(direction: .upload, completed: form.length, total: form.length))

        let download = client.download(report, to: reportURL)                        // resume: true by default
        let file = try await download.reply.value                                    // file, size, resumedBytes
        #expect(file.size == 3000 && file.resumedBytes == 0 && file.file == reportURL)
        #expect(try Data(contentsOf: reportURL) == Data(repeating: 1, count: 3000))
    }

    /// The README's "Limits" snippet: limits set once on the codec set bound every decode through it.
    /// The README's redirect and cookie snippets (the TLS one runs in the integration tests).
    @Test func theReadmeNetworkEdgeSnippetsWork() async throws {
        let transport = InMemoryTransport { request, _ in
            if request.path == "/files/report" {
                return (HTTPResponse(status: .found, headerFields: [.location: "https://cdn.test/report"]), Data())
            }
            var head = HTTPResponse(status: .ok, headerFields: [.contentType: "application/json"])
            head.headerFields[.setCookie] = "cart=3; Max-Age=600"
            return (head, Data(#"{"cookie":"\#(request.headerFields[.cookie] ?? "")"}"#.utf8))
        }
        let service = APIService(name: "api", baseURL: URL(string: "https://api.test")!)
        let files = APIModule(name: "files", service: service)

        var configuration = CourierClient.Configuration()
        configuration.redirectPolicy = .sameOrigin(limit: 5)
        let client = CourierClient(transport: transport, configuration: configuration)

        var download = Endpoint(name: "download", module: files, path: "/files/report")
        download.redirectPolicy = .follow(limit: 3)            // this endpoint may leave the origin (a CDN)
        let reply = try await client.send(download)
        print(reply.metadata.redirects, reply.metadata.url as Any)
        #expect(reply.metadata.url?.absoluteString == "https://cdn.test/report")
        #expect(reply.metadata.redirects.map(\.status) == [302])

        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("courier-readme-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let cookiesFile = folder.appendingPathComponent("cookies.json")

        let jar = CookieJar(store: try CookieStore(file: cookiesFile))
        let shop = APIModule(name: "shop", service: service, interceptors: [jar])
        let account = APIModule(name: "account", service: service, interceptors: [CookieJar()])  // its own cookies

        _ = try await client.send(Endpoint(name: "a", module: shop, path: "/a"))
        #expect(try await client.send(Endpoint(name: "b", module: shop, path: "/b")).value["cookie"]?.stringValue == "cart=3")
        #expect(try await client.send(Endpoint(name: "b", module: account, path: "/b")).value["cookie"]?.stringValue == "")
        #expect(try CookieStore(file: cookiesFile).cookies.map(\.name) == ["cart"])
    }

    @Test func theReadmeLimitsSnippetBoundsEveryDecodeThroughTheSet() throws {
        var limits = DecodingLimits()
        limits.maximumContainerCount = 5_000_000
        var codecs = CodecSet.standard
        codecs.decodingLimits = limits        // every codec of a client (CodingHints.limits: one call)

        let wide = Data(("[" + Array(repeating: "0", count: 1_500_000).joined(separator: ",") + "]").utf8)
        #expect(try codecs.decode(wide, format: .json).arrayValue?.count == 1_500_000)
        codecs.decodingLimits?.maximumContainerCount = 1_000
        let error = try #require(throws: CourierError.self) { try codecs.decode(wide, format: .json) }
        #expect(error.code == .sizeLimitExceeded)
    }
}
