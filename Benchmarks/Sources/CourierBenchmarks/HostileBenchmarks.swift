import Courier
import CourierCodecs
import CourierSchema
import Foundation

/// Hostile inputs: the validator (catastrophic patterns, a recursive fan-out schema, `multipleOf` with a tiny
/// divisor) and the decoders (an XML element with 400,000 attributes, 1,000,000 protobuf tags through the
/// schema-less raw decoder, deeply nested JSON) at three sizes, ten times apart. Each line says the input's
/// size, the time per input byte and how much the process's peak memory grew, so that linearity shows: a
/// linear operation keeps its ns/byte as the input grows tenfold; a quadratic one multiplies it by ten; one
/// that stops at a limit (a depth, an attribute count) divides it. The outcome (valid, invalid, gave up at a
/// limit, rejected) is printed beside it, because a fast answer is only good if it is the right one.
///
/// The peers of these figures are the same operation on the smaller inputs: the ratio between sizes is the
/// result, not the absolute time.
enum HostileBenchmarks {
    static func run(_ h: inout Harness) throws {
        let saved = (h.rounds, h.minimumRoundTime)
        h.rounds = 3
        h.minimumRoundTime = .milliseconds(100)
        defer { (h.rounds, h.minimumRoundTime) = saved }

        // The fixed cost of one validation, to subtract from the small inputs below.
        let trivial = try compile(#"{"type": "integer"}"#)
        try scaling(&h, "baseline: {\"type\": \"integer\"} on 1", sizes: [1]) { _ in
            (1, { outcome(trivial.validationOutcome(.int(1))) })
        }

        let catastrophic: [(pattern: String, subject: (Int) -> String)] = [
            ("^(a+)+$", { String(repeating: "a", count: $0) + "!" }),
            ("(a|aa)*b", { String(repeating: "a", count: $0) }),
            ("a*a*a*a*a*a*a*a*c", { String(repeating: "a", count: $0) }),
            (#"\s*\s*$"#, { String(repeating: " ", count: $0) + "x" }),
        ]
        for (pattern, subject) in catastrophic {
            let schema = try compile(#"{"pattern": \#(jsonString(pattern))}"#)
            try scaling(&h, "pattern \(pattern)", sizes: [32, 320, 3_200]) { n in
                let instance = Value.string(subject(n))
                return (subject(n).utf8.count, { outcome(schema.validationOutcome(instance)) })
            }
        }

        // oneOf evaluates every branch, and both branches recurse: 2^depth evaluations without memoisation.
        let fanOut = try compile(
            #"""
            {"$defs": {"node": {"oneOf": [
                {"type": "integer"},
                {"type": "array", "items": {"anyOf": [{"$ref": "#/$defs/node"}, {"$ref": "#/$defs/node"}]}},
                {"type": "array", "items": {"$ref": "#/$defs/node"}}]}},
             "$ref": "#/$defs/node"}
            """#)
        try scaling(&h, "recursive fan-out schema, nested arrays", sizes: [10, 100, 1_000]) { depth in
            var instance = Value.string("leaf")
            for _ in 0..<depth { instance = .array([instance]) }
            return (2 * depth + 6, { outcome(fanOut.validationOutcome(instance)) })
        }

        // Every number is a multiple of 1e-300, so the whole array is checked (an invalid one would stop at
        // the 100th violation).
        let tinyDivisor = try compile(#"{"items": {"multipleOf": 1e-300}}"#)
        try scaling(&h, "multipleOf 1e-300 over n numbers", sizes: [100, 1_000, 10_000]) { count in
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
            let instance = try JSONCodec().decode(Array(text.utf8))
            return (text.utf8.count, { outcome(tinyDivisor.validationOutcome(instance)) })
        }

        // With the default limits the start-tag pre-scan rejects the element at its 1,001st attribute, so the
        // time stays flat as the input grows. With the limit raised, libxml2 itself compares each attribute with
        // all earlier ones (quadratic: ns/byte grows with n), which is why the limit exists; those sizes are
        // kept small enough to finish.
        for (label, limit, sizes) in [
            ("default limits", nil, [4_000, 40_000, 400_000]), ("attribute limit raised", 400_001, [1_000, 4_000, 16_000]),
        ] as [(String, Int?, [Int])] {
            var options = XMLCodec.Options()
            if let limit { options.limits.maximumAttributesPerElement = limit }
            let codec = XMLCodec(options: options)
            try scaling(&h, "xml: element with n attributes (\(label))", sizes: sizes) { count in
                var text = "<r"
                for i in 0..<count { text += " a\(i)=\"\(i)\"" }
                text += "/>"
                let data = Data(text.utf8)
                return (data.count, { decoded { try codec.decode(data, hints: CodingHints()) } })
            }
        }

        let raw = ProtobufRawDecoder()
        try scaling(&h, "protobuf raw: n tags (field 1 varint)", sizes: [10_000, 100_000, 1_000_000]) { count in
            let data = Data([UInt8](repeating: 0, count: 2 * count).enumerated().map { $0.offset % 2 == 0 ? 0x08 : 0x01 })
            return (data.count, { decoded { try raw.decode(data) } })
        }

        let json = JSONCodec()
        try scaling(&h, "json: n nested arrays (rejected at the depth limit)", sizes: [10_000, 100_000, 1_000_000]) {
            count in
            let bytes = [UInt8](repeating: UInt8(ascii: "["), count: count)
            return (bytes.count, { decoded { try json.decode(bytes) } })
        }
    }

    /// Measures the operation `make` returns for each size: the harness's line, then the size, ns per byte,
    /// the growth of peak memory and the outcome.
    static func scaling(
        _ h: inout Harness, _ name: String, sizes: [Int], _ make: (Int) throws -> (bytes: Int, run: () -> String)
    ) throws {
        for size in sizes {
            let (bytes, operation) = try make(size)
            let before = peakMemoryMiB()
            var last = ""
            let result = h.measure("\(name), n=\(size)", bytes: bytes) { last = operation() }
            print(String(format: "      %9d bytes %12.2f ns/byte   peak memory +%7.1f MiB   %@", bytes,
                         result.nanosPerOp / Double(max(bytes, 1)), peakMemoryMiB() - before, last as NSString))
        }
    }

    static func compile(_ json: String) throws -> CompiledSchema {
        var registry = SchemaRegistry()
        let uri = try registry.add(try JSONCodec().decode(Array(json.utf8)), uri: "https://courier.example/bench/hostile.json")
        return try registry.compile(id: uri)
    }

    static func jsonString(_ text: String) -> String {
        String(decoding: (try? JSONCodec().encode(.string(text), hints: CodingHints())) ?? Data(), as: UTF8.self)
    }

    static func outcome(_ outcome: CompiledSchema.Outcome) -> String {
        switch outcome {
        case .valid: return "valid"
        case .invalid(let violations): return "invalid (\(violations.count) violations)"
        case .gaveUp(let limit, _): return "gave up: \(limit)"
        }
    }

    static func decoded(_ body: () throws -> Value) -> String {
        do {
            _ = try body()
            return "decoded"
        } catch let error as CourierError {
            return "rejected: \(error.code) \(error.detail ?? "")"
        } catch {
            return "rejected by a non-Courier error: \(error)"
        }
    }
}
