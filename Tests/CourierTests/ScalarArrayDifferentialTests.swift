import Foundation
import Testing

import Courier
import CourierTestSupport

/// A differential attack on the one-pass reads of scalar arrays: for about 150 hostile spellings of an element,
/// in several positions, for every scalar type, the typed JSON decoder must give what the `Value` path gives
/// (the same value, or an error with the same code and coding path), and both must read `[E]` as a decoder
/// that reads it one element at a time (``PerElement``, which never takes the one-pass read).
@Suite struct ScalarArrayDifferentialTests {
    /// Reads an array one element at a time, through an unkeyed container.
    struct PerElement<E: Decodable>: Decodable {
        var items: [E]

        init(from decoder: any Decoder) throws {
            var container = try decoder.unkeyedContainer()
            var items: [E] = []
            while !container.isAtEnd { items.append(try container.decode(E.self)) }
            self.items = items
        }
    }

    struct Box<A: Decodable>: Decodable { var a: A }

    /// The array between other members, which the keyed reads must step over.
    struct Sandwich<A: Decodable>: Decodable {
        var before: Int
        var a: A
        var after: String
    }

    /// The typed path's outcome for `json`.
    static func typed<T: Decodable>(_ type: T.Type, _ json: String, _ decoder: ValueDecoder) -> DecodingOutcome {
        DecodingOutcome {
            String(
                reflecting: try JSONCodec().decode(
                    T.self, from: Data(json.utf8), hints: CodingHints(), decoder: decoder))
        }
    }

    /// The `Value` path's outcome for `json`.
    static func pivot<T: Decodable>(_ type: T.Type, _ json: String, _ decoder: ValueDecoder) -> DecodingOutcome {
        DecodingOutcome {
            String(
                reflecting: try decoder.decode(T.self, from: JSONCodec().decode(Data(json.utf8), hints: CodingHints())))
        }
    }

    /// Hostile element spellings: values at and past every width's range, fractions and exponents, `Float`'s
    /// overflow and subnormals, long digit strings, numbers as strings, other kinds, and malformed numbers.
    static let elements: [String] = [
        "0", "1", "-1", "-0", "127", "128", "-128", "-129", "255", "256", "32767", "32768", "-32769", "65535",
        "65536", "2147483647", "2147483648", "-2147483649", "4294967295", "4294967296", "9223372036854775807",
        "9223372036854775808", "-9223372036854775808", "-9223372036854775809", "18446744073709551615",
        "18446744073709551616", "-18446744073709551616", "1.0", "1.5", "-1.5", "1e2", "1E2", "1e+2", "1e-2",
        "100e-2", "0.5e1", "25e-1", "-0.0", "0.0", "0e0", "-0e5", "1e400", "-1e400", "1e-400", "1e308",
        "1.7976931348623159e308", "3.4028234e38", "3.4028235e38", "3.40282356e38", "3.5e38", "-3.5e38", "1e39",
        "1e-45", "7e-46", "4.9e-324", "1e19", "9.223372036854775808e18", "1.8446744073709551616e19",
        "123456789012345678901234567890", "0.10000000000000001", "1e1000000000", "1e99999999999999999999",
        "9007199254740993", "16777217", String(repeating: "9", count: 400), "1" + String(repeating: "0", count: 400),
        "0." + String(repeating: "0", count: 400) + "1", #""1""#, #""1.5""#, #""-1""#, #""256""#, #""1e2""#,
        #""abc""#, #""""#, #""NaN""#, #""Infinity""#, #"" 1""#, #""\u0031""#, #""true""#, "true", "false", "null",
        "[]", "{}", "[1]", #"{"a":1}"#, "01", "-01", "+1", ".5", "1.", "1e", "NaN", "-Infinity", "0x10", "tru",
        #""\ud800""#,
    ]

    /// `[E]`, `[E?]` and a member `[E]` of a struct, for each spelling in four positions, on both paths; and
    /// `[E]` against ``PerElement``. Its check returns the disagreements.
    struct Attack: ScalarTypeCheck {
        let decoder: ValueDecoder

        func check<E: Decodable>(_ type: E.Type) -> [String] {
            ScalarArrayDifferentialTests.attack(E.self, decoder)
        }
    }

    static func attack<E: Decodable>(_ type: E.Type, _ decoder: ValueDecoder) -> [String] {
        var found: [String] = []
        func compare<T: Decodable>(_ type: T.Type, _ json: String) {
            let typed = Self.typed(T.self, json, decoder)
            let pivot = Self.pivot(T.self, json, decoder)
            if typed != pivot { found.append("\(T.self) <- \(json.prefix(120)): pivot \(pivot) / typed \(typed)") }
        }
        for x in elements {
            for json in ["[\(x)]", "[1,\(x)]", "[\(x),0]", "[0,1,0,\(x),1]"] {
                compare([E].self, json)
                compare([E?].self, json)
                let oneStep = Self.pivot([E].self, json, decoder)
                let perElement = DecodingOutcome {
                    String(
                        reflecting: try decoder.decode(
                            PerElement<E>.self, from: JSONCodec().decode(Data(json.utf8), hints: CodingHints())
                        ).items)
                }
                if oneStep != perElement {
                    found.append(
                        "[\(E.self)] one pass vs per element <- \(json.prefix(120)): \(oneStep) / \(perElement)")
                }
            }
            compare(Sandwich<[E]>.self, #"{"before":1,"a":[\#(x)],"after":"z"}"#)
            compare(Sandwich<[E]>.self, #"{"after":"z","a":[0,\#(x)],"before":1}"#)
            compare([[E]].self, "[[\(x)],[],[1,\(x)]]")
            compare(Box<[E]>.self, #"{"a":\#(x)}"#)
        }
        return found
    }

    @Test func hostileElementsDecodeAlikeOnBothPaths() {
        let found = Attack(decoder: ValueDecoder()).forEveryScalarType()
        #expect(found.isEmpty, "\(found.count) disagreements: \(found.prefix(10))")
    }

    @Test func hostileElementsDecodeAlikeWithLenientNumbers() {
        var lenient = ValueDecoder()
        lenient.lenientNumbers = true
        let found = Attack(decoder: lenient).forEveryScalarType()
        #expect(found.isEmpty, "\(found.count) disagreements: \(found.prefix(10))")
    }

    /// The attack is not vacuous: many of its documents decode to a value, many fail.
    @Test func theAttackHasValuesAndFailures() {
        let outcomes = Self.elements.flatMap { x in
            ["[\(x)]", "[1,\(x)]"].map { Self.typed([Int8].self, $0, ValueDecoder()) }
        }
        #expect(outcomes.filter(\.isValue).count > 30)
        #expect(outcomes.filter { !$0.isValue }.count > 100)
    }

    /// `ValueDecoder` on trees of every `Value` case (protobuf's `.uint` and `.bytes`, `.number`, NaN and the
    /// infinities included): reading `[E]` in one pass equals reading it one element at a time.
    @Test func valueDecoderReadsEveryCaseAsPerElementReadsDo() {
        let scalars: [Value] = [
            .null, .bool(true), .int(0), .int(-1), .int(127), .int(128), .int(255), .int(256), .int(-129),
            .int(65536), .int(Int64(Int32.max) + 1), .int(Int64(UInt32.max) + 1), .int(.max), .int(.min), .uint(255),
            .uint(UInt64(Int64.max) + 1), .uint(.max), .double(-0.0), .double(1.5), .double(256), .double(.nan),
            .double(.infinity), .double(1e39), .double(3.4028235677973366e38), .double(7e-46),
            .double(9.223372036854775807e18), .double(1.8446744073709551615e19), .number("256"), .number("1e2"),
            .number("18446744073709551616"), .number("1e400"), .number("abc"), .string("1"), .string("256"),
            .string("1.5"), .string("abc"), .string(""), .string("true"), .bytes([1, 255]), .array([.int(1)]),
            .object(Value.Object()),
        ]
        struct OnePassAgainstPerElement: ScalarTypeCheck {
            let decoder: ValueDecoder
            let trees: [Value]

            func check<E: Decodable>(_ type: E.Type) -> [String] {
                trees.compactMap { tree in
                    let oneStep = DecodingOutcome { String(reflecting: try decoder.decode([E].self, from: tree)) }
                    let perElement = DecodingOutcome {
                        String(reflecting: try decoder.decode(PerElement<E>.self, from: tree).items)
                    }
                    return oneStep == perElement ? nil : "[\(E.self)] <- \(tree): \(oneStep) / \(perElement)"
                }
            }
        }
        var trees: [Value] = [.bytes([]), .bytes([0, 128, 255]), .array([]), .null]
        for scalar in scalars { trees += [.array([scalar]), .array([.int(1), scalar])] }
        var lenient = ValueDecoder()
        lenient.lenientNumbers = true
        let found = [ValueDecoder(), lenient].flatMap {
            OnePassAgainstPerElement(decoder: $0, trees: trees).forEveryScalarType()
        }
        #expect(found.isEmpty, "\(found.count) disagreements: \(found.prefix(10))")
    }
}
