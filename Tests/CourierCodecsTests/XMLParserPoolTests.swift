import Courier
import CourierTestSupport
import Foundation
import Testing

@testable import CourierCodecs

/// Parser contexts kept across parses (``XMLParserPool``) change no answer: a document reads on a kept
/// context as on a fresh one, whatever the documents before it (good ones, other encodings, failures
/// stopped mid-element, refusals, limits) and however many threads parse at once.
@Suite struct XMLParserPoolTests {
    typealias Outcome = XMLWholeInputTests.Outcome

    /// `data` read on a kept context (`kept`) or on a fresh one.
    static func outcome(_ data: Data, shape: ValueShape?, limits: DecodingLimits = DecodingLimits(), kept: Bool) -> Outcome {
        XMLWholeInputTests.outcome(data, shape: shape, limits: limits, whole: true, reusesParser: kept)
    }

    struct Item: Codable, Equatable {
        var poolName: String
        var poolCount: Int?
        var poolTags: [String]
    }

    static let itemShape = ValueShape(of: Item.self)

    /// Good documents of several kinds: namespaces and attributes, a declaration, other encodings, a
    /// document type without entities, the model's own shape.
    static func goodDocuments() throws -> [Data] {
        let text = "<item xmlns:p=\"urn:p\" p:at=\"1\"><poolName>Zoë ß</poolName><poolCount>3</poolCount>"
            + "<poolTags>a</poolTags><poolTags>b</poolTags></item>"
        return [
            Data(text.utf8),
            Data(("<?xml version=\"1.0\" encoding=\"UTF-8\"?>" + text).utf8),
            try #require(("<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?>" + text).data(using: .isoLatin1)),
            try #require(("<?xml version=\"1.0\" encoding=\"UTF-16\"?>" + text).data(using: .utf16)),
            Data(("<!DOCTYPE item [<!ELEMENT item ANY>]>" + text).utf8),
            Data("<item><poolName>x</poolName><poolTags/></item>".utf8),
            Data("<p:item xmlns:p=\"urn:p\" xmlns=\"urn:d\"><p:poolName>y</p:poolName><poolTags>c</poolTags></p:item>".utf8),
        ]
    }

    /// Documents whose parse stops: syntax errors inside elements with namespaces in scope, a refused
    /// entity, an external DTD, a limit, bytes that are not UTF-8, libxml2's depth limit; and text the
    /// model cannot read (the reader passes it on; the typed path fails).
    static func failingDocuments() -> [(Data, DecodingLimits)] {
        var tight = DecodingLimits()
        tight.maximumTotalValues = 5
        return [
            (Data("<item xmlns:p=\"urn:p\"><p:poolName>a</p:poolName><poolTags><b></poolTags></item>".utf8), DecodingLimits()),
            (Data("<item xmlns:q=\"urn:q\"><q:x q:a=\"1\" q:a=\"2\"/></item>".utf8), DecodingLimits()),
            (Data(#"<!DOCTYPE r [<!ENTITY e "boom">]><r>&e;</r>"#.utf8), DecodingLimits()),
            (Data(#"<!DOCTYPE r SYSTEM "http://example.com/r.dtd"><r/>"#.utf8), DecodingLimits()),
            (Data("<item><poolTags>a</poolTags><poolTags>b</poolTags><poolTags>c</poolTags><poolTags>d</poolTags></item>".utf8), tight),
            (Data([0x3C, 0x72, 0x3E, 0xFF, 0xFE, 0x3C, 0x2F, 0x72, 0x3E]), DecodingLimits()),
            (Data("<item><poolCount>many</poolCount></item>".utf8), DecodingLimits()),
            (Data(("<r>" + String(repeating: "<a xmlns:n=\"urn:n\">", count: 300)).utf8), DecodingLimits()),
            (Data("<item><poolName>unterminated".utf8), DecodingLimits()),
        ]
    }

    @Test func documentsReadOnAKeptContextAsOnAFreshOne() throws {
        let good = try Self.goodDocuments()
        for _ in 0..<3 {
            for data in good {
                for shape in [nil, Self.itemShape] {
                    let fresh = Self.outcome(data, shape: shape, kept: false)
                    if case .failure = fresh { Issue.record("a good document failed: \(fresh)") }
                    #expect(Self.outcome(data, shape: shape, kept: true) == fresh)
                }
            }
        }
        #expect(XMLParserPool.keptCount <= XMLParserPool.maximumKept)
    }

    @Test func aFailedParseLeavesNothingForTheNext() throws {
        let good = try Self.goodDocuments()
        for (bad, limits) in Self.failingDocuments() {
            for data in good {
                let expected = Self.outcome(data, shape: Self.itemShape, kept: false)
                let failed = Self.outcome(bad, shape: Self.itemShape, limits: limits, kept: true)
                #expect(failed == Self.outcome(bad, shape: Self.itemShape, limits: limits, kept: false))
                #expect(Self.outcome(data, shape: Self.itemShape, kept: true) == expected)
                // The typed path (the tape, then the pivot for what it leaves) after a failure.
                _ = try? XMLCodec().decode(Item.self, from: bad, hints: Self.hints(limits), decoder: ValueDecoder())
                let typed = try? XMLCodec().decode(Item.self, from: data, hints: Self.hints(), decoder: ValueDecoder())
                guard case .value(_, let value) = expected else { continue }
                #expect(typed == (try? ValueDecoder().decode(Item.self, from: value)))
            }
        }
    }

    static func hints(_ limits: DecodingLimits = DecodingLimits()) -> CodingHints {
        var hints = CodingHints()
        hints.shape = itemShape
        hints.limits = limits
        return hints
    }

    /// A kept context reuses the ids it interned for the registry it read with; documents that teach the
    /// registry new names (a map's keys) in between, and others of the same root shape, read as on a
    /// fresh context, in the tape's `Value` and model too.
    @Test func namesInternedOnAKeptContextFollowTheRegistry() throws {
        struct Catalog: Codable, Equatable {
            var poolEntries: [String: String]
            var poolLabel: String?
        }
        let shape = ValueShape(of: Catalog.self)
        let documents = [
            "<c><poolEntries><a>1</a><b>2</b></poolEntries><poolLabel>x</poolLabel></c>",
            "<c><poolEntries><b>3</b><c>4</c></poolEntries></c>",
            "<c><poolLabel>y</poolLabel><poolEntries><d>5</d><a>6</a></poolEntries></c>",
            "<c><poolEntries/></c>",
            "<c xmlns:p=\"urn:p\"><poolEntries><p:e>7</p:e></poolEntries></c>",
        ]
        var hints = CodingHints()
        hints.shape = shape
        for round in 0..<4 {
            for i in documents.indices {
                let data = Data(documents[(i + round) % documents.count].utf8)
                let fresh = Self.outcome(data, shape: shape, kept: false)
                #expect(Self.outcome(data, shape: shape, kept: true) == fresh)
                guard case .value(_, let value) = fresh else {
                    Issue.record("\(fresh)")
                    continue
                }
                let tape = try #require(XMLTapeReader.read(data, shape: shape, limits: DecodingLimits(), decoder: ValueDecoder()))
                #expect(tape.value(tape.root) == value)
                let typed = try XMLCodec().decode(Catalog.self, from: data, hints: hints, decoder: ValueDecoder())
                #expect(typed == (try ValueDecoder().decode(Catalog.self, from: value)))
            }
        }
    }

    /// A document of many distinct names (a dictionary too large to keep) and documents after it.
    @Test func aDocumentOfManyNamesChangesNothingAfterIt() throws {
        let many = "<r><m>" + (0..<(XMLParserPool.maximumNames + 100)).map { "<k\($0)>v</k\($0)>" }.joined() + "</m></r>"
        let shape = ValueShape.object(["m": .map(.string)])
        let data = Data(many.utf8)
        let fresh = Self.outcome(data, shape: shape, kept: false)
        guard case .value(_, let value) = fresh else {
            Issue.record("\(fresh)")
            return
        }
        #expect(value["m"]?.objectValue?.count == XMLParserPool.maximumNames + 100)
        #expect(Self.outcome(data, shape: shape, kept: true) == fresh)
        for data in try Self.goodDocuments() {
            #expect(Self.outcome(data, shape: Self.itemShape, kept: true) == Self.outcome(data, shape: Self.itemShape, kept: false))
        }
        #expect(XMLParserPool.keptCount <= XMLParserPool.maximumKept)
    }

    /// Threads parsing at once, good and failing documents mixed, on the pivot and the typed path.
    @Test func concurrentParsesReadAlike() throws {
        let good = try Self.goodDocuments()
        let bad = Self.failingDocuments()
        let expectedGood = good.map { Self.outcome($0, shape: Self.itemShape, kept: false) }
        let expectedBad = bad.map { Self.outcome($0.0, shape: Self.itemShape, limits: $0.1, kept: false) }
        let expectedTyped = expectedGood.map { outcome -> Item? in
            guard case .value(_, let value) = outcome else { return nil }
            return try? ValueDecoder().decode(Item.self, from: value)
        }
        let mismatches = Locked<[String]>([])
        // Under ThreadSanitizer (`make test-tsan` sets `COURIER_TSAN`) fewer rounds: still every thread at once
        // on shared kept contexts, without holding a cooperative thread for minutes beside the other suites.
        let rounds = TestRun.underThreadSanitizer ? 8 : 40
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            for round in 0..<rounds {
                let i = (thread + round) % good.count
                if Self.outcome(good[i], shape: Self.itemShape, kept: true) != expectedGood[i] {
                    mismatches.withLock { $0.append("good \(i)") }
                }
                let typed = try? XMLCodec().decode(Item.self, from: good[i], hints: Self.hints(), decoder: ValueDecoder())
                if typed != expectedTyped[i] { mismatches.withLock { $0.append("typed \(i)") } }
                let j = (thread * 3 + round) % bad.count
                if Self.outcome(bad[j].0, shape: Self.itemShape, limits: bad[j].1, kept: true) != expectedBad[j] {
                    mismatches.withLock { $0.append("bad \(j)") }
                }
            }
        }
        #expect(mismatches.withLock { $0 } == [])
        #expect(XMLParserPool.keptCount <= XMLParserPool.maximumKept)
    }
}
