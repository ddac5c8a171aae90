import Courier
import CourierDemoServer
import CourierSchema

/// The codecs of the demo's client.
enum DemoCodecs {
    static func make() -> CodecSet { DemoAPI.codecs }
}

extension Tour {
    /// Steps of the tour contributed by the codec, schema, security and cache work.
    func runExtensions(traced: CallOptions) async -> Int {
        var failures = 0
        var step = 7

        heading(step, "The same call in every wire format: GET /users?page=1&size=3 as " + formats.map(\.name).joined(separator: ", "))
        var models: [DemoAPI.UserPageEnvelope] = []
        for format in formats {
            print("   [\(format)]")
            let ok = await expectSuccess({
                let reply = try await client.send(api.users(page: 1, size: 3, format: format), decoding: DemoAPI.UserPageEnvelope.self,
                                                  options: traced)
                models.append(reply.value)
                return reply
            }, { "\($0.data.users.count) users: \($0.data.users.map(\.name).joined(separator: ", ")) (\(format) body)" })
            if !ok { failures += 1 }
        }
        if models.count == formats.count, Set(models).count == 1 {
            print("   → all \(formats.count) formats decoded to equal typed models")
        } else {
            failures += 1
        }
        step += 1

        heading(step, "A response rejected by its JSON Schema: GET /invalid/users/2 (age -1, zip \"ABCDE\")")
        do {
            var validated = api
            validated.users.interceptors.append(SchemaValidation(registry: try DemoAPI.schemaRegistry()))
            let validatingClient = CourierClient(configuration: .init(interceptors: [RequestID()], codecs: DemoCodecs.make()))
            if !(await expectFailure(.schemaViolation) {
                try await validatingClient.send(validated.invalidUser(id: 2), options: traced)
            }) {
                failures += 1
            }
            do {
                _ = try await validatingClient.send(validated.invalidUser(id: 2))
            } catch let error as CourierError {
                for violation in error.violations {
                    print("     • \(violation.message)   [\(violation.keywordLocation)]")
                }
            }
        } catch {
            print("   ✗ \(error)")
            failures += 1
        }
        step += 1
        failures += await runSecuritySteps(from: step)
        step += 3
        failures += await runCacheSteps(from: step)
        step += 4
        failures += await runTransferSteps(from: step)
        return failures
    }

    var formats: [ContentFormat] {
        [ContentFormat.json, .xml, .protobuf].filter { DemoCodecs.make().codec(for: $0) != nil }
    }
}
