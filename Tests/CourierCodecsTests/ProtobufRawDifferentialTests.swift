@testable import CourierCodecs
import CourierCodecsTesting
import CourierTestSupport
import CourierTesting
import Foundation
import Testing

/// The two-pass ProtobufRawDecoder against the guessing parse it replaced (``ProtobufRawOracle``): the same
/// `Value` (member order included), the same text and the same error (code, offset and message) for the
/// fixtures, generated messages, their mutations, adversarial nestings and tight limits.
@Suite(.timeLimit(.minutes(10))) struct ProtobufRawDifferentialTests {
    /// Decodes `bytes` both ways under `limits` and `maxDepth`, and records any difference.
    static func agree(
        _ bytes: [UInt8], limits: DecodingLimits = DecodingLimits(), maxDepth: Int = 64,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        var decoder = ProtobufRawDecoder()
        decoder.limits = limits
        decoder.maxDepth = maxDepth
        var oracle = ProtobufRawOracle()
        oracle.limits = limits
        oracle.maxDepth = maxDepth
        let data = Data(bytes)
        let ours = Result { try decoder.decode(data) }
        let theirs = Result { try oracle.decode(data) }
        #expect(outcome(ours) == outcome(theirs), "decode of \(bytes.prefix(64))", sourceLocation: sourceLocation)
        let ourText = Result { try decoder.text(data) }
        let theirText = Result { try oracle.text(data) }
        #expect(outcome(ourText) == outcome(theirText), "text of \(bytes.prefix(64))", sourceLocation: sourceLocation)
    }

    /// A result as comparable text: the value with its member order, or the error's code, offset and message.
    static func outcome(_ result: Result<Value, any Error>) -> String {
        switch result {
        case .success(let value): return strict(value)
        case .failure(let error): return failure(error)
        }
    }

    static func outcome(_ result: Result<String, any Error>) -> String {
        switch result {
        case .success(let text): return text
        case .failure(let error): return failure(error)
        }
    }

    static func failure(_ error: any Error) -> String {
        guard let error = error as? CourierError else { return "not a CourierError: \(error)" }
        return "error \(error.code) at \(String(describing: error.context.offset)): \(error.message)"
    }

    /// `value` written out with its members in order (`Value`'s equality ignores their order).
    static func strict(_ value: Value) -> String {
        switch value {
        case .object(let object):
            return "{"
                + object.keys.indices.map { "\(object.keys[$0]):\(strict(object.values[$0]))" }.joined(separator: ",")
                + "}"
        case .array(let list): return "[" + list.map(strict).joined(separator: ",") + "]"
        case .string(let text): return "s\(text.debugDescription)"
        case .bytes(let bytes): return "b\(bytes)"
        case .int(let i): return "i\(i)"
        case .uint(let u): return "u\(u)"
        default: return "?\(value)"
        }
    }

    static func key(_ number: UInt64, _ wireType: UInt64) -> [UInt8] { varint(number << 3 | wireType) }

    static func varint(_ value: UInt64) -> [UInt8] {
        var out: [UInt8] = []
        var v = value
        while v >= 0x80 {
            out.append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        out.append(UInt8(v))
        return out
    }

    static func lengthDelimited(_ number: UInt64, _ payload: [UInt8]) -> [UInt8] {
        key(number, 2) + varint(UInt64(payload.count)) + payload
    }

    /// A random message of at most `size` bytes, nesting down `depth` levels: every wire type, groups, repeated
    /// and interleaved numbers, strings, bytes, and payloads that are almost messages.
    static func message(_ random: inout SeededRandom, size: Int, depth: Int) -> [UInt8] {
        var out: [UInt8] = []
        while out.count < size {
            let number = UInt64([1, 1, 2, 3, 7, 15, 16, 300, 536_870_911].randomElement(using: &random)!)
            switch Int.random(in: 0..<10, using: &random) {
            case 0:
                out +=
                    key(number, 0)
                    + varint(
                        UInt64.random(in: 0...UInt64.max, using: &random) >> Int.random(in: 0...63, using: &random))
            case 1: out += key(number, 1) + (0..<8).map { _ in UInt8.random(in: 0...255, using: &random) }
            case 2: out += key(number, 5) + (0..<4).map { _ in UInt8.random(in: 0...255, using: &random) }
            case 3: out += lengthDelimited(number, Array("Zoë \(Int.random(in: 0..<1000, using: &random))".utf8))
            case 4:
                out += lengthDelimited(
                    number,
                    (0..<Int.random(in: 0..<6, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) })
            case 5,
                6 where depth > 0:
                out += lengthDelimited(number, message(&random, size: size / 2, depth: depth - 1))
            case 7 where depth > 0:
                // Almost a message: a valid one with a bad last byte.
                out += lengthDelimited(number, message(&random, size: size / 2, depth: depth - 1) + [0x0F])
            case 8 where depth > 0:
                out += key(number, 3) + message(&random, size: size / 3, depth: depth - 1) + key(number, 4)
            default: out += key(number, 0) + [0x01]
            }
        }
        return out
    }

    /// `bytes` with one random change: a flipped, inserted or deleted byte, or cut short.
    static func mutate(_ bytes: [UInt8], _ random: inout SeededRandom) -> [UInt8] {
        guard !bytes.isEmpty else { return [UInt8.random(in: 0...255, using: &random)] }
        var out = bytes
        let at = Int.random(in: 0..<out.count, using: &random)
        switch Int.random(in: 0..<4, using: &random) {
        case 0: out[at] ^= 1 << UInt8.random(in: 0..<8, using: &random)
        case 1: out.insert(UInt8.random(in: 0...255, using: &random), at: at)
        case 2: out.remove(at: at)
        default: out.removeLast(out.count - at)
        }
        return out
    }

    @Test func fixturesAgree() throws {
        for name in ["users_10.pb", "users_5000.pb"] {
            Self.agree([UInt8](try Repository.fixture(name)))
        }
    }

    @Test func generatedKitchenSinksAndTheirMutationsAgree() throws {
        let schema = ProtobufTestSupport.kitchen
        let codec = ProtobufCodec(schema: schema)
        var generator = ProtobufValueGenerator(schema: schema, seed: 14)
        var random = SeededRandom(seed: 14)
        for _ in 0..<60 {
            let bytes = [UInt8](
                try codec.encode(
                    try generator.value(for: "kitchen.KitchenSink"),
                    hints: ProtobufTestSupport.hints("kitchen.KitchenSink")))
            Self.agree(bytes)
            var mutated = bytes
            for _ in 0..<10 {
                mutated = Self.mutate(mutated, &random)
                Self.agree(mutated)
            }
        }
    }

    @Test func randomMessagesAndTheirMutationsAgree() {
        var random = SeededRandom(seed: 1_400)
        for round in 0..<400 {
            let bytes = Self.message(&random, size: Int.random(in: 1...300, using: &random), depth: 5)
            Self.agree(bytes)
            var mutated = bytes
            for _ in 0..<5 {
                mutated = Self.mutate(mutated, &random)
                Self.agree(mutated)
            }
            // Tight limits: every limit error is found at the same place.
            var limits = DecodingLimits()
            limits.maximumTotalValues = 1 + round % 40
            limits.maximumContainerCount = 1 + round % 7
            limits.maximumStringLength = round % 30
            limits.maximumDepth = 1 + round % 5
            Self.agree(bytes, limits: limits, maxDepth: 1 + round % 6)
            Self.agree(mutated, limits: limits, maxDepth: 2 + round % 4)
        }
    }

    @Test func randomBytesAgree() {
        var random = SeededRandom(seed: 77)
        for _ in 0..<3_000 {
            let bytes = (0..<Int.random(in: 0..<24, using: &random)).map { _ -> UInt8 in
                [0x08, 0x0A, 0x0B, 0x0C, 0x12, 0x15, 0x19, 0x01, 0x02, 0x80, 0xFF, 0x00, 0x13, 0x14 as UInt8]
                    .randomElement(using: &random)!
            }
            Self.agree(bytes)
        }
    }

    @Test func utf8EdgesAgree() {
        // Payloads are not guessed at `maxDepth` 1, so each is a string or bytes by its UTF-8 alone.
        let payloads: [[UInt8]] = [
            [0xC0, 0x80], [0xC1, 0xBF], [0xC2, 0x80], [0xDF, 0xBF], [0xE0, 0x9F, 0xBF], [0xE0, 0xA0, 0x80],
            [0xED, 0x9F, 0xBF], [0xED, 0xA0, 0x80], [0xEF, 0xBF, 0xBF], [0xF0, 0x8F, 0xBF, 0xBF],
            [0xF0, 0x90, 0x80, 0x80], [0xF4, 0x8F, 0xBF, 0xBF], [0xF4, 0x90, 0x80, 0x80], [0xF5, 0x80, 0x80, 0x80],
            [0xE2, 0x82], [0xE2, 0x82, 0x41], [0x80], [0xFF], Array("Zoë Hernández".utf8),
            Array("plain ascii, long enough".utf8) + [0xE2, 0x82, 0xAC] + Array("and more ascii text".utf8),
            Array("plain ascii, long enough".utf8) + [0xE2, 0x82] + Array("and more ascii text".utf8),
        ]
        // Alone (the last bytes of the input) and followed by more (read past the payload and masked off).
        let more = Self.lengthDelimited(2, [UInt8](repeating: 0x41, count: 20))
        for payload in payloads {
            Self.agree(Self.lengthDelimited(1, payload), maxDepth: 1)
            Self.agree(Self.lengthDelimited(1, payload))
            Self.agree(Self.lengthDelimited(1, payload) + more, maxDepth: 1)
        }
        var random = SeededRandom(seed: 8)
        for _ in 0..<2_000 {
            let payload = (0..<Int.random(in: 1..<12, using: &random)).map { _ -> UInt8 in
                [0x41, 0x80, 0xBF, 0xC2, 0xE0, 0xED, 0xF0, 0xF4, 0x9F, 0xA0, 0x8F, 0x90 as UInt8].randomElement(
                    using: &random)!
            }
            Self.agree(Self.lengthDelimited(1, payload), maxDepth: 1)
            Self.agree(Self.lengthDelimited(1, payload) + more, maxDepth: 1)
        }
    }

    /// Short strings are built in the standard library's inline layout from their bytes: they must be the
    /// standard library's own strings bit for bit (count, ASCII flag and all), at every length around 15 and at
    /// the very end of the input (where no byte past the payload may be read).
    @Test func stringsAreTheStandardLibrarysOwnBitForBit() throws {
        for length in 0...18 {
            for sample in ["abcdefghijklmnopqrs", "zoë€ééééééééé"] {
                let utf8 = Array(Array(sample.utf8).prefix(length))
                guard let expected = String(validating: utf8, as: UTF8.self) else { continue }
                // Field 2 ends the first message; in the second, 0xFF bytes follow (read, then masked off).
                let pair = Self.lengthDelimited(1, utf8) + Self.lengthDelimited(2, utf8)
                for bytes in [pair, pair + Self.lengthDelimited(3, [UInt8](repeating: 0xFF, count: 20))] {
                    try Self.expectStandardStrings(bytes, utf8, expected, length: length)
                }
            }
        }
    }

    /// Expects fields 1 and 2 of `bytes`, when strings, to be `expected` bit for bit.
    static func expectStandardStrings(_ bytes: [UInt8], _ utf8: [UInt8], _ expected: String, length: Int) throws {
        let value = try ProtobufRawDecoder().decode(Data(bytes))
        for key in ["1", "2"] {
            // Payloads that read as messages are not strings; they are covered elsewhere.
            guard case .string(let built)? = value[key] else { continue }
            #expect(built == expected)
            #expect(built.utf8.count == utf8.count)
            #expect(built.utf8.allSatisfy { $0 < 0x80 } == expected.utf8.allSatisfy { $0 < 0x80 })
            let bits = unsafeBitCast(built, to: (UInt64, UInt64).self)
            let expectedBits = unsafeBitCast(String(decoding: utf8, as: UTF8.self), to: (UInt64, UInt64).self)
            if length <= 15 { #expect(bits == expectedBits, "length \(length) of \(expected)") }
        }
    }

    @Test func adversarialNestingsAgree() {
        // A chain of payloads each of which is almost a message (its last byte breaks it).
        var almost: [UInt8] = [0x08, 0x01]
        for _ in 0..<100 { almost = Self.lengthDelimited(1, almost + [0x0F]) }
        Self.agree(almost)
        // A chain that is a message down to the depth limit and beyond.
        Self.agree(ProtobufHostileInputTests.nested(levels: 200, field: 1))
        Self.agree(ProtobufHostileInputTests.nested(levels: 200, field: 1), maxDepth: 3)
        // Groups within guessed payloads, unmatched and unclosed groups.
        Self.agree(Self.lengthDelimited(2, [0x0B, 0x08, 0x01, 0x0C]))
        Self.agree(Self.lengthDelimited(2, [0x0B, 0x08, 0x01]))
        Self.agree(Self.lengthDelimited(2, [0x0B, 0x08, 0x01, 0x14]))
        Self.agree([0x0B, 0x0B, 0x0C])
        // Interleaved repeats, which group by first appearance.
        Self.agree([0x10, 0x01, 0x08, 0x02, 0x10, 0x03, 0x18, 0x04, 0x08, 0x05])
        // Out of order without repeats, and more than 16 numbers out of order with some repeated (the table).
        Self.agree([0x10, 0x01, 0x08, 0x02, 0x1A, 0x01, 0x41, 0x08, 0x03])
        var many: [UInt8] = []
        for number in (1...40).reversed() { many += Self.key(UInt64(number), 0) + [0x01] }
        for number in stride(from: 1, through: 40, by: 3) { many += Self.key(UInt64(number), 2) + [0x01, 0x41] }
        Self.agree(many)
        Self.agree(Self.lengthDelimited(5, many) + Self.lengthDelimited(5, many))
        // A limit met inside a payload that is not a message is still an error.
        var limits = DecodingLimits()
        limits.maximumContainerCount = 2
        Self.agree(Self.lengthDelimited(1, [0x08, 0x01, 0x08, 0x01, 0x08, 0x01, 0x0F]), limits: limits)
        limits = DecodingLimits()
        limits.maximumTotalValues = 3
        Self.agree(Self.lengthDelimited(1, [0x08, 0x01, 0x08, 0x01, 0x0F]), limits: limits)
        Self.agree(Self.lengthDelimited(1, [0x08, 0x01, 0x0F]), limits: limits)
        // Long and odd varints and keys.
        Self.agree([0x08] + [UInt8](repeating: 0xFF, count: 9) + [0x01])
        Self.agree([0x08] + [UInt8](repeating: 0xFF, count: 10) + [0x01])
        Self.agree([0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01, 0x00])
        Self.agree([0x0A, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F])
        Self.agree([0x0A, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01])
        Self.agree([0x0E, 0x01])
    }

    /// The shape the scan records for each message (its runs when its numbers are in order) against the
    /// oracle: runs of one, runs of many with nested messages in them, runs right below and at the cap of
    /// 65,535, groups, nested messages out of order, and guesses that fail after their first fields.
    @Test func recordedShapesAgree() {
        let user = Self.key(1, 0) + [0x07] + Self.lengthDelimited(2, Array("Ann".utf8)) + Self.key(3, 5) + [1, 2, 3, 4]
        var list = Self.key(1, 0) + [0x02]
        for _ in 0..<5 { list += Self.lengthDelimited(3, user) }
        list += Self.key(4, 0) + [0x01] + Self.key(4, 0) + [0x02]
        Self.agree(list)
        Self.agree(Self.lengthDelimited(9, list) + Self.lengthDelimited(9, list) + Self.key(10, 0) + [0x00])
        // Groups with runs inside, a run of groups, and a group out of order.
        let group = Self.key(7, 3) + Self.key(1, 0) + [0x01] + Self.key(1, 0) + [0x02] + Self.key(7, 4)
        Self.agree(group + group + Self.key(8, 0) + [0x03])
        Self.agree(Self.key(8, 0) + [0x03] + group + Self.key(2, 0) + [0x01])
        // A nested message out of order within ordered ones, and one whose last field repeats an earlier one.
        let disordered = Self.key(2, 0) + [0x01] + Self.key(1, 0) + [0x02]
        let reopened = Self.key(1, 0) + [0x01] + Self.key(2, 0) + [0x02] + Self.key(1, 0) + [0x03]
        Self.agree(Self.lengthDelimited(1, disordered) + Self.lengthDelimited(1, reopened) + Self.lengthDelimited(2, user))
        // A guess that fails after fields of its own leaves the outer shape as it was.
        Self.agree(Self.key(1, 0) + [0x01] + Self.lengthDelimited(2, user + [0x0F]) + Self.key(3, 0) + [0x01])
        // 65,534 runs (the most a shape records), 65,535 (counted instead), in the outer and a nested message.
        for runs in [65_534, 65_535, 65_536] {
            var fields: [UInt8] = []
            for number in 1...runs { fields += Self.key(UInt64(number), 0) + [0x01] }
            Self.agree(fields)
            Self.agree(Self.lengthDelimited(1, fields) + Self.key(2, 0) + [0x01])
        }
    }

    /// Messages whose numbers go down but whose occurrences of each number are side by side (counted in one pass,
    /// as most guessed payloads are) and ones where a number comes back after others (grouped), against the
    /// oracle: runs after the fall, a number seen before the fall coming back on the way up, and 15 to 17
    /// distinct numbers (the linear look's limit) with and without one coming back.
    @Test func disorderedMessagesAgree() {
        func message(_ numbers: [UInt64]) -> [UInt8] {
            numbers.enumerated().flatMap { k, number in Self.key(number, 0) + [UInt8(k % 100)] }
        }
        let orders: [[UInt64]] = [
            [2, 1], [14, 12], [3, 1, 1, 2], [5, 4, 4, 6, 6, 6], [9, 1, 5, 7], [3, 1, 3], [1, 2, 1], [4, 2, 3, 4],
            [5, 4, 4, 5], [2, 1, 2, 2], [3, 2, 1, 5, 2],
            Array((1...15).reversed()), Array((1...16).reversed()), Array((1...17).reversed()),
            Array((1...15).reversed()) + [15], Array((1...16).reversed()) + [1], Array((1...17).reversed()) + [30],
        ]
        for order in orders {
            let fields = message(order)
            Self.agree(fields)
            Self.agree(Self.lengthDelimited(1, fields) + Self.lengthDelimited(1, fields) + Self.key(2, 0) + [0x01])
            Self.agree(Self.lengthDelimited(3, fields) + Self.lengthDelimited(1, message(order.reversed())))
        }
    }

    /// The builder's scratch (the run stack and the field numbers share one allocation, 64 runs and 16 numbers
    /// at first) growing while a message is grouped: messages out of order with 15 to 200 distinct numbers
    /// (past the 16-number table and past the run stack's room while the numbers are pushed on it), with
    /// repeats, nested two deep and beside ordered ones, against the oracle.
    @Test func scratchGrowthAgrees() {
        for distinct in [15, 16, 17, 63, 64, 65, 66, 130, 200] {
            // Descending numbers (out of order from the second field), each given twice but the first.
            var disordered: [UInt8] = []
            for number in stride(from: distinct, through: 1, by: -1) {
                disordered += Self.key(UInt64(number), 0) + [UInt8(number % 100)]
                if number != distinct { disordered += Self.key(UInt64(number), 5) + [1, 2, 3, 4] }
            }
            var ordered: [UInt8] = []
            for number in 1...distinct { ordered += Self.key(UInt64(number), 0) + [0x01] }
            Self.agree(disordered)
            Self.agree(Self.lengthDelimited(3, disordered) + Self.lengthDelimited(1, ordered))
            Self.agree(
                Self.lengthDelimited(2, Self.lengthDelimited(7, disordered) + disordered) + Self.key(1, 0) + [0x01]
                    + Self.lengthDelimited(2, ordered))
        }
    }

    /// The branch-free quick rejection of a payload's guess: for every one-byte key, second byte and payload
    /// length, the same answer as the switch on the wire type it replaced, and never a rejection of a payload
    /// whose scan would not fail as malformed.
    @Test func quickRejectionIsExactAndSound() {
        func former(_ key: UInt8, _ second: UInt8, left: Int) -> Bool {
            guard key < 0x80 else { return false }
            switch key & 7 {
            case 0, 3: return key < 8
            case 1: return key < 8 || left < 8
            case 5: return key < 8 || left < 4
            case 2: return key < 8 || left == 0 || (second < 0x80 && Int(second) > left - 1)
            default: return true
            }
        }
        var buffer = [UInt8](repeating: 0, count: 16)
        for key in 0...255 {
            for second in 0...255 {
                for left in 0...10 {
                    buffer[0] = UInt8(key)
                    buffer[1] = UInt8(second)
                    let fails = buffer.withUnsafeBufferPointer { bytes in
                        ProtobufRawScanner.failsAtOnce(bytes.baseAddress!, 0..<(left + 1))
                    }
                    #expect(fails == former(UInt8(key), UInt8(second), left: left), "key \(key) \(second) \(left)")
                    guard fails else { continue }
                    let scanned = buffer.withUnsafeBufferPointer { bytes in
                        var scanner = ProtobufRawScanner(
                            UnsafeBufferPointer(rebasing: bytes[0..<(left + 1)]), limits: DecodingLimits(), maxDepth: 64)
                        defer { scanner.deallocate() }
                        guard scanner.scanMessage(from: 0, to: left + 1, depth: 1, endGroup: 0) < 0 else { return false }
                        return scanner.failure.isMalformed
                    }
                    #expect(scanned, "key \(key) \(second) \(left) scans")
                }
            }
        }
    }
}
