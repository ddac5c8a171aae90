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
        return failures
    }
}
