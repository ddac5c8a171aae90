#if Security
import Crypto
import CourierTesting
import Foundation
import HTTPTypes
import Testing
import CourierSecurity

/// What is signed is what is sent: a client with ``ParameterSigning`` (and ``RequestSigning``) sends GETs,
/// DELETEs, form POSTs and JSON POSTs carrying numbers, booleans, arrays, nested objects and non-ASCII text;
/// the played server parses the raw query and body text with its own parser, recomputes the MD5 signature
/// independently, checks it with the library's verifier too, and records the pairs it received.
@Suite struct ParameterRenderingSigningTests {
    static let secret = "192006250b4c09247ec02edce69f6a2d"
    static let signer = ParameterSigner(secret: secret)
    static let key = SigningKey(id: "k1", secret: "request-signing-secret")

    static let payload: Value = [
        "price": 2.0, "ratio": 0.1, "huge": .double(1e21), "zero": .double(-0.0), "count": -42, "big": .uint(.max),
        "on": true, "off": false, "nothing": .null,
        "tags": ["swift", "café"], "filter": ["price": ["range": ["min": 1, "max": 9.5]], "q": "a&b=c+d%"],
        "name": "名前 🚀", "empty": "",
    ]

    /// The pairs a server must receive for ``payload`` (default ``ParameterEncoding``), in order.
    static let expectedPairs: [QueryItem] = [
        QueryItem("price", "2"), QueryItem("ratio", "0.1"), QueryItem("huge", "1e+21"), QueryItem("zero", "0"),
        QueryItem("count", "-42"), QueryItem("big", "18446744073709551615"), QueryItem("on", "true"),
        QueryItem("off", "false"), QueryItem("tags[]", "swift"), QueryItem("tags[]", "café"),
        QueryItem("filter[price][range][min]", "1"), QueryItem("filter[price][range][max]", "9.5"),
        QueryItem("filter[q]", "a&b=c+d%"), QueryItem("name", "名前 🚀"), QueryItem("empty", ""),
    ]

    // MARK: An independent server

    /// Percent-decoding written apart from the library's: `%XX` escapes to bytes, `+` as a space when asked.
    static func decode(_ text: Substring, plusAsSpace: Bool) -> String {
        var bytes: [UInt8] = []
        let utf8 = Array(text.utf8)
        var i = 0
        while i < utf8.count {
            if utf8[i] == UInt8(ascii: "%"), i + 2 < utf8.count,
               let byte = UInt8(String(decoding: utf8[(i + 1)...(i + 2)], as: UTF8.self), radix: 16) {
                bytes.append(byte)
                i += 3
            } else {
                bytes.append(plusAsSpace && utf8[i] == UInt8(ascii: "+") ? UInt8(ascii: " ") : utf8[i])
                i += 1
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `a=1&b=2` → pairs, decoded by ``decode(_:plusAsSpace:)``.
    static func parse(_ text: Substring, plusAsSpace: Bool) -> [QueryItem] {
        text.split(separator: "&").map { segment in
            let parts = segment.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            return QueryItem(decode(parts[0], plusAsSpace: plusAsSpace),
                             parts.count > 1 ? decode(parts[1], plusAsSpace: plusAsSpace) : nil)
        }
    }

    /// The default scheme recomputed by hand: non-empty pairs but `sign`, sorted by name then value (bytes),
    /// `k=v` joined with `&`, `&key=SECRET`, MD5, upper-case hex.
    static func independentSignature(_ pairs: [QueryItem]) -> String {
        let signed = pairs.filter { $0.name != "sign" && !($0.value ?? "").isEmpty }.sorted { a, b in
            a.name != b.name ? Array(a.name.utf8).lexicographicallyPrecedes(Array(b.name.utf8))
                : Array((a.value ?? "").utf8).lexicographicallyPrecedes(Array((b.value ?? "").utf8))
        }
        let text = (signed.map { $0.name + "=" + ($0.value ?? "") } + ["key=" + secret]).joined(separator: "&")
        return Insecure.MD5.hash(data: Data(text.utf8)).map { String(format: "%02X", $0) }.joined()
    }

    /// What the played server saw.
    final class Received: Sendable {
        let pairs = Locked<[[QueryItem]]>([])
        var all: [[QueryItem]] { pairs.withLock { $0 } }
    }

    /// Verifies both signatures from the request as received; answers 200 or 403 with the failure.
    static func server(_ received: Received, time: ManualTime) -> InMemoryTransport {
        let verifier = SignatureVerifier(keys: [key], now: { time.now })
        return InMemoryTransport { head, body in
            let query = (head.path ?? "").split(separator: "?", maxSplits: 1).dropFirst().first ?? ""
            var pairs = parse(query, plusAsSpace: false)
            let type = head.headerFields[.contentType] ?? ""
            if let body, !body.isEmpty {
                if type.hasPrefix("application/x-www-form-urlencoded") {
                    pairs += parse(Substring(String(decoding: body, as: UTF8.self)), plusAsSpace: true)
                } else if type.hasPrefix("application/json"),
                          case .object(let object) = try JSONCodec().decode(body, hints: CodingHints()) {
                    // A JSON body's members are signed as the pairs ParameterEncoding makes of them.
                    pairs += try ParameterEncoding().pairs(object)
                }
            }
            received.pairs.withLock { $0.append(pairs) }
            do {
                _ = try verifier.verify(head, body: body)
                try signer.verify(pairs)
            } catch let error as CourierError {
                return jsonResponse(.forbidden, #"{"code":\#(error.code.number)}"#)
            }
            let sent = pairs.last { $0.name == "sign" }?.value
            guard sent == independentSignature(pairs) else { return jsonResponse(.forbidden, #"{"code":-1}"#) }
            return jsonResponse(.ok, #"{"code":0}"#)
        }
    }

    static func stages(
        order: ParameterSigning.Order, placement: ParameterSigning.Placement = .automatic, time: ManualTime
    ) -> [any Interceptor] {
        var options = ParameterSigning.Options()
        options.timestampField = "timestamp"
        options.nonceField = "nonce_str"
        options.order = order
        options.placement = placement
        return [
            ParameterSigning(signer: signer, options: options, now: { time.now }, makeNonce: { "nonce+ü" }),
            RequestSigning(key: key, now: { time.now }),
        ]
    }

    /// Sends `endpoint` through a module with the signing stages; returns what the server received.
    static func exchange(
        _ method: HTTPRequest.Method, format: ContentFormat = .json, order: ParameterSigning.Order = .appended,
        placement: ParameterSigning.Placement = .automatic, extra: [any Interceptor] = [],
        query: [QueryItem] = [QueryItem("appid", "wx d+1")], payload: Value = payload
    ) async throws -> (pairs: [QueryItem], request: HTTPRequest, body: Data?) {
        let time = ManualTime()
        let received = Received()
        let transport = server(received, time: time)
        var endpoint = makeEndpoint(makeModule(extra + stages(order: order, placement: placement, time: time)),
                                    method: method, path: "/pay", query: query, body: payload)
        endpoint.requestFormat = format
        let reply = try await CourierClient(transport: transport).send(endpoint)
        #expect(reply.metadata.status == .ok)
        let request = try #require(transport.requests.first)
        return (try #require(received.all.first), request.head, request.body)
    }

    static func withoutSigningFields(_ pairs: [QueryItem]) -> [QueryItem] {
        pairs.filter { !["sign", "timestamp", "nonce_str", "appid"].contains($0.name) }
    }

    @Test(arguments: [HTTPRequest.Method.get, .delete], [ParameterSigning.Order.appended, .sorted])
    func bodilessQueriesAreSignedAsSent(_ method: HTTPRequest.Method, _ order: ParameterSigning.Order) async throws {
        let (pairs, head, body) = try await Self.exchange(method, order: order)
        #expect(body == nil)
        let path = try #require(head.path)
        #expect(path.contains("price=2&"))
        #expect(!path.contains("2.0"))
        #expect(path.contains("appid=wx%20d%2B1"))
        #expect(pairs.contains(QueryItem("appid", "wx d+1")))
        #expect(pairs.contains(QueryItem("nonce_str", "nonce+ü")))
        if order == .appended {
            #expect(Self.withoutSigningFields(pairs) == Self.expectedPairs)
            #expect(pairs.last?.name == "sign")
        } else {
            #expect(Set(Self.withoutSigningFields(pairs)) == Set(Self.expectedPairs))
            let names = pairs.map(\.name)
            #expect(names == names.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) })
        }
    }

    @Test(arguments: [ParameterSigning.Order.appended, .sorted])
    func formBodiesAreSignedAsSent(_ order: ParameterSigning.Order) async throws {
        let (pairs, head, body) = try await Self.exchange(.post, format: .form, order: order)
        #expect(head.headerFields[.contentType] == "application/x-www-form-urlencoded")
        let text = String(decoding: try #require(body), as: UTF8.self)
        #expect(text.contains("price=2&"))
        #expect(text.contains("sign="))
        #expect(text.contains("nonce_str=nonce%2B%C3%BC"))
        #expect(head.path == "/pay?appid=wx%20d%2B1")
        #expect(Set(Self.withoutSigningFields(pairs)) == Set(Self.expectedPairs))
        // The body as sent is the renderer's text of the payload plus the added fields.
        var payload = try #require(Self.payload.objectValue)
        payload.append("timestamp", "1767225600")
        payload.append("nonce_str", "nonce+ü")
        if order == .appended {
            let signature = try #require(pairs.last { $0.name == "sign" }?.value)
            #expect(text == (try ParameterEncoding().render(payload)) + "&sign=" + signature)
        }
    }

    @Test func formFieldsCanGoToTheQuery() async throws {
        let (pairs, head, _) = try await Self.exchange(.post, format: .form, placement: .query)
        let path = try #require(head.path)
        #expect(path.contains("timestamp=1767225600"))
        #expect(path.contains("&sign="))
        #expect(Set(Self.withoutSigningFields(pairs)) == Set(Self.expectedPairs))
    }

    @Test func jsonBodiesSignTheRenderedMembers() async throws {
        let (pairs, _, body) = try await Self.exchange(.post, format: .json)
        let value = try JSONCodec().decode(try #require(body), hints: CodingHints())
        #expect(value["sign"]?.stringValue?.count == 32)
        #expect(Set(Self.withoutSigningFields(pairs)) == Set(Self.expectedPairs))
    }

    @Test func commonParametersAreRenderedAndSignedTheSameWay() async throws {
        let common = CommonParameters(placement: .query, [
            .constant("version", 1.0), .constant("channels", ["a", "b"]), .constant("geo", ["lat": 31.5]),
        ])
        let (pairs, head, _) = try await Self.exchange(.get, extra: [common], payload: ["q": "ü"])
        #expect(head.path?.hasPrefix("/pay?appid=wx%20d%2B1&version=1&channels%5B%5D=a&channels%5B%5D=b&geo%5Blat%5D=31.5&q=%C3%BC") == true)
        #expect(pairs.contains(QueryItem("geo[lat]", "31.5")))
    }

    @Test func aModuleConventionIsSignedAsSent() async throws {
        let time = ManualTime()
        let received = Received()
        var module = makeModule(Self.stages(order: .appended, time: time))
        module.parameterEncoding = ParameterEncoding(arrays: .repeated, objects: .dotted, nulls: .empty)
        let endpoint = makeEndpoint(module, method: .get, path: "/pay",
                                    body: ["ids": [1, 2], "f": ["a": ["b": true]], "none": .null])
        let transport = Self.server(received, time: time)
        _ = try await CourierClient(transport: transport).send(endpoint)
        #expect(transport.requests.first?.head.path?.hasPrefix("/pay?ids=1&ids=2&f.a.b=true&none=&timestamp=") == true)
        #expect(Array(try #require(received.all.first).prefix(4))
            == [QueryItem("ids", "1"), QueryItem("ids", "2"), QueryItem("f.a.b", "true"), QueryItem("none", "")])
    }

    @Test func aForgedValueIsRejected() async throws {
        let time = ManualTime()
        let received = Received()
        let server = Self.server(received, time: time)
        // A stage between parameter signing and request signing that changes the rendering breaks the
        // parameter signature: the check is real.
        struct Rewrite: Interceptor {
            var role: InterceptorRole { .network }
            func intercept(_ request: CourierRequest, context: InterceptorContext, next: InterceptorNext) async throws
                -> CourierResponse {
                var request = request
                request.head.path = request.head.path?.replacingOccurrences(of: "price=2&", with: "price=2.0&")
                return try await next(request)
            }
        }
        let stages = Self.stages(order: .appended, time: time)
        let endpoint = makeEndpoint(makeModule([stages[0], Rewrite(), stages[1]]),
                                    method: .get, path: "/pay", body: ["price": 2.0])
        let error = await #expect(throws: CourierError.self) { try await CourierClient(transport: server).send(endpoint) }
        #expect(error?.code == .forbidden)
        #expect(error?.context.status == 403)
    }
}
#endif
