import Courier
import CourierCodecs
import CourierTestSupport
import Foundation
import Testing

/// A differential attack on the one-pass reads of scalar lists by the typed XML decoder: for about 100 hostile
/// element texts (signs, leading zeros, whitespace, entities, CDATA, comments, non-ASCII digits, child
/// elements), in several document forms, for every scalar type, it must give what the `Value` path gives (the
/// same value, or an error with the same code and coding path).
@Suite struct XMLScalarArrayDifferentialTests {
    struct Box<A: Decodable>: Decodable { var a: A }

    static func hints<T: Decodable>(for type: T.Type) -> CodingHints {
        var hints = CodingHints()
        hints.shape = ValueShape(of: T.self)
        return hints
    }

    static func typed<T: Decodable>(_ type: T.Type, _ xml: String, _ decoder: ValueDecoder) -> DecodingOutcome {
        DecodingOutcome {
            String(
                reflecting: try XMLCodec().decode(
                    T.self, from: Data(xml.utf8), hints: hints(for: T.self), decoder: decoder))
        }
    }

    static func pivot<T: Decodable>(_ type: T.Type, _ xml: String, _ decoder: ValueDecoder) -> DecodingOutcome {
        DecodingOutcome {
            String(
                reflecting: try decoder.decode(
                    T.self, from: XMLCodec().decode(Data(xml.utf8), hints: hints(for: T.self))))
        }
    }

    /// Hostile texts of one element.
    static let texts: [String] = [
        "0", "1", "-1", "-0", "+0", "+7", "0042", "-007", "127", "128", "-129", "255", "256", "65536", "4294967296",
        "9223372036854775808", "-9223372036854775809", "18446744073709551615", "18446744073709551616", "1.0",
        "1.5", "1e2", "1e+2", "100e-2", "-0.0", "1e400", "1e-400", "3.4028235e38", "3.40282356e38", "1e39",
        "1e-45", "7e-46", "1e19", ".5", "5.", "-.5e1", "1e", ".", "-", "INF", "+INF", "-INF", "NaN", "nan", "inf",
        "Infinity", String(repeating: "9", count: 400), "", " ", " 1", "1 ", "\n\t 7 \n", "1 2", "1,2", "true",
        "false", "TRUE", "yes", "0x10", "&#49;", "&#x31;&#x32;", "<![CDATA[1]]>", "<![CDATA[ 1 ]]>",
        "1<!-- c -->2", "1<?pi x?>2", "\u{0661}", "\u{FF11}", "\u{00A0}1", "&amp;", "a", "<b>1</b>", "<b/>",
        "1<b/>", "&lt;1&gt;",
    ]

    /// A member list `a` of a struct (repeated elements, with attributes, wrapped items, interleaved) and a
    /// top-level list, for each text on both paths. Its check returns the disagreements.
    struct Attack: ScalarTypeCheck {
        let decoder: ValueDecoder

        func check<E: Decodable>(_ type: E.Type) -> [String] {
            XMLScalarArrayDifferentialTests.attack(E.self, decoder)
        }
    }

    static func attack<E: Decodable>(_ type: E.Type, _ decoder: ValueDecoder) -> [String] {
        var found: [String] = []
        func compare<T: Decodable>(_ type: T.Type, _ xml: String) {
            let typed = Self.typed(T.self, xml, decoder)
            let pivot = Self.pivot(T.self, xml, decoder)
            if typed != pivot { found.append("\(T.self) <- \(xml.prefix(120)): pivot \(pivot) / typed \(typed)") }
        }
        for x in texts {
            for xml in [
                "<r><a>\(x)</a></r>", "<r><a>1</a><a>\(x)</a></r>", "<r><a k=\"1\">\(x)</a></r>",
                "<r a=\"\(x)\"/>", "<r><a><item>1</item><item>\(x)</item></a></r>", "<r><a>1</a><z/><a>\(x)</a></r>",
            ] {
                compare(Box<[E]>.self, xml)
                compare(Box<[E?]>.self, xml)
            }
            for xml in ["<r><i>\(x)</i></r>", "<r><i>1</i><i>\(x)</i></r>", "<r>\(x)</r>"] {
                compare([E].self, xml)
            }
        }
        return found
    }

    @Test func hostileListsDecodeAlikeOnBothPaths() {
        let found = Attack(decoder: ValueDecoder()).forEveryScalarType()
        #expect(found.isEmpty, "\(found.count) disagreements: \(found.prefix(10))")
    }

    @Test func hostileListsDecodeAlikeWithLenientNumbersAndSnakeCase() {
        var decoder = ValueDecoder()
        decoder.lenientNumbers = true
        decoder.keyStrategy = .convertFromSnakeCase
        let found = Attack(decoder: decoder).forEveryScalarType()
        #expect(found.isEmpty, "\(found.count) disagreements: \(found.prefix(10))")
    }

    /// The attack is not vacuous: many of its documents decode to a value, many fail.
    @Test func theAttackHasValuesAndFailures() {
        let outcomes = Self.texts.map { Self.typed(Box<[Int8]>.self, "<r><a>1</a><a>\($0)</a></r>", ValueDecoder()) }
        #expect(outcomes.filter(\.isValue).count > 10)
        #expect(outcomes.filter { !$0.isValue }.count > 30)
    }
}

/// The same attack on members: each scalar type as a required member (`decode(_:forKey:)`), as an optional one
/// (`decodeIfPresent(_:forKey:)`) and as an item read from an unkeyed container by its own type, with one member
/// given a hostile text (or repeated, or missing, or nil) while the others hold valid values.
@Suite struct XMLScalarMemberDifferentialTests {
    /// Every scalar type as a required and as an optional member; synthesized, so each member is read by the
    /// container's method for its own type.
    struct Members: Decodable, CustomStringConvertible {
        var b: Bool, f: Float, d: Double, i8: Int8, i16: Int16, i32: Int32, i64: Int64
        var u8: UInt8, u16: UInt16, u32: UInt32, u64: UInt64, i: Int, u: UInt, s: String
        var ob: Bool?, of: Float?, od: Double?, oi8: Int8?, oi16: Int16?, oi32: Int32?, oi64: Int64?
        var ou8: UInt8?, ou16: UInt16?, ou32: UInt32?, ou64: UInt64?, oi: Int?, ou: UInt?, os: String?

        static let required = ["b", "f", "d", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "i", "u", "s"]
        static let names = required + required.map { "o" + $0 }

        var description: String {
            let required: [Any] = [b, f, d, i8, i16, i32, i64, u8, u16, u32, u64, i, u, s]
            let optional: [Any?] = [ob, of, od, oi8, oi16, oi32, oi64, ou8, ou16, ou32, ou64, oi, ou, os]
            return "\(required) \(optional.map { $0.map { "\($0)" } ?? "nil" })"
        }
    }

    /// The items of `<a>` elements read one by one, each by the unkeyed container's method for its type.
    struct Items: Decodable, CustomStringConvertible {
        var read: [String] = []
        enum CodingKeys: String, CodingKey { case a }

        init(from decoder: any Decoder) throws {
            var items = try decoder.container(keyedBy: CodingKeys.self).nestedUnkeyedContainer(forKey: .a)
            read.append("\(try items.decode(Bool.self))")
            read.append("\(try items.decode(Float.self))")
            read.append("\(try items.decode(Double.self))")
            read.append("\(try items.decode(Int8.self))")
            read.append("\(try items.decode(Int16.self))")
            read.append("\(try items.decode(Int32.self))")
            read.append("\(try items.decode(Int64.self))")
            read.append("\(try items.decode(UInt8.self))")
            read.append("\(try items.decode(UInt16.self))")
            read.append("\(try items.decode(UInt32.self))")
            read.append("\(try items.decode(UInt64.self))")
            read.append("\(try items.decode(Int.self))")
            read.append("\(try items.decode(UInt.self))")
            read.append("\(try items.decode(String.self))")
            read.append("\(try items.decodeNil())")
            read.append("\(items.isAtEnd)")
        }

        var description: String { read.joined(separator: ",") }
    }

    static func valid(_ name: String) -> String { name.hasSuffix("b") ? "true" : name.hasSuffix("s") ? "x" : "1" }

    static func document(replacing target: String, with form: String?) -> String {
        var xml = "<r xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\">"
        for name in Members.names {
            if name != target {
                xml += "<\(name)>\(valid(name))</\(name)>"
            } else if let form {
                xml += form.replacingOccurrences(of: "NAME", with: name)
            }
        }
        return xml + "</r>"
    }

    static func compare<T: Decodable>(
        _ type: T.Type, _ xml: String, _ decoder: ValueDecoder, into found: inout [String]
    ) {
        let typed = XMLScalarArrayDifferentialTests.typed(T.self, xml, decoder)
        let pivot = XMLScalarArrayDifferentialTests.pivot(T.self, xml, decoder)
        if typed != pivot { found.append("\(T.self) <- \(xml.suffix(160)): pivot \(pivot) / typed \(typed)") }
    }

    static func attack(_ decoder: ValueDecoder) -> (found: [String], outcomes: [DecodingOutcome]) {
        var found: [String] = []
        var outcomes: [DecodingOutcome] = []
        var forms: [String?] = [nil, "<NAME xsi:nil=\"true\"/>", "<NAME/>"]
        for x in XMLScalarArrayDifferentialTests.texts {
            forms += ["<NAME>\(x)</NAME>", "<NAME>1</NAME><NAME>\(x)</NAME>", "<NAME k=\"1\">\(x)</NAME>"]
        }
        for name in Members.names {
            for form in forms {
                let xml = document(replacing: name, with: form)
                compare(Members.self, xml, decoder, into: &found)
                outcomes.append(XMLScalarArrayDifferentialTests.typed(Members.self, xml, decoder))
            }
        }
        let valid = ["true", "1", "1", "1", "1", "1", "1", "1", "1", "1", "1", "1", "1", "x"]
        for position in valid.indices {
            for x in XMLScalarArrayDifferentialTests.texts + [""] {
                var items = valid
                items[position] = x
                let body = items.map { "<a>\($0)</a>" }.joined()
                compare(Items.self, "<r>\(body)</r>", decoder, into: &found)
                let nilItem = "<a xsi:nil=\"true\" xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\"/>"
                compare(Items.self, "<r>\(body)\(nilItem)</r>", decoder, into: &found)
            }
        }
        return (found, outcomes)
    }

    @Test func hostileMembersDecodeAlikeOnBothPaths() {
        let (found, outcomes) = Self.attack(ValueDecoder())
        #expect(found.isEmpty, "\(found.count) disagreements: \(found.prefix(10))")
        // Not vacuous: many documents decode to a model, many fail.
        #expect(outcomes.filter(\.isValue).count > 500)
        #expect(outcomes.filter { !$0.isValue }.count > 500)
    }

    @Test func hostileMembersDecodeAlikeWithLenientNumbers() {
        var decoder = ValueDecoder()
        decoder.lenientNumbers = true
        let (found, _) = Self.attack(decoder)
        #expect(found.isEmpty, "\(found.count) disagreements: \(found.prefix(10))")
    }
}
