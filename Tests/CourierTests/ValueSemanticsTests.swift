import Courier
import Foundation
import HTTPTypes
import Testing

/// `CourierRequest`, `CourierResponse` and `Endpoint` keep their fields in a box copied on write: a copy shares
/// the box, and the first write to a shared box copies it. These tests write every property of a copy and check
/// that the original did not change, so a property whose write skips the copy fails here.
@Suite struct ValueSemanticsTests {
    private enum PageSize: OptionKey { static let defaultValue = 20 }
    private let service = APIService(name: "svc", baseURL: URL(string: "https://a.example")!)

    private func request() -> CourierRequest {
        var request = CourierRequest(
            head: HTTPRequest(method: .get, scheme: "https", authority: "a.example", path: "/users"),
            payload: ["page": 1], body: Data("{}".utf8), format: .json, timeout: .seconds(5),
            baseURL: URL(string: "https://a.example")!)
        request.head.headerFields[.accept] = "application/json"
        request.hints.messageType = "demo.Page"
        request.responseHints.rootName = "page"
        return request
    }

    /// Each write, applied to a copy, with the check that it shows in the copy.
    private typealias Write<T> = (name: String, apply: (inout T) -> Void, shows: (T) -> Bool)

    @Test func writingACopyOfARequestLeavesTheOriginal() {
        let writes: [Write<CourierRequest>] = [
            ("head", { $0.head.headerFields[.accept] = "text/xml" }, { $0.head.headerFields[.accept] == "text/xml" }),
            ("head.path", { $0.head.path = "/other" }, { $0.head.path == "/other" }),
            ("payload", { $0.payload = ["page": 2] }, { $0.payload == ["page": 2] }),
            ("body", { $0.body = Data("x".utf8) }, { $0.body == Data("x".utf8) }),
            ("format", { $0.format = .xml }, { $0.format == .xml }),
            ("hints", { $0.hints.messageType = "demo.Other" }, { $0.hints.messageType == "demo.Other" }),
            ("responseFormat", { $0.responseFormat = .protobuf }, { $0.responseFormat == .protobuf }),
            ("responseHints", { $0.responseHints.rootName = "other" }, { $0.responseHints.rootName == "other" }),
            ("timeout", { $0.timeout = .seconds(9) }, { $0.timeout == .seconds(9) }),
            ("isReplayable", { $0.isReplayable = false }, { !$0.isReplayable }),
            ("baseURL", { $0.baseURL = URL(string: "https://b.example")! }, { $0.baseURL?.host == "b.example" }),
            ("bodyStream", { $0.bodyStream = .data(Data("s".utf8)) }, { $0.bodyStream != nil }),
            ("responseSink", { $0.responseSink = CollectingSink(limit: 8) }, { $0.responseSink != nil }),
        ]
        for write in writes {
            let original = request()
            var copy = original
            write.apply(&copy)
            #expect(write.shows(copy), "\(write.name) was not written")
            #expect(!write.shows(original), "writing \(write.name) of a copy changed the original")
            #expect(original.head.headerFields[.accept] == "application/json" && original.head.path == "/users")
            #expect(original.payload == ["page": 1] && original.body == Data("{}".utf8) && original.format == .json)
            #expect(original.hints.messageType == "demo.Page" && original.responseHints.rootName == "page")
            #expect(original.timeout == .seconds(5) && original.isReplayable && original.baseURL?.host == "a.example")
            #expect(original.bodyStream == nil && original.responseSink == nil && original.responseFormat == nil)
        }
    }

    @Test func writingACopyOfAResponseLeavesTheOriginal() {
        let original = CourierResponse(
            head: HTTPResponse(status: .ok, headerFields: [.contentType: "application/json"]),
            body: Data(#"{"code":0}"#.utf8), value: ["code": 0], format: .json)
        let writes: [Write<CourierResponse>] = [
            ("head", { $0.head.status = .notFound }, { $0.head.status == .notFound }),
            (
                "head fields", { $0.head.headerFields[.contentType] = "text/xml" },
                { $0.head.headerFields[.contentType] == "text/xml" }
            ),
            ("body", { $0.body = Data() }, { $0.body.isEmpty }),
            ("value", { $0.value = ["code": 301] }, { $0.value == ["code": 301] }),
            ("format", { $0.format = .xml }, { $0.format == .xml }),
            ("source", { $0.source = .cache }, { $0.source == .cache }),
            ("failure", { $0.failure = CourierError(.notFound) }, { $0.failure?.code == .notFound }),
            ("cacheRejection", { $0.cacheRejection = "expired" }, { $0.cacheRejection == "expired" }),
            (
                "redirects",
                {
                    $0.redirects.append(
                        RedirectHop(
                            status: 301, from: URL(string: "https://a.example/x")!,
                            to: URL(string: "https://b.example/x")!,
                            method: .get))
                }, { $0.redirects.count == 1 }
            ),
        ]
        for write in writes {
            var copy = original
            write.apply(&copy)
            #expect(write.shows(copy), "\(write.name) was not written")
            #expect(!write.shows(original), "writing \(write.name) of a copy changed the original")
            #expect(original.head.status == .ok && original.head.headerFields[.contentType] == "application/json")
            #expect(original.body == Data(#"{"code":0}"#.utf8) && original.value == ["code": 0])
            #expect(original.format == .json && original.source == .network && original.failure == nil)
            #expect(original.cacheRejection == nil && original.redirects.isEmpty && original.succeeded)
        }
    }

    @Test func writingACopyOfAnEndpointLeavesTheOriginal() {
        let module = APIModule(name: "users", service: service)
        let original = Endpoint(name: "list", module: module, path: "/users", query: [QueryItem("page", "1")])
        let other = APIModule(name: "other", service: service)
        let writes: [Write<Endpoint>] = [
            ("name", { $0.name = "x" }, { $0.name == "x" }),
            ("module", { $0.module = other }, { $0.module.name == "other" }),
            ("method", { $0.method = .post }, { $0.method == .post }),
            ("path", { $0.path = "/x" }, { $0.path == "/x" }),
            ("query", { $0.query.append(QueryItem("q", "2")) }, { $0.query.count == 2 }),
            ("body", { $0.body = ["a": 1] }, { $0.body != nil }),
            ("rawBody", { $0.rawBody = Data("r".utf8) }, { $0.rawBody != nil }),
            ("bodyStream", { $0.bodyStream = .data(Data("s".utf8)) }, { $0.bodyStream != nil }),
            ("headers", { $0.headers[.accept] = "text/xml" }, { $0.headers[.accept] == "text/xml" }),
            ("requestFormat", { $0.requestFormat = .xml }, { $0.requestFormat == .xml }),
            ("responseFormat", { $0.responseFormat = .xml }, { $0.responseFormat == .xml }),
            ("requestMessage", { $0.requestMessage = "demo.A" }, { $0.requestMessage == "demo.A" }),
            ("responseMessage", { $0.responseMessage = "demo.B" }, { $0.responseMessage == "demo.B" }),
            ("responseSchema", { $0.responseSchema = "s" }, { $0.responseSchema == "s" }),
            ("responseShape", { $0.responseShape = .string }, { $0.responseShape != nil }),
            ("timeout", { $0.timeout = .seconds(3) }, { $0.timeout == .seconds(3) }),
            ("priority", { $0.priority = .high }, { $0.priority == .high }),
            ("tags", { $0.tags.insert("t") }, { $0.tags == ["t"] }),
            ("interceptors", { $0.interceptors.append(SetHeaders([:])) }, { $0.interceptors.count == 1 }),
            ("isReplayable", { $0.isReplayable = false }, { !$0.isReplayable }),
            ("options", { $0.options[PageSize.self] = 50 }, { $0.options[PageSize.self] == 50 }),
            ("requestHints", { $0.requestHints.rootName = "root" }, { $0.requestHints.rootName == "root" }),
        ]
        for write in writes {
            var copy = original
            write.apply(&copy)
            #expect(write.shows(copy), "\(write.name) was not written")
            #expect(!write.shows(original), "writing \(write.name) of a copy changed the original")
            #expect(original.name == "list" && original.module.name == "users" && original.method == .get)
            #expect(original.path == "/users" && original.query == [QueryItem("page", "1")] && original.tags.isEmpty)
            #expect(original.interceptors.isEmpty && original.headers.isEmpty && original.requestHints.rootName == nil)
            #expect(original.options[PageSize.self] == 20)
        }
    }

    /// Copies handed to concurrent tasks are written at the same time, each in its own box.
    @Test func copiesWrittenConcurrentlyStayApart() async {
        let original = request()
        let paths = await withTaskGroup(of: (Int, String?, String?).self) { group in
            for index in 0..<64 {
                group.addTask {
                    var copy = original
                    copy.head.path = "/users/\(index)"
                    copy.head.headerFields[.accept] = "index/\(index)"
                    return (index, copy.head.path, copy.head.headerFields[.accept])
                }
            }
            var seen: [Int: (String?, String?)] = [:]
            for await (index, path, accept) in group { seen[index] = (path, accept) }
            return seen
        }
        for index in 0..<64 {
            #expect(paths[index]?.0 == "/users/\(index)" && paths[index]?.1 == "index/\(index)")
        }
        #expect(original.head.path == "/users" && original.head.headerFields[.accept] == "application/json")
    }

    /// `print` and `dump` show the fields, not the box they are kept in.
    @Test func printingShowsTheFields() {
        let endpoint = Endpoint(name: "list", module: APIModule(name: "users", service: service), path: "/users")
        let printed = [
            String(describing: request()), String(describing: CourierResponse(status: .ok, value: ["code": 0])),
            String(describing: endpoint),
        ]
        #expect(printed[0].hasPrefix("CourierRequest(head: (GET) https://a.example/users, payload: Optional("))
        #expect(printed[1].hasPrefix("CourierResponse(head: 200 OK, body: 0 bytes, value: Optional("))
        #expect(printed[2].hasPrefix(#"Endpoint(name: "list", module: "#))
        for text in printed { #expect(!text.contains("CopyOnWriteBox"), "\(text)") }
    }
}
