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
