import Courier
import CourierTesting
import Foundation
import HTTPTypes
import Testing

private struct Profile: Codable, Sendable, Equatable {
    var id: Int
    var name: String
    var tags: [String]
}

private struct ProfileReply: Codable, Sendable, Equatable {
    var code: Int
    var data: Profile
}

private let replayAPI = APIModule(name: "user", service: APIService(name: "api", baseURL: URL(string: "http://api.test")!))

/// A fresh path in the temporary folder; the file is removed by `removing(_:)`.
private func temporaryCassette() -> URL {
    FileManager.default.temporaryDirectory.appending(path: "courier-cassette-\(UUID().uuidString).json")
}

private func removing(_ file: URL) {
    try? FileManager.default.removeItem(at: file)
}

private func get(_ path: String, headers: HTTPFields = [:]) -> HTTPRequest {
    HTTPRequest(method: .get, scheme: "http", authority: "api.test", path: path, headerFields: headers)
}

/// A server that counts its calls per path and answers `{"code":0,"n":<count>,"path":…}`.
private func countingServer() -> InMemoryTransport {
    let counts = Locked<[String: Int]>([:])
    return InMemoryTransport { request, _ in
        let path = request.path ?? "/"
        let n = counts.withLock { $0[path, default: 0] += 1; return $0[path]! }
        return jsonResponse(#"{"code":0,"n":\#(n)}"#)
    }
}

private func send(_ transport: ReplayTransport, _ request: HTTPRequest, body: Data? = nil) async throws
    -> (HTTPResponse, Data)
{
    try await transport.send(request, body: body, options: TransportOptions())
}

private func counter(_ answer: (HTTPResponse, Data)) throws -> Int64? {
    try JSONCodec().decode(answer.1)["n"]?.int64Value
}

@Suite struct ReplayTransportTests {
    @Test func recordsSavesLoadsAndReplaysWithoutTheServer() async throws {
        let server = InMemoryTransport { request, body in
            switch (request.method, request.path) {
            case (.get, "/users/7?fields=all"):
                return jsonResponse(#"{"code":0,"data":{"id":7,"name":"Ada","tags":["admin"]}}"#)
            case (.post, "/users"):
                let sent = try JSONCodec().decode(body ?? Data())
                let name = sent["name"]?.stringValue ?? "?"
                return jsonResponse(#"{"code":0,"data":{"id":8,"name":"\#(name)","tags":[]}}"#, status: .created)
            default:
                return jsonResponse(#"{"code":404}"#, status: .notFound)
            }
        }
        let show = Endpoint(name: "show", module: replayAPI, path: "/users/7", query: [QueryItem("fields", "all")])
        let create = Endpoint(name: "create", module: replayAPI, method: .post, path: "/users", body: ["name": "Grace"])

        let recorder = ReplayTransport(.record(server))
        let live = CourierClient(transport: recorder)
        let recorded = [
            try await live.send(show, decoding: ProfileReply.self).value,
            try await live.send(create, decoding: ProfileReply.self).value,
        ]
        #expect(recorded[1].data.name == "Grace")

        let file = temporaryCassette()
        defer { removing(file) }
        try recorder.save(to: file)
        let loaded = try Cassette.load(from: file)
        #expect(loaded == recorder.cassette)
        #expect(loaded.exchanges.map(\.request.method) == [.get, .post])
        #expect(loaded.exchanges[1].response?.status == .created)

        let player = ReplayTransport(.replay, cassette: loaded)
        let offline = CourierClient(transport: player)
        let replayed = [
            try await offline.send(show, decoding: ProfileReply.self).value,
            try await offline.send(create, decoding: ProfileReply.self).value,
        ]
        #expect(replayed == recorded)
        #expect(player.unplayedExchanges.isEmpty)
        #expect(server.requests.count == 2)   // the replays never reached the server
    }

    @Test func theFileFormatIsVersionedTextOrBase64AndRoundTrips() throws {
        let binary = Data([0xFF, 0x00, 0x80])
        let cassette = Cassette(exchanges: [
            Cassette.Exchange(
                request: HTTPRequest(method: .post, scheme: "https", authority: "api.test", path: "/echo?x=1",
                                     headerFields: [.contentType: "application/json"]),
                requestBody: Data(#"{"name":"Ada 🦉"}"#.utf8),
                response: HTTPResponse(status: .ok, headerFields: [.contentType: "application/x-protobuf"]),
                responseBody: binary),
            Cassette.Exchange(request: get("/slow"), failure: Cassette.Failure(.timedOut, detail: "no answer")),
        ])
        let data = try cassette.jsonData()
        let json = try JSONCodec().decode(data)
        #expect(json["version"] == 1)
        let first = try #require(json["exchanges"]?[0])
        #expect(first["request"]?["method"] == "POST")
        #expect(first["request"]?["path"] == "/echo?x=1")
        #expect(first["request"]?["headers"]?[0]?["name"] == "Content-Type")
        #expect(first["request"]?["body"]?["text"] == #"{"name":"Ada 🦉"}"#)
        #expect(first["response"]?["status"] == 200)
        #expect(first["response"]?["body"]?["base64"] == Value.string(binary.base64EncodedString()))
        #expect(first["failure"] == nil)
        let second = try #require(json["exchanges"]?[1])
        #expect(second["request"]?["body"] == nil)
        #expect(second["failure"]?["code"] == "timedOut")
        #expect(second["failure"]?["number"] == 1001)
        #expect(second["response"] == nil)
        guard case .object(let request) = first["request"] else { Issue.record("request is not an object"); return }
        #expect(request.keys == ["method", "scheme", "authority", "path", "headers", "body"])

        #expect(try Cassette(jsonData: data) == cassette)
        // Codable works with other coders too.
        #expect(try JSONDecoder().decode(Cassette.self, from: JSONEncoder().encode(cassette)) == cassette)
    }

    @Test func anUnmatchedRequestFailsWithANamedErrorSayingWhy() async throws {
        let recorder = ReplayTransport(.record(countingServer()))
        let list = Endpoint(name: "list", module: replayAPI, path: "/users", query: [QueryItem("page", "1")])
        _ = try await CourierClient(transport: recorder).send(list)

        let client = CourierClient(transport: ReplayTransport(.replay, cassette: recorder.cassette))
        var page2 = list
        page2.query = [QueryItem("page", "2")]
        let error = try await #require(throws: CourierError.self) { try await client.send(page2) }
        #expect(error.code == .noRecordedExchange)
        #expect(error.category == .configuration)
        #expect(error.message == "No recorded exchange matches the request. GET http://api.test/users?page=2: the "
            + "cassette has 1 exchange; the nearest, GET http://api.test/users?page=1, differs in its query.")
        #expect(error.message(in: .simplifiedChinese).hasPrefix("没有与该请求匹配的录制记录~"))
        #expect(error.context.endpoint == "list")

        let other = Endpoint(name: "other", module: replayAPI, method: .delete, path: "/users/3")
        let otherError = try await #require(throws: CourierError.self) { try await client.send(other) }
        #expect(otherError.code == .noRecordedExchange)
        #expect(otherError.message.hasSuffix(
            "DELETE http://api.test/users/3: the cassette has 1 exchange, none for DELETE /users/3."))

        let empty = ReplayTransport(.replay)
        let emptyError = try await #require(throws: CourierError.self) { try await send(empty, get("/x")) }
        #expect(emptyError.code == .noRecordedExchange)
        #expect(emptyError.message.hasSuffix("GET http://api.test/x: the cassette is empty."))
    }

    @Test func matchingIgnoresChosenHeadersAndQueryItemsAndQueryOrder() async throws {
        var options = ReplayTransport.Options()
        options.matching.ignoredQueryItems = ["timestamp", "nonce"]
        options.matching.headers = .all(except: [.date, HTTPField.Name("X-Request-ID")!])
        let requestID = HTTPField.Name("X-Request-ID")!
        let recorder = ReplayTransport(.record(countingServer()), options: options)
        _ = try await send(recorder, get("/feed?a=1&b=2&timestamp=100&nonce=x",
                                         headers: [.accept: "application/json", .date: "Mon", requestID: "1"]))

        let player = ReplayTransport(.replay, cassette: recorder.cassette, options: options)
        let answer = try await send(player, get("/feed?nonce=y&b=2&timestamp=200&a=1",
                                                headers: [.accept: "application/json", .date: "Tue", requestID: "2"]))
        #expect(answer.0.status == .ok)

        // What is not ignored still has to match.
        let otherAccept = try await #require(throws: CourierError.self) {
            try await send(player, get("/feed?a=1&b=2", headers: [.accept: "application/xml"]))
        }
        #expect(otherAccept.code == .noRecordedExchange)
        #expect(otherAccept.message.hasSuffix("differs in its Accept header."))
        let otherQuery = try await #require(throws: CourierError.self) {
            try await send(player, get("/feed?a=1&b=3", headers: [.accept: "application/json"]))
        }
        #expect(otherQuery.code == .noRecordedExchange)
        #expect(otherQuery.message.hasSuffix("differs in its query."))
        let extraHeader = try await #require(throws: CourierError.self) {
            try await send(player, get("/feed?a=1&b=2", headers: [.accept: "application/json", .userAgent: "t"]))
        }
        #expect(extraHeader.code == .noRecordedExchange)
        #expect(extraHeader.message.hasSuffix("differs in its User-Agent header."))

        // By default headers play no part, but bodies do.
        let defaults = ReplayTransport(.replay, cassette: recorder.cassette)
        _ = try await send(defaults, get("/feed?a=1&b=2&timestamp=100&nonce=x", headers: [.accept: "text/plain"]))
        var post = get("/feed?a=1&b=2&timestamp=100&nonce=x")
        post.method = .post
        let postRecorder = ReplayTransport(.record(countingServer()))
        _ = try await send(postRecorder, post, body: Data("one".utf8))
        let postPlayer = ReplayTransport(.replay, cassette: postRecorder.cassette)
        _ = try await send(postPlayer, post, body: Data("one".utf8))
        let otherBody = try await #require(throws: CourierError.self) {
            try await send(postPlayer, post, body: Data("two".utf8))
        }
        #expect(otherBody.code == .noRecordedExchange)
        #expect(otherBody.message.hasSuffix("differs in its body."))
    }

    @Test func repeatedRequestsReplayInOrderThenRepeatTheLast() async throws {
        let recorder = ReplayTransport(.record(countingServer()))
        for _ in 1...2 { _ = try await send(recorder, get("/tick")) }
        #expect(recorder.cassette.exchanges.count == 2)

        let player = ReplayTransport(.replay, cassette: recorder.cassette)
        var seen: [Int64?] = []
        for _ in 1...3 { seen.append(try counter(try await send(player, get("/tick")))) }
        #expect(seen == [1, 2, 2])

        var strict = ReplayTransport.Options()
        strict.whenExhausted = .fail
        let strictPlayer = ReplayTransport(.replay, cassette: recorder.cassette, options: strict)
        #expect(try counter(try await send(strictPlayer, get("/tick"))) == 1)
        #expect(strictPlayer.unplayedExchanges.count == 1)
        #expect(try counter(try await send(strictPlayer, get("/tick"))) == 2)
        let error = try await #require(throws: CourierError.self) { try await send(strictPlayer, get("/tick")) }
        #expect(error.code == .noRecordedExchange)
        #expect(error.message.hasSuffix(
            "GET http://api.test/tick: all 2 of its recordings were already replayed and Options.whenExhausted is "
                + ".fail."))
    }

    @Test func replayOrRecordForwardsOnlyWhatTheCassetteLacks() async throws {
        let server = countingServer()
        let seed = ReplayTransport(.record(server))
        _ = try await send(seed, get("/a"))

        let transport = ReplayTransport(.replayOrRecord(server), cassette: seed.cassette)
        #expect(try counter(try await send(transport, get("/a"))) == 1)   // replayed
        #expect(try counter(try await send(transport, get("/b"))) == 1)   // forwarded and recorded
        #expect(try counter(try await send(transport, get("/b"))) == 1)   // replayed (repeat last)
        #expect(server.requests.map(\.head.path) == ["/a", "/b"])
        #expect(transport.cassette.exchanges.map(\.request.path) == ["/a", "/b"])

        var options = ReplayTransport.Options()
        options.whenExhausted = .fail
        let fresh = ReplayTransport(.replayOrRecord(server), cassette: transport.cassette, options: options)
        #expect(try counter(try await send(fresh, get("/b"))) == 1)       // replayed
        #expect(try counter(try await send(fresh, get("/b"))) == 2)       // exhausted: forwarded again
        #expect(fresh.cassette.exchanges.count == 3)
    }

    @Test func aRecordedTimeoutReplaysAsATimeout() async throws {
        let slow = InMemoryTransport { _, _ in
            try await Task.sleep(for: .seconds(60))
            return jsonResponse(#"{"code":0}"#)
        }
        var endpoint = Endpoint(name: "slow", module: replayAPI, path: "/slow")
        endpoint.timeout = .milliseconds(50)
        let recorder = ReplayTransport(.record(slow))
        let recording = try await #require(throws: CourierError.self) {
            try await CourierClient(transport: recorder).send(endpoint)
        }
        #expect(recording.code == .timedOut)
        let failure = try #require(recorder.cassette.exchanges.first?.failure)
        #expect(failure.transportFailure == .timedOut)

        let file = temporaryCassette()
        defer { removing(file) }
        try recorder.save(to: file)
        let player = ReplayTransport(.replay, cassette: try Cassette.load(from: file))
        let replayed = try await #require(throws: CourierError.self) {
            try await CourierClient(transport: player).send(endpoint)
        }
        #expect(replayed.code == .timedOut)
        #expect(replayed.context.stage == "transport")
    }

    @Test(arguments: TransportFailure.allCases.filter { $0 != .cancelled })
    func recordedFailuresReplayAsTheSameFailure(failure: TransportFailure) async throws {
        let recorder = ReplayTransport(.record(InMemoryTransport.failing(failure)))
        let original = try await #require(throws: CourierError.self) { try await send(recorder, get("/x")) }
        #expect(original.code == failure.code)
        #expect(recorder.cassette.exchanges.first?.failure?.transportFailure == failure)

        let loaded = try Cassette(jsonData: try recorder.cassette.jsonData())
        let replayed = try await #require(throws: CourierError.self) {
            try await send(ReplayTransport(.replay, cassette: loaded), get("/x"))
        }
        #expect(replayed.code == failure.code)
    }

    @Test func cancellationIsReportedAndNeverRecorded() async throws {
        let slow = InMemoryTransport { _, _ in
            try await Task.sleep(for: .seconds(60))
            return jsonResponse(#"{"code":0}"#)
        }
        let recorder = ReplayTransport(.record(slow))
        let task = Task { try await send(recorder, get("/slow")) }
        while slow.requests.isEmpty { await Task.yield() }
        task.cancel()
        let error = try #require(await task.result.failure as? CourierError)
        #expect(error.code == .cancelled)
        #expect(recorder.cassette.exchanges.isEmpty)

        let player = ReplayTransport(.replay, cassette: Cassette(exchanges: [
            Cassette.Exchange(request: get("/x"), response: HTTPResponse(status: .ok)),
        ]))
        let cancelled = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await send(player, get("/x"))
        }
        #expect((await cancelled.result.failure as? CourierError)?.code == .cancelled)
        #expect(player.unplayedExchanges.count == 1)
    }

    @Test func replayHonoursTheMaximumResponseSize() async throws {
        let player = ReplayTransport(.replay, cassette: Cassette(exchanges: [
            Cassette.Exchange(
                request: get("/big"), response: HTTPResponse(status: .ok), responseBody: Data(count: 100)),
        ]))
        let error = try await #require(throws: CourierError.self) {
            try await player.send(get("/big"), body: nil, options: TransportOptions(maximumResponseSize: 10))
        }
        #expect(error.code == .responseTooLarge)
    }

    @Test func secretsAreRedactedInTheCassetteButRedactedRecordingsStillMatch() async throws {
        let apiKey = HTTPField.Name("X-Api-Key")!
        let server = InMemoryTransport { _, _ in
            (HTTPResponse(status: .ok, headerFields: [.setCookie: "session=s3cr3t-cookie", .contentType: "text/plain"]),
             Data("hello".utf8))
        }
        let session = HTTPField.Name("X-Session-Token")!
        var options = ReplayTransport.Options()   // the default redaction policy: nothing listed by hand
        options.matching.headers = .all(except: [])
        let recorder = ReplayTransport(.record(server), options: options)
        let live = try await send(recorder, get("/me?access_token=t0k3n&lang=en&auth_token=4uth", headers: [
            .authorization: "Bearer t0k3n", .cookie: "id=c00k1e", apiKey: "k3y", .accept: "text/plain",
            session: "s3ss10n",
        ]))
        #expect(live.0.headerFields[.setCookie] == "session=s3cr3t-cookie")   // the caller sees the real answer

        let file = temporaryCassette()
        defer { removing(file) }
        try recorder.save(to: file)
        let text = try String(contentsOf: file, encoding: .utf8)
        for secret in ["t0k3n", "c00k1e", "k3y", "s3cr3t", "4uth", "s3ss10n"] { #expect(!text.contains(secret), "\(secret) leaked") }
        #expect(text.contains("access_token=REDACTED&lang=en&auth_token=REDACTED"))
        let exchange = try #require(recorder.cassette.exchanges.first)
        #expect(exchange.request.headerFields[.authorization] == RedactionPolicy.placeholder)
        #expect(exchange.request.headerFields[session] == RedactionPolicy.placeholder)
        #expect(exchange.request.headerFields[.accept] == "text/plain")

        // Another token still replays; the replayed cookie is the placeholder.
        let player = ReplayTransport(.replay, cassette: try Cassette.load(from: file), options: options)
        let replayed = try await send(player, get("/me?auth_token=x&lang=en&access_token=other", headers: [
            .authorization: "Bearer other", .cookie: "id=other", apiKey: "other", .accept: "text/plain",
            session: "other",
        ]))
        #expect(replayed.1 == Data("hello".utf8))
        #expect(replayed.0.headerFields[.setCookie] == RedactionPolicy.placeholder)

        // Redacted query values stay out of error messages.
        let miss = try await #require(throws: CourierError.self) {
            try await send(player, get("/you?access_token=hunter2"))
        }
        #expect(miss.code == .noRecordedExchange)
        #expect(miss.message.contains("GET http://api.test/you?access_token=REDACTED"))
        #expect(!miss.message.contains("hunter2"))
    }

    @Test(arguments: [
        ("", CourierError.Code.malformedInput, "The input is empty"),
        ("{\"version\": 1, \"exchanges\": [", .malformedInput, "line 1"),
        (#"{"version":2,"exchanges":[]}"#, .typeMismatch, "cassette format version 2 is not supported"),
        (#"{"version":1}"#, .missingValue, "exchanges"),
        (#"{"version":1,"exchanges":[{"request":{"method":"GET"}}]}"#, .typeMismatch, "exactly one of"),
        (#"{"version":1,"exchanges":[{"request":{"method":"G E T"},"failure":{"code":"timedOut"}}]}"#,
         .typeMismatch, "not an HTTP method"),
        (#"{"version":1,"exchanges":[{"request":{"method":"GET"},"response":{"status":99999}}]}"#,
         .typeMismatch, "not an HTTP status code"),
        (#"{"version":1,"exchanges":[{"request":{"method":"GET"},"failure":{"code":"explodedMildly"}}]}"#,
         .typeMismatch, "not a Courier error code"),
        (#"{"version":1,"exchanges":[{"request":{"method":"GET"},"response":{"status":200,"body":{"base64":"@@"}}}]}"#,
         .typeMismatch, "not valid base64"),
        (#"{"version":1,"exchanges":[{"request":{"method":"GET","headers":[{"name":"a b","value":"x"}]},"#
            + #""failure":{"number":1001}}]}"#,
         .typeMismatch, "not a valid header field name"),
    ])
    func corruptCassetteFilesFailWithAClearError(content: String, code: CourierError.Code, fragment: String) throws {
        let file = temporaryCassette()
        defer { removing(file) }
        try Data(content.utf8).write(to: file)
        let error = try #require(throws: CourierError.self) { try Cassette.load(from: file) }
        #expect(error.code == code)
        #expect(error.message.contains(file.path(percentEncoded: false)), "\(error.message)")
        #expect(error.message.contains(fragment), "\(error.message)")
    }

    /// A cassette names CourierTesting's own code by name or number, as it names the core's.
    @Test(arguments: [#""code":"noRecordedExchange""#, #""number":9007"#])
    func aCassetteReadsTheTestingModulesCode(_ failure: String) throws {
        let file = temporaryCassette()
        defer { removing(file) }
        try Data((#"{"version":1,"exchanges":[{"request":{"method":"GET"},"failure":{"#
            + failure + "}}]}").utf8).write(to: file)
        let cassette = try Cassette.load(from: file)
        guard case .failure(let recorded)? = cassette.exchanges.first?.outcome else {
            Issue.record("expected a failure, got \(cassette.exchanges)")
            return
        }
        #expect(recorded.code == .noRecordedExchange)
        #expect(recorded.error().code.number == 9007)
    }

    @Test func aMissingCassetteFileIsAConfigurationError() throws {
        let file = temporaryCassette()
        let error = try #require(throws: CourierError.self) { try Cassette.load(from: file) }
        #expect(error.code == .invalidConfiguration)
        #expect(error.message.contains(file.path(percentEncoded: false)))
    }
}

extension Result {
    fileprivate var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
