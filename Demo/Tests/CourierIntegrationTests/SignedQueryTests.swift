import Courier
import CourierDemoServer
import CourierSecurity
import Foundation
import HTTPTypes
import Testing

/// Parameter-signed calls against the demo server over real HTTP: the server verifies the signature over
/// the query and form body as it received them (parsed with Foundation, not Courier), so what was signed
/// must be byte for byte what was sent — numbers (`2.0`), booleans, arrays, nested objects, non-ASCII and
/// reserved characters included.
@Suite(.serialized) struct SignedQueryTests {
    static let parameters: Value.Object = [
        "price": 2.0, "ratio": 0.1, "huge": .double(1e21), "count": -42, "on": true, "off": false,
        "tags": ["swift", "café"], "filter": ["price": ["range": ["min": 1, "max": 9.5]], "q": "a&b=c+d%/?#"],
        "name": "名前 🚀 x", "nothing": .null,
    ]

    static let expected: [[String]] = [
        ["price", "2"], ["ratio", "0.1"], ["huge", "1e+21"], ["count", "-42"], ["on", "true"], ["off", "false"],
        ["tags[]", "swift"], ["tags[]", "café"], ["filter[price][range][min]", "1"],
        ["filter[price][range][max]", "9.5"], ["filter[q]", "a&b=c+d%/?#"], ["name", "名前 🚀 x"],
    ]

    static func module(_ api: DemoAPI, order: ParameterSigning.Order = .appended) -> APIModule {
        var options = ParameterSigning.Options()
        options.timestampField = "timestamp"
        options.nonceField = "nonce"
        options.order = order
        return APIModule(name: "signed", service: api.service,
                         interceptors: [ParameterSigning(signer: DemoSecurity.parameterSigner, options: options)])
    }

    /// The pairs the server echoed, without the signing fields.
    static func echoed(_ reply: Reply<Value>) throws -> [[String]] {
        let pairs = try #require(reply.value["data"]?["pairs"]?.arrayValue)
        return pairs.compactMap { pair -> [String]? in
            guard let name = pair["name"]?.stringValue, !["timestamp", "nonce", "sign"].contains(name) else { return nil }
            return [name, pair["value"]?.stringValue ?? ""]
        }
    }

    @Test(arguments: [HTTPRequest.Method.get, .delete, .post], [ParameterSigning.Order.appended, .sorted])
    func signedParametersVerifyOnTheServer(_ method: HTTPRequest.Method, _ order: ParameterSigning.Order) async throws {
        try await withDemoServer { _, api in
            let client = CourierClient(transport: FoundationTransport())
            try await Self.check(client, api, method, order)
        }
    }

    /// The same exchange over AsyncHTTPClient: what is signed is what that transport sends too.
    @Test(arguments: [HTTPRequest.Method.get, .post])
    func signedParametersVerifyOverAsyncHTTPClient(_ method: HTTPRequest.Method) async throws {
        try await TransportUnderTest.asyncHTTPClient.run { transport in
            try await withDemoServer { _, api in
                try await Self.check(CourierClient(transport: transport), api, method, .appended)
            }
        }
    }

    static func check(
        _ client: CourierClient, _ api: DemoAPI, _ method: HTTPRequest.Method, _ order: ParameterSigning.Order
    ) async throws {
        let endpoint = DemoSecurity.signedEcho(method: method, module: Self.module(api, order: order),
                                               parameters: Self.parameters)
        let reply = try await client.send(endpoint)
        #expect(reply.metadata.status == .ok)
        #expect(reply.value["code"] == 200)
        let echoed = try Self.echoed(reply)
        if order == .appended {
            #expect(echoed == Self.expected)
        } else {
            #expect(Set(echoed) == Set(Self.expected))
        }
    }

    @Test func aModuleConventionVerifiesToo() async throws {
        try await withDemoServer { _, api in
            var module = Self.module(api)
            module.parameterEncoding = ParameterEncoding(arrays: .indexed, objects: .dotted)
            let endpoint = DemoSecurity.signedEcho(module: module, parameters: ["ids": [1, 2], "f": ["a": 2.5]])
            let reply = try await CourierClient(transport: FoundationTransport()).send(endpoint)
            #expect(try Self.echoed(reply) == [["ids[0]", "1"], ["ids[1]", "2"], ["f.a", "2.5"]])
        }
    }

    @Test func anUnsignedCallIsRefused() async throws {
        try await withDemoServer { _, api in
            let module = APIModule(name: "unsigned", service: api.service)
            let endpoint = DemoSecurity.signedEcho(module: module, parameters: ["price": 2.0])
            let error = await #expect(throws: CourierError.self) {
                try await CourierClient(transport: FoundationTransport()).send(endpoint)
            }
            #expect(error?.code == .unauthorized)
            #expect(error?.context.status == 401)
        }
    }
}
