import Courier
import CourierTestSupport
import CourierTesting
import Foundation
import Testing

@testable import CourierCodecs

/// Documents whose tags can have no prefix, namespace declaration or attribute are read by libxml2 without
/// namespace processing (``XMLBuilder/readsPlainTags``). The tape it builds is the tape namespace processing
/// builds, and every typed decode answers as the pivot does, whatever the document.
@Suite struct XMLPlainTagsTests {
    static let shape = XMLTest.userListShape

    /// The tape of `data` read with plain tags when the document allows it, or always with namespace processing.
    static func tape(_ data: Data, shape: ValueShape, plain: Bool) -> Value? {
        XMLTapeReader.read(data, shape: shape, limits: DecodingLimits(), decoder: ValueDecoder(), plainTags: plain)
            .map { $0.value($0.root) }
    }

    /// Checks that both readings of `data` build the same tape (or none); returns whether the document was
    /// read with plain tags and built a tape.
    @discardableResult
    static func check(_ data: Data, shape: ValueShape, sourceLocation: SourceLocation = #_sourceLocation) -> Bool {
        let plain = tape(data, shape: shape, plain: true)
        #expect(
            plain == tape(data, shape: shape, plain: false), "\(String(decoding: data, as: UTF8.self))",
            sourceLocation: sourceLocation)
        return plain != nil && data.withUnsafeBytes { XMLStartTagScanner.hasPlainTags($0.bindMemory(to: UInt8.self)) }
    }

    @Test func whichDocumentsHavePlainTags() {
        func plain(_ text: String) -> Bool {
            Array(text.utf8).withUnsafeBufferPointer { XMLStartTagScanner.hasPlainTags($0) }
        }
        #expect(plain("<r><a>1</a></r>"))
        #expect(plain(#"<?xml version="1.0" encoding="UTF-8"?><r><a>1</a></r>"#))
        #expect(plain(#"<?xml version="1.0"?><r/>"#))
        #expect(!plain(#"<?xml version="1.0" encoding="ISO-8859-1"?><r/>"#))
        #expect(!plain(#"<r a="1"/>"#))
        #expect(!plain(#"<r xmlns="urn:x"/>"#))
        #expect(!plain("<p:r/>"))
        #expect(!plain("<r>12:30</r>"))  // text with a colon: read with namespaces, as any document may be
        #expect(!plain("<r>a=b</r>"))
        #expect(!plain(" <r/>"))
        #expect(!plain("\u{FEFF}<r/>"))
        #expect(!plain(""))
        let wide: [UInt8] = [0x3C, 0x00, 0x72, 0x00, 0x2F, 0x00, 0x3E, 0x00]  // <r/> in UTF-16LE
        #expect(!wide.withUnsafeBufferPointer { XMLStartTagScanner.hasPlainTags($0) })
    }

    @Test func theUserListsReadAlikeAndPlain() throws {
        for name in ["users_5000.xml", "users_10.xml"] {
            let url = Repository.root.appendingPathComponent("Fixtures/\(name)")
            guard let data = try? Data(contentsOf: url) else { continue }
            #expect(Self.check(data, shape: Self.shape), "\(name) is read with plain tags")
        }
    }

    @Test func documentsOfEveryKindReadAlike() throws {
        let documents = [
            "<r><a>1</a><a>2</a><b>x</b></r>",
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!-- c --><r><?pi data?><a>1</a><![CDATA[<b>]]></r>",
            "<!DOCTYPE r [<!ELEMENT r ANY>]><r><a>&amp;&#65;</a></r>",
            #"<!DOCTYPE r [<!ENTITY e "boom">]><r>&e;</r>"#,
            #"<!DOCTYPE r [<!ATTLIST r a CDATA "x">]><r/>"#,
            "<r><a>1</a></b></r>",
            "<r><a>unterminated",
            "<r>" + String(repeating: "<a>", count: 300) + String(repeating: "</a>", count: 300) + "</r>",
            "<r>\u{1}</r>",
            "<r><data><users><user><id>1</id><tags><tag>a</tag></tags></user></users></data></r>",
            "<response><code>200</code><message>OK</message><data><page>1</page><total>1</total><users/></data></response>",
        ]
        for text in documents { Self.check(Data(text.utf8), shape: Self.shape) }
        // Other encodings and a byte order mark: read with namespace processing.
        let latin = try #require(#"<?xml version="1.0" encoding="ISO-8859-1"?><r>é</r>"#.data(using: .isoLatin1))
        let wide = try #require("<r><a>1</a></r>".data(using: .utf16))
        for data in [latin, wide, Data([0xEF, 0xBB, 0xBF] + Array("<r/>".utf8))] {
            #expect(!Self.check(data, shape: Self.shape))
        }
        for (_, data) in try XMLWholeInputTests.fixtures() { Self.check(data, shape: Self.shape) }
    }

    @Test func randomDocumentsReadAlikeAndDecodeAsThePivot() {
        var random = SeededRandom(seed: 0x91A1_7A65)
        let names = ["code", "message", "data", "users", "user", "id", "tags", "tag", "x"]
        struct Tiny: Codable, Equatable {
            var code: Int?
            var message: String?
            var x: [String]?
        }
        var plainReads = 0
        for _ in 0..<300 {
            var xml = "<response>"
            for _ in 0..<random.below(5) {
                xml += XMLTest.randomElement(
                    &random, names: names, texts: ["7", "ok", "", " 3 ", "&lt;"], depth: 4, nesting: 55, children: 4,
                    emptyTags: true)
            }
            let data = Data((xml + "</response>").utf8)
            if Self.check(data, shape: Self.shape) { plainReads += 1 }
            let typed = Result { try XMLCodec().decode(Tiny.self, from: data, hints: CodingHints(), decoder: ValueDecoder()) }
            let pivot = Result {
                try ValueDecoder().decode(
                    Tiny.self, from: XMLReader.read(data, shape: ValueShape(of: Tiny.self), limits: DecodingLimits()).value)
            }
            switch (typed, pivot) {
            case (.success(let a), .success(let b)): #expect(a == b)
            case (.failure(let a as CourierError), .failure(let b as CourierError)): #expect(a.code == b.code && a.detail == b.detail)
            default: Issue.record("typed \(typed) but pivot \(pivot)")
            }
        }
        #expect(plainReads > 100)
    }
}
