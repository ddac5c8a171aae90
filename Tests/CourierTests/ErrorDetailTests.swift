import Courier
import CourierTesting
import Foundation
import Testing

/// A detail a module of this test attaches: data only, no text of its own.
private struct Quota: CourierError.Detail, Equatable {
    var remaining: Int
}

/// A detail that elaborates the message and adds debug lines.
private struct Hint: CourierError.Detail {
    var text: String
    func elaboration(in language: CourierError.Language) -> String? { " Hint: \(text)." }
    var debugLines: [String] { ["hint: \(text)"] }
}

/// Modules attach their own knowledge to a `CourierError` as typed details; the core only composes them.
@Suite struct ErrorDetailTests {
    @Test func detailsAreReadBackByTypeReplacedInPlaceAndRemoved() {
        var error = CourierError(.invalidConfiguration, detail: "bad option")
        #expect(error.details.isEmpty)
        #expect(error.details[Quota.self] == nil)
        error.details[Quota.self] = Quota(remaining: 3)
        error.details[Hint.self] = Hint(text: "raise the limit")
        error.details[Quota.self] = Quota(remaining: 0)
        #expect(error.details[Quota.self] == Quota(remaining: 0))
        #expect(error.details.map { String(describing: type(of: $0)) } == ["Quota", "Hint"])
        error.details[Quota.self] = nil
        #expect(error.details[Quota.self] == nil)
        #expect(error.details.map { String(describing: type(of: $0)) } == ["Hint"])
    }

    @Test func aDataOnlyDetailLeavesTheMessageAlone() {
        var error = CourierError(.invalidConfiguration, detail: "bad option")
        error.details[Quota.self] = Quota(remaining: 0)
        #expect(error.message == "The configuration is invalid. bad option")
        #expect(error.debugDescription == error.description)
    }

    @Test func anElaborationReplacesTheDetailTextAndAddsDebugLines() {
        var error = CourierError(.invalidConfiguration, detail: "bad option")
        error.details[Hint.self] = Hint(text: "raise the limit")
        #expect(error.message == "The configuration is invalid. Hint: raise the limit.")
        #expect(error.debugDescription.hasSuffix("\n  hint: raise the limit"))
    }

    @Test func aBusinessFailureIsADetailWhoseMessageIsTheSentence() {
        var error = CourierError(.business, detail: "ignored")
        error.businessFailure = BusinessFailure(code: 999, serverMessage: "quota exceeded", mapped: nil)
        #expect(error.details[BusinessFailure.self]?.code == 999)
        #expect(error.message == "The server reported error 999: quota exceeded")
        error.businessFailure = nil
        #expect(error.details.isEmpty)
        #expect(error.message == "The server reported an error. ignored")
    }

    @Test func aTracedCallsFailureCarriesTheTraceAsADetailWithoutText() async throws {
        let endpoint = Endpoint(name: "e", module: APIModule(name: "m", service: service), path: "/x")
        let client = CourierClient(transport: InMemoryTransport.failing(.timedOut))
        let error = await #expect(throws: CourierError.self) { try await client.send(endpoint, options: .init(trace: true)) }
        #expect(error?.code == .timedOut)
        let trace = try #require(error?.details[CallTrace.self])
        #expect(trace.stages.contains { $0.name == "transport" })
        #expect(error?.trace?.stages.count == trace.stages.count)
        #expect(error?.message == "The request timed out.")
        let untraced = await #expect(throws: CourierError.self) { try await client.send(endpoint) }
        #expect(untraced?.trace == nil)
    }

    @Test func aModuleDeclaresItsOwnCodeWithItsSentences() {
        let code = CourierError.Code(module: 9950, name: "quotaExhausted", messages: [
            .english: "The quota is exhausted.", .simplifiedChinese: "配额已用完~",
        ])
        #expect(code.category == .configuration)
        #expect(code.name == "quotaExhausted")
        #expect(code.description == "configuration.quotaExhausted (9950)")
        #expect(CourierError(code).message == "The quota is exhausted.")
        #expect(CourierError(code).message(in: "zh-CN") == "配额已用完~")
        #expect(CourierError(code).message(in: "ja") == "The quota is exhausted.")
        #expect(code == CourierError.Code(module: 9950, name: "other", messages: [.english: "Other."]))
        #expect(!CourierError.Code.allCases.contains(code))
        let transport = CourierError.Code(module: 1500, name: "proxyRefused", messages: [.english: "Refused."])
        #expect(transport.category == .transport)
    }

    @Test func aRegisteredTableOverridesAModuleCodesOwnSentence() {
        let code = CourierError.Code(module: 9951, name: "overridden", messages: [.english: "Built in."])
        MessageCatalog.update("x-override") { $0.codes[code] = "Overridden." }
        #expect(code.message(in: "x-override") == "Overridden.")
        #expect(code.message(in: .english) == "Built in.")
    }

    @Test func testingAndCachingCodesKeepTheirNumbers() {
        #expect(CourierError.Code.noRecordedExchange.number == 9007)
        #expect(CourierError.Code.noRecordedExchange.category == .configuration)
        #expect(CourierError.Code.noRecordedExchange.message(in: .simplifiedChinese) == "没有与该请求匹配的录制记录~")
        // The core's codes around them keep theirs: 9005 and 9007 are the modules'.
        #expect(CourierError.Code.interceptorFailure.number == 9006)
        #expect(CourierError.Code.unsupportedByTransport.number == 9008)
        #expect(CourierError.Code.fileAccessFailed.number == 9009)
        #expect(!CourierError.Code.allCases.map(\.number).contains(9005))
        #expect(!CourierError.Code.allCases.map(\.number).contains(9007))
    }

    @Test func aModuleCodeCannotTakeACoreNumber() async {
        await #expect(processExitsWith: .failure) {
            _ = CourierError.Code(module: 1001, name: "clash", messages: [.english: "Clash."])
        }
        await #expect(processExitsWith: .failure) {
            _ = CourierError.Code(module: 12_000, name: "outside", messages: [.english: "Outside."])
        }
        await #expect(processExitsWith: .failure) {
            _ = CourierError.Code(module: 9952, name: "silent", messages: [.simplifiedChinese: "无~"])
        }
    }
}
