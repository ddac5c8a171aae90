import Courier
import CourierTestSupport
import CourierTesting
import Foundation
import Testing

@testable import CourierCodecs

/// The builder's name guesses (a start tag checked against the name seen at the same place before, and the
/// shape resolved there) change no answer: every document reads as it does with every name looked up, on the
/// `Value` path and on the typed path, including documents written to make the guesses wrong.
@Suite struct XMLNameGuessTests {
    typealias Outcome = XMLWholeInputTests.Outcome

    static func outcome(_ data: Data, shape: ValueShape?, guesses: Bool) -> Outcome {
        XMLWholeInputTests.outcome(data, shape: shape, limits: DecodingLimits(), whole: true, guessesNames: guesses)
    }

    struct Inner: Codable, Equatable {
        var a: [Int]?
        var b: String?
    }

    struct Doc: Codable, Equatable {
        var a: [String]?
        var b: Inner?
        var item: [Inner]?
        var list: [Inner]?
    }

    static let shapes: [ValueShape?] = [
        nil, ValueShape(of: Doc.self), .object(["list": .array(.object(["item": .array(.string)]))]),
    ]

    /// Reads `xml` both ways under every shape, and typed as a `Doc` against the pivot with every name
    /// looked up; returns how many reads succeeded.
    @discardableResult
    static func check(_ xml: String, sourceLocation: SourceLocation = #_sourceLocation) -> Int {
        let data = Data(xml.utf8)
        var succeeded = 0
        for shape in shapes {
            let guessed = outcome(data, shape: shape, guesses: true)
            #expect(guessed == outcome(data, shape: shape, guesses: false), "\(xml)", sourceLocation: sourceLocation)
            if case .value = guessed { succeeded += 1 }
        }
        let pivot = Result {
            try ValueDecoder().decode(
                Doc.self,
                from: XMLReader.read(data, shape: ValueShape(of: Doc.self), limits: DecodingLimits(), guessesNames: false)
                    .value)
        }
        let typed = Result { try XMLCodec().decode(Doc.self, from: data, hints: CodingHints(), decoder: ValueDecoder()) }
        switch (typed, pivot) {
        case (.success(let a), .success(let b)): #expect(a == b, "\(xml)", sourceLocation: sourceLocation)
        case (.failure(let a as CourierError), .failure(let b as CourierError)):
            #expect(a.code == b.code && a.detail == b.detail, "\(xml)", sourceLocation: sourceLocation)
        default: Issue.record("typed \(typed) but pivot \(pivot): \(xml)", sourceLocation: sourceLocation)
        }
        return succeeded
    }

    @Test func documentsThatBreakTheGuessesReadAlike() {
        let documents = [
            // One local name under two prefixes, alternating at one place.
            #"<r xmlns:p="urn:p" xmlns:q="urn:q"><p:a>1</p:a><q:a>2</q:a><p:a>3</p:a><a>4</a></r>"#,
            // Records whose children change order, gain and lose members.
            "<r><item><a>1</a><b>x</b></item><item><b>y</b><a>2</a></item><item><a>3</a><a>4</a></item><item/></r>",
            // A wrapper at one place, then not: the same names under a list that holds other elements.
            "<r><list><item><a>1</a></item><item><a>2</a></item></list><list><b>z</b></list></r>",
            "<r><list><item>a</item></list><list><item>b</item><item>c</item></list><list/></r>",
            // The same name at several depths, with other shapes.
            "<r><a><a><a>1</a></a></a><a>2</a><b><a>3</a><a>x</a></b></r>",
            // A prefix bound again to another namespace further down.
            #"<r xmlns:p="urn:1"><p:a>1</p:a><b xmlns:p="urn:2"><p:a>2</p:a></b><p:a>3</p:a></r>"#,
            // Attributes and text between the children.
            #"<r><item a="1">t<a>2</a>u<b>v</b></item><item b="w"><a>3</a></item></r>"#,
        ]
        var succeeded = 0
        for xml in documents { succeeded += Self.check(xml) }
        #expect(succeeded > documents.count)
    }

    @Test func randomDocumentsReadAlike() {
        var random = SeededRandom(seed: 0x5EED_9E55)
        let names = ["a", "b", "item", "list", "p:a", "q:a", "p:item", "q:b"]
        var succeeded = 0
        for _ in 0..<400 {
            var xml = #"<r xmlns:p="urn:p" xmlns:q="urn:q">"#
            for _ in 0..<random.below(6) {
                xml += XMLTest.randomElement(
                    &random, names: names, texts: ["1", "x", "2.5", "", "true"], depth: 4, nesting: 60, children: 5)
            }
            succeeded += Self.check(xml + "</r>")
        }
        // Most documents read under no shape at least.
        #expect(succeeded > 400)
    }

    @Test func theUserListReadsAlike() throws {
        let users = try Data(contentsOf: Repository.root.appendingPathComponent("Fixtures/users_5000.xml"))
        let guessed = Self.outcome(users, shape: XMLTest.userListShape, guesses: true)
        guard case .value = guessed else {
            Issue.record("the user list did not read: \(guessed)")
            return
        }
        #expect(guessed == Self.outcome(users, shape: XMLTest.userListShape, guesses: false))
    }
}
