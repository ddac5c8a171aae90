import Benchmark
import BenchmarkSupport
import Courier
import CourierCodecs
import CourierSchema
import Foundation

/// Hostile inputs: the validator (catastrophic patterns, a recursive fan-out schema, `multipleOf` with a tiny
/// divisor) and the decoders (an XML element with 400,000 attributes, 1,000,000 protobuf tags through the
/// schema-less raw decoder, deeply nested JSON, typed JSON and XML lookups that miss the hint) at three sizes,
/// ten times apart. The table script prints each input's size, the time per input byte and the peak memory
/// growth, so that linearity shows: a linear operation keeps its ns/byte as the input grows tenfold; a quadratic
/// one multiplies it by ten; one that stops at a limit (a depth, an attribute count) divides it. The outcome
/// (valid, invalid, gave up at a limit, rejected) is printed beside it, because a fast answer is only good if it
/// is the right one.
///
/// Names: `hostile.<case> n=<size> bytes=<input bytes>`; the peers of these figures are the same operation on
/// the smaller inputs: the ratio between sizes is the result, not the absolute time.
func compile(_ json: String) -> CompiledSchema {
    var registry = SchemaRegistry()
    let uri = try! registry.add(try! JSONCodec().decode(Array(json.utf8)), uri: "https://courier.example/bench/hostile.json")
    return try! registry.compile(id: uri)
}

func jsonString(_ text: String) -> String {
    String(decoding: (try? JSONCodec().encode(.string(text), hints: CodingHints())) ?? Data(), as: UTF8.self)
}

func outcome(_ outcome: CompiledSchema.Outcome) -> String {
    switch outcome {
    case .valid: return "valid"
    case .invalid(let violations): return "invalid (\(violations.count) violations)"
    case .gaveUp(let limit, _): return "gave up: \(limit)"
    }
}

func decoded(_ body: () throws -> Value) -> String {
    do {
        _ = try body()
        return "decoded"
    } catch let error as CourierError {
        return "rejected: \(error.code) \(error.detail ?? "")"
    } catch {
        return "rejected by a non-Courier error: \(error)"
    }
}

/// The outcome of a typed decode: its count of elements, or the error it was rejected with.
func typed(_ body: () throws -> Int) -> String {
    do {
        return "decoded \(try body()) members"
    } catch let error as CourierError {
        return "rejected: \(error.code) \(error.detail ?? "")"
    } catch {
        return "rejected by a non-Courier error: \(error)"
    }
}

/// Reads every member of an object from the last to the first.
struct ReadInReverse: Decodable {
    var count = 0

    struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Key.self)
        for key in container.allKeys.reversed() { count += try container.decode(Int.self, forKey: key) >= 0 ? 1 : 0 }
    }
}

/// Registers one benchmark per size: `make(size)` gives the input's byte count and the operation, which returns
/// its outcome. The input is built, and the outcome noted, in the benchmark's setup, not at registration.
func scaling(_ name: String, sizes: [Int], _ make: @escaping @Sendable (Int) -> (bytes: Int, run: @Sendable () -> String)) {
    for size in sizes {
        let box = OperationBox()
        let title = "hostile.\(name) n=\(size)"
        var configuration = BenchmarkSupport.memory(iterations: 1_000)
        configuration.warmupIterations = 1
        configuration.maxDuration = .seconds(1)
        configuration.setup = {
            let (bytes, run) = make(size)
            box.run = run
            BenchmarkSupport.note(title, "bytes=\(bytes)\t\(run())")
        }
        configuration.teardown = { box.run = nil }
        Benchmark(title, configuration: configuration) { benchmark in
            guard let run = box.run else { return }
            BenchmarkSupport.measurePeakMemory(benchmark) { blackHole(run()) }
        }
    }
}

/// The operation a benchmark's setup built, for its iterations.
final class OperationBox: @unchecked Sendable {
    var run: (@Sendable () -> String)?
}

let benchmarks: @Sendable () -> Void = {
    // The fixed cost of one validation, to subtract from the small inputs below.
    scaling("baseline {\"type\": \"integer\"} on 1", sizes: [1]) { _ in
        let trivial = compile(#"{"type": "integer"}"#)
        return (1, { outcome(trivial.validationOutcome(.int(1))) })
    }

    let catastrophic: [(pattern: String, subject: @Sendable (Int) -> String)] = [
        ("^(a+)+$", { String(repeating: "a", count: $0) + "!" }),
        ("(a|aa)*b", { String(repeating: "a", count: $0) }),
        ("a*a*a*a*a*a*a*a*c", { String(repeating: "a", count: $0) }),
        (#"\s*\s*$"#, { String(repeating: " ", count: $0) + "x" }),
    ]
    for (pattern, subject) in catastrophic {
        scaling("pattern \(pattern)", sizes: [32, 320, 3_200]) { n in
            let schema = compile(#"{"pattern": \#(jsonString(pattern))}"#)
            let instance = Value.string(subject(n))
            return (subject(n).utf8.count, { outcome(schema.validationOutcome(instance)) })
        }
    }

    // oneOf evaluates every branch, and both branches recurse: 2^depth evaluations without memoisation.
    scaling("recursive fan-out schema, nested arrays", sizes: [10, 100, 1_000]) { depth in
        let fanOut = compile(
            #"""
            {"$defs": {"node": {"oneOf": [
                {"type": "integer"},
                {"type": "array", "items": {"anyOf": [{"$ref": "#/$defs/node"}, {"$ref": "#/$defs/node"}]}},
                {"type": "array", "items": {"$ref": "#/$defs/node"}}]}},
             "$ref": "#/$defs/node"}
            """#)
        var instance = Value.string("leaf")
        for _ in 0..<depth { instance = .array([instance]) }
        return (2 * depth + 6, { [instance] in outcome(fanOut.validationOutcome(instance)) })
    }

    // Every number is a multiple of 1e-300, so the whole array is checked (an invalid one would stop at the
    // 100th violation).
    scaling("multipleOf 1e-300 over n numbers", sizes: [100, 1_000, 10_000]) { count in
        let tinyDivisor = compile(#"{"items": {"multipleOf": 1e-300}}"#)
        var text = "["
        for i in 0..<count {
            if i > 0 { text += "," }
            switch i % 4 {
            case 0: text += "\(i).\(i % 97)e-\(i % 290)"
            case 1: text += "1e308"
            case 2: text += "-7e-300"
            default: text += "\(Double(i) / 7)"
            }
        }
        text += "]"
        let instance = try! JSONCodec().decode(Array(text.utf8))
        return (text.utf8.count, { outcome(tinyDivisor.validationOutcome(instance)) })
    }

    // With the default limits the start-tag pre-scan rejects the element at its 1,001st attribute, so the time
    // stays flat as the input grows. With the limit raised, libxml2 itself compares each attribute with all
    // earlier ones (quadratic: ns/byte grows with n), which is why the limit exists; those sizes are kept small
    // enough to finish.
    for (label, limit, sizes) in [
        ("default limits", nil, [4_000, 40_000, 400_000]), ("attribute limit raised", 400_001, [1_000, 4_000, 16_000]),
    ] as [(String, Int?, [Int])] {
        scaling("xml element with n attributes (\(label))", sizes: sizes) { count in
            var options = XMLCodec.Options()
            if let limit { options.limits.maximumAttributesPerElement = limit }
            let codec = XMLCodec(options: options)
            var text = "<r"
            for i in 0..<count { text += " a\(i)=\"\(i)\"" }
            text += "/>"
            let data = Data(text.utf8)
            return (data.count, { decoded { try codec.decode(data, hints: CodingHints()) } })
        }
    }

    scaling("protobuf raw, n tags (field 1 varint)", sizes: [10_000, 100_000, 1_000_000]) { count in
        let raw = ProtobufRawDecoder()
        let data = Data((0..<(2 * count)).map { $0 % 2 == 0 ? 0x08 : 0x01 })
        return (data.count, { decoded { try raw.decode(data) } })
    }

    // The typed JSON decoder finds a member by the hint left by the previous lookup; an object whose lookups
    // keep missing it (escaped names, members read out of order) is looked up through a table of its names.
    scaling("json typed [String: Int] with n escaped names", sizes: [1_000, 10_000, 100_000]) { count in
        let json = JSONCodec()
        let data = Data(("{" + (0..<count).map { "\"\\u0061\($0)\":\($0)" }.joined(separator: ",") + "}").utf8)
        return (data.count, {
            typed { try json.decode([String: Int].self, from: data, hints: CodingHints(), decoder: ValueDecoder()).count }
        })
    }

    scaling("json typed model reading n members in reverse", sizes: [1_000, 10_000, 100_000]) { count in
        let json = JSONCodec()
        let data = Data(("{" + (0..<count).map { "\"k\($0)\":\($0)" }.joined(separator: ",") + "}").utf8)
        return (data.count, {
            typed { try json.decode(ReadInReverse.self, from: data, hints: CodingHints(), decoder: ValueDecoder()).count }
        })
    }

    // Within `maximumDistinctNames` (50,000): each member has a name of its own.
    scaling("xml typed model reading n members in reverse", sizes: [1_000, 10_000, 45_000]) { count in
        let xml = XMLCodec()
        var hints = CodingHints()
        hints.shape = ValueShape(of: [String: Int].self)
        let data = Data(("<r>" + (0..<count).map { "<k\($0)>\($0)</k\($0)>" }.joined() + "</r>").utf8)
        return (data.count, { [hints] in
            typed { try xml.decode(ReadInReverse.self, from: data, hints: hints, decoder: ValueDecoder()).count }
        })
    }

    // libxml2 2.9's name dictionary stops growing its table at 16,384 chains: past `maximumDistinctNames`
    // (50,000) the parse stops rather than turn quadratic.
    scaling("xml n distinct element names", sizes: [10_000, 100_000, 1_000_000]) { count in
        let xml = XMLCodec()
        let data = Data(("<r>" + (0..<count).map { "<k\($0)/>" }.joined() + "</r>").utf8)
        return (data.count, { decoded { try xml.decode(data, hints: CodingHints()) } })
    }

    scaling("json n nested arrays (rejected at the depth limit)", sizes: [10_000, 100_000, 1_000_000]) { count in
        let json = JSONCodec()
        let bytes = [UInt8](repeating: UInt8(ascii: "["), count: count)
        return (bytes.count, { decoded { try json.decode(bytes) } })
    }
}
