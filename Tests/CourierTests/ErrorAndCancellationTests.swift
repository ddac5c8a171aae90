import Courier
import CourierTesting
import Foundation
import HTTPTypes
import Testing

@Suite struct ErrorTests {
    @Test func everyCodeHasEnglishAndChineseMessagesAndAStableNumber() {
        var numbers = Set<Int>()
        for code in CourierError.Code.allCases {
            let english = code.message(in: .english)
            let chinese = code.message(in: .simplifiedChinese)
            #expect(!english.isEmpty && english.hasSuffix(".") || english.hasSuffix(")."), "\(code)")
            #expect(chinese.unicodeScalars.contains { $0.value >= 0x4E00 && $0.value <= 0x9FFF }, "\(code): \(chinese)")
            #expect(numbers.insert(code.number).inserted, "duplicate number \(code.number)")
        }
        #expect(CourierError.Code.timedOut.number == 1001)
        #expect(CourierError.Code.notFound.number == 2404)
        #expect(CourierError.Code.business.number == 7001)
        #expect(CourierError(.timedOut).message == "The request timed out.")
        #expect(CourierError(.timedOut).message(in: .simplifiedChinese) == "请求超时了~")
        #expect(Set(CourierError.Code.allCases.map(\.category)) == Set(CourierError.Category.allCases))
    }

    @Test func errorsPrintCategoryCodeMessageAndContext() {
        let error = CourierError(.notFound, context: .init(module: "user", endpoint: "getUser", callID: CallID(rawValue: 9), status: 404))
        #expect(error.description == "[http.notFound 2404] The requested resource was not found (404). (module: user, endpoint: getUser, call: #9, status: 404)")
    }

    @Test(arguments: [(404, CourierError.Code.notFound), (503, .serviceUnavailable), (418, .clientError), (599, .serverError), (302, .unexpectedStatus)])
    func httpStatusesMapToCodes(status: Int, code: CourierError.Code) async throws {
        let transport = InMemoryTransport { _, _ in jsonResponse(#"{"message":"nope"}"#, status: .init(code: status)) }
        let endpoint = Endpoint(name: "e", module: APIModule(name: "m", service: service), path: "/x")
        let error = try await #require(throws: CourierError.self) { try await CourierClient(transport: transport).send(endpoint) }
        #expect(error.code == code)
        #expect(error.context.status == status)
        #expect(error.context.module == "m")
        #expect(error.context.endpoint == "e")
        #expect(error.message.contains("nope"))
    }

    @Test func businessCodesMapToTheModulesEnum() async throws {
        UserError.registerChinese()
        let transport = InMemoryTransport { _, _ in jsonResponse(#"{"code":301,"message":"no such user"}"#) }
        var module = APIModule(name: "user", service: service)
        module.businessRule = BusinessRule(mapping: UserError.self)
        let error = try await #require(throws: CourierError.self) {
            try await CourierClient(transport: transport).send(Endpoint(name: "getUser", module: module, path: "/users/1"))
        }
        #expect(error.code == .business)
        #expect(error.business(as: UserError.self) == .userNotFound)
        #expect(error.businessFailure?.serverMessage == "no such user")
        #expect(error.message == "The user does not exist.")
        #expect(error.message(in: .simplifiedChinese) == "用户不存在~")
        switch error.business(as: UserError.self) {
        case .userNotFound?: break
        default: Issue.record("expected userNotFound")
        }
    }

    @Test func unmappedBusinessCodesBecomeGenericErrorsWithTheServersMessage() async throws {
        let transport = InMemoryTransport { _, _ in jsonResponse(#"{"code":999,"message":"quota exceeded"}"#) }
        var module = APIModule(name: "user", service: service)
        module.businessRule = BusinessRule(mapping: UserError.self)
        let error = try await #require(throws: CourierError.self) {
            try await CourierClient(transport: transport).send(Endpoint(name: "e", module: module, path: "/x"))
        }
        #expect(error.code == .business)
        #expect(error.business(as: UserError.self) == nil)
        #expect(error.businessFailure?.code == 999)
        #expect(error.message == "The server reported error 999: quota exceeded")
        #expect(error.message(in: .simplifiedChinese) == "服务器返回错误 999：quota exceeded")
    }

    @Test func successCodesPass() async throws {
        let transport = InMemoryTransport { _, _ in jsonResponse(#"{"code":0,"data":{"id":1}}"#) }
        var module = APIModule(name: "user", service: service)
        module.businessRule = BusinessRule(mapping: UserError.self)
        let reply = try await CourierClient(transport: transport).send(Endpoint(name: "e", module: module, path: "/x"))
        #expect(reply.value["data"]?["id"] == 1)
    }

    @Test func malformedSuccessBodiesAreDecodingErrors() async throws {
        let transport = InMemoryTransport { _, _ in jsonResponse(#"{"code":0,"#) }
        let error = try await #require(throws: CourierError.self) {
            try await CourierClient(transport: transport).send(Endpoint(name: "e", module: APIModule(name: "m", service: service), path: "/x"))
        }
        #expect(error.category == .decoding)
        #expect(error.context.status == 200)
        #expect(error.context.stage == "codec")
    }

    @Test func typedDecodingFailuresNameThePath() async throws {
        struct User: Decodable, Sendable { var id: Int; var name: String }
        struct Envelope: Decodable, Sendable { var code: Int; var data: User }
        let transport = InMemoryTransport { _, _ in jsonResponse(#"{"code":0,"data":{"id":"x","name":"a"}}"#) }
        let error = try await #require(throws: CourierError.self) {
            try await CourierClient(transport: transport).send(
                Endpoint(name: "e", module: APIModule(name: "m", service: service), path: "/x"), decoding: Envelope.self)
        }
        #expect(error.category == .decoding)
    }

    @Test func interceptorErrorsAreWrappedOnceWithTheStageName() async throws {
        struct Boom: Error {}
        struct Failing: Interceptor {
            func intercept(_ request: CourierRequest, context: InterceptorContext, next: InterceptorNext) async throws -> CourierResponse {
                throw Boom()
            }
        }
        var endpoint = Endpoint(name: "e", module: APIModule(name: "m", service: service), path: "/x")
        endpoint.interceptors = [Tagging(name: "Outer", log: OrderLog()), Failing()]
        let error = try await #require(throws: CourierError.self) {
            try await CourierClient(transport: InMemoryTransport.successful()).send(endpoint)
        }
        #expect(error.code == .interceptorFailure)
        #expect(error.context.stage == "Failing")
        #expect(error.underlying is Boom)
    }
}

@Suite struct CancellationTests {
    /// A transport whose requests hang until cancelled, counting how many started and how many saw the
    /// cancellation (so a test can tell the work really stopped).
    final class Hanging: Transport {
        let started = Locked(0)
        let cancelled = Locked(0)
        func send(_ request: HTTPRequest, body: Data?, options: TransportOptions) async throws -> (HTTPResponse, Data) {
            started.withLock { $0 += 1 }
            do {
                try await Task.sleep(for: .seconds(3600))  // until cancelled, however starved the test process is
            } catch {
                cancelled.withLock { $0 += 1 }
                throw TransportFailure.cancelled.error()
            }
            return jsonResponse("{}")
        }
        func waitForStarted(_ n: Int) async {
            while started.withLock({ $0 }) < n { try? await Task.sleep(for: .milliseconds(5)) }
        }
    }

    let users = APIModule(name: "user", service: service)
    let topics = APIModule(name: "topic", service: service)

    @Test func cancelOneCallByID() async throws {
        let transport = Hanging()
        let client = CourierClient(transport: transport)
        let a = client.dispatch(Endpoint(name: "a", module: users, path: "/a"))
        let b = client.dispatch(Endpoint(name: "b", module: users, path: "/b"))
        await transport.waitForStarted(2)
        #expect(client.runningCalls.map(\.id) == [a.id, b.id])
        #expect(client.cancel(a.id))
        let error = try await #require(throws: CourierError.self) { try await a.reply }
        #expect(error.code == .cancelled)
        #expect(error.context.callID == a.id)
        #expect(transport.cancelled.withLock { $0 } == 1)
        #expect(client.runningCalls.map(\.id) == [b.id])
        client.cancel(b.id)
        _ = try? await b.reply
        #expect(client.runningCalls.isEmpty)
        #expect(!client.cancel(a.id))
    }

    @Test func cancelAllCallsOfAModule() async throws {
        let transport = Hanging()
        let client = CourierClient(transport: transport)
        let userCalls = (0..<3).map { client.dispatch(Endpoint(name: "u\($0)", module: users, path: "/u")) }
        let topicCall = client.dispatch(Endpoint(name: "t", module: topics, path: "/t"))
        await transport.waitForStarted(4)
        #expect(client.cancelAll(module: "user") == 3)
        for call in userCalls {
            let cancelled = await #expect(throws: CourierError.self) { try await call.reply }
            #expect(cancelled?.code == .cancelled)
        }
        #expect(transport.cancelled.withLock { $0 } == 3)
        #expect(client.runningCalls.map(\.module) == ["topic"])
        #expect(client.cancelAll() == 1)
        let error = try await #require(throws: CourierError.self) { try await topicCall.reply }
        #expect(error.code == .cancelled)
        #expect(transport.cancelled.withLock { $0 } == 4)
    }

    @Test func cancelAllCallsOfATagAcrossModules() async throws {
        let transport = Hanging()
        let client = CourierClient(transport: transport)
        var checkoutUser = Endpoint(name: "u", module: users, path: "/u")
        checkoutUser.tags = ["checkout", "screen:cart"]
        var checkoutTopic = Endpoint(name: "t", module: topics, path: "/t")
        checkoutTopic.tags = ["checkout"]
        var other = Endpoint(name: "o", module: users, path: "/o")
        other.tags = ["profile"]
        let tagged = [client.dispatch(checkoutUser), client.dispatch(checkoutTopic)]
        let untagged = [client.dispatch(other), client.dispatch(Endpoint(name: "p", module: users, path: "/p"))]
        await transport.waitForStarted(4)
        #expect(client.cancelAll(tag: "nothing") == 0)
        #expect(client.cancelAll(tag: "checkout") == 2)
        for call in tagged {
            let error = try await #require(throws: CourierError.self) { try await call.reply }
            #expect(error.code == .cancelled)
        }
        #expect(Set(client.runningCalls.map(\.endpoint)) == ["o", "p"])
        #expect(client.cancelAll(tag: "screen:cart") == 0)
        #expect(client.cancelAll() == 2)
        for call in untagged { _ = try? await call.reply }
        #expect(transport.cancelled.withLock { $0 } == 4)
    }

    @Test func swiftTaskCancellationPropagatesIntoTheTransport() async throws {
        let transport = Hanging()
        let client = CourierClient(transport: transport)
        let task = Task { try await client.send(Endpoint(name: "a", module: users, path: "/a")) }
        await transport.waitForStarted(1)
        task.cancel()
        let result = await task.result
        let error = #expect(throws: CourierError.self) { try result.get() }
        #expect(error?.code == .cancelled)
        #expect(transport.cancelled.withLock { $0 } == 1)
    }

    @Test func inMemoryTransportHonoursTheTimeout() async throws {
        let transport = InMemoryTransport { _, _ in
            try await Task.sleep(for: .seconds(10))
            return jsonResponse("{}")
        }
        var endpoint = Endpoint(name: "slow", module: users, path: "/slow")
        endpoint.timeout = .milliseconds(50)
        let error = try await #require(throws: CourierError.self) { try await CourierClient(transport: transport).send(endpoint) }
        #expect(error.code == .timedOut)
    }

    @Test func concurrentCallsAreSafe() async throws {
        let transport = InMemoryTransport { request, _ in jsonResponse(#"{"path":"\#(request.path ?? "")"}"#) }
        let client = CourierClient(transport: transport)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for i in 0..<200 {
                group.addTask {
                    let reply = try await client.send(Endpoint(name: "e", module: users, path: "/n/\(i)"))
                    #expect(reply.value["path"] == .string("/n/\(i)"))
                }
            }
            try await group.waitForAll()
        }
        #expect(transport.requests.count == 200)
        #expect(client.runningCalls.isEmpty)
    }
}

/// Messages come from one table per language, keyed by code; any locale identifier works and falls back.
@Suite struct MessageCatalogTests {
    @Test func everyCodeHasAnEnglishAndAChineseSentence() {
        for code in CourierError.Code.allCases {
            #expect(MessageTable.english.codes[code]?.isEmpty == false, "\(code) has no English message")
            #expect(MessageTable.simplifiedChinese.codes[code]?.isEmpty == false, "\(code) has no Chinese message")
        }
        #expect(MessageTable.english.codes.count == CourierError.Code.allCases.count)
    }

    @Test(arguments: ["zh", "zh-CN", "zh_CN", "zh-Hans-SG", "ZH-hans", "zh_CN.UTF-8"])
    func chineseIdentifiersReadTheSimplifiedChineseTable(_ identifier: String) {
        #expect(CourierError(.timedOut).message(in: CourierError.Language(identifier)) == "请求超时了~")
    }

    @Test(arguments: ["fr", "de-CH", "", "x-unknown-tag", "ko"])
    func unknownLanguagesFallBackToEnglish(_ identifier: String) {
        #expect(CourierError(.timedOut).message(in: CourierError.Language(identifier)) == "The request timed out.")
    }

    @Test func anAppAddsALanguageAndOverridesMessages() {
        enum ShopError: Int, BusinessError, CaseIterable {
            case soldOut = 501, priceChanged = 502
            var message: String { self == .soldOut ? "Sold out." : "The price changed." }
        }
        MessageCatalog.update("pt-BR") { table in
            table.codes[.timedOut] = "A requisição expirou."
            table.detail = " — {detail}"
            table.setMessages([ShopError.soldOut: "Esgotado."])
        }
        MessageCatalog.update("pt") { $0.codes[.notFound] = "Não encontrado (404)." }
        let portuguese = CourierError.Language("pt-BR")
        #expect(CourierError(.timedOut, detail: "após 2 s").message(in: portuguese) == "A requisição expirou. — após 2 s")
        #expect(CourierError(.notFound).message(in: portuguese) == "Não encontrado (404).")          // from "pt"
        #expect(CourierError(.cancelled).message(in: portuguese) == "The request was cancelled.")   // from English
        var soldOut = CourierError(.business)
        soldOut.businessFailure = BusinessFailure(code: 501, serverMessage: nil, mapped: ShopError.soldOut)
        #expect(soldOut.message(in: portuguese) == "Esgotado.")
        var changed = soldOut
        changed.businessFailure = BusinessFailure(code: 502, serverMessage: nil, mapped: ShopError.priceChanged)
        #expect(changed.message(in: portuguese) == "The price changed.")                           // the case's own
        // Overriding a shipped language.
        MessageCatalog.update("en-AU") { $0.codes[.notConnected] = "You're offline, mate." }
        #expect(CourierError(.notConnected).message(in: "en-AU") == "You're offline, mate.")
        #expect(CourierError(.notConnected).message(in: .english) == "The device is not connected to the internet.")
    }

    @Test func unmappedBusinessCodesUseTheLanguagesTemplates() {
        var error = CourierError(.business)
        error.businessFailure = BusinessFailure(code: 999, serverMessage: "quota exceeded", mapped: nil)
        #expect(error.message(in: .english) == "The server reported error 999: quota exceeded")
        #expect(error.message(in: "zh-CN") == "服务器返回错误 999：quota exceeded")
    }
}

/// The README's messages snippet, compiled and checked.
@Suite struct ReadmeMessagesExampleTests {
    @Test func theReadmeMessagesSnippetWorks() {
        let error = CourierError(.timedOut)
        // README: begin
        MessageCatalog.update("ja") { table in
            table.codes[.timedOut] = "リクエストがタイムアウトしました。"
            table.setMessages([UserError.userNotFound: "ユーザーが存在しません。"])
        }
        MessageCatalog.update("en-GB") { $0.codes[.notConnected] = "You're offline." }   // a variant of a shipped one
        print(error.message(in: "ja-JP"))
        // README: end
        #expect(error.message(in: "ja-JP") == "リクエストがタイムアウトしました。")
        #expect(MessageCatalog.message(for: UserError.userNotFound, in: "ja") == "ユーザーが存在しません。")
        #expect(CourierError(.notConnected).message(in: "en-GB") == "You're offline.")
        #expect(CourierError(.notConnected).message(in: .english) == "The device is not connected to the internet.")
    }
}
