#if Cache
import CourierCache
import CourierTesting
import Foundation
import HTTPTypes
import Testing

// The Swift code blocks of the article "Caching" (Sources/CourierCache/CourierCache.docc), word for word between
// `// doc-snippet:` markers (checked by `DocArticleSnippetCheck` in CourierTests), run against an in-memory server.

@Suite(.timeLimit(.minutes(10))) struct CachingSnippetTests {
    @Test func theArticlesCacheAnswersInvalidatesAndPersists() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("courier-doc-cache-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let cacheFile = folder.appendingPathComponent("cache.sqlite")
        let transport = InMemoryTransport { _, _ in
            (HTTPResponse(status: .ok, headerFields: [.contentType: "application/json"]), Data(#"{"text":"Sale"}"#.utf8))
        }
        let home = APIModule(name: "home", service: APIService(name: "api", baseURL: URL(string: "https://api.example.com")!))

        // doc-snippet: Caching
        var configuration = CacheConfiguration()
        configuration.appVersion = "2.1.0"                   // entries stored by another app version are not used
        configuration.keyExclusions = ["ts", "nonce"]        // never part of a key
        let cache = CacheInterceptor(
            store: try SQLiteCacheStore(path: cacheFile.path),
            configuration: configuration)
        let client = CourierClient(transport: transport, configuration: .init(interceptors: [cache]))
        // end-doc-snippet

        // doc-snippet: Caching
        var banner = Endpoint(name: "banner", module: home, path: "/banner")
        banner.cachePolicy = .normal(ttl: .seconds(300))     // fresh for five minutes, then revalidated

        let first = try await client.send(banner)
        let second = try await client.send(banner)
        print(first.metadata.source, second.metadata.source) // network cache
        // end-doc-snippet
        #expect(first.metadata.source == .network)
        #expect(second.metadata.source == .cache)
        #expect(second.value["text"] == "Sale")
        #expect(transport.requests.count == 1)

        // A new client over the same file answers from it: the store persists.
        let reopened = CacheInterceptor(store: try SQLiteCacheStore(path: cacheFile.path), configuration: configuration)
        let later = CourierClient(transport: transport, configuration: .init(interceptors: [reopened]))
        #expect(try await later.send(banner).metadata.source == .cache)
        #expect(transport.requests.count == 1)

        // doc-snippet: Caching
        try await cache.invalidate(banner, client: client)   // one endpoint's entry
        await cache.invalidate(module: "home")               // every entry of a module
        await cache.invalidateAll()
        // end-doc-snippet
        #expect(try await client.send(banner).metadata.source == .network)
        #expect(transport.requests.count == 2)
    }
}
#endif
