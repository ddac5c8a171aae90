import ArgumentParser
import Courier
import CourierDemoServer
import HTTPTypes
import Foundation

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run the demo server on 127.0.0.1 until interrupted.")

    @Option(help: "The port, 0 to 65535 (0: any free port).")
    var port: String = "8080"

    func run() async throws {
        let port: Int
        do {
            port = try Arguments.integer(self.port, option: "--port", in: 0...65_535)
        } catch {
            throw fail(error)
        }
        let server = try await DemoServer.start(.init(port: port))
        print("demo server listening on \(server.baseURL)  (try: courier send GET \(server.baseURL)/users/1)")
        while !Task.isCancelled { try await Task.sleep(for: .seconds(3600)) }
        await server.stop()
    }
}

struct Demo: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Start the demo server in process and take a scripted tour through the full chain.")

    @Option(help: "Language of error messages: en or zh (both are always shown for errors).")
    var language: String = "en"

    func run() async throws {
        let server = try await DemoServer.start()
        let tour = Tour(server: server)
        let failures = await tour.run()
        await server.stop()
        print("")
        if failures == 0 {
            print("Tour complete: every step behaved as expected.")
        } else {
            print("Tour finished with \(failures) unexpected result(s).")
            throw ExitCode(1)
        }
    }
}

/// `12.3 ms`.
func milliseconds(_ duration: Duration) -> String {
    let ms = Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
    return "\((ms * 10).rounded() / 10) ms"
}

/// The scripted tour. Each step states what it expects; a step that does not get it counts as a failure.
struct Tour {
    let server: DemoServer
    let api: DemoAPI
    let client: CourierClient

    init(server: DemoServer) {
        self.server = server
        var api = DemoAPI(baseURL: server.baseURL)
        api.users.interceptors = [SetHeaders([.userAgent: "courier-demo/1.0"])]
        self.api = api
        self.client = CourierClient(configuration: .init(interceptors: [RequestID()], codecs: DemoCodecs.make()))
    }

    func heading(_ number: Int, _ title: String) {
        print("")
        print("━━ \(number). \(title)")
    }

    func show(_ trace: CallTrace?) {
        guard let trace else { return }
        for line in trace.description.split(separator: "\n") { print("   │ \(line)") }
    }

    func show(_ error: CourierError) {
        show(error.trace)
        print("   ✗ \(error)")
        print("     \(error.message(in: .simplifiedChinese))")
    }

    /// Runs a call expected to succeed; returns false when it failed.
    func expectSuccess<T: Sendable>(_ call: () async throws -> Reply<T>, _ describe: (T) -> String) async -> Bool {
        do {
            let reply = try await call()
            show(reply.metadata.trace)
            print("   ✓ \(reply.metadata.status.code) from \(reply.metadata.source) in \(milliseconds(reply.metadata.duration)): \(describe(reply.value))")
            return true
        } catch let error as CourierError {
            show(error)
            return false
        } catch {
            print("   ✗ \(error)")
            return false
        }
    }

    /// Runs a call expected to fail with `code`; returns false otherwise.
    func expectFailure<T: Sendable>(_ code: CourierError.Code, _ call: () async throws -> Reply<T>) async -> Bool {
        do {
            let reply = try await call()
            show(reply.metadata.trace)
            print("   ✗ expected \(code), got a \(reply.metadata.status.code) answer")
            return false
        } catch let error as CourierError {
            show(error)
            return error.code == code
        } catch {
            print("   ✗ \(error)")
            return false
        }
    }

    func run() async -> Int {
        print("Courier demo — server on \(server.baseURL)")
        print("Chain of GET /users/1: \(client.pipeline(for: api.user(id: 1)).stageNames.joined(separator: " → "))")
        var failures = 0
        let traced = CallOptions(trace: true)

        heading(1, "A typed call: GET /users/1 decoded into DemoAPI.UserEnvelope")
        if !(await expectSuccess({ try await client.send(api.user(id: 1), decoding: DemoAPI.UserEnvelope.self, options: traced) },
                                 { "User(id: \($0.data.id), name: \($0.data.name), city: \($0.data.address?.city ?? "-"))" })) {
            failures += 1
        }

        heading(2, "The same call decoded raw, as a Value")
        if !(await expectSuccess({ try await client.send(api.user(id: 1), options: traced) }, { render($0) })) {
            failures += 1
        }

        heading(3, "A business error: GET /users/404404 → code 301, mapped to DemoAPI.UserError.userNotFound")
        do {
            _ = try await client.send(api.user(id: 404404), options: traced)
            print("   ✗ expected a business error")
            failures += 1
        } catch let error as CourierError {
            show(error)
            if case .userNotFound? = error.business(as: DemoAPI.UserError.self) {
                print("   → switch error.business(as: UserError.self) { case .userNotFound: … } matched")
            } else {
                failures += 1
            }
        } catch {
            failures += 1
        }

        heading(4, "An HTTP error: GET /nope → 404")
        if !(await expectFailure(.notFound) {
            try await client.send(Endpoint(name: "missing", module: api.users, path: "/nope"), options: traced)
        }) { failures += 1 }

        heading(5, "A timeout: GET /delay/3000 with a 500 ms timeout")
        if !(await expectFailure(.timedOut) {
            try await client.send(api.slow(milliseconds: 3000, timeout: .milliseconds(500)), options: traced)
        }) { failures += 1 }

        heading(6, "A cancelled call: GET /delay/5000, cancelled by id after 200 ms")
        let call = client.dispatch(api.slow(milliseconds: 5000), options: traced)
        print("   dispatched call \(call.id); running: \(client.runningCalls.map { "\($0.id) \($0.module)/\($0.endpoint)" })")
        try? await Task.sleep(for: .milliseconds(200))
        client.cancel(call.id)
        if !(await expectFailure(.cancelled) { try await call.reply }) { failures += 1 }

        failures += await runExtensions(traced: traced)
        return failures
    }
}
