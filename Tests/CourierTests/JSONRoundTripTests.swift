import Courier
import CourierTesting
import Foundation
import Testing

@Suite struct JSONRoundTripTests {
    @Test func fiveThousandRandomValuesRoundTrip() {
        // A fresh seed each run widens coverage over time; it is printed with any failure to reproduce it.
        let seed = UInt64.random(in: 0...UInt64.max)
        let failures = RoundTrip.check(codec: JSONCodec(), count: 5000, seed: seed, options: .json)
        #expect(failures.isEmpty, "seed \(seed): \(failures.count) failures; first: \(failures.first.map(String.init(describing:)) ?? "")")
    }

    @Test func prettySortedOutputRoundTripsToo() {
        var options = JSONCodec.Options()
        options.pretty = true
        options.sortedKeys = true
        options.escapeSlashes = true
        let failures = RoundTrip.check(codec: JSONCodec(options: options), count: 500, seed: 20_261_122)
        #expect(failures.isEmpty, "\(failures.first.map(String.init(describing:)) ?? "")")
    }

    @Test func generatorIsReproducibleAndHonoursOptions() {
        var a = ValueGenerator(seed: 99)
        var b = ValueGenerator(seed: 99)
        let first = (0..<50).map { _ in a.next() }
        #expect(first == (0..<50).map { _ in b.next() })
        #expect(first.contains { if case .bytes = $0 { return true } else { return false } } || first.count == 50)

        var options = ValueGenerator.Options()
        options.kinds = [.object, .int]
        options.keyStyle = .identifier
        var restricted = ValueGenerator(seed: 1, options: options)
        for _ in 0..<200 {
            let value = restricted.next(maxDepth: 3, maxWidth: 4)
            #expect(Self.onlyIntsAndObjects(value))
        }
    }

    static func onlyIntsAndObjects(_ value: Value) -> Bool {
        switch value {
        case .int: return true
        case .object(let o):
            return o.keys.allSatisfy { $0.first.map { $0.isLetter || $0 == "_" } ?? false }
                && o.values.allSatisfy(onlyIntsAndObjects)
        default: return false
        }
    }

    @Test func bytesDoNotRoundTripThroughJSONAndTheFailureSaysWhy() throws {
        let failure = try #require(RoundTrip.assertRoundTrip(JSONCodec(), value: ["blob": .bytes([1, 2, 3])]))
        #expect(failure.decoded == ["blob": "AQID"])
        #expect(failure.bytes == Data(#"{"blob":"AQID"}"#.utf8))
        #expect(RoundTrip.assertRoundTrip(JSONCodec(), value: .double(.nan))?.error?.code == .encodingFailed)
    }

    struct Model: Codable, Equatable {
        var id: Int64
        var name: String
        var when: Date
        var scores: [String: Double]
        var big: UInt64
    }

    @Test func typedModelsRoundTrip() {
        let model = Model(id: -7, name: "Ada \"Lovelace\"", when: Date(timeIntervalSince1970: 1_700_000_000.5),
            scores: ["x": 0.1, "y": 1e300], big: .max)
        #expect(RoundTrip.typed(model, codec: JSONCodec()) == nil)
        var secondsEncoder = ValueEncoder()
        secondsEncoder.dateStrategy = .secondsSince1970
        // Mismatched strategies are reported, not crashed on.
        let failure = RoundTrip.typed(model, codec: JSONCodec(), encoder: secondsEncoder)
        #expect(failure?.error?.code == .typeMismatch)
    }
}
