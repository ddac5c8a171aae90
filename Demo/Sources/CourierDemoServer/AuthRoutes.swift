#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Courier
import HTTPTypes
import Hummingbird

/// Bearer-token routes for the re-login-then-replay flow (per server, tokens in memory):
///
/// - `POST /auth/login` `{"user": …, "password": "secret"}` → `data: {access_token, refresh_token}`; a wrong
///   password is a 401 with business code 40100.
/// - `POST /auth/refresh` `{"refresh_token": …}` → a new access token; an unknown or revoked refresh token is
///   a 400 with business code 40102.
/// - `GET /auth/me` — needs `Authorization: Bearer <access token>`; an unknown or expired token is a 401 with
///   `WWW-Authenticate: Bearer error="invalid_token"` (RFC 6750); a request without the header is a 401 with
///   a plain `Bearer realm` challenge.
/// - `POST /auth/expire` — every access token expires; `POST /auth/revoke` — every refresh token is revoked.
/// - `GET /auth/stats` — `{logins, refreshes, accepted, rejected}`.
struct AuthRoutes: DemoRouteGroup {
    /// The password every demo user signs in with.
    static let password = "secret"

    final class Tokens: Sendable {
        struct State {
            var access: [String: String] = [:]
            var refresh: [String: String] = [:]
            var serial = 0
            var logins = 0
            var refreshes = 0
            var accepted = 0
            var rejected = 0
        }
        let state = Locked(State())

        func issue(for user: String, refresh: Bool) -> (access: String, refresh: String?) {
            state.withLock { state in
                state.serial += 1
                let access = "at-\(user)-\(state.serial)"
                state.access[access] = user
                guard refresh else { return (access, nil) }
                let token = "rt-\(user)-\(state.serial)"
                state.refresh[token] = user
                return (access, token)
            }
        }
    }

    func register(on router: Router<BasicRequestContext>, state: DemoState, exchange: DemoExchange) {
        let tokens = Tokens()

        router.post("/auth/login") { request, _ -> Response in
            state.countRequest()
            let body = try await exchange.body(of: request, messageType: nil)
            guard let user = body["user"]?.stringValue, !user.isEmpty, body["password"]?.stringValue == Self.password else {
                return exchange.failure(to: request, code: 40100, message: "wrong user or password", status: .unauthorized)
            }
            tokens.state.withLock { $0.logins += 1 }
            let issued = tokens.issue(for: user, refresh: true)
            return exchange.respond(
                to: request,
                DemoExchange.envelope(data: ["access_token": .string(issued.access),
                                             "refresh_token": .string(issued.refresh ?? "")]),
                messageType: nil)
        }

        router.post("/auth/refresh") { request, _ -> Response in
            state.countRequest()
            let body = try await exchange.body(of: request, messageType: nil)
            let presented = body["refresh_token"]?.stringValue ?? ""
            guard let user = tokens.state.withLock({ $0.refresh[presented] }) else {
                return exchange.failure(to: request, code: 40102, message: "the refresh token is not valid",
                                        status: .badRequest)
            }
            tokens.state.withLock { $0.refreshes += 1 }
            let issued = tokens.issue(for: user, refresh: false)
            return exchange.respond(
                to: request,
                DemoExchange.envelope(data: ["access_token": .string(issued.access), "refresh_token": .string(presented)]),
                messageType: nil)
        }

        router.get("/auth/me") { request, _ -> Response in
            state.countRequest()
            guard let header = request.headers[.authorization], header.hasPrefix("Bearer ") else {
                tokens.state.withLock { $0.rejected += 1 }
                return exchange.respond(
                    to: request, DemoExchange.envelope(code: 401, message: "sign in first", data: nil),
                    status: .unauthorized, messageType: nil, headers: [.wwwAuthenticate: #"Bearer realm="demo""#])
            }
            let token = String(header.dropFirst("Bearer ".count))
            guard let user = tokens.state.withLock({ state -> String? in
                let user = state.access[token]
                if user == nil { state.rejected += 1 } else { state.accepted += 1 }
                return user
            }) else {
                return exchange.respond(
                    to: request, DemoExchange.envelope(code: 401, message: "the access token expired", data: nil),
                    status: .unauthorized, messageType: nil,
                    headers: [.wwwAuthenticate: #"Bearer realm="demo", error="invalid_token", error_description="expired""#])
            }
            return exchange.respond(to: request, DemoExchange.envelope(data: ["user": .string(user)]), messageType: nil)
        }

        router.post("/auth/expire") { request, _ -> Response in
            tokens.state.withLock { $0.access.removeAll() }
            return exchange.respond(to: request, DemoExchange.envelope(data: nil), messageType: nil)
        }

        router.post("/auth/revoke") { request, _ -> Response in
            tokens.state.withLock { $0.refresh.removeAll() }
            return exchange.respond(to: request, DemoExchange.envelope(data: nil), messageType: nil)
        }

        router.get("/auth/stats") { request, _ -> Response in
            let counts = tokens.state.withLock { state -> Value in
                ["logins": .int(Int64(state.logins)), "refreshes": .int(Int64(state.refreshes)),
                 "accepted": .int(Int64(state.accepted)), "rejected": .int(Int64(state.rejected))]
            }
            return exchange.respond(to: request, DemoExchange.envelope(data: counts), messageType: nil)
        }
    }
}
