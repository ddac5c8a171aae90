#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

extension FuzzOracle {
    /// Settings of ``mutate(seeds:options:)``. Everything is counted, nothing timed: the same seeds and
    /// options give the same inputs in the same order on every machine, so a finding reproduces.
    ///
    /// ```swift
    /// var options = FuzzOracle.MutationOptions()
    /// options.seed = 42
    /// options.iterations = 50_000
    /// options.dictionary = [Data("\"@".utf8), Data("xmlns:".utf8)]   // tokens worth splicing in
    /// ```
    public struct MutationOptions: Sendable {
        /// The random seed. Default 0.
        public var seed: UInt64 = 0
        /// How many mutated inputs are checked (the seeds are checked first, besides). Default 10,000.
        public var iterations = 10_000
        /// The longest input tried, in bytes; longer mutations are cut. Default 4,096.
        public var maximumInputSize = 4_096
        /// The most mutations stacked on one input before it is checked. Default 4.
        public var maximumStackedMutations = 4
        /// The most inputs kept to mutate further (seeds and inputs that showed a new outcome). Default 512.
        public var maximumCorpusSize = 512
        /// Byte strings worth inserting or overwriting with (keywords, delimiters, magic numbers).
        /// Default: none (the loop still uses its own interesting bytes and integers).
        public var dictionary: [Data] = []
        /// How many checks may be spent shrinking the first failing input. Default 2,000; 0 keeps it as found.
        public var minimizationChecks = 2_000

        /// The defaults.
        public init() {}
    }

    /// What a mutation run did and the first input that broke the property, if one did.
    public struct MutationReport: Sendable, CustomStringConvertible {
        /// The inputs checked: seeds and mutations (minimization not counted).
        public var checkedInputs: Int
        /// The first violation found, with its input shrunk (see ``MutationOptions/minimizationChecks``) to a
        /// smaller one that breaks the property the same way; `nil` when the property held for every input.
        public var violation: Violation?
        /// The failing input as the loop first produced it, before shrinking.
        public var originalInput: Data?
        /// The 0-based number of the mutated input that failed (`nil` when none, or when a seed failed).
        public var failingIteration: Int?
        /// The inputs kept to mutate at the end: the seeds and each input that showed a new outcome.
        public var corpusSize: Int
        /// How many distinct outcomes (error codes and depths, decoded value sketches) were seen.
        public var distinctOutcomes: Int

        public var description: String {
            guard let violation else {
                return "the property held for \(checkedInputs) inputs (\(distinctOutcomes) distinct outcomes, corpus \(corpusSize))"
            }
            let found = failingIteration.map { "mutation #\($0)" } ?? "a seed"
            let size = originalInput.map { ", shrunk from \($0.count) bytes" } ?? ""
            return "broken by \(found) after \(checkedInputs) inputs\(size): \(violation)"
        }
    }

    /// Runs an in-process mutation loop from `seeds`: each iteration picks a kept input, stacks a few byte
    /// mutations on it (bit flips, interesting bytes and integers, insertions, deletions, duplicated ranges,
    /// truncation, splices with another kept input, dictionary tokens) and checks the result
    /// (``check(_:)``). Inputs that show an outcome not seen before — another error code or depth, a
    /// differently shaped value — are kept to mutate further. Stops at the first violation, shrinks its input
    /// and reports it, or after ``MutationOptions/iterations`` inputs.
    ///
    /// It needs no fuzzing engine or sanitizer build, so it runs in an ordinary test:
    ///
    /// ```swift
    /// @Test func myCodecHoldsUnderMutation() {
    ///     var options = FuzzOracle.MutationOptions()
    ///     options.iterations = 20_000
    ///     let report = FuzzOracle(codec: MyCodec()).mutate(seeds: [Data(#"{"id":7}"#.utf8)], options: options)
    ///     #expect(report.violation == nil, "\(report)")
    /// }
    /// ```
    public func mutate(seeds: [Data], options: MutationOptions = MutationOptions()) -> MutationReport {
        var random = SeededRandom(seed: options.seed)
        let limit = max(0, options.maximumInputSize)
        var corpus: [[UInt8]] = []
        var outcomes = Set<String>()
        var checked = 0

        func run(_ input: [UInt8]) -> (Violation?, isNew: Bool) {
            checked += 1
            let data = Data(input)
            if let violation = check(data) { return (violation, false) }
            return (nil, outcomes.insert(outcome(of: data)).inserted)
        }
        func report(_ violation: Violation, iteration: Int?) -> MutationReport {
            let shrunk = minimize(violation, checks: options.minimizationChecks)
            return MutationReport(
                checkedInputs: checked, violation: shrunk, originalInput: violation.input, failingIteration: iteration,
                corpusSize: corpus.count, distinctOutcomes: outcomes.count)
        }

        for seed in (seeds.isEmpty ? [Data()] : seeds) {
            let input = Array(seed.prefix(limit))
            let (violation, isNew) = run(input)
            if let violation { return report(violation, iteration: nil) }
            if isNew || corpus.isEmpty, corpus.count < options.maximumCorpusSize { corpus.append(input) }
        }
        if corpus.isEmpty { corpus.append([]) }
        var mutator = ByteMutator(dictionary: options.dictionary.map { Array($0) })
        for iteration in 0..<max(0, options.iterations) {
            var input = corpus[random.below(corpus.count)]
            for _ in 0..<(1 + random.below(max(1, options.maximumStackedMutations))) {
                mutator.mutate(&input, corpus: corpus, random: &random)
            }
            if input.count > limit { input.removeLast(input.count - limit) }
            let (violation, isNew) = run(input)
            if let violation { return report(violation, iteration: iteration) }
            if isNew {
                if corpus.count < options.maximumCorpusSize {
                    corpus.append(input)
                } else {
                    corpus[random.below(corpus.count)] = input
                }
            }
        }
        return MutationReport(
            checkedInputs: checked, violation: nil, originalInput: nil, failingIteration: nil, corpusSize: corpus.count,
            distinctOutcomes: outcomes.count)
    }

    /// A coarse signature of what `input` did: the error code and coding-path depth, or a sketch of the
    /// decoded value (its kinds, depth and size class). New signatures steer the loop.
    private func outcome(of input: Data) -> String {
        do {
            let value = try codec.decode(input, hints: hints)
            var kinds = Set<String>()
            var depth = 0
            var count = 0
            func walk(_ value: Value, _ level: Int) {
                guard count < 10_000 else { return }
                count += 1
                kinds.insert(value.kindName)
                depth = max(depth, level)
                switch value {
                case .array(let items): for item in items { walk(item, level + 1) }
                case .object(let object): for member in object.values { walk(member, level + 1) }
                default: break
                }
            }
            walk(value, 0)
            return "value \(kinds.sorted()) depth \(depth) size \(count.bitWidth - count.leadingZeroBitCount)"
        } catch let error as CourierError {
            return "error \(error.code.number) at depth \(error.context.codingPath.count)"
        } catch {
            return "foreign"
        }
    }

    /// `violation`'s input made smaller while it still breaks the property the same way, within `checks`
    /// checks: ranges are removed at every offset, long ranges first (halving down to 16 bytes), then every
    /// length from 16 bytes to one — so a member, an element or a tag of a structured input can go whole —
    /// in passes until one removes nothing.
    private func minimize(_ violation: Violation, checks: Int) -> Violation {
        var best = violation
        var bytes = Array(violation.input)
        var budget = checks
        var lengths: [Int] = []
        var long = bytes.count / 2
        while long > 16 {
            lengths.append(long)
            long /= 2
        }
        lengths += (1...16).reversed()
        // Passes until one removes nothing (a removal can make another possible) or the budget is spent.
        var shrank = true
        while shrank, budget > 0 {
            shrank = false
            for length in lengths where length <= bytes.count {
                var start = 0
                while start + length <= bytes.count, budget > 0 {
                    var candidate = bytes
                    candidate.removeSubrange(start..<(start + length))
                    budget -= 1
                    if let found = check(Data(candidate)), found.kind == violation.kind {
                        bytes = candidate
                        best = found
                        shrank = true
                    } else {
                        start += 1
                    }
                }
            }
        }
        return best
    }
}

/// The byte-level mutations of ``FuzzOracle/mutate(seeds:options:)``.
struct ByteMutator {
    let dictionary: [[UInt8]]

    /// Bytes that sit on format boundaries: NUL, sign and high bits, delimiters of JSON and XML, digits.
    static let interestingBytes: [UInt8] = [0x00, 0x01, 0x7F, 0x80, 0xFF, 0x20, 0x0A, 0x09] + Array("\"\\<>&;{}[],:0-.e/=?#".utf8)
    /// Multi-byte strings that break parsers: overlong and surrogate UTF-8, a 10-byte varint, huge numbers,
    /// entity and comment openers, a BOM.
    static let interestingStrings: [[UInt8]] = [
        [0xC0, 0x80], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xEF, 0xBB, 0xBF],
        [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01],
        Array("1e999999".utf8), Array("-0".utf8), Array("18446744073709551616".utf8), Array("\\u0000".utf8),
        Array("\\ud800".utf8), Array("&#0;".utf8), Array("<!--".utf8), Array("]]>".utf8), Array("<![CDATA[".utf8),
    ]
    /// Integers at their types' edges, written little-endian over the input.
    static let interestingIntegers: [UInt64] = [0, 1, 0x7F, 0x80, 0xFF, 0x7FFF, 0x8000, 0xFFFF, 0x7FFF_FFFF, 0x8000_0000,
                                                0xFFFF_FFFF, .max, UInt64(Int64.max)]

    mutating func mutate(_ input: inout [UInt8], corpus: [[UInt8]], random: inout SeededRandom) {
        func position(_ extra: Int) -> Int { random.below(input.count + extra) }
        switch random.below(11) {
        case 0 where !input.isEmpty:                                      // flip a bit
            let i = position(0)
            input[i] ^= UInt8(1) << UInt8(random.below(8))
        case 1 where !input.isEmpty:                                      // an interesting byte over one
            input[position(0)] = Self.interestingBytes[random.below(Self.interestingBytes.count)]
        case 2:                                                           // insert a byte
            let byte = random.chance(50) ? UInt8(truncatingIfNeeded: random.next())
                : Self.interestingBytes[random.below(Self.interestingBytes.count)]
            input.insert(byte, at: position(1))
        case 3 where !input.isEmpty:                                      // delete a range
            let start = position(0)
            input.removeSubrange(start..<min(input.count, start + 1 + random.below(8)))
        case 4 where !input.isEmpty:                                      // duplicate a range elsewhere
            let start = position(0)
            let range = Array(input[start..<min(input.count, start + 1 + random.below(16))])
            input.insert(contentsOf: range, at: position(1))
        case 5 where !input.isEmpty:                                      // truncate
            input.removeSubrange(position(0)...)
        case 6 where !corpus.isEmpty:                                     // splice with another kept input
            let other = corpus[random.below(corpus.count)]
            let cut = position(1)
            input = Array(input[..<cut]) + other[random.below(other.count + 1)...]
        case 7:                                                           // a dictionary token or an interesting string
            let tokens = dictionary.isEmpty || random.chance(30) ? Self.interestingStrings : dictionary
            let token = tokens[random.below(tokens.count)]
            if random.chance(50) || input.isEmpty {
                input.insert(contentsOf: token, at: position(1))
            } else {
                let start = position(0)
                input.replaceSubrange(start..<min(input.count, start + token.count), with: token)
            }
        case 8 where !input.isEmpty:                                      // an edge integer, little-endian
            let value = Self.interestingIntegers[random.below(Self.interestingIntegers.count)]
            let width = [1, 2, 4, 8][random.below(4)]
            let start = position(0)
            for k in 0..<width where start + k < input.count {
                input[start + k] = UInt8(truncatingIfNeeded: value >> (8 * UInt64(k)))
            }
        case 9 where input.count > 1:                                     // swap two bytes
            input.swapAt(position(0), position(0))
        default:                                                          // an ASCII digit run
            let digits = (0...random.below(20)).map { _ in UInt8(ascii: "0") + UInt8(random.below(10)) }
            input.insert(contentsOf: digits, at: position(1))
        }
    }
}
