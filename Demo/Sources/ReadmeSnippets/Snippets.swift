import AsyncHTTPClient
import Courier
import CourierAsyncHTTPClient
import CourierResilience
import CourierTesting
import Foundation

// The README's other snippets, word for word between the markers (checked by DocArticleSnippetCheck), each in a
// function whose parameters are the names the README's prose gives them. They only have to compile: the
// loopback suites run the same APIs against the demo server.

/// The layer endpoints the orchestration snippet pages and batches.
let layer = APIModule(name: "layer", service: APIService(name: "demo", baseURL: URL(string: "http://127.0.0.1:8080")!))
struct Item: Codable, Sendable { var id: Int; var name: String }
struct ItemPage: Codable, Sendable { var items: [Item] }
struct Banner: Codable, Sendable { var text: String }
struct Feed: Codable, Sendable { var items: [Item] }

extension Endpoint {
    static func items(limit: Int) -> Endpoint {
        Endpoint(name: "items", module: layer, path: "/layer/items", query: [QueryItem("limit", "\(limit)")])
    }
    static func items(after cursor: String?, limit: Int) -> Endpoint {
        Endpoint(name: "items", module: layer, path: "/layer/items",
                 query: [QueryItem("cursor", cursor ?? ""), QueryItem("limit", "\(limit)")])
    }
    static var banner: Endpoint { Endpoint(name: "banner", module: layer, path: "/layer/newest") }
    static var feed: Endpoint { Endpoint(name: "feed", module: layer, path: "/layer/items") }
}

func decodingWithOptions(users: APIModule) async throws {
    // doc-snippet: README
    var configuration = CourierClient.Configuration()
    configuration.decoder.keyStrategy = .convertFromSnakeCase              // "user_id" → userId
    let client = CourierClient(configuration: configuration)
    let user = try await client.send(.user(7, in: users), decoding: User.self, at: "data").value   // no Envelope
    do {
        _ = try await client.send(.user(8, in: users), decoding: User.self, at: "data")
    } catch let error as CourierError {
        print(error.response?.status.code ?? 0, error.response?.bodyText ?? "")  // 500 {"error":"db down"}
    }
    // end-doc-snippet
    _ = user
}

func moduleDetails(error: inout CourierError) async throws {
    // doc-snippet: README
    struct QuotaInfo: CourierError.Detail { var remaining: Int }
    error.details[QuotaInfo.self] = QuotaInfo(remaining: 0)
    if let quota = error.details[QuotaInfo.self] { print(quota.remaining) }
    // end-doc-snippet
}

func asyncHTTPClientTransport(users: APIModule) async throws {
    // doc-snippet: README
    // import CourierAsyncHTTPClient, AsyncHTTPClient
    let client = CourierClient(transport: HTTPClientTransport())        // one process-wide client

    var configuration = HTTPClient.Configuration(redirectConfiguration: .disallow)  // redirects are the chain's
    configuration.connectionPool.retryConnectionEstablishment = false  // fail fast when nothing listens
    let httpClient = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
    let own = CourierClient(transport: HTTPClientTransport(client: httpClient))
    let reply = try await own.send(.user(7, in: users), decoding: Envelope<User>.self)
    try await httpClient.shutdown()                                    // you own a client you create
    // end-doc-snippet
    _ = (client, reply)
}

func tlsPolicy() async throws {
    // doc-snippet: README
    let tls = try TLSPolicy(
        trustRoots: [.file("/etc/myapp/internal-ca.pem")],
        pins: ["sha256/r/mIkG3eEpVdm+u/ko/cwxzOMo1bk4TyHIlByibiA5E=", "sha256/YLh1dUR9y6Kja30RrAn7JKnbQG/uEtLMkBgFF2Fuihg="],
        clientCertificate: .init(certificateChain: .file("client.pem"), privateKey: .file("client-key.pem")))
    let secure = CourierClient(transport: try HTTPClientTransport(tls: tls))
    // end-doc-snippet
    _ = secure
}

func transfers(client: CourierClient, uploadPhoto: Endpoint, report: Endpoint, photoURL: URL, reportURL: URL) async throws {
    // doc-snippet: README
    var form = MultipartForm()
    form.append(field: "title", "Holiday")
    try form.append(file: photoURL, name: "photo", contentType: "image/jpeg")   // read from disk as it is sent
    let upload = client.upload(uploadPhoto, form: form)                          // or body: try .file(videoURL)
    Task { for await step in upload.progress { print(step) } }                   // upload 1048576/5242880 (20%)
    let answer = try await upload.reply                                          // decoded like any reply

    let download = client.download(report, to: reportURL)                        // resume: true by default
    let file = try await download.reply.value                                    // file, size, resumedBytes
    // end-doc-snippet
    _ = (answer, file)
}

func typedOrchestration(client: CourierClient, users: APIModule) async throws {
    // doc-snippet: README
    // Members of different types, sent together; the first failure cancels the others and names the member.
    let (user, page) = try await client.batch((Endpoint.user(7, in: users), Envelope<User>.self),
                                                      (.items(limit: 3), Envelope<ItemPage>.self))
    // Every result wanted, failures included.
    let (banner, feed) = await client.group((.banner, Banner.self), (.feed, Feed.self))
    // Steps built from the typed replies before them; a failure names its step.
    let name = try await client.chain { chain in
        let first = try await chain.step(.items(limit: 3), decoding: Envelope<ItemPage>.self)
        return try await chain.step(.user(Int64(first.value.data.items[0].id), in: users), decoding: Envelope<User>.self)
            .value.data.name
    }.value
    // Page numbers, offsets, or cursors read from the last response.
    let pager = Pager(client: client, pageSize: 20, decoding: Item.self, paging: .cursor(path: "data.next_cursor")) {
        .items(after: $0.cursor, limit: $0.size)
    }
    let items = try await pager.refresh()                     // [Item]
    while await pager.hasMore { _ = try await pager.loadMore() }
    // end-doc-snippet
    _ = (user, page, banner, feed, name, items)
}

func replay(users: APIModule) async throws {
    // doc-snippet: README
    let file = URL(fileURLWithPath: "Fixtures/users.cassette.json")
    // Once, against the real server:
    let recorder = ReplayTransport(.record(FoundationTransport()))
    _ = try await CourierClient(transport: recorder).send(.user(7, in: users))
    try recorder.save(to: file)
    // In tests:
    var options = ReplayTransport.Options()
    options.matching.ignoredQueryItems = ["timestamp", "nonce_str", "sign"]
    let replay = ReplayTransport(.replay, cassette: try Cassette.load(from: file), options: options)
    let user = try await CourierClient(transport: replay).send(.user(7, in: users), decoding: User.self).value
    // end-doc-snippet
    _ = user
}
