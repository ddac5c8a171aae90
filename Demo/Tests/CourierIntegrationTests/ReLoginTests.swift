import Courier
import CourierDemoServer
import CourierSecurity
import Foundation
import HTTPTypes
import Testing

/// Re-login, then replay, against the demo server's bearer routes (`/auth/*`) on both transports.
@Suite(.serialized, .timeLimit(.minutes(10))) struct ReLoginTests {
    // swift-format-ignore: AlwaysUseLowerCamelCase
    struct Tokens: Decodable, Sendable {
        var access_token: String
        var refresh_token: String
    }

    static func post(_ path: String, _ body: Value, api: DemoAPI, client: CourierClient) async throws -> Reply<Value> {
        var endpoint = Endpoint(name: path, module: APIModule(name: "auth", service: api.service), method: .post, path: path)
        endpoint.body = body
        return try await client.send(endpoint)
    }

    static func signIn(_ user: String, api: DemoAPI, client: CourierClient) async throws -> Credential {
        let reply = try await post("/auth/login", ["user": .string(user), "password": "secret"], api: api, client: client)
        let data = reply.value["data"]
        return Credential(accessToken: data?["access_token"]?.stringValue ?? "",
                          refreshToken: data?["refresh_token"]?.stringValue)
    }

    static func stats(api: DemoAPI, client: CourierClient) async throws -> Value {
        try await client.send(Endpoint(name: "stats", module: APIModule(name: "auth", service: api.service),
                                       path: "/auth/stats")).value["data"] ?? .null
    }

    /// A store whose refresher calls `/auth/refresh` and whose re-login calls `/auth/login` (or declines).
    static func store(initial: Credential, api: DemoAPI, client: CourierClient, accept: Bool, logins: Locked<Int>)
        -> CredentialStore
    {
        CredentialStore(
            credential: initial,
            reLogin: { _ in
                logins.withLock { $0 += 1 }
                return accept ? try await signIn("ada", api: api, client: client) : nil
            }
        ) { old in
            let reply = try await post("/auth/refresh", ["refresh_token": .string(old?.refreshToken ?? "")],
                                       api: api, client: client)
            let data = reply.value["data"]
            return Credential(accessToken: data?["access_token"]?.stringValue ?? "",
                              refreshToken: data?["refresh_token"]?.stringValue)
        }
    }

    static func fifty(_ client: CourierClient, _ endpoint: Endpoint) async -> [Result<Reply<Value>, any Error>] {
        await withTaskGroup(of: Result<Reply<Value>, any Error>.self) { group in
            for _ in 0..<50 {
                group.addTask {
                    do { return .success(try await client.send(endpoint)) } catch { return .failure(error) }
                }
            }
            var results: [Result<Reply<Value>, any Error>] = []
            for await result in group { results.append(result) }
            return results
        }
    }

    @Test(arguments: TransportUnderTest.allCases)
    func fiftyCallsOneReLoginFiftyReplays(_ kind: TransportUnderTest) async throws {
        try await kind.run { transport in
            try await withDemoServer { _, api in
                let plain = CourierClient(transport: transport)
                let first = try await Self.signIn("ada", api: api, client: plain)
                _ = try await Self.post("/auth/expire", [:], api: api, client: plain)    // the access token expires
                _ = try await Self.post("/auth/revoke", [:], api: api, client: plain)    // and the refresh fails
                let logins = Locked(0)
                let store = Self.store(initial: first, api: api, client: plain, accept: true, logins: logins)
                let module = APIModule(name: "me", service: api.service, interceptors: [BearerAuth(store: store)])
                let client = CourierClient(transport: transport)
                let results = await Self.fifty(client, Endpoint(name: "me", module: module, path: "/auth/me"))
                #expect(results.count == 50)
                for result in results { #expect(try result.get().value["data"]?["user"] == "ada") }
                #expect(logins.withLock { $0 } == 1)
                #expect(await store.reLoginCount == 1)
                #expect(await store.refreshCount == 1)
                let stats = try await Self.stats(api: api, client: plain)
                #expect(stats["logins"] == 2)          // the first sign-in and the one re-login
                #expect(stats["accepted"] == 50)       // every call answered once, with the new token
                // Each call sent with the old token was rejected and replayed once. Almost always that is all
                // fifty; a call its machine started after the re-login sends the new token at once.
                #expect((1...50).contains(stats["rejected"]?.int64Value ?? 0))
            }
        }
    }

    @Test(arguments: TransportUnderTest.allCases)
    func aDeclinedReLoginFailsAllFiftyWithoutALoop(_ kind: TransportUnderTest) async throws {
        try await kind.run { transport in
            try await withDemoServer { _, api in
                let plain = CourierClient(transport: transport)
                let first = try await Self.signIn("ada", api: api, client: plain)
                _ = try await Self.post("/auth/expire", [:], api: api, client: plain)
                _ = try await Self.post("/auth/revoke", [:], api: api, client: plain)
                let logins = Locked(0)
                let store = Self.store(initial: first, api: api, client: plain, accept: false, logins: logins)
                let module = APIModule(name: "me", service: api.service, interceptors: [BearerAuth(store: store)])
                let results = await Self.fifty(CourierClient(transport: transport), Endpoint(name: "me", module: module, path: "/auth/me"))
                for result in results {
                    guard case .failure(let error as CourierError) = result else {
                        Issue.record("expected an authentication failure, got \(result)")
                        continue
                    }
                    #expect(error.code == .authentication)
                    #expect(error.message.contains("declined"))
                }
                #expect(logins.withLock { $0 } == 1)
                let stats = try await Self.stats(api: api, client: plain)
                #expect(stats["rejected"] == 50)       // each call sent once: no replay, no loop
                #expect(stats["accepted"] == 0)
            }
        }
    }

    @Test func aMissingCredentialChallengeIsAPlainHTTPError() async throws {
        try await withDemoServer { _, api in
            // No Authorization header at all: 401 with a bare `Bearer realm` challenge, not invalid_token.
            let module = APIModule(name: "me", service: api.service)
            let error = try await #require(throws: CourierError.self) {
                try await CourierClient().send(Endpoint(name: "me", module: module, path: "/auth/me"))
            }
            #expect(error.code == .unauthorized)
        }
    }
}
