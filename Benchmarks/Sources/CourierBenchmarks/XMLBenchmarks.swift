import Courier
import CourierCodecs
import Foundation
import FoundationXML
import XMLCoder

/// XML: Courier's libxml2 codec against Foundation's `XMLParser` (raw) and XMLCoder (typed), on the
/// demo user-list page.
enum XMLBenchmarks {
    // MARK: Courier's model (Codable, read through ValueDecoder)

    struct Page: Decodable {
        struct Address: Decodable { var city: String; var street: String; var zip: String }
        struct User: Decodable {
            var id: Int64
            var name: String
            var email: String
            var age: Int
            var score: Double
            var active: Bool
            var tags: [String]
            var address: Address
        }
        struct Body: Decodable { var page: Int; var total: Int; var users: [User] }
        var code: Int
        var message: String
        var data: Body
    }

    // MARK: XMLCoder's model (it needs the wrapper elements spelled out)

    struct XCPage: Decodable {
        struct Address: Decodable { var city: String; var street: String; var zip: String }
        struct Tags: Decodable {
            var tag: [String]
            init(from decoder: any Decoder) throws {
                let c = try decoder.container(keyedBy: CodingKeys.self)
                tag = try c.decodeIfPresent([String].self, forKey: .tag) ?? []
            }
            enum CodingKeys: String, CodingKey { case tag }
        }
        struct User: Decodable {
            var id: Int64
            var name: String
            var email: String
            var age: Int
            var score: Double
            var active: Bool
            var tags: Tags
            var address: Address
        }
        struct Users: Decodable { var user: [User] }
        struct Body: Decodable { var page: Int; var total: Int; var users: Users }
        var code: Int
        var message: String
        var data: Body
    }

    final class EmptyDelegate: NSObject, XMLParserDelegate {}

    static func run(_ h: inout Harness) throws {
        let codec = XMLCodec()
        var shaped = CodingHints()
        shaped.shape = ValueShape(of: Page.self)
        let plain = CodingHints()
        for name in ["users_10", "users_5000"] {
            let data = fixture("\(name).xml")
            print("  -- \(name).xml (\(data.count) bytes)")

            // Sanity: every contestant reads the same page.
            let ours = try ValueDecoder().decode(Page.self, from: try codec.decode(data, hints: shaped))
            let theirs = try XMLDecoder().decode(XCPage.self, from: data)
            precondition(ours.data.users.count == theirs.data.users.user.count)

            let raw = try h.measure("XMLCodec decode → Value (\(name))", bytes: data.count) {
                _ = try codec.decode(data, hints: plain)
            }
            let foundation = h.measure("Foundation XMLParser, empty delegate (\(name))", bytes: data.count) {
                let parser = XMLParser(data: data)
                let delegate = EmptyDelegate()
                parser.delegate = delegate
                _ = parser.parse()
            }
            h.compare(raw, foundation, target: 1.0)

            let shapedValue = try h.measure("XMLCodec decode with shape → Value (\(name))", bytes: data.count) {
                _ = try codec.decode(data, hints: shaped)
            }
            let typed = try h.measure("XMLCodec + ValueDecoder → model (\(name))", bytes: data.count) {
                _ = try ValueDecoder().decode(Page.self, from: try codec.decode(data, hints: shaped))
            }
            let xmlCoder = try h.measure("XMLCoder XMLDecoder → model (\(name))", bytes: data.count) {
                _ = try XMLDecoder().decode(XCPage.self, from: data)
            }
            h.compare(typed, xmlCoder, target: 20)
            h.compare(shapedValue, xmlCoder)

            let value = try codec.decode(data, hints: shaped)
            var wrapped = XMLCodec.Options()
            wrapped.arrayItemName = .dropTrailingS
            let writer = XMLCodec(options: wrapped)
            let encodedSize = try writer.encode(value, hints: shaped).count
            h.measure("XMLCodec encode Value (\(name))", bytes: encodedSize) {
                _ = try? writer.encode(value, hints: shaped)
            }
        }
        print(String(format: "  peak memory %.1f MiB", peakMemoryMiB()))
    }
}
