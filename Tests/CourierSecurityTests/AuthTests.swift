#if Security
import CourierTesting
import Foundation
import HTTPTypes
import Testing
@testable import CourierSecurity

@Suite struct AuthTests {
    /// A server accepting only `valid`; other tokens get a 401 with an `invalid_token` challenge, or a 200
    /// with business code 40101.
    static func server(valid: @escaping @Sendable () -> String, businessCode: Bool = false) -> InMemoryTransport {
        InMemoryTransport { head, _ in
            try await Task.sleep(for: .milliseconds(Int.random(in: 0...5)))
            if head.headerFields[.authorization] == "Bearer " + valid() {
                return jsonResponse(.ok, #"{"code":0,"data":"hello"}"#)
            }
            if businessCode { return jsonResponse(.ok, #"{"code":40101,"message":"token expired"}"#) }
            var (response, body) = jsonResponse(.unauthorized, #"{"code":401,"message":"expired"}"#)
            response.headerFields[.wwwAuthenticate] = #"Bearer realm="api", error="invalid_token", error_description="expired""#
            return (response, body)
        }
    }

    static func store(refreshes: Counter, fails: Bool = false, delay: Duration = .milliseconds(50)) -> CredentialStore {
        // A failed refresh holds for ten minutes: a call its machine starts seconds late must not refresh again.
        CredentialStore(
            credential: Credential(accessToken: "expired-token", refreshToken: "r1"), failureCooldown: .seconds(600)
        ) { old in
            refreshes.increment()
            try await Task.sleep(for: delay)
            if fails { throw CourierError(.http(status: 400), detail: "refresh rejected") }
            #expect(old?.refreshToken == "r1")
            return Credential(accessToken: "fresh-token", refreshToken: "r2")
        }
    }

    static func sendConcurrently(_ client: CourierClient, _ endpoint: Endpoint, count: Int = 50)
        async -> [Result<Reply<Value>, CourierError>]
    {
        await withTaskGroup(of: Result<Reply<Value>, CourierError>.self) { group in
            for _ in 0..<count {
                group.addTask {
                    do { return .success(try await client.send(endpoint)) } catch let error as CourierError {
                        return .failure(error)
                    } catch {
                        return .failure(CourierError.wrap(error, as: .interceptorFailure))
                    }
                }
            }
            var results: [Result<Reply<Value>, CourierError>] = []
            for await result in group { results.append(result) }
            return results
        }
    }

    @Test func fiftyConcurrentCallsShareOneRefresh() async throws {
        let refreshes = Counter()
        let store = Self.store(refreshes: refreshes)
        let transport = Self.server(valid: { "fresh-token" })
        let client = CourierClient(transport: transport)
        let endpoint = makeEndpoint(makeModule([BearerAuth(store: store)]), method: .get, path: "/me")
        let results = await Self.sendConcurrently(client, endpoint)
        #expect(results.count == 50)
        for result in results {
            let reply = try result.get()
            #expect(reply.value["data"] == "hello")
        }
        #expect(refreshes.count == 1)
        #expect(await store.refreshCount == 1)
        #expect(await store.current?.accessToken == "fresh-token")
        // Each call sent at most twice: once expired, once fresh.
        #expect(transport.requests.count <= 100)
        #expect(transport.requests.filter { $0.head.headerFields[.authorization] == "Bearer fresh-token" }.count == 50)
    }

    @Test func failedRefreshFailsAllFiftyWithAuthentication() async throws {
        let refreshes = Counter()
        let store = Self.store(refreshes: refreshes, fails: true)
        let client = CourierClient(transport: Self.server(valid: { "fresh-token" }))
        let endpoint = makeEndpoint(makeModule([BearerAuth(store: store)]), method: .get, path: "/me")
        let results = await Self.sendConcurrently(client, endpoint)
        #expect(results.count == 50)
        for result in results {
            guard case .failure(let error) = result else {
                Issue.record("a call succeeded")
                continue
            }
            #expect(error.code == .authentication)
            #expect(error.message.contains("could not be refreshed"))
        }
        #expect(refreshes.count == 1)
    }

    @Test(arguments: [true, false])
    func businessCodeExpiryRefreshesTheSameWay(_ moduleHasRule: Bool) async throws {
        let refreshes = Counter()
        let store = Self.store(refreshes: refreshes)
        var options = BearerAuth.Options()
        options.expiryCodes = [40101]
        let module = makeModule([BearerAuth(store: store, options: options)],
                                rule: moduleHasRule ? BusinessRule() : nil)
        let client = CourierClient(transport: Self.server(valid: { "fresh-token" }, businessCode: true))
        let results = await Self.sendConcurrently(client, makeEndpoint(module, method: .get, path: "/me"))
        for result in results { #expect(try result.get().value["data"] == "hello") }
        #expect(refreshes.count == 1)
    }

    @Test func nonReplayableRequestIsNotReplayed() async throws {
        let refreshes = Counter()
        let store = Self.store(refreshes: refreshes)
        let transport = Self.server(valid: { "fresh-token" })
        let client = CourierClient(transport: transport)
        var endpoint = makeEndpoint(makeModule([BearerAuth(store: store)]), method: .post, path: "/upload")
        endpoint.isReplayable = false
        let error = await #expect(throws: CourierError.self) { try await client.send(endpoint) }
        #expect(error?.code == .unauthorized)
        #expect(transport.requests.count == 1)
        // The credential was still refreshed for later calls.
        #expect(refreshes.count == 1)
        endpoint.isReplayable = true
        _ = try await client.send(endpoint)
        #expect(transport.requests.count == 2)
    }

    @Test func replayRejectedAgainIsAnAuthenticationError() async throws {
        let refreshes = Counter()
        let store = Self.store(refreshes: refreshes)
        let transport = Self.server(valid: { "never-valid" })
        let client = CourierClient(transport: transport)
        let error = await #expect(throws: CourierError.self) {
            try await client.send(makeEndpoint(makeModule([BearerAuth(store: store)]), method: .get, path: "/me"))
        }
        #expect(error?.code == .authentication)
        #expect(transport.requests.count == 2)
    }

    @Test func knownExpiryRefreshesBeforeSending() async throws {
        let refreshes = Counter()
        let store = CredentialStore(credential: Credential(accessToken: "old", expiresAt: Date(timeIntervalSinceNow: 10))) { _ in
            refreshes.increment()
            return Credential(accessToken: "fresh-token", expiresAt: Date(timeIntervalSinceNow: 3600))
        }
        let transport = Self.server(valid: { "fresh-token" })
        _ = try await CourierClient(transport: transport).send(
            makeEndpoint(makeModule([BearerAuth(store: store)]), method: .get, path: "/me"))
        #expect(transport.requests.map { $0.head.headerFields[.authorization] } == ["Bearer fresh-token"])
        #expect(refreshes.count == 1)
    }

    @Test func signedOutIsAnAuthenticationError() async throws {
        let store = CredentialStore(credential: nil) { _ in Credential(accessToken: "x") }
        let transport = Self.server(valid: { "x" })
        let error = await #expect(throws: CourierError.self) {
            try await CourierClient(transport: transport).send(makeEndpoint(makeModule([BearerAuth(store: store)])))
        }
        #expect(error?.code == .authentication)
        #expect(transport.requests.isEmpty)
        await store.update(Credential(accessToken: "x"))
        _ = try await CourierClient(transport: transport).send(makeEndpoint(makeModule([BearerAuth(store: store)])))
    }

    @Test func a401WithoutAnInvalidTokenChallengeIsAPlainHTTPError() async throws {
        let refreshes = Counter()
        let store = Self.store(refreshes: refreshes)
        // A bad signature, a missing scope: 401 without a challenge, or with another error.
        for challenge in [nil, #"Bearer error="insufficient_scope""#, #"Basic realm="x""#,
                          #"Bearer error="invalid_tokens""#, "Bearer error=invalid_token_x",
                          #"Bearer realm="error=invalid_token""#, String(repeating: "Bearer x=y, ", count: 20_000)] {
            let transport = InMemoryTransport { _, _ in
                var (response, body) = jsonResponse(.unauthorized, #"{"code":401,"message":"bad signature"}"#)
                if let challenge { response.headerFields[.wwwAuthenticate] = challenge }
                return (response, body)
            }
            let error = await #expect(throws: CourierError.self) {
                try await CourierClient(transport: transport).send(makeEndpoint(makeModule([BearerAuth(store: store)])))
            }
            #expect(error?.code == .unauthorized)
            #expect(transport.requests.count == 1)
        }
        #expect(refreshes.count == 0)
        // A server that sends no challenge at all can opt back in.
        var options = BearerAuth.Options()
        options.expiry = .status([401])
        let bare = InMemoryTransport { head, _ in
            head.headerFields[.authorization] == "Bearer fresh-token"
                ? jsonResponse(.ok, #"{"code":0,"data":"hello"}"#) : jsonResponse(.unauthorized, "{}")
        }
        let reply = try await CourierClient(transport: bare).send(
            makeEndpoint(makeModule([BearerAuth(store: store, options: options)])))
        #expect(reply.value["data"] == "hello")
        #expect(refreshes.count == 1)
    }

    /// 50 calls meet an expired token, the refresh fails, one sign-in runs and all 50 are replayed with its
    /// credential.
    @Test func aFailedRefreshSignsInOnceAndReplaysEveryWaitingCall() async throws {
        let refreshes = Counter()
        let logins = Counter()
        let store = CredentialStore(
            credential: Credential(accessToken: "expired-token", refreshToken: "revoked"),
            reLogin: { reason in
                logins.increment()
                #expect(reason.description.contains("refresh failed"))
                try await Task.sleep(for: .milliseconds(50))
                return Credential(accessToken: "fresh-token", refreshToken: "r2")
            }
        ) { _ in
            refreshes.increment()
            throw CourierError(.http(status: 400), detail: "refresh token revoked")
        }
        let transport = Self.server(valid: { "fresh-token" })
        let endpoint = makeEndpoint(makeModule([BearerAuth(store: store)]), method: .get, path: "/me")
        let results = await Self.sendConcurrently(CourierClient(transport: transport), endpoint)
        #expect(results.count == 50)
        for result in results { #expect(try result.get().value["data"] == "hello") }
        #expect(refreshes.count == 1)
        #expect(logins.count == 1)
        #expect(await store.reLoginCount == 1)
        #expect(transport.requests.filter { $0.head.headerFields[.authorization] == "Bearer fresh-token" }.count == 50)
    }

    @Test(arguments: ["declined", "thrown", "cancelled"])
    func aDeclinedSignInFailsEveryWaitingCallWithoutALoop(_ how: String) async throws {
        let logins = Counter()
        let store = CredentialStore(
            credential: Credential(accessToken: "expired-token"), failureCooldown: .seconds(60),
            reLogin: { _ in
                logins.increment()
                try await Task.sleep(for: .milliseconds(30))
                switch how {
                case "declined": return nil
                case "thrown": throw CourierError(.http(status: 500), detail: "login server down")
                default: throw CancellationError()
                }
            }
        ) { _ in throw CourierError(.http(status: 400), detail: "refresh token revoked") }
        let transport = Self.server(valid: { "fresh-token" })
        let endpoint = makeEndpoint(makeModule([BearerAuth(store: store)]), method: .get, path: "/me")
        let results = await Self.sendConcurrently(CourierClient(transport: transport), endpoint)
        for result in results {
            guard case .failure(let error) = result else {
                Issue.record("a call succeeded")
                continue
            }
            #expect(error.code == .authentication)
            let expected = ["declined": "declined", "thrown": "sign-in failed", "cancelled": "cancelled"][how]!
            #expect(error.message.contains(expected), "\(error.message)")
        }
        #expect(logins.count == 1)
        #expect(transport.requests.count == 50)     // each call sent once: no replay, no loop
        // A later call with the same rejected token fails at once within the cooldown.
        _ = await Self.sendConcurrently(CourierClient(transport: transport), endpoint, count: 5)
        #expect(logins.count == 1)
    }

    @Test func signedOutCallsSignInOnceAndProceed() async throws {
        let logins = Counter()
        let store = CredentialStore(credential: nil, reLogin: { reason in
            logins.increment()
            #expect(reason.description == "signed out")
            try await Task.sleep(for: .milliseconds(20))
            return Credential(accessToken: "fresh-token")
        }) { _ in Credential(accessToken: "unused") }
        let transport = Self.server(valid: { "fresh-token" })
        let endpoint = makeEndpoint(makeModule([BearerAuth(store: store)]), method: .get, path: "/me")
        let results = await Self.sendConcurrently(CourierClient(transport: transport), endpoint, count: 20)
        for result in results { #expect(try result.get().value["data"] == "hello") }
        #expect(logins.count == 1)
        #expect(transport.requests.count == 20)
    }

    /// A call cancelled while its credential is refreshed (or while a sign-in screen is up) ends at once with
    /// `cancelled`; the renewal goes on for the other calls, and the cancelled wait is no failure. (Before, the
    /// call waited for the renewal to end: here, forever.)
    @Test(.timeLimit(.minutes(1)), arguments: [false, true])
    func aCallCancelledWhileItsCredentialIsRenewedEndsAtOnce(signingIn: Bool) async throws {
        let release = Locked(false)
        let renewals = Counter()
        @Sendable func renew() async throws -> Credential {
            renewals.increment()
            while !release.withLock({ $0 }) { try await Task.sleep(for: .milliseconds(5)) }
            return Credential(accessToken: "fresh-token")
        }
        let store =
            signingIn
            ? CredentialStore(credential: nil, reLogin: { _ in try await renew() }) { _ in Credential(accessToken: "unused") }
            : CredentialStore(credential: Credential(accessToken: "expired-token", refreshToken: "r1")) { _ in
                try await renew()
            }
        let client = CourierClient(transport: Self.server(valid: { "fresh-token" }))
        let endpoint = makeEndpoint(makeModule([BearerAuth(store: store)]), method: .get, path: "/me")
        let cancelled = client.dispatch(endpoint)
        let waiting = client.dispatch(endpoint)
        while renewals.count < 1 { try await Task.sleep(for: .milliseconds(2)) }
        cancelled.cancel()
        let error = try await #require(throws: CourierError.self) { try await cancelled.reply }
        #expect(error.code == .cancelled)
        release.withLock { $0 = true }
        #expect(try await waiting.reply.value["data"] == "hello")
        #expect(try await client.send(endpoint).value["data"] == "hello")
        #expect(renewals.count == 1)
    }

    @Test(arguments: [#"Bearer error="invalid_token""#, "Bearer error=invalid_token", #"bearer realm="a", error = "invalid_token""#,
                      #"Bearer realm="api",error="invalid_token",error_description="expired""#])
    func invalidTokenChallengesAreRecognised(_ challenge: String) {
        #expect(BearerAuth.ExpiryRule.saysInvalidToken(challenge))
    }

    @Test func credentialDescriptionHidesTokens() {
        let credential = Credential(accessToken: "at-SECRET-1", refreshToken: "rt-SECRET-2")
        for text in [String(describing: credential), String(reflecting: credential), "\(credential)"] {
            #expect(!text.contains("SECRET"))
        }
        var dumped = ""
        dump(credential, to: &dumped)
        #expect(!dumped.contains("SECRET"))
    }
}

/// The README's auth snippet, compiled and run.
@Suite struct ReadmeAuthExampleTests {
    struct SignInScreen: Sendable {
        func present(because reason: CredentialStore.ReLoginReason) async throws -> Credential? {
            Credential(accessToken: "fresh-token")
        }
    }
    struct AuthAPI: Sendable {
        func refresh(_ old: Credential?) async throws -> Credential {
            throw CourierError(.http(status: 400), detail: "revoked")
        }
    }

    @Test func theReadmeAuthExampleSignsInAgain() async throws {
        let saved: Credential? = Credential(accessToken: "expired-token")
        let signInScreen = SignInScreen()
        let authAPI = AuthAPI()
        var users = makeModule([])
        // README: begin
        let tokens = CredentialStore(
            credential: saved,
            reLogin: { reason in try await signInScreen.present(because: reason) }  // nil: the user cancelled
        ) { old in try await authAPI.refresh(old) }
        var options = BearerAuth.Options()
        options.expiryCodes = [40101]                                            // "token expired" in the body
        users.interceptors.append(BearerAuth(store: tokens, options: options))
        // README: end
        let reply = try await CourierClient(transport: AuthTests.server(valid: { "fresh-token" }))
            .send(makeEndpoint(users, method: .get, path: "/me"))
        #expect(reply.value["data"] == "hello")
        #expect(await tokens.reLoginCount == 1)
    }
}
#endif
