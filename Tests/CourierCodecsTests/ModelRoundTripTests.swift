import Courier
import CourierCodecs
import CourierCodecsTesting
import CourierTesting
import CourierTestSupport
import Foundation
import Testing

/// A model with every kind of member `ModelGenerator` fills: fixed-width integers of each size, floating
/// point, text, dates, URLs, bytes, optionals, enums, nested models, arrays and dictionaries.
struct Profile: Codable, Equatable, Sendable {
    enum Role: String, Codable, CaseIterable, Sendable { case admin, member, guest }
    enum Level: Int, Codable, CaseIterable, Sendable { case low = 1, high = 9 }

    struct Address: Codable, Equatable, Sendable {
        var city: String
        var zip: String?
        var lines: [String]
    }

    var id: Int64
    var serial: UInt64
    var small: Int8
    var port: UInt16
    var count: Int
    var score: Double
    var active: Bool
    var name: String
    var nickname: String?
    var role: Role
    var level: Level?
    var joined: Date
    var homepage: URL
    var avatar: Data
    var tags: [String]
    var address: Address
    var previous: [Address]
    var counters: [String: Int32]
}

@Suite struct ModelRoundTripTests {
    /// Under ThreadSanitizer (`make test-tsan` sets `COURIER_TSAN`) these single-threaded property loops run a
    /// tenth of their cases: they cannot race, and ten times slower they would starve the suites beside them.
    static let cases = TestRun.underThreadSanitizer ? 100 : 1_000

    @Test func theGeneratorIsReproducibleAndFillsEveryMember() throws {
        var first = ModelGenerator(seed: 11)
        var second = ModelGenerator(seed: 11)
        let a = try (0..<50).map { _ in try first.next(Profile.self) }
        let b = try (0..<50).map { _ in try second.next(Profile.self) }
        #expect(a == b)
        var other = ModelGenerator(seed: 12)
        #expect(try other.next(Profile.self) != a[0])
        // Over 50 instances every optional is seen both present and absent, every enum case appears,
        // collections are both empty and not, and integers reach their bounds.
        #expect(a.contains { $0.nickname == nil } && a.contains { $0.nickname != nil })
        #expect(Set(a.map(\.role)) == Set(Profile.Role.allCases))
        #expect(a.contains { $0.tags.isEmpty } && a.contains { $0.tags.count > 1 })
        #expect(a.contains { !$0.counters.isEmpty })
        #expect(a.contains { $0.small == .min || $0.small == .max })
        #expect(a.contains { $0.serial > UInt64(Int64.max) })
    }

    @Test func depthIsBounded() throws {
        final class Node: Codable, Equatable, Sendable {
            let name: String
            let children: [Node]
            let parent: Node?
            static func == (l: Node, r: Node) -> Bool { l.name == r.name && l.children == r.children && l.parent == r.parent }
            func depth() -> Int { 1 + max(children.map { $0.depth() }.max() ?? 0, parent?.depth() ?? 0) }
        }
        var options = ModelGenerator.Options()
        options.maxDepth = 3
        var generator = ModelGenerator(seed: 5, options: options)
        for _ in 0..<200 { #expect(try generator.next(Node.self).depth() <= 4) }
    }

    @Test func thousandsOfModelsRoundTripThroughJSONAndXMLAndAcrossThem() {
        var options = ModelGenerator.Options()
        // XML 1.0 cannot carry most control characters: keep text printable for the cross-format trip.
        options.asciiStrings = true
        // A lone empty item (`<tag/>`) reads back as an empty list: XML cannot tell `[""]` from `[]`.
        options.minimumStringLength = 1
        let failures = RoundTrip.check(Profile.self, codecs: [JSONCodec(), XMLCodec()], count: Self.cases, seed: 2026,
                                       options: options)
        #expect(failures.isEmpty, "\(failures.count) failures; first: \(failures.first.map { "\($0)" } ?? "")")
        // Any text, escapes and non-ASCII included, through JSON.
        let json = RoundTrip.check(Profile.self, codecs: [JSONCodec()], count: 2 * Self.cases, seed: 7)
        #expect(json.isEmpty, "\(json.first.map { "\($0)" } ?? "")")
    }

    /// The README's round-trip test, word for word (its `User` is the README's: not `Equatable`).
    struct User: Codable, Sendable { var id: Int64; var name: String; var email: String }

    // doc-snippet: README
    @Test func usersSurviveEveryFormat() {
        let failures = RoundTrip.check(User.self, codecs: [JSONCodec(), XMLCodec()], count: 1_000, seed: 7)
        #expect(failures.isEmpty, "\(failures.first!)")      // names the seed, the route and the first difference
    }
    // end-doc-snippet

    /// The README's check, as written: a model that is not `Equatable`, default options, JSON and XML. The
    /// generator leaves out what XML cannot carry, so every case passes.
    @Test(arguments: [7, 2026, 99] as [UInt64])
    func theReadmeCheckPassesWithDefaultOptions(seed: UInt64) {
        struct User: Codable, Sendable { var id: Int64; var name: String; var email: String }
        let users = RoundTrip.check(User.self, codecs: [JSONCodec(), XMLCodec()], count: Self.cases, seed: seed)
        #expect(users.isEmpty, "\(users.count) failures; first: \(users.first.map { "\($0)" } ?? "")")
        let profiles = RoundTrip.check(Profile.self, codecs: [JSONCodec(), XMLCodec()], count: Self.cases, seed: seed)
        #expect(profiles.isEmpty, "\(profiles.count) failures; first: \(profiles.first.map { "\($0)" } ?? "")")
    }

    /// Narrowed for XML, strings hold only XML 1.0 characters and arrays no empty string; for JSON they still
    /// hold control characters and empty items (the narrowing is per format, not a blanket ASCII mode).
    @Test func optionsAreNarrowedPerFormat() throws {
        struct Bag: Codable { var texts: [String]; var text: String }
        func scalars(_ options: ModelGenerator.Options) throws -> (all: [Unicode.Scalar], emptyItems: Int) {
            var generator = ModelGenerator(seed: 3, options: options)
            var all: [Unicode.Scalar] = []
            var emptyItems = 0
            for _ in 0..<400 {
                let bag = try generator.next(Bag.self)
                all += bag.text.unicodeScalars + bag.texts.flatMap(\.unicodeScalars)
                emptyItems += bag.texts.filter(\.isEmpty).count
            }
            return (all, emptyItems)
        }
        let xml = try scalars(ModelGenerator.Options().carried(by: [.json, .xml]))
        #expect(!xml.all.contains { $0.value < 0x20 && $0 != "\t" && $0 != "\n" && $0 != "\r" })
        #expect(xml.all.contains { $0.value > 0x7F })      // non-ASCII text is still there
        #expect(xml.emptyItems == 0)
        let json = try scalars(ModelGenerator.Options().carried(by: [.json]))
        #expect(json.all.contains("\u{1}"))
        #expect(json.emptyItems > 0)
        let form = try scalars(ModelGenerator.Options().carried(by: [.form]))
        #expect(form.all.allSatisfy { $0.properties.isAlphabetic || ("0"..."9").contains($0) })
    }

    /// Without `Equatable`, the comparison goes through the re-encoded `Value`: a codec that loses data is
    /// still caught.
    @Test func aNonEquatableModelStillCatchesALossyCodec() {
        struct Note: Codable { var title: String; var count: Int }
        struct DropsCounts: Codec {
            var format: ContentFormat { .json }
            func decode(_ data: Data, hints: CodingHints) throws -> Value {
                var value = try JSONCodec().decode(data, hints: hints)
                if value["count"] != nil { value["count"] = 0 }
                return value
            }
            func encode(_ value: Value, hints: CodingHints) throws -> Data { try JSONCodec().encode(value, hints: hints) }
        }
        let failures = RoundTrip.check(Note.self, codecs: [DropsCounts()], count: 50, seed: 4)
        #expect(!failures.isEmpty)
        #expect(failures.allSatisfy { "\($0)".contains("first difference at count") })
    }

    /// Generated `demo.UserListResponse` values through protobuf, then JSON, then XML (guided by the
    /// message's shape) come back equal: the three formats agree.
    @Test func generatedMessagesRoundTripAcrossAllThreeFormats() throws {
        let schema = ProtobufTestSupport.demo
        var hints = ProtobufTestSupport.hints("demo.UserListResponse")
        hints.shape = schema.shape(of: "demo.UserListResponse")
        hints.rootName = "response"
        var xmlOptions = XMLCodec.Options()
        xmlOptions.arrayItemName = .dropTrailingS
        let codecs: [any Codec] = [ProtobufCodec(schema: schema), JSONCodec(), XMLCodec(options: xmlOptions)]
        var generator = ProtobufValueGenerator(schema: schema, seed: 99)
        var failures: [RoundTrip.Failure] = []
        for _ in 0..<Self.cases {
            // XML 1.0 cannot carry most C0 control characters (the XML codec refuses them): leave them out.
            let value = try generator.value(for: "demo.UserListResponse").mappingStrings {
                String($0.unicodeScalars.filter { $0.value >= 0x20 || $0 == "\t" || $0 == "\n" })
            }
            if let failure = RoundTrip.across(codecs, value: value, hints: hints) {
                failures.append(failure)
            }
        }
        #expect(failures.isEmpty, "\(failures.count) failures; first: \(failures.first.map { "\($0)" } ?? "")")
    }

    @Test func aFailureNamesItsRouteAndSeed() {
        /// A codec that loses every string: the check must catch it and say where.
        struct Lossy: Codec {
            var format: ContentFormat { .json }
            func decode(_ data: Data, hints: CodingHints) throws -> Value {
                try JSONCodec().decode(data, hints: hints).replacingStrings()
            }
            func encode(_ value: Value, hints: CodingHints) throws -> Data { try JSONCodec().encode(value, hints: hints) }
        }
        let failures = RoundTrip.check(Profile.self, codecs: [JSONCodec(), Lossy()], count: 20, seed: 1)
        #expect(!failures.isEmpty)
        let described = "\(failures[0])"
        #expect(described.contains("through json"))
        #expect(described.contains("seed 1"))
    }
}

extension Value {
    fileprivate func replacingStrings() -> Value { mappingStrings { _ in "lost" } }

    fileprivate func mappingStrings(_ transform: (String) -> String) -> Value {
        switch self {
        case .string(let text): return .string(transform(text))
        case .array(let items): return .array(items.map { $0.mappingStrings(transform) })
        case .object(var object):
            for (key, member) in object { object[key] = member.mappingStrings(transform) }
            return .object(object)
        default: return self
        }
    }
}
