import Courier
import CourierResilience
import CourierDemoServer
import HTTPTypes
import Foundation
import Testing

/// Starts a demo server for one test and stops it afterwards.
func withDemoServer<T>(_ body: (DemoServer, DemoAPI) async throws -> T) async throws -> T {
    let server = try await DemoServer.start()
    do {
        let result = try await body(server, DemoAPI(baseURL: server.baseURL))
        await server.stop()
        return result
    } catch {
        await server.stop()
        throw error
    }
}

@Suite(.serialized) struct LoopbackTests {
    @Test func typedAndRawCallsOverRealHTTP() async throws {
        try await withDemoServer { server, api in
            let client = CourierClient()
            let typed = try await client.send(api.user(id: 1), decoding: DemoAPI.UserEnvelope.self)
            #expect(typed.value.code == 200)
            #expect(typed.value.data.id == 1)
            #expect(typed.metadata.status == .ok)
            #expect(typed.metadata.format == .json)
            let raw = try await client.send(api.user(id: 1))
            #expect(raw.value["data"]?["name"]?.stringValue == typed.value.data.name)
            let page = try await client.send(api.users(page: 2, size: 5), decoding: DemoAPI.UserPageEnvelope.self)
            #expect(page.value.data.users.map(\.id) == [6, 7, 8, 9, 10])
            #expect(server.state.requestCount == 3)
        }
    }

    @Test func postCreatesAndBusinessCodesMapToTheModuleEnum() async throws {
        try await withDemoServer { _, api in
            let client = CourierClient()
            let created = try await client.send(
                try api.createUser(.init(name: "Grace Hopper", email: "grace@example.com", age: 85, tags: ["navy"])),
                decoding: DemoAPI.UserEnvelope.self)
            #expect(created.metadata.status == .created)
            #expect(created.value.data.name == "Grace Hopper")
            let taken = try await #require(throws: CourierError.self) {
                try await client.send(try api.createUser(.init(name: "Grace Hopper", email: "g@x.io", age: 1)))
            }
            #expect(taken.code == .business)
            #expect(taken.business(as: DemoAPI.UserError.self) == .nameTaken)
            let missing = try await #require(throws: CourierError.self) { try await client.send(api.user(id: 404404)) }
            #expect(missing.code == .business)
            #expect(missing.business(as: DemoAPI.UserError.self) == .userNotFound)
            #expect(missing.message == "The user does not exist.")
            #expect(missing.message(in: .simplifiedChinese) == "用户不存在~")
            #expect(missing.context.module == "user")
            #expect(missing.context.endpoint == "getUser")
        }
    }

    @Test func httpErrorStatusesBecomeTheirCodes() async throws {
        try await withDemoServer { _, api in
            let client = CourierClient()
            let notFound = try await #require(throws: CourierError.self) {
                try await client.send(Endpoint(name: "missing", module: api.users, path: "/nope"))
            }
            #expect(notFound.code == .notFound)
            #expect(notFound.context.status == 404)
            let unavailable = try await #require(throws: CourierError.self) { try await client.send(api.status(503)) }
            #expect(unavailable.code == .serviceUnavailable)
        }
    }

    @Test func aDelayLongerThanTheTimeoutTimesOut() async throws {
        try await withDemoServer { _, api in
            let started = ContinuousClock.now
            let error = try await #require(throws: CourierError.self) {
                try await CourierClient().send(api.slow(milliseconds: 60_000, timeout: .milliseconds(300)))
            }
            #expect(error.code == .timedOut)
            #expect(error.category == .transport)
            let elapsed = ContinuousClock.now - started
            #expect(elapsed >= .milliseconds(300))
            #expect(elapsed < .seconds(30))     // long before the server's minute, on a loaded machine too
        }
    }

    @Test func aClosedPortCannotConnect() async throws {
        let closed = try ClosedPort()
        let module = APIModule(name: "gone", service: APIService(name: "gone", baseURL: closed.baseURL))
        let error = try await #require(throws: CourierError.self) {
            try await CourierClient().send(Endpoint(name: "ping", module: module, path: "/users/1"))
        }
        #expect(error.code == .cannotConnect)
        withExtendedLifetime(closed) {}
    }

    @Test func tlsAgainstAPlainHTTPServerIsATLSFailure() async throws {
        try await withDemoServer { server, _ in
            let module = APIModule(name: "tls", service: APIService(name: "tls", baseURL: URL(string: "https://127.0.0.1:\(server.port)")!))
            let error = try await #require(throws: CourierError.self) {
                try await CourierClient().send(Endpoint(name: "ping", module: module, path: "/users/1"))
            }
            #expect(error.code == .tlsFailure, "\(error.debugDescription)")
        }
    }

    @Test func anUnresolvableHostIsNotFound() async throws {
        let module = APIModule(name: "nowhere", service: APIService(name: "nowhere", baseURL: URL(string: "http://courier-test.invalid:8080")!))
        var endpoint = Endpoint(name: "ping", module: module, path: "/")
        endpoint.timeout = .seconds(20)
        let error = try await #require(throws: CourierError.self) { try await CourierClient().send(endpoint) }
        #expect(error.code == .hostNotFound)
    }

    @Test func cancellingByIDStopsTheExchange() async throws {
        try await withDemoServer { server, api in
            let client = CourierClient()
            let call = client.dispatch(api.slow(milliseconds: 60_000))
            while server.state.delays.started < 1 { try await Task.sleep(for: .milliseconds(10)) }
            let started = ContinuousClock.now
            #expect(client.cancel(call.id))
            let error = try await #require(throws: CourierError.self) { try await call.reply }
            #expect(error.code == .cancelled)
            // Well before the server's minute (generous: a loaded machine may pause this task for seconds).
            #expect(ContinuousClock.now - started < .seconds(30))
            #expect(client.runningCalls.isEmpty)
        }
    }

    @Test func cancellingAModuleLeavesOtherModulesRunning() async throws {
        try await withDemoServer { server, api in
            let client = CourierClient()
            let userCalls = (0..<3).map { _ in client.dispatch(api.slow(milliseconds: 10_000)) }
            var topicSlow = api.slow(milliseconds: 300)
            topicSlow.module = api.topics
            let topicCall = client.dispatch(topicSlow)
            while server.state.delays.started < 4 { try await Task.sleep(for: .milliseconds(10)) }
            #expect(client.cancelAll(module: "user") == 3)
            for call in userCalls {
                let error = try await #require(throws: CourierError.self) { try await call.reply }
                #expect(error.code == .cancelled)
            }
            // The server saw the three connections go and stopped their work.
            #expect(await waitUntil { server.state.delays.cancelled == 3 })
            let reply = try await topicCall.reply
            #expect(reply.value["data"]?["waited"] == 300)
            #expect(server.state.delays.finished == 1)
        }
    }

    @Test func cancellingAllStopsEveryExchange() async throws {
        try await withDemoServer { server, api in
            let client = CourierClient()
            var topicSlow = api.slow(milliseconds: 60_000)
            topicSlow.module = api.topics
            let calls = (0..<3).map { _ in client.dispatch(api.slow(milliseconds: 60_000)) } + [client.dispatch(topicSlow)]
            #expect(await waitUntil { server.state.delays.started == 4 })
            #expect(client.runningCalls.count == 4)
            let started = ContinuousClock.now
            #expect(client.cancelAll() == 4)
            for call in calls {
                let error = try await #require(throws: CourierError.self) { try await call.reply }
                #expect(error.code == .cancelled)
            }
            #expect(ContinuousClock.now - started < .seconds(30))
            #expect(client.runningCalls.isEmpty)
            #expect(await waitUntil { server.state.delays.cancelled == 4 })
            #expect(server.state.delays.finished == 0)
        }
    }

    @Test func topicsFetchListAndCreateInEveryFormat() async throws {
        try await withDemoServer { server, api in
            let client = CourierClient(configuration: .init(codecs: DemoAPI.codecs))
            for format in [ContentFormat.json, .xml, .protobuf] {
                let one = try await client.send(api.topic(id: 2, format: format), decoding: DemoAPI.TopicEnvelope.self)
                #expect(one.metadata.format == format)
                #expect(one.value.data.id == 2)
                #expect(one.value.data.tags == ["xml", "protobuf"])
                let page = try await client.send(api.topics(page: 3, size: 10, format: format),
                                                 decoding: DemoAPI.TopicPageEnvelope.self)
                #expect(page.value.data.total == 23)
                #expect(page.value.data.topics.map(\.id) == [21, 22, 23])
            }
            let created = try await client.send(
                try api.createTopic(.init(title: "Pagers", body: "How loadMore coalesces.", authorId: 7, tags: ["swift"]),
                                    format: .protobuf),
                decoding: DemoAPI.TopicEnvelope.self)
            #expect(created.metadata.status == .created)
            #expect(created.value.data.id == 24)
            #expect(created.value.data.authorId == 7)
            #expect(created.value.data.title == "Pagers")
            let fetched = try await client.send(api.topic(id: 24), decoding: DemoAPI.TopicEnvelope.self)
            #expect(fetched.value.data == created.value.data)
            let missing = try await #require(throws: CourierError.self) { try await client.send(api.topic(id: 99)) }
            #expect(missing.code == .business)
            #expect(missing.business(as: DemoAPI.TopicError.self) == .topicNotFound)
            #expect(missing.context.module == "topic")
            #expect(server.state.requestCount == 9)
        }
    }
}
