import Courier
import CourierTesting
import Foundation
import Testing

/// `FuzzOracle.mutate`: an in-process mutation loop, seeded and bounded by counts, reporting the first
/// failing input (shrunk).
@Suite struct FuzzMutationTests {
    /// JSON, but a string holding `<` comes back with a `!` added: decode → encode → decode changes it.
    final class PlantedBug: Codec, @unchecked Sendable {
        let longest = Locked(0)
        var format: ContentFormat { .json }
        func decode(_ data: Data, hints: CodingHints) throws -> Value {
            longest.withLock { $0 = max($0, data.count) }
            let value = try JSONCodec().decode(data, hints: hints)
            return data.contains(UInt8(ascii: "<")) ? value.appendingToStrings("!") : value
        }
        func encode(_ value: Value, hints: CodingHints) throws -> Data { try JSONCodec().encode(value, hints: hints) }
    }

    @Test func courierJSONHoldsUnderMutation() {
        var options = FuzzOracle.MutationOptions()
        options.seed = 2026
        options.iterations = 3_000
        let seeds = [Data(#"{"a":[1,2.5,"x\u00e9"],"b":null,"c":{"d":true}}"#.utf8), Data("[-0.0,1e5,\"\\n\"]".utf8)]
        let report = FuzzOracle(codec: JSONCodec()).mutate(seeds: seeds, options: options)
        #expect(report.violation == nil, "\(report)")
        #expect(report.checkedInputs == seeds.count + options.iterations)
        #expect(report.distinctOutcomes > 10)          // the mutations reach many different errors and values
        #expect(report.corpusSize > seeds.count && report.corpusSize <= options.maximumCorpusSize)
        #expect("\(report)".hasPrefix("the property held for 3002 inputs"))
    }

    @Test func theSameSeedRunsTheSameInputs() {
        var options = FuzzOracle.MutationOptions()
        options.seed = 9
        options.iterations = 500
        let seeds = [Data(#"{"k":[1,{"z":"y"}]}"#.utf8)]
        let first = FuzzOracle(codec: JSONCodec()).mutate(seeds: seeds, options: options)
        let second = FuzzOracle(codec: JSONCodec()).mutate(seeds: seeds, options: options)
        #expect(first.corpusSize == second.corpusSize && first.distinctOutcomes == second.distinctOutcomes)
    }

    @Test func aPlantedBugIsFoundShrunkAndReported() throws {
        let codec = PlantedBug()
        var options = FuzzOracle.MutationOptions()
        options.seed = 1
        options.iterations = 20_000
        options.maximumInputSize = 64
        let report = FuzzOracle(codec: codec).mutate(seeds: [Data(#"{"name":"ada","tags":["x"]}"#.utf8)], options: options)
        let violation = try #require(report.violation, "\(report)")
        #expect(violation.kind == .valueChanged)
        #expect(report.failingIteration != nil)
        #expect(report.checkedInputs == 1 + report.failingIteration! + 1)
        let original = try #require(report.originalInput)
        #expect(original.contains(UInt8(ascii: "<")))
        // Shrunk (or already minimal): still failing the same way.
        #expect(violation.input.count <= original.count)
        #expect(violation.input.count <= 16, "\(String(decoding: violation.input, as: UTF8.self))")
        #expect(FuzzOracle(codec: codec).check(violation.input)?.kind == .valueChanged)
        #expect("\(report)".contains("broken by mutation #"))
        // Inputs never grew past the bound.
        #expect(codec.longest.withLock { $0 } <= 64)
    }

    @Test func aFailingSeedIsReportedWithoutMutatingAndShrunk() throws {
        let seed = Data(#"{"name":"a<b","tags":["x","y"],"n":12345,"nested":{"deep":[true,null]}}"#.utf8)
        let report = FuzzOracle(codec: PlantedBug()).mutate(seeds: [seed])
        let violation = try #require(report.violation)
        #expect(violation.kind == .valueChanged)
        #expect(report.failingIteration == nil)
        #expect(report.checkedInputs == 1)
        #expect(report.originalInput == seed)
        // Ranges that do not matter are gone; what is left still breaks the property the same way.
        #expect(violation.input.count < 20, "\(String(decoding: violation.input, as: UTF8.self))")
        #expect(violation.input.contains(UInt8(ascii: "<")))
        #expect(FuzzOracle(codec: PlantedBug()).check(violation.input)?.kind == .valueChanged)
        // Without a budget the input stays as found.
        var keep = FuzzOracle.MutationOptions()
        keep.minimizationChecks = 0
        #expect(FuzzOracle(codec: PlantedBug()).mutate(seeds: [seed], options: keep).violation?.input == seed)
    }

    /// The README's snippet.
    @Test func theReadmeMutationSnippetWorks() {
        var options = FuzzOracle.MutationOptions()
        options.iterations = 20_000
        let report = FuzzOracle(codec: JSONCodec()).mutate(seeds: [Data(#"{"id":7}"#.utf8)], options: options)
        #expect(report.violation == nil, "\(report)")
    }

    @Test func noIterationsChecksOnlyTheSeeds() {
        var options = FuzzOracle.MutationOptions()
        options.iterations = 0
        let report = FuzzOracle(codec: JSONCodec()).mutate(seeds: [Data("1".utf8), Data("[]".utf8)], options: options)
        #expect(report.checkedInputs == 2 && report.violation == nil)
    }
}

extension Value {
    fileprivate func appendingToStrings(_ suffix: String) -> Value {
        switch self {
        case .string(let text): return .string(text + suffix)
        case .array(let items): return .array(items.map { $0.appendingToStrings(suffix) })
        case .object(var object):
            for (key, member) in object { object[key] = member.appendingToStrings(suffix) }
            return .object(object)
        default: return self
        }
    }
}
