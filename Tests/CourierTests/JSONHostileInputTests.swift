import Courier
import Foundation
import Testing

/// Hostile JSON (and form) bodies: each shape, at a size that would be slow or huge if the parser were
/// quadratic or unbounded, ends in one enumerated error or the right value. Sizes are chosen for debug
/// builds; no test measures time or memory (the benchmarks do).
@Suite(.timeLimit(.minutes(10))) struct JSONHostileInputTests {
    /// The error decoding `bytes` with `codec` throws.
    private func decodeError(_ bytes: [UInt8], _ codec: JSONCodec = JSONCodec(), hints: CodingHints = CodingHints())
        throws -> CourierError
    {
        try #require(throws: CourierError.self) { try codec.decode(Data(bytes), hints: hints) }
    }

    private func codec(_ change: (inout DecodingLimits) -> Void) -> JSONCodec {
        var options = JSONCodec.Options()
        change(&options.limits)
        return JSONCodec(options: options)
    }

    @Test func theDefaultsAreTheDocumentedOnes() {
        let limits = DecodingLimits()
        #expect(limits.maximumInputSize == 64 << 20)
        #expect(limits.maximumDepth == 512)
        #expect(limits.maximumContainerCount == 1_000_000)
        #expect(limits.maximumTotalValues == 5_000_000)
        #expect(limits.maximumStringLength == 16 << 20)
        #expect(limits.maximumNumberLength == 10_000)
        #expect(limits.maximumAttributesPerElement == 1_000)
        #expect(JSONCodec.Options().limits == limits)
        // The older options are the same settings.
        var options = JSONCodec.Options()
        options.maximumDepth = 7
        options.maximumInputSize = 99
        #expect(options.limits.maximumDepth == 7 && options.limits.maximumInputSize == 99)
    }

    @Test func aMillionOpeningBracketsStopAtTheDepthLimit() throws {
        let bytes = [UInt8](repeating: UInt8(ascii: "["), count: 1_000_000)
        let error = try decodeError(bytes)
        #expect(error.code == .depthLimitExceeded)
        #expect(error.context.offset == 512)
        #expect(error.message.contains("maximumDepth"))
    }

    @Test func deepButWithinTheLimitDecodes() throws {
        let depth = 500
        let text = String(repeating: "[", count: depth) + "1" + String(repeating: "]", count: depth)
        var value = try JSONCodec().decode(Data(text.utf8), hints: CodingHints())
        for _ in 0..<depth { value = try #require(value.arrayValue?.first) }
        #expect(value == 1)
    }

    @Test(arguments: [JSONCodec.DuplicateKeyPolicy.lastWins, .firstWins, .reject])
    func twoHundredThousandDuplicateKeys(policy: JSONCodec.DuplicateKeyPolicy) throws {
        var text = "{"
        for i in 0..<200_000 { text += i == 0 ? "\"a\":\(i)" : ",\"a\":\(i)" }
        text += "}"
        var options = JSONCodec.Options()
        options.duplicateKeys = policy
        let codec = JSONCodec(options: options)
        if policy == .reject {
            let error = try decodeError(Array(text.utf8), codec)
            #expect(error.code == .malformedInput)
            #expect(error.context.offset == 7)
        } else {
            let value = try codec.decode(Data(text.utf8), hints: CodingHints())
            #expect(value == ["a": .int(policy == .lastWins ? 199_999 : 0)])
        }
    }

    @Test func twoHundredThousandDistinctKeysDecodeInOrder() throws {
        var text = "{"
        for i in 0..<200_000 { text += i == 0 ? "\"k\(i)\":\(i)" : ",\"k\(i)\":\(i)" }
        text += "}"
        let object = try #require(try JSONCodec().decode(Data(text.utf8), hints: CodingHints()).objectValue)
        #expect(object.count == 200_000)
        #expect(object.keys.last == "k199999")
        #expect(object["k123456"] == 123_456)
    }

    @Test func anArrayLongerThanTheContainerLimitFails() throws {
        // 1,000,001 elements under the default limit of 1,000,000.
        var bytes: [UInt8] = [UInt8(ascii: "[")]
        bytes.reserveCapacity(2_000_004)
        for _ in 0..<1_000_001 { bytes += [UInt8(ascii: "0"), UInt8(ascii: ",")] }
        bytes[bytes.count - 1] = UInt8(ascii: "]")
        let error = try decodeError(bytes)
        #expect(error.code == .sizeLimitExceeded)
        #expect(error.message.contains("maximumContainerCount"))
        #expect(error.context.offset == 2_000_001)  // the first element over the limit
        // Raised, the same body decodes.
        let raised = codec { $0.maximumContainerCount = 2_000_000 }
        #expect(try raised.decode(Data(bytes), hints: CodingHints()).arrayValue?.count == 1_000_001)
    }

    @Test func objectMembersCountAgainstTheContainerLimit() throws {
        let strict = codec { $0.maximumContainerCount = 3 }
        #expect(throws: Never.self) { try strict.decode(Data(#"{"a":1,"b":2,"c":3}"#.utf8), hints: CodingHints()) }
        let error = try decodeError(Array(#"{"a":1,"b":2,"c":3,"d":4}"#.utf8), strict)
        #expect(error.code == .sizeLimitExceeded)
        #expect(error.context.line == 1 && error.context.column == 24)
    }

    @Test func totalValuesAreBounded() throws {
        // 100 arrays of 100 numbers: 10,101 values.
        let row = "[" + Array(repeating: "1", count: 100).joined(separator: ",") + "]"
        let text = "[" + Array(repeating: row, count: 100).joined(separator: ",") + "]"
        let strict = codec { $0.maximumTotalValues = 10_000 }
        let error = try decodeError(Array(text.utf8), strict)
        #expect(error.code == .sizeLimitExceeded)
        #expect(error.message.contains("maximumTotalValues"))
        let enough = codec { $0.maximumTotalValues = 10_101 }
        #expect(try enough.decode(Data(text.utf8), hints: CodingHints()).arrayValue?.count == 100)
    }

    @Test func aStringLongerThanTheLimitFails() throws {
        let length = (16 << 20) + 1
        var bytes: [UInt8] = [UInt8(ascii: "\"")]
        bytes += [UInt8](repeating: UInt8(ascii: "x"), count: length)
        bytes.append(UInt8(ascii: "\""))
        let error = try decodeError(bytes)
        #expect(error.code == .sizeLimitExceeded)
        #expect(error.message.contains("maximumStringLength"))
        #expect(error.context.offset == 0)
        let raised = codec { $0.maximumStringLength = 17 << 20 }
        #expect(try raised.decode(Data(bytes), hints: CodingHints()).stringValue?.utf8.count == length)
    }

    @Test func anEscapedStringIsBoundedWhileItIsDecoded() throws {
        let strict = codec { $0.maximumStringLength = 1_000 }
        let text = "[\"" + String(repeating: "\\n", count: 600_000) + "\"]"
        let error = try decodeError(Array(text.utf8), strict)
        #expect(error.code == .sizeLimitExceeded)
        #expect(error.context.offset == 1)
    }

    @Test func aHundredThousandDigitNumberFails() throws {
        let digits = String(repeating: "7", count: 100_000)
        for text in [digits, "-" + digits, "0." + digits, "1e" + digits] {
            let error = try decodeError(Array(text.utf8))
            #expect(error.code == .sizeLimitExceeded, "\(text.prefix(4))")
            #expect(error.message.contains("maximumNumberLength"))
        }
        // Raised, the integer keeps all its digits.
        let raised = codec { $0.maximumNumberLength = 100_000 }
        #expect(try raised.decode(Data(digits.utf8), hints: CodingHints()) == .number(digits))
    }

    @Test(arguments: [
        #"{"a":[1,2,"abc"#, #"{"a":[1,2,"#, #"{"a":"#, #"{"a""#, #"{""#, "[", "[[[[[[", #"["\u12"#, #""\"#, "-", "1.",
        "1e", "tru", #"{"a":1"#,
    ])
    func unterminatedEverythingIsMalformed(text: String) throws {
        let error = try decodeError(Array(text.utf8))
        #expect(error.code == .malformedInput)
        #expect(error.context.line == 1)
    }

    @Test func hintsReplaceTheCodecsLimitsForOneCall() throws {
        var hints = CodingHints()
        var limits = DecodingLimits()
        limits.maximumDepth = 2
        hints.limits = limits
        #expect(throws: Never.self) { try JSONCodec().decode(Data("[[[1]]]".utf8), hints: CodingHints()) }
        #expect(try decodeError(Array("[[[1]]]".utf8), hints: hints).code == .depthLimitExceeded)
    }

    @Test func theCodecSetsLimitsApplyToEveryDecodeThroughIt() throws {
        var codecs = CodecSet.standard
        var limits = DecodingLimits()
        limits.maximumInputSize = 4
        codecs.decodingLimits = limits
        for format in [ContentFormat.json, .form, .text, .binary] {
            let error = try #require(throws: CourierError.self) { try codecs.decode(Data("12345".utf8), format: format) }
            #expect(error.code == .sizeLimitExceeded, "\(format)")
        }
        // Hints still win for one call.
        var hints = CodingHints()
        hints.limits = DecodingLimits()
        #expect(try codecs.decode(Data("12345".utf8), format: .json, hints: hints) == 12345)
    }

    @Test func theTypedPathIsBoundedByTheValueUnderIt() throws {
        struct Node: Decodable { var next: [Node] }
        let depth = 100_000
        let text = String(repeating: #"{"next":["#, count: depth) + String(repeating: "]}", count: depth)
        let error = try #require(throws: CourierError.self) {
            let value = try JSONCodec().decode(Data(text.utf8), hints: CodingHints())
            _ = try ValueDecoder().decode(Node.self, from: value)
        }
        #expect(error.code == .depthLimitExceeded)
    }

    @Test func aFormFieldRepeatedTwoHundredThousandTimesIsLinear() throws {
        let body = Array(repeating: "a=1", count: 200_000).joined(separator: "&") + "&b=2"
        let value = try FormCodec().decode(Data(body.utf8), hints: CodingHints())
        #expect(value["a"]?.arrayValue?.count == 200_000)
        #expect(value["b"] == "2")
        #expect(value.objectValue?.keys == ["a", "b"])
        var strict = FormCodec()
        strict.limits.maximumContainerCount = 1_000
        let error = try #require(throws: CourierError.self) { try strict.decode(Data(body.utf8), hints: CodingHints()) }
        #expect(error.code == .sizeLimitExceeded)
        #expect(error.context.codingPath == ["a"])
    }
}
