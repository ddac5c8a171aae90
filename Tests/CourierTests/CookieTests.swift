import Courier
import CourierTesting
import Foundation
import HTTPTypes
import Testing

/// The cookie store's RFC 6265 rules, its bounds against hostile `Set-Cookie` lines, persistence, and the jar
/// interceptor's scoping per module.
@Suite(.timeLimit(.minutes(10))) struct CookieTests {
    /// A wall clock a test moves by hand.
    final class TestClock: Sendable {
        let time = Locked(Date(timeIntervalSince1970: 1_800_000_000))
        var now: @Sendable () -> Date { { self.time.withLock { $0 } } }
        func advance(_ seconds: TimeInterval) { time.withLock { $0 += seconds } }
    }

    static func url(_ text: String) -> URL { URL(string: text)! }

    @Test func aCookieIsSentBackToItsHostOnly() {
        let store = CookieStore()
        store.receive(setCookie: ["sid=abc; Path=/; HttpOnly; SameSite=Lax"], from: Self.url("http://api.test/login"))
        #expect(store.cookieHeader(for: Self.url("http://api.test/users")) == "sid=abc")
        #expect(store.cookieHeader(for: Self.url("http://sub.api.test/users")) == nil)
        #expect(store.cookieHeader(for: Self.url("http://other.test/")) == nil)
        let cookie = try! #require(store.cookies.first)
        #expect(cookie.isHostOnly && cookie.isHTTPOnly && cookie.sameSite == "Lax" && cookie.expires == nil)
    }

    @Test func aDomainCookieGoesToSubdomainsAndAForeignOrSingleLabelDomainIsRefused() {
        let store = CookieStore()
        let from = Self.url("https://www.shop.test/")
        store.receive(setCookie: ["a=1; Domain=.shop.test", "b=2; Domain=other.test", "c=3; Domain=test",
                                  "d=4; Domain=ww.shop.test", "e=5; Domain=WWW.SHOP.TEST"], from: from)
        #expect(Set(store.cookies.map(\.name)) == ["a", "e"])
        #expect(store.cookieHeader(for: Self.url("https://api.shop.test/")) == "a=1")
        #expect(store.cookieHeader(for: Self.url("https://shop.test/")) == "a=1")
        #expect(store.cookieHeader(for: Self.url("https://x.www.shop.test/")) == "a=1; e=5")
        #expect(store.cookieHeader(for: Self.url("https://notshop.test/")) == nil)
    }

    @Test func anAddressHostTakesNoDomainCookieButItsOwnAddress() {
        let store = CookieStore()
        store.receive(setCookie: ["a=1; Domain=0.0.1", "b=2; Domain=127.0.0.1", "c=3"], from: Self.url("http://127.0.0.1:8080/"))
        #expect(Set(store.cookies.map(\.name)) == ["b", "c"])
        #expect(store.cookieHeader(for: Self.url("http://127.0.0.1:9090/x")) == "b=2; c=3")
    }

    @Test func pathsMatchBySegmentAndLongerPathsComeFirst() {
        let store = CookieStore()
        store.receive(setCookie: ["root=1; Path=/", "api=2; Path=/api", "deep=3; Path=/api/v1/"], from: Self.url("http://h.test/"))
        store.receive(setCookie: ["implicit=4"], from: Self.url("http://h.test/docs/page"))
        #expect(store.cookieHeader(for: Self.url("http://h.test/api/v1/users")) == "deep=3; api=2; root=1")
        #expect(store.cookieHeader(for: Self.url("http://h.test/api")) == "api=2; root=1")
        #expect(store.cookieHeader(for: Self.url("http://h.test/apiary")) == "root=1")
        #expect(store.cookieHeader(for: Self.url("http://h.test/docs/other")) == "implicit=4; root=1")
        #expect(store.cookieHeader(for: Self.url("http://h.test/documents")) == "root=1")
    }

    @Test func secureCookiesTravelOverHTTPSOnlyAndCannotBeSetOverHTTP() {
        let store = CookieStore()
        store.receive(setCookie: ["s=1; Secure"], from: Self.url("https://h.test/"))
        store.receive(setCookie: ["t=2; Secure"], from: Self.url("http://h.test/"))
        #expect(store.cookieHeader(for: Self.url("https://h.test/")) == "s=1")
        #expect(store.cookieHeader(for: Self.url("http://h.test/")) == nil)
    }

    @Test func expiryFollowsTheStoresClockMaxAgeBeforeExpires() {
        let clock = TestClock()
        let store = CookieStore(now: clock.now)
        let from = Self.url("http://h.test/")
        store.receive(setCookie: [
            "short=1; Max-Age=60; Expires=Wed, 21 Oct 2099 07:28:00 GMT",
            "dated=2; Expires=Wed, 21 Oct 2099 07:28:00 GMT",
            "past=3; Expires=Thu, 01 Jan 1970 00:00:00 GMT",
            "gone=4; Max-Age=0",
            "badAge=5; Max-Age=soon",
        ], from: from)
        #expect(Set(store.cookies.map(\.name)) == ["short", "dated", "badAge"])
        clock.advance(61)
        #expect(Set(store.cookies.map(\.name)) == ["dated", "badAge"])
        #expect(store.cookieHeader(for: from)?.contains("short") == false)
        // A later Max-Age=0 deletes a stored cookie.
        store.receive(setCookie: ["dated=x; Max-Age=0"], from: from)
        #expect(store.cookies.map(\.name) == ["badAge"])
    }

    @Test(arguments: [
        ("Wed, 21 Oct 2015 07:28:00 GMT", 1_445_412_480.0),
        ("Wednesday, 21-Oct-15 07:28:00 GMT", 1_445_412_480.0),
        ("Wed Oct 21 07:28:00 2015", 1_445_412_480.0),
        ("21 Oct 2015 07:28:00", 1_445_412_480.0),
    ])
    func cookieDatesParseInTheirRFC6265Forms(text: String, seconds: Double) {
        let clock = TestClock()
        clock.time.withLock { $0 = Date(timeIntervalSince1970: 1_400_000_000) }
        let store = CookieStore(now: clock.now)
        store.receive(setCookie: ["a=1; Expires=\(text)"], from: Self.url("http://h.test/"))
        #expect(store.cookies.first?.expires == Date(timeIntervalSince1970: seconds), "\(text)")
    }

    @Test func aCookieReplacesItsNamesakeAndKeepsItsCreationTime() {
        let clock = TestClock()
        let store = CookieStore(now: clock.now)
        let from = Self.url("http://h.test/")
        store.receive(setCookie: ["a=1"], from: from)
        clock.advance(5)
        store.receive(setCookie: ["b=2"], from: from)
        clock.advance(5)
        store.receive(setCookie: ["a=3"], from: from)
        #expect(store.cookies.count == 2)
        #expect(store.cookieHeader(for: from) == "a=3; b=2")
    }

    @Test func malformedLinesAreIgnored() {
        let store = CookieStore()
        let lines = ["", ";", "=value", "novalue", "  ; a=1", "bad\u{1}name=1", "a=b\u{7F}", "x=1\r\nInjected: yes",
                     "ok=1; Expires=not a date; Max-Age=; Domain=; Path=relative; Unknown=1; =; ;;;"]
        store.receive(setCookie: lines, from: Self.url("http://h.test/a/b"))
        #expect(store.cookies.map(\.name) == ["ok"])
        #expect(store.cookies.first?.path == "/a")
    }

    @Test func hostileSetCookieStaysBounded() {
        let store = CookieStore()
        let from = Self.url("http://h.test/")
        let huge = "big=" + String(repeating: "x", count: 4094)
        let justFits = "fit=" + String(repeating: "x", count: 4093)
        store.receive(setCookie: [huge, justFits, String(repeating: "y", count: 1 << 20)], from: from)
        #expect(store.cookies.map(\.name) == ["fit"])
        // Thousands of cookies for one host: the 50 newest stay.
        store.receive(setCookie: (0..<5000).map { "c\($0)=\($0)" }, from: from)
        #expect(store.cookies.count == 50)
        #expect(store.cookies.contains { $0.name == "c4999" })
        // Many hosts: the store stays within its total.
        let small = CookieStore(limits: .init(maximumCookiesPerDomain: 5, maximumCookies: 20))
        for host in 0..<100 {
            small.receive(setCookie: (0..<10).map { "c\($0)=1" }, from: Self.url("http://h\(host).test/"))
        }
        #expect(small.cookies.count == 20)
    }

    @Test func foundationNetworkingsJoinedFieldsSplitBackIntoCookies() {
        let joined = "a=1; Expires=Wed, 21 Oct 2099 07:28:00 GMT; Path=/, b=2, c=3; Domain=h.test"
        #expect(CookieStore.splitLines(joined) == [
            "a=1; Expires=Wed, 21 Oct 2099 07:28:00 GMT; Path=/", "b=2", "c=3; Domain=h.test",
        ])
        #expect(CookieStore.splitLines("solo=1; Expires=Wed, 21 Oct 2099 07:28:00 GMT") == [
            "solo=1; Expires=Wed, 21 Oct 2099 07:28:00 GMT",
        ])
    }

    @Test func aFileStorePersistsAcrossInstancesAndKeepsSessionCookiesInMemory() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("courier-cookies-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("cookies.json")
        let clock = TestClock()
        let first = try CookieStore(file: file, now: clock.now)
        first.receive(setCookie: ["keep=1; Max-Age=3600", "session=2", "brief=3; Max-Age=10"], from: Self.url("http://h.test/"))

        let second = try CookieStore(file: file, now: clock.now)
        #expect(Set(second.cookies.map(\.name)) == ["keep", "brief"])
        clock.advance(11)
        let third = try CookieStore(file: file, now: clock.now)
        #expect(third.cookies.map(\.name) == ["keep"])
        #expect(third.cookieHeader(for: Self.url("http://h.test/")) == "keep=1")
        third.removeAll()
        #expect(try CookieStore(file: file, now: clock.now).cookies.isEmpty)
        // No temporary files are left beside it.
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["cookies.json"])
    }

    @Test func aCorruptOrForgedFileStartsEmptyOrIsFiltered() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("courier-cookies-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("cookies.json")
        try Data("{not json".utf8).write(to: file)
        #expect(try CookieStore(file: file).cookies.isEmpty)
        let forged = #"[{"name":"x;y","value":"1","domain":"h.test","isHostOnly":true,"path":"/","expires":9e9,"isSecure":false,"isHTTPOnly":false,"created":0}]"#
        try Data(forged.utf8).write(to: file)
        #expect(try CookieStore(file: file).cookies.isEmpty)
        let missingFolder = #expect(throws: CourierError.self) {
            _ = try CookieStore(file: folder.appendingPathComponent("missing/cookies.json"))
        }
        #expect(missingFolder?.code == .invalidConfiguration)
    }

    /// Two modules with their own jars over one transport: each sees only its own cookies, and a module
    /// without a jar sends none.
    @Test func jarsAreScopedPerModule() async throws {
        let transport = InMemoryTransport { request, _ in
            var head = HTTPResponse(status: .ok, headerFields: [.contentType: "application/json"])
            if request.path == "/login" { head.headerFields[.setCookie] = "sid=\(request.headerFields[.userAgent] ?? "")" }
            let cookie = request.headerFields[.cookie] ?? ""
            return (head, Data(#"{"cookie":"\#(cookie)"}"#.utf8))
        }
        let service = APIService(name: "s", baseURL: Self.url("http://api.test"))
        let a = APIModule(name: "a", service: service, headers: [.userAgent: "A"], interceptors: [CookieJar()])
        let b = APIModule(name: "b", service: service, headers: [.userAgent: "B"], interceptors: [CookieJar()])
        let bare = APIModule(name: "bare", service: service)
        let client = CourierClient(transport: transport)
        _ = try await client.send(Endpoint(name: "login", module: a, path: "/login"))
        _ = try await client.send(Endpoint(name: "login", module: b, path: "/login"))
        #expect(try await client.send(Endpoint(name: "me", module: a, path: "/me")).value["cookie"]?.stringValue == "sid=A")
        #expect(try await client.send(Endpoint(name: "me", module: b, path: "/me")).value["cookie"]?.stringValue == "sid=B")
        #expect(try await client.send(Endpoint(name: "me", module: bare, path: "/me")).value["cookie"]?.stringValue == "")
    }

    /// The jar sits below the `redirects` stage: a `302` that sets a cookie is followed with it.
    @Test func aCookieSetOnARedirectIsSentOnTheNextHop() async throws {
        let transport = InMemoryTransport { request, _ in
            if request.path == "/login" {
                return (HTTPResponse(status: .found, headerFields: [.location: "/home", .setCookie: "sid=42; Path=/"]), Data())
            }
            let cookie = request.headerFields[.cookie] ?? ""
            return (HTTPResponse(status: .ok, headerFields: [.contentType: "application/json"]),
                    Data(#"{"cookie":"\#(cookie)"}"#.utf8))
        }
        let module = APIModule(name: "m", service: APIService(name: "s", baseURL: Self.url("http://api.test")),
                               interceptors: [CookieJar()])
        let endpoint = Endpoint(name: "login", module: module, method: .post, path: "/login")
        let client = CourierClient(transport: transport)
        let reply = try await client.send(endpoint)
        #expect(reply.value["cookie"]?.stringValue == "sid=42")
        #expect(client.pipeline(for: endpoint).stageNames == [
            "result", "routing", "errorMapping", "codec", "redirects", "CookieJar", "transport",
        ])
    }
}
