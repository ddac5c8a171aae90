#if Security
import CourierTesting
import Foundation
import HTTPTypes
import Testing
import CourierSecurity

@Suite struct ParameterSigningTests {
    static let signer = ParameterSigner(secret: "192006250b4c09247ec02edce69f6a2d")

    static func options(order: ParameterSigning.Order = .appended) -> ParameterSigning.Options {
        var options = ParameterSigning.Options()
        options.timestampField = "timestamp"
        options.nonceField = "nonce_str"
        options.order = order
        return options
    }

    static func text(_ value: Value) -> String {
        value.stringValue ?? value.int64Value.map(String.init) ?? ""
    }

    /// Plays the server: all query items plus the JSON body's members, verified with the same signer.
    static func verifyingServer() -> InMemoryTransport {
        InMemoryTransport { head, body in
            var items = QueryItem.decode(String(head.path?.split(separator: "?", maxSplits: 1).dropFirst().first ?? ""))
            if let body, !body.isEmpty, case .object(let object) = try JSONCodec().decode(body, hints: CodingHints()) {
                items += object.map { QueryItem($0.key, text($0.value)) }
            }
            do {
                try signer.verify(items)
                return jsonResponse(.ok, #"{"code":0}"#)
            } catch let error as CourierError {
                return jsonResponse(.forbidden, #"{"code":\#(error.code.number)}"#)
            }
        }
    }

    @Test(arguments: [ParameterSigning.Order.appended, .sorted])
    func getSignsTheQuery(_ order: ParameterSigning.Order) async throws {
        let time = ManualTime()
        let stage = ParameterSigning(signer: Self.signer, options: Self.options(order: order), now: { time.now },
                                     makeNonce: { "ibuaiVcKdpRxkhJA" })
        let transport = Self.verifyingServer()
        let endpoint = makeEndpoint(makeModule([stage]), method: .get, path: "/pay",
                                    query: [QueryItem("mch_id", "10000100"), QueryItem("appid", "wxd930ea5d5a258f4f")])
        _ = try await CourierClient(transport: transport).send(endpoint)
        let path = try #require(transport.requests.first?.head.path)
        let names = QueryItem.decode(String(path.split(separator: "?")[1])).map(\.name)
        #expect(names == (order == .appended
            ? ["mch_id", "appid", "timestamp", "nonce_str", "sign"]
            : ["appid", "mch_id", "nonce_str", "sign", "timestamp"]))
        let expected = Self.signer.signature(for: [
            QueryItem("appid", "wxd930ea5d5a258f4f"), QueryItem("mch_id", "10000100"),
            QueryItem("nonce_str", "ibuaiVcKdpRxkhJA"), QueryItem("timestamp", "1767225600"),
        ])
        #expect(path.contains("sign=" + expected))
    }

    @Test func postSignsQueryAndPayloadTogether() async throws {
        let stage = ParameterSigning(signer: Self.signer, options: Self.options())
        let transport = Self.verifyingServer()
        let endpoint = makeEndpoint(makeModule([stage]), method: .post, path: "/pay",
                                    query: [QueryItem("appid", "wxd930ea5d5a258f4f")],
                                    body: ["body": "test", "total_fee": 1, "device_info": "1000"])
        let reply = try await CourierClient(transport: transport).send(endpoint)
        #expect(reply.metadata.status == .ok)
        let body = try JSONCodec().decode(try #require(transport.requests.first?.body), hints: CodingHints())
        #expect(body["sign"]?.stringValue?.count == 32)
        #expect(body["timestamp"] != nil && body["nonce_str"] != nil)
    }

    @Test func commonParametersAreSignedToo() async throws {
        let common = CommonParameters(placement: .query, [.constant("app_key", "12345")])
        let stage = ParameterSigning(signer: Self.signer)
        let transport = Self.verifyingServer()
        var stack = SecurityStack()
        stack.commonParameters = common
        stack.parameterSigning = stage
        _ = try await CourierClient(transport: transport).send(makeEndpoint(makeModule().secured(stack), method: .get))
        #expect(transport.requests.first?.head.path?.contains("app_key=12345") == true)
    }

    @Test func verifierRejectsTamperingAndMissingSignatures() throws {
        var items = [QueryItem("a", "1"), QueryItem("b", "2")]
        items.append(QueryItem("sign", Self.signer.signature(for: items)))
        try Self.signer.verify(items)
        var tampered = items
        tampered[0].value = "9"
        let tamperedError = #expect(throws: CourierError.self) { try Self.signer.verify(tampered) }
        #expect(tamperedError?.code == .signatureInvalid)
        let error = #expect(throws: CourierError.self) { try Self.signer.verify(Array(items.dropLast())) }
        #expect(error?.code == .signatureMissing)
        let wrong = #expect(throws: CourierError.self) {
            try ParameterSigner(secret: "other").verify(items)
        }
        #expect(wrong?.code == .signatureInvalid)
        #expect(!String(describing: Self.signer).contains("192006250b4c"))
    }
}
#endif
