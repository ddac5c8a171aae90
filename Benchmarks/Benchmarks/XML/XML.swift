import Benchmark
import BenchmarkSupport
import Courier
import CourierCodecs
import Foundation
import FoundationXML
import XMLCoder

/// XML: Courier's libxml2 codec (the typed codec API, and to `Value`) against XMLCoder (typed) and Foundation's
/// `XMLParser` (raw events, an empty delegate) on the demo user-list page; typed encoding of the page against
/// XMLCoder's `XMLEncoder`.
struct Page: Codable, Equatable {
    struct Address: Codable, Equatable {
        var city: String
        var street: String
        var zip: String
    }

    struct User: Codable, Equatable {
        var id: Int64
        var name: String
        var email: String
        var age: Int
        var score: Double
        var active: Bool
        var tags: [String]
        var address: Address
    }

    struct Body: Codable, Equatable {
        var page: Int
        var total: Int
        var users: [User]
    }

    var code: Int
    var message: String
    var data: Body
}

/// XMLCoder's model of the same page: it needs the wrapper elements spelled out.
struct XCPage: Decodable {
    struct Tags: Decodable {
        var tag: [String]
        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            tag = try container.decodeIfPresent([String].self, forKey: .tag) ?? []
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
        var address: Page.Address
    }

    struct Users: Decodable { var user: [User] }
    struct Body: Decodable {
        var page: Int
        var total: Int
        var users: Users
    }

    var code: Int
    var message: String
    var data: Body

    /// Courier's model of the same page, to check that both sides agree.
    var page: Page {
        Page(
            code: code, message: message,
            data: Page.Body(
                page: data.page, total: data.total,
                users: data.users.user.map {
                    Page.User(
                        id: $0.id, name: $0.name, email: $0.email, age: $0.age, score: $0.score, active: $0.active,
                        tags: $0.tags.tag, address: $0.address)
                }))
    }
}

final class EmptyDelegate: NSObject, XMLParserDelegate {}

let benchmarks: @Sendable () -> Void = {
    let codec = XMLCodec()
    var shaped = CodingHints()
    shaped.shape = ValueShape(of: Page.self)
    let plain = CodingHints()

    for (file, size) in [("users_5000.xml", "5000"), ("users_10.xml", "10")] {
        let data = BenchmarkSupport.fixture(file)

        // The answers agree before anything is timed.
        let ours = try! codec.decode(Page.self, from: data, hints: shaped, decoder: ValueDecoder())
        let theirs = try! XMLDecoder().decode(XCPage.self, from: data).page
        BenchmarkSupport.check(ours == theirs, "\(file): typed decode vs XMLCoder")

        let timed = BenchmarkSupport.timed()

        Benchmark("xml.decode.model \(size) Courier", configuration: timed) { benchmark in
            let decoder = ValueDecoder()
            for _ in benchmark.scaledIterations {
                blackHole(try! codec.decode(Page.self, from: data, hints: shaped, decoder: decoder))
            }
        }
        Benchmark("xml.decode.model \(size) XMLCoder", configuration: timed) { benchmark in
            for _ in benchmark.scaledIterations { blackHole(try! XMLDecoder().decode(XCPage.self, from: data)) }
        }

        Benchmark("xml.decode.value \(size) Courier", configuration: timed) { benchmark in
            for _ in benchmark.scaledIterations { blackHole(try! codec.decode(data, hints: plain)) }
        }
        Benchmark("xml.decode.value \(size) XMLParser", configuration: timed) { benchmark in
            for _ in benchmark.scaledIterations {
                let parser = XMLParser(data: data)
                let delegate = EmptyDelegate()
                parser.delegate = delegate
                blackHole(parser.parse())
            }
        }

        var rooted = CodingHints()
        rooted.rootName = "response"
        let encoder = ValueEncoder()
        BenchmarkSupport.check(
            try! codec.encode(model: ours, hints: rooted, encoder: encoder)
                == codec.encode(encoder.encode(ours), hints: rooted),
            "\(file): typed encode vs the Value pivot")
        Benchmark("xml.encode.model \(size) Courier", configuration: timed) { benchmark in
            for _ in benchmark.scaledIterations { blackHole(try! codec.encode(model: ours, hints: rooted, encoder: encoder)) }
        }
        Benchmark("xml.encode.model \(size) XMLCoder", configuration: timed) { benchmark in
            for _ in benchmark.scaledIterations { blackHole(try! XMLEncoder().encode(ours, withRootKey: "response")) }
        }

        let value = try! codec.decode(data, hints: shaped)
        var wrapped = XMLCodec.Options()
        wrapped.arrayItemName = .dropTrailingS
        let writer = XMLCodec(options: wrapped)
        Benchmark("xml.encode.value \(size) Courier", configuration: timed) { benchmark in
            for _ in benchmark.scaledIterations { blackHole(try! writer.encode(value, hints: shaped)) }
        }
    }
}
