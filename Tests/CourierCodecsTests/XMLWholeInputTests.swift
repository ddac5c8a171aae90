import Courier
import CourierTestSupport
import Foundation
import Testing

@testable import CourierCodecs

/// Telling libxml2 that a UTF-8 document in memory is whole (``XMLBuilder/startDocument()``) changes no
/// answer: every document reads to the same value, or fails with the same code, message, line, column
/// and coding path, as with libxml2's default refilling and shrinking of its input.
@Suite struct XMLWholeInputTests {
    /// What a read gives, comparable: the root name and value, or the error's code, detail and context.
    enum Outcome: Equatable {
        case value(String, Value)
        case failure(CourierError.Code, String?, CourierError.Context)
    }

    /// `reusesParser: false` reads on a parser context of its own (``XMLParserPoolTests``), `guessesNames: false`
    /// looks every name up (``XMLNameGuessTests``).
    static func outcome(
        _ data: Data, shape: ValueShape?, limits: DecodingLimits, whole: Bool, reusesParser: Bool = true,
        guessesNames: Bool = true
    ) -> Outcome {
        do {
            let (root, value) = try XMLReader.read(
                data, shape: shape, limits: limits, marksWholeInput: whole, reusesParser: reusesParser,
                guessesNames: guessesNames)
            return .value(root, value)
        } catch let error as CourierError {
            return .failure(error.code, error.detail, error.context)
        } catch {
            Issue.record("not a CourierError: \(error)")
            return .failure(.malformedInput, nil, .init())
        }
    }

    /// Checks that both ways read `data` alike, with and without `shape`; returns the outcome.
    @discardableResult
    static func check(
        _ data: Data, shape: ValueShape? = nil, limits: DecodingLimits = DecodingLimits(),
        sourceLocation: SourceLocation = #_sourceLocation
    ) -> Outcome {
        for s in [nil, shape] {
            let whole = outcome(data, shape: s, limits: limits, whole: true)
            let refilled = outcome(data, shape: s, limits: limits, whole: false)
            #expect(whole == refilled, "\(data.count) bytes", sourceLocation: sourceLocation)
        }
        return outcome(data, shape: shape, limits: limits, whole: true)
    }

    static func fixtures() throws -> [(String, Data)] {
        let directory = Repository.root.appendingPathComponent("Fixtures/fuzz/FuzzXML")
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        return try names.map { ($0, try Data(contentsOf: directory.appendingPathComponent($0))) }
    }

    @Test func fixturesReadAlike() throws {
        let all = try Self.fixtures()
        #expect(all.count > 10)
        for (_, data) in all { Self.check(data, shape: XMLTest.userListShape) }
        let users = try Data(contentsOf: Repository.root.appendingPathComponent("Fixtures/users_5000.xml"))
        #expect(Self.check(users, shape: XMLTest.userListShape) != .failure(.malformedInput, nil, .init()))
    }

    /// Every prefix of a document (the end of the input lands inside every kind of token) and every
    /// single-byte corruption of its last 300 bytes, where libxml2's refill checks run.
    @Test func truncatedAndCorruptedDocumentsFailAlike() throws {
        let xml = Array(
            (#"<?xml version="1.0" encoding="UTF-8"?><!DOCTYPE r [<!ELEMENT r ANY>]><r a="1&amp;2" b='x'>"#
                + #"<s:t xmlns:s="urn:s">Zoë &lt; <![CDATA[c<d]]>&#x41;</s:t><!-- note --><?pi data?>"#
                + "<u/><v>  text  </v><w xsi:nil=\"true\" xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\"/>"
                + String(repeating: "<i>long item text</i>", count: 20) + "</r>\n<!-- tail -->\n").utf8)
        var failures = 0
        for cut in 1...xml.count {
            if case .failure = Self.check(Data(xml[0..<cut])) { failures += 1 }
        }
        #expect(failures > xml.count - 20)
        for at in max(0, xml.count - 300)..<xml.count {
            for byte: UInt8 in [0, UInt8(ascii: "<"), UInt8(ascii: "&"), 0xC3, 0xFF] {
                var corrupted = xml
                corrupted[at] = byte
                Self.check(Data(corrupted))
            }
        }
    }

    /// Documents an encoder converts (UTF-16, Latin-1) keep libxml2's refilling: they read alike, and
    /// as their UTF-8 originals do.
    @Test func convertedEncodingsReadAlike() throws {
        let text = "<r>" + String(repeating: "<n>Zoë Hernández ß</n>", count: 400) + "</r>"
        let utf8 = Self.check(Data(("<?xml version=\"1.0\" encoding=\"UTF-8\"?>" + text).utf8))
        let latin1 = try #require(("<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?>" + text).data(using: .isoLatin1))
        let utf16 = try #require(("<?xml version=\"1.0\" encoding=\"UTF-16\"?>" + text).data(using: .utf16))
        #expect(Self.check(latin1) == utf8)
        #expect(Self.check(utf16) == utf8)
    }

    /// Limits, entity refusals and hostile shapes stop both ways at the same place.
    @Test func limitsAndRefusalsFailAlike() throws {
        var tight = DecodingLimits()
        tight.maximumStringLength = 40
        tight.maximumTotalValues = 50
        tight.maximumDepth = 6
        let long = "<r>" + String(repeating: "<a><b><c>x</c></b></a>", count: 30) + "<t>"
            + String(repeating: "y", count: 500) + "</t></r>"
        Self.check(Data(long.utf8), limits: tight)
        Self.check(Data(("<r>" + String(repeating: "<a>", count: 10) + String(repeating: "</a>", count: 10) + "</r>").utf8), limits: tight)
        Self.check(Data(#"<!DOCTYPE r [<!ENTITY e "boom">]><r>&e;</r>"#.utf8))
        Self.check(Data(#"<!DOCTYPE r SYSTEM "http://example.com/r.dtd"><r/>"#.utf8))
        Self.check(Data(("<r>" + String(repeating: "<a>", count: 300) + String(repeating: "</a>", count: 300) + "</r>").utf8))
    }
}
