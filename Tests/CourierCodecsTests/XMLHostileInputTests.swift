import CourierTestSupport
import Foundation
import Testing

@testable import CourierCodecs

#if canImport(Glibc)
import Glibc
#endif

/// Hostile and broken documents: each ends in one enumerated error with a position, quickly and
/// without reading anything outside the document.
@Suite(.timeLimit(.minutes(10))) struct XMLHostileInputTests {
    static let billionLaughs = """
        <?xml version="1.0"?>
        <!DOCTYPE lolz [
          <!ENTITY lol "lol">
          <!ENTITY lol1 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
          <!ENTITY lol2 "&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;">
          <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
          <!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
          <!ENTITY lol5 "&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;">
          <!ENTITY lol6 "&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;">
          <!ENTITY lol7 "&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;">
          <!ENTITY lol8 "&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;">
          <!ENTITY lol9 "&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;">
        ]>
        <lolz>&lol9;</lolz>
        """

    /// The error decoding `xml` throws, and the time it took (kept for callers; no test asserts times:
    /// the suite's time limit catches a quadratic regression, the benchmarks measure).
    static func decodeTimed(_ xml: some Sequence<UInt8>, options: XMLCodec.Options = .init()) throws -> (CourierError, Duration) {
        let data = Data(xml)
        var failure: CourierError?
        let elapsed = try ContinuousClock().measure {
            failure = try XMLTest.error { _ = try XMLCodec(options: options).decode(data, hints: CodingHints()) }
        }
        return (try #require(failure), elapsed)
    }

    @Test func billionLaughsIsRefusedAtTheFirstDeclaration() throws {
        let (error, _) = try Self.decodeTimed(Self.billionLaughs.utf8)
        #expect(error.code == .unsafeInput)
        #expect(error.context.line == 3)
        #expect(error.context.column != nil)
        #expect(error.message.contains("entity lol"))
    }

    @Test(arguments: [
        "<!DOCTYPE r [<!ENTITY x SYSTEM \"file:///etc/passwd\">]>\n<r>&x;</r>",
        "<!DOCTYPE r [<!ENTITY % p SYSTEM \"file:///etc/passwd\"> %p;]>\n<r/>",
        "<!DOCTYPE r [<!ENTITY x PUBLIC \"-//x\" \"file:///etc/hostname\">]>\n<r>&x;</r>",
        "<!DOCTYPE r SYSTEM \"file:///etc/passwd\">\n<r/>",
        "<!DOCTYPE r PUBLIC \"-//W3C//DTD XHTML 1.0 Strict//EN\" \"http://www.w3.org/TR/xhtml1/DTD/xhtml1-strict.dtd\">\n<r/>",
        "<!DOCTYPE r [<!ENTITY img SYSTEM \"x.png\" NDATA png><!NOTATION png SYSTEM \"png\">]>\n<r/>",
        "<!DOCTYPE r [<!ENTITY x \"internal\">]>\n<r>&x;</r>",
    ])
    func externalAndDeclaredEntitiesAreUnsafe(xml: String) throws {
        let (error, _) = try Self.decodeTimed(xml.utf8)
        #expect(error.code == .unsafeInput)
        #expect(error.context.line == 1)
        #expect(error.context.column != nil)
        let passwd = (try? String(contentsOfFile: "/etc/passwd", encoding: .utf8)) ?? "root:x:0:0"
        let firstLine = String(passwd.split(separator: "\n").first ?? "root:x:0:0")
        #expect(!String(describing: error).contains(firstLine))
    }

    @Test func aDoctypeWithoutEntitiesIsAccepted() throws {
        let xml = "<!DOCTYPE r [<!ELEMENT r (#PCDATA)>]><r>ok</r>"
        #expect(try XMLTest.decode(xml) == "ok")
    }

    /// DTD attribute defaults multiply: 50 defaults of 20,000 characters on 20,000 empty elements turn 1 MB
    /// of input into 20 GB of attributes. A default is refused at its declaration.
    @Test func attributeDefaultsAreRefusedBeforeTheyMultiply() throws {
        let defaults = (0..<50).map { "a\($0) CDATA \"\(String(repeating: "x", count: 20_000))\"" }.joined(separator: " ")
        let xml = "<?xml version=\"1.0\"?><!DOCTYPE r [<!ATTLIST e \(defaults)>]><r>"
            + String(repeating: "<e/>", count: 20_000) + "</r>"
        let (error, _) = try Self.decodeTimed(xml.utf8)
        #expect(error.code == .unsafeInput)
        #expect(error.message.contains("a0"), "\(error.message)")
        for fixed in ["<!ATTLIST e a CDATA #FIXED \"v\">", "<!ATTLIST e kind (x|y) \"x\">"] {
            let (refused, _) = try Self.decodeTimed("<!DOCTYPE r [\(fixed)]><r><e/></r>".utf8)
            #expect(refused.code == .unsafeInput, "\(fixed)")
        }
    }

    @Test func attributeDeclarationsWithoutDefaultsAreAccepted() throws {
        let xml = "<!DOCTYPE r [<!ATTLIST r id ID #IMPLIED kind (x|y) #REQUIRED>]><r kind=\"x\">ok</r>"
        let value = try XMLTest.decode(xml)
        #expect(value["@kind"] == "x", "\(value)")
    }

    @Test func undeclaredEntitiesAreMalformed() throws {
        let (error, _) = try Self.decodeTimed("<r>&nbsp;</r>".utf8)
        #expect(error.code == .malformedInput)
        #expect(error.context.line == 1)
    }

    @Test func deepNestingFailsFastWithTheDepthCode() throws {
        let depth = 100_000
        let xml = String(repeating: "<a>", count: depth) + String(repeating: "</a>", count: depth)
        let (error, _) = try Self.decodeTimed(xml.utf8)
        #expect(error.code == .depthLimitExceeded)
        #expect(error.context.line == 1)
        #expect((error.context.column ?? 0) > 3 * 200)
    }

    @Test func theConfiguredDepthLimitApplies() throws {
        var options = XMLCodec.Options()
        options.maximumDepth = 10
        let ten = String(repeating: "<a>", count: 10) + "x" + String(repeating: "</a>", count: 10)
        #expect(throws: Never.self) { try XMLTest.decode(ten, options: options) }
        let eleven = "<b>" + ten + "</b>"
        let (error, _) = try Self.decodeTimed(eleven.utf8, options: options)
        #expect(error.code == .depthLimitExceeded)
        #expect((31...34).contains(error.context.column ?? 0))
    }

    @Test func invalidUTF8IsReported() throws {
        var bytes = Array("<r>\n<a>ok</a><b>bad ".utf8)
        bytes += [0xC3, 0x28, 0xFF]
        bytes += Array("</b></r>".utf8)
        let (error, _) = try Self.decodeTimed(bytes)
        #expect(error.code == .invalidUTF8)
        #expect(error.context.line == 2)
        #expect(error.context.column != nil)
    }

    @Test(arguments: [
        ("<r><a>1</a><b>2", 1),
        ("<r>\n<a>1</b></r>", 2),
        ("<r></r><r></r>", 1),
        ("<r a=\"1\" a=\"2\"/>", 1),
        ("<p:r/>", 1),
        ("   ", 1),
        ("<r>\u{1}</r>", 1),
        ("not xml", 1),
    ])
    func brokenDocumentsAreMalformed(xml: String, line: Int) throws {
        let (error, _) = try Self.decodeTimed(xml.utf8)
        #expect(error.code == .malformedInput)
        #expect(error.context.line == line)
        #expect(error.context.column != nil)
    }

    @Test func emptyInputIsMalformed() throws {
        let (error, _) = try Self.decodeTimed([UInt8]())
        #expect(error.code == .malformedInput)
    }

    @Test func inputLargerThanTheLimitIsRefused() throws {
        var options = XMLCodec.Options()
        options.maximumInputSize = 16
        let (error, _) = try Self.decodeTimed("<r>0123456789abcdef</r>".utf8, options: options)
        #expect(error.code == .sizeLimitExceeded)
    }

    @Test func truncationsOfTheFixtureNeverCrash() throws {
        let data = try Repository.fixture("users_10.xml")
        for cut in stride(from: 0, to: data.count - 1, by: 7) {
            let error = try XMLTest.error { _ = try XMLCodec().decode(data.prefix(cut), hints: CodingHints()) }
            #expect(error.code == .malformedInput || error.code == .invalidUTF8)
        }
    }

    /// Inputs that make libxml2 complain from places without a parser context (encoding conversion).
    static let encodingTroubles: [[UInt8]] = [
        [0, 0, 0, 0] + Array("<r/>".utf8),
        [0xFE, 0xFF, 0x00, 0x3C, 0x00, 0x72, 0xD8, 0x00, 0x00],
        Array("<?xml version=\"1.0\" encoding=\"UTF-16\"?><r/>".utf8),
        Array("<?xml version=\"1.0\" encoding=\"no-such-charset\"?><r/>".utf8),
        Array("<?xml version=\"1.0\" encoding=\"Shift_JIS\"?><r>".utf8) + [0x81, 0xFF, 0xFF] + Array("</r>".utf8),
    ]

    @Test func encodingTroublesAreErrors() throws {
        for bytes in Self.encodingTroubles {
            let (error, _) = try Self.decodeTimed(bytes)
            #expect(error.code == .malformedInput || error.code == .invalidUTF8, "\(bytes)")
        }
    }

    // MARK: Limits while reading

    /// A codec whose limits `change` adjusts.
    static func codec(_ change: (inout DecodingLimits) -> Void) -> XMLCodec {
        var options = XMLCodec.Options()
        change(&options.limits)
        return XMLCodec(options: options)
    }

    /// `<r a0="0" a1="1" …/>` with `count` attributes, after `lines` blank lines.
    static func attributes(_ count: Int, name: String = "a", lines: Int = 0) -> [UInt8] {
        var xml = String(repeating: "\n", count: lines) + "<r"
        xml.reserveCapacity(count * 12)
        for i in 0..<count { xml += " \(name)\(i)=\"\(i)\"" }
        xml += "/>"
        return Array(xml.utf8)
    }

    @Test func fourHundredThousandAttributesAreRefusedBeforeLibxml2ReadsThem() throws {
        let (error, _) = try Self.decodeTimed(Self.attributes(400_000, lines: 2))
        #expect(error.code == .sizeLimitExceeded)
        #expect(error.message.contains("maximumAttributesPerElement"))
        #expect(error.context.line == 3)
        #expect(error.context.column == 1)
        #expect(error.context.offset == 2)
    }

    // MARK: Distinct names

    /// libxml2 2.9 interns every name in a dictionary whose table stops growing at 16,384 chains: a document of
    /// distinct names used to take time quadratic in their count (a million empty elements, 10 MB: 17 s). Every
    /// way to add names stops at `maximumDistinctNames`, in time proportional to the names read up to it.
    @Test(arguments: [
        "elements", "attributes", "namespace URIs", "namespace prefixes", "processing instructions",
        "element declarations", "notation declarations", "attribute declarations",
    ])
    func distinctNamesStopAtTheLimit(kind: String) throws {
        let (open, close) = kind.hasSuffix("declarations") ? ("<!DOCTYPE r [", "]><r/>") : ("<r>", "</r>")
        func piece(_ i: Int) -> String {
            switch kind {
            case "elements": return "<k\(i)/>"
            case "attributes": return "<e a\(i)=\"1\"/>"
            case "namespace URIs": return "<e xmlns:p=\"urn:\(i)\"/>"
            case "namespace prefixes": return "<e xmlns:p\(i)=\"urn:x\"/>"
            case "processing instructions": return "<?t\(i) x?>"
            case "element declarations": return "<!ELEMENT d\(i) ANY>"
            case "notation declarations": return "<!NOTATION n\(i) SYSTEM \"x\">"
            default: return "<!ATTLIST r b\(i) CDATA #IMPLIED>"
            }
        }
        func document(_ count: Int) -> Data {
            var xml = open
            xml.reserveCapacity(count * 24)
            for i in 0..<count { xml += piece(i) }
            return Data((xml + close).utf8)
        }
        // Within a lowered limit the document decodes; ten times the names fail, naming the limit.
        let codec = Self.codec { $0.maximumDistinctNames = 1_000 }
        _ = try codec.decode(document(900), hints: CodingHints())
        let error = try XMLTest.error { _ = try codec.decode(document(10_000), hints: CodingHints()) }
        #expect(error.code == .sizeLimitExceeded, "\(kind)")
        #expect(error.message.contains("maximumDistinctNames = 1000"), "\(kind): \(error.message)")
        #expect(error.context.line == 1, "\(kind)")
        // The default stops a million of them (some 10 to 30 MB) at the 50,000th.
        let (defaultError, _) = try Self.decodeTimed(document(1_000_000))
        #expect(defaultError.code == .sizeLimitExceeded, "\(kind)")
        #expect(defaultError.message.contains("maximumDistinctNames = 50000"), "\(kind)")
    }

    /// The typed decoder stops at the same limit, with the same error, and names repeated in one document or
    /// in the documents a kept parser read before count once. Which kept parser a decode gets depends on the
    /// decodes before it (other tests run at the same time), and names an earlier document left in its
    /// dictionary do not count again: so the stop lies between the limit's name and `maximumNames` after it.
    @Test func distinctNamesBoundTheTypedDecoderAndCountPerDocument() throws {
        let codec = Self.codec { $0.maximumDistinctNames = 2_000 }
        var hints = CodingHints()
        hints.shape = ValueShape(of: [String: Int].self)
        let many = Data(("<r>" + (0..<8_000).map { "<k\($0)>\($0)</k\($0)>" }.joined() + "</r>").utf8)
        let typed = try XMLTest.error { _ = try codec.decode([String: Int].self, from: many, hints: hints, decoder: ValueDecoder()) }
        let pivot = try XMLTest.error { _ = try codec.decode(many, hints: hints) }
        for error in [typed, pivot] {
            #expect(error.code == .sizeLimitExceeded)
            #expect(error.message.hasPrefix(
                "The data is larger than allowed. the document uses more distinct names than the limit maximumDistinctNames = 2000 at k"))
            // The document's names are r, k0, k1, …: the 2,001st new one is k1999 at the earliest.
            let stop = error.message.split(separator: " at k").last.flatMap { Int($0.prefix { $0.isNumber }) }
            #expect(stop.map { (1_999...1_999 + XMLParserPool.maximumNames).contains($0) } == true, "\(error.message)")
        }
        // On a context of its own the stop is exact: the names libxml2 interns for every parse ("xml", "xmlns",
        // the XML namespace) are not the document's.
        var limits = DecodingLimits()
        limits.maximumDistinctNames = 2_000
        let fresh = try XMLTest.error { _ = try XMLReader.read(many, shape: nil, limits: limits, reusesParser: false) }
        #expect(fresh.message.hasSuffix("maximumDistinctNames = 2000 at k1999, line 1, column 34661"), "\(fresh.message)")
        // 1,500 names, each used twenty times, in documents read one after the other (a kept parser's
        // dictionary holds the names of the documents before): each document is within the limit of 2,000.
        let repeated = Data(("<r>" + (0..<30_000).map { "<k\($0 % 1_500)>1</k\($0 % 1_500)>" }.joined() + "</r>").utf8)
        for _ in 0..<3 {
            let decoded = try codec.decode([String: [Int]].self, from: repeated, hints: CodingHints(), decoder: ValueDecoder())
            #expect(decoded.count == 1_500)
        }
    }

    /// `text` in UTF-16, little-endian, after a byte order mark.
    static func utf16LE(_ text: String) -> [UInt8] {
        var bytes: [UInt8] = [0xFF, 0xFE]
        bytes.reserveCapacity(2 + 2 * text.utf16.count)
        for unit in text.utf16 { bytes += [UInt8(unit & 0xFF), UInt8(unit >> 8)] }
        return bytes
    }

    @Test func wideEncodingsAreCountedInTheirCharacters() throws {
        // In UTF-16LE, the name character U+0122 is the bytes 22 01: a stray `"` to a byte scanner, which
        // would then see every later `=` as quoted. The scan reads the characters instead.
        var xml = "<r \u{0122}=\"v\""
        for i in 0..<5_000 { xml += " a\(i)=\"\(i)\"" }
        xml += "/>"
        let (error, _) = try Self.decodeTimed(Self.utf16LE(xml))
        #expect(error.code == .sizeLimitExceeded)
        #expect(error.message.contains("maximumAttributesPerElement"))
        // Found by the scan before libxml2 (not by the callback, after libxml2's quadratic check).
        #expect(error.message.contains("the start tag <r>"))
        #expect(error.context.line == 1)
        // Within the limits a UTF-16 document decodes.
        let small = try XMLCodec().decode(Data(Self.utf16LE("<r a=\"\u{2200}\">x</r>")), hints: CodingHints())
        #expect(small == ["@a": "\u{2200}", "#text": "x"])
    }

    @Test func aMillionAttributesAreRefusedToo() throws {
        let (error, _) = try Self.decodeTimed(Self.attributes(1_000_000))
        #expect(error.code == .sizeLimitExceeded)
    }

    @Test func aHundredThousandNamespaceDeclarationsCountAsAttributes() throws {
        var xml = "<r"
        for i in 0..<100_000 { xml += " xmlns:p\(i)=\"urn:\(i)\"" }
        xml += "/>"
        let (error, _) = try Self.decodeTimed(xml.utf8)
        #expect(error.code == .sizeLimitExceeded)
        #expect(error.message.contains("maximumAttributesPerElement"))
    }

    @Test func namespacesInScopeAreBoundedButSiblingsDoNotAddUp() throws {
        // Ten nested elements declaring 30 namespaces each: 300 in scope at the innermost.
        var nested = ""
        for level in 0..<10 {
            nested += "<e\(level)"
            for k in 0..<30 { nested += " xmlns:p\(level)x\(k)=\"urn:\(level):\(k)\"" }
            nested += ">"
        }
        nested += (0..<10).reversed().map { "</e\($0)>" }.joined()
        let (error, _) = try Self.decodeTimed(nested.utf8)
        #expect(error.code == .sizeLimitExceeded)
        #expect(error.message.contains("maximumNamespacesInScope"))
        #expect(error.message.contains("<e8"))
        // 5,000 siblings declaring one namespace each (closed or self-closing) never have more than one
        // in scope.
        let siblings = "<r>" + String(repeating: "<a xmlns=\"urn:a\">1</a><b xmlns:q=\"urn:q\"/>", count: 2_500) + "</r>"
        let value = try XMLCodec().decode(Data(siblings.utf8), hints: CodingHints())
        #expect(value["a"]?.arrayValue?.count == 2_500)
        #expect(value["b"]?.arrayValue?.count == 2_500)
    }

    @Test func theDefaultAttributeLimitLetsAThousandThrough() throws {
        let value = try XMLCodec().decode(Data(Self.attributes(1_000)), hints: CodingHints())
        #expect(value.objectValue?.count == 1_000)
        #expect(value["@a999"] == "999")
        let (error, _) = try Self.decodeTimed(Self.attributes(1_001))
        #expect(error.code == .sizeLimitExceeded)
    }

    /// The scan's quick count of `=` (below the limit no tag can be crowded) agrees with the tag-by-tag
    /// scan at the limit and one past it, with the `=` in one tag, spread over many, or in text.
    @Test func theQuickCountAndTheTagScanAgreeAtTheLimit() throws {
        var limits = DecodingLimits()
        limits.maximumAttributesPerElement = 40
        func tag(_ n: Int) -> String { "<t" + (0..<n).map { " a\($0)=\"\($0)\"" }.joined() + "/>" }
        for n in [39, 40, 41] {
            let one = Array(("<r>" + tag(n) + "</r>").utf8)
            let crowded = one.withUnsafeBufferPointer { XMLStartTagScanner.firstCrowdedTag($0, limits: limits) }
            #expect((crowded != nil) == (n > 40), "\(n) attributes in one tag")
            let spread = Array(("<r>" + String(repeating: tag(20), count: n) + "</r>").utf8)
            #expect(spread.withUnsafeBufferPointer { XMLStartTagScanner.firstCrowdedTag($0, limits: limits) } == nil)
            let text = Array(("<r>" + String(repeating: "a=b ", count: 10 * n) + "</r>").utf8)
            #expect(text.withUnsafeBufferPointer { XMLStartTagScanner.firstCrowdedTag($0, limits: limits) } == nil)
        }
    }

    @Test func aRaisedAttributeLimitLetsMoreThrough() throws {
        let codec = Self.codec { $0.maximumAttributesPerElement = 5_000 }
        let value = try codec.decode(Data(Self.attributes(4_000)), hints: CodingHints())
        #expect(value.objectValue?.count == 4_000)
        #expect(value["@a3999"] == "3999")
    }

    @Test func equalsSignsOutsideStartTagsAreNotAttributes() throws {
        // Comments, CDATA, processing instructions, attribute values, text and the DTD may hold any number
        // of `=`; only start tags count. (An attribute default in the DTD is refused: see
        // attributeDefaultsAreRefusedBeforeTheyMultiply.)
        let many = String(repeating: "x=1 ", count: 2_000)
        let xml = """
            <?xml version="1.0"?>
            <!DOCTYPE r [<!ATTLIST r b CDATA #IMPLIED><!-- \(many) --><?pi \(many) "?>]>
            <r b="\(many)"><!-- \(many) <a \(many)> --><![CDATA[\(many) <a \(many)>]]><?pi \(many)?>\(many.replacingOccurrences(of: "x", with: "y"))</r>
            """
        let value = try XMLCodec().decode(Data(xml.utf8), hints: CodingHints())
        #expect(value["@b"]?.stringValue?.count == many.count)
    }

    @Test func anAttributeAfterAnUnclosedQuoteIsStillSyntax() throws {
        // The scan cannot be talked out of counting: a quote that never closes is libxml2's error.
        var xml = "<r a=\"1><s"
        for i in 0..<5_000 { xml += " b\(i)=\"\(i)\"" }
        xml += "/></r>"
        let (error, _) = try Self.decodeTimed(xml.utf8)
        #expect(error.code == .malformedInput || error.code == .sizeLimitExceeded)
    }

    @Test func twoHundredThousandSiblingsOfOneNameBuildOneArray() throws {
        let xml = "<r>" + String(repeating: "<item>x</item>", count: 200_000) + "<last/></r>"
        let value = try XMLCodec().decode(Data(xml.utf8), hints: CodingHints())
        #expect(value["item"]?.arrayValue?.count == 200_000)
        #expect(value["last"] == "")
    }

    @Test func childrenOverTheContainerLimitFailWithThePath() throws {
        let codec = Self.codec { $0.maximumContainerCount = 1_000 }
        let fine = "<r><list>" + String(repeating: "<i>1</i>", count: 1_000) + "</list></r>"
        #expect(try codec.decode(Data(fine.utf8), hints: CodingHints())["list"]?["i"]?.arrayValue?.count == 1_000)
        let over = "<r><list>" + String(repeating: "<i>1</i>", count: 1_001) + "</list></r>"
        let error = try XMLTest.error { _ = try codec.decode(Data(over.utf8), hints: CodingHints()) }
        #expect(error.code == .sizeLimitExceeded)
        #expect(error.context.codingPath == ["list"])
        #expect(error.message.contains("maximumContainerCount"))
        #expect(error.context.line == 1)
    }

    @Test func totalNodesAreBounded() throws {
        let codec = Self.codec { $0.maximumTotalValues = 1_000 }
        let row = "<row a=\"1\">" + String(repeating: "<c>1</c>", count: 8) + "</row>"
        // 1 root + 100 × (1 row + 1 attribute + 8 cells) = 1,001 nodes.
        let xml = "<r>" + String(repeating: row, count: 100) + "</r>"
        let error = try XMLTest.error { _ = try codec.decode(Data(xml.utf8), hints: CodingHints()) }
        #expect(error.code == .sizeLimitExceeded)
        #expect(error.message.contains("maximumTotalValues"))
        let enough = Self.codec { $0.maximumTotalValues = 1_001 }
        #expect(try enough.decode(Data(xml.utf8), hints: CodingHints())["row"]?.arrayValue?.count == 100)
    }

    @Test func textInHalfAMillionChunksIsJoinedLinearly() throws {
        // Every `&amp;` and CDATA section is a separate characters callback.
        let xml = "<r>" + String(repeating: "a&amp;<![CDATA[b]]>", count: 500_000) + "</r>"
        let value = try XMLCodec().decode(Data(xml.utf8), hints: CodingHints())
        let text = try #require(value.stringValue)
        #expect(text.utf8.count == 1_500_000)
        #expect(text.hasPrefix("a&ba&b"))
    }

    @Test func textLongerThanTheStringLimitFails() throws {
        let codec = Self.codec { $0.maximumStringLength = 1_000 }
        let xml = "<r><a>" + String(repeating: "x&amp;", count: 600) + "</a></r>"
        let error = try XMLTest.error { _ = try codec.decode(Data(xml.utf8), hints: CodingHints()) }
        #expect(error.code == .sizeLimitExceeded)
        #expect(error.context.codingPath == ["a"])
        #expect(error.message.contains("maximumStringLength"))
        let attribute = "<r a=\"" + String(repeating: "y", count: 1_001) + "\"/>"
        let second = try XMLTest.error { _ = try codec.decode(Data(attribute.utf8), hints: CodingHints()) }
        #expect(second.code == .sizeLimitExceeded)
        #expect(second.context.codingPath == ["@a"])
    }

    @Test func hintsAndTheCodecSetCarryXMLLimits() throws {
        var limits = DecodingLimits()
        limits.maximumDepth = 2
        var hints = CodingHints()
        hints.limits = limits
        let xml = Data("<r><a><b>1</b></a></r>".utf8)
        #expect(throws: Never.self) { try XMLCodec().decode(xml, hints: CodingHints()) }
        let error = try XMLTest.error { _ = try XMLCodec().decode(xml, hints: hints) }
        #expect(error.code == .depthLimitExceeded)
        let codecs = CodecSet([XMLCodec()])
        var limited = codecs
        limited.decodingLimits = limits
        #expect(throws: Never.self) { try codecs.decode(xml, format: .xml) }
        let viaSet = try XMLTest.error { _ = try limited.decode(xml, format: .xml) }
        #expect(viaSet.code == .depthLimitExceeded)
        #expect(XMLCodec.Options().limits == DecodingLimits())
    }

    @Test func unterminatedEverythingIsMalformed() throws {
        for xml in ["<r a=\"1", "<r><!-- x", "<r><![CDATA[x", "<r><?pi x", "<!DOCTYPE r [", "<r", "<r>&amp", "<"] {
            let (error, _) = try Self.decodeTimed(xml.utf8)
            #expect(error.code == .malformedInput, "\(xml)")
        }
    }

    /// libxml2 reports to Courier only: nothing reaches stderr, whatever the input. Decoded in a child process
    /// whose stderr is the test's alone (redirecting this process's stderr would catch the other suites' output).
    @Test func libxml2PrintsNothing() async throws {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            var inputs: [[UInt8]] = XMLHostileInputTests.encodingTroubles
            inputs.append(Array(XMLHostileInputTests.billionLaughs.utf8))
            inputs.append(Array("<!DOCTYPE r [<!ENTITY x SYSTEM \"file:///etc/passwd\">]><r>&x;</r>".utf8))
            inputs.append(Array((String(repeating: "<a>", count: 1000) + String(repeating: "</a>", count: 1000)).utf8))
            inputs.append(Array("<r>\n<a>1</b></r>".utf8))
            inputs.append(Array("<r><p:x/></r>".utf8))
            inputs.append(Array("<r xmlns:p=\"not a uri\"><p:x/></r>".utf8))
            inputs.append(Array("<r>".utf8) + [0xC3, 0x28] + Array("</r>".utf8))
            var failures = 0
            for bytes in inputs where (try? XMLCodec().decode(Data(bytes), hints: CodingHints())) == nil { failures += 1 }
            // Most of them fail: the errors went to Courier, not to stderr.
            if failures < inputs.count / 2 { exit(3) }
        }
        let written = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(written.isEmpty, "libxml2 wrote to stderr: \(written)")
    }
}
