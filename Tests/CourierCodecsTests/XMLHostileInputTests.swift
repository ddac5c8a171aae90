import CourierCodecs
import CourierTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Hostile and broken documents: each ends in one enumerated error with a position, quickly and
/// without reading anything outside the document.
@Suite struct XMLHostileInputTests {
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

    static func decodeTimed(_ xml: some Sequence<UInt8>, options: XMLCodec.Options = .init()) throws -> (CourierError, Duration) {
        let data = Data(xml)
        var failure: CourierError?
        let elapsed = try ContinuousClock().measure {
            failure = try XMLTest.error { _ = try XMLCodec(options: options).decode(data, hints: CodingHints()) }
        }
        return (try #require(failure), elapsed)
    }

    @Test func billionLaughsIsRefusedAtTheFirstDeclaration() throws {
        let (error, elapsed) = try Self.decodeTimed(Self.billionLaughs.utf8)
        #expect(error.code == .unsafeInput)
        #expect(error.context.line == 3)
        #expect(error.context.column != nil)
        #expect(error.message.contains("entity lol"))
        #expect(elapsed < .seconds(2))
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

    @Test func undeclaredEntitiesAreMalformed() throws {
        let (error, _) = try Self.decodeTimed("<r>&nbsp;</r>".utf8)
        #expect(error.code == .malformedInput)
        #expect(error.context.line == 1)
    }

    @Test func deepNestingFailsFastWithTheDepthCode() throws {
        let depth = 100_000
        let xml = String(repeating: "<a>", count: depth) + String(repeating: "</a>", count: depth)
        let (error, elapsed) = try Self.decodeTimed(xml.utf8)
        #expect(error.code == .depthLimitExceeded)
        #expect(error.context.line == 1)
        #expect((error.context.column ?? 0) > 3 * 200)
        #expect(elapsed < .seconds(2))
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

    #if canImport(Glibc)
    /// libxml2 reports to Courier only: nothing reaches stderr, whatever the input.
    @Test func libxml2PrintsNothing() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("courier-xml-stderr-\(getpid()).txt").path
        let file = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0o600)
        try #require(file >= 0)
        defer { unlink(path) }
        fflush(nil)
        let saved = dup(2)
        dup2(file, 2)
        var inputs: [[UInt8]] = Self.encodingTroubles
        inputs.append(Array(Self.billionLaughs.utf8))
        inputs.append(Array("<!DOCTYPE r [<!ENTITY x SYSTEM \"file:///etc/passwd\">]><r>&x;</r>".utf8))
        inputs.append(Array((String(repeating: "<a>", count: 1000) + String(repeating: "</a>", count: 1000)).utf8))
        inputs.append(Array("<r>\n<a>1</b></r>".utf8))
        inputs.append(Array("<r><p:x/></r>".utf8))
        inputs.append(Array("<r xmlns:p=\"not a uri\"><p:x/></r>".utf8))
        inputs.append(Array("<r>".utf8) + [0xC3, 0x28] + Array("</r>".utf8))
        for bytes in inputs {
            _ = try? XMLCodec().decode(Data(bytes), hints: CodingHints())
        }
        fflush(nil)
        dup2(saved, 2)
        close(saved)
        close(file)
        let written = try String(contentsOfFile: path, encoding: .utf8)
        #expect(written.isEmpty, "libxml2 wrote to stderr: \(written)")
    }
    #endif
}
