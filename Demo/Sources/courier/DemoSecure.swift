import Courier
import CourierDemoServer
import CourierSecurity
import HTTPTypes

extension Tour {
    /// The security steps: a signed and encrypted round trip in every format, then a tampered answer rejected.
    /// Returns the number of steps that did not behave as expected.
    func runSecuritySteps(from first: Int) async -> Int {
        var failures = 0
        let secure = DemoSecurity.module(api: api)
        let traced = CallOptions(trace: true)
        print("")
        print("Chain of the secured module: \(client.pipeline(for: DemoSecurity.user(id: 1, module: secure)).stageNames.joined(separator: " → "))")

        heading(first, "Signed and encrypted round trips (HMAC-SHA256 signature, AES-256-GCM envelope): GET /secure/users/4")
        for format in formats {
            print("   [\(format)]")
            let ok = await expectSuccess({
                try await client.send(DemoSecurity.user(id: 4, module: secure, format: format),
                                      decoding: DemoAPI.UserEnvelope.self, options: traced)
            }, { "decrypted and verified \(format): User(id: \($0.data.id), name: \($0.data.name))" })
            if !ok { failures += 1 }
        }

        heading(first + 1, "A tampered answer: the server flips a bit of its encrypted response")
        var tampered = DemoSecurity.user(id: 4, module: secure)
        tampered.headers[DemoSecurity.tamperField] = "1"
        do {
            let reply = try await client.send(tampered, options: traced)
            show(reply.metadata.trace)
            print("   ✗ a tampered answer was accepted")
            failures += 1
        } catch let error as CourierError {
            show(error)
            if error.category != .security { failures += 1 }
        } catch {
            print("   ✗ \(error)")
            failures += 1
        }

        heading(first + 2, "Re-login, then replay: the access token expired and the refresh token was revoked")
        failures += await runReLoginStep()
        return failures
    }

    /// Five calls meet an expired token; the refresh fails; one sign-in runs; all five are replayed.
    func runReLoginStep() async -> Int {
        let auth = APIModule(name: "auth", service: api.service)
        @Sendable func post(_ path: String, _ body: Value) async throws -> Value {
            var endpoint = Endpoint(name: path, module: auth, method: .post, path: path)
            endpoint.body = body
            return try await client.send(endpoint).value["data"] ?? .null
        }
        @Sendable func signIn() async throws -> Credential {
            let data = try await post("/auth/login", ["user": "ada", "password": "secret"])
            return Credential(accessToken: data["access_token"]?.stringValue ?? "",
                              refreshToken: data["refresh_token"]?.stringValue)
        }
        do {
            let first = try await signIn()
            _ = try await post("/auth/expire", [:])
            _ = try await post("/auth/revoke", [:])
            let store = CredentialStore(credential: first, reLogin: { reason in
                print("   sign-in screen shown once (\(reason)); the user signs in as ada")
                return try await signIn()
            }) { old in
                let data = try await post("/auth/refresh", ["refresh_token": .string(old?.refreshToken ?? "")])
                return Credential(accessToken: data["access_token"]?.stringValue ?? "", refreshToken: old?.refreshToken)
            }
            let me = Endpoint(name: "me", module: APIModule(name: "me", service: api.service,
                                                            interceptors: [BearerAuth(store: store)]), path: "/auth/me")
            let users = try await withThrowingTaskGroup(of: String.self) { group in
                for _ in 0..<5 { group.addTask { try await client.send(me).value["data"]?["user"]?.stringValue ?? "?" } }
                return try await group.reduce(into: [String]()) { $0.append($1) }
            }
            let logins = await store.reLoginCount
            print("   ✓ 5 calls replayed after \(logins) sign-in: \(users.joined(separator: ", "))")
            return users == Array(repeating: "ada", count: 5) && logins == 1 ? 0 : 1
        } catch {
            print("   ✗ \(error)")
            return 1
        }
    }
}
