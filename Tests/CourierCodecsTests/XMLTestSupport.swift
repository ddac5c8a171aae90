import CourierCodecs
import CourierTesting
import Foundation
import Testing

/// Helpers shared by the XML test suites.
enum XMLTest {
    static func decode(_ xml: String, shape: ValueShape? = nil, options: XMLCodec.Options = .init()) throws -> Value {
        var hints = CodingHints()
        hints.shape = shape
        return try XMLCodec(options: options).decode(Data(xml.utf8), hints: hints)
    }

    static func encode(_ value: Value, rootName: String? = nil, options: XMLCodec.Options = .init()) throws -> String {
        var hints = CodingHints()
        hints.rootName = rootName
        return String(decoding: try XMLCodec(options: options).encode(value, hints: hints), as: UTF8.self)
    }

    /// A random element named from `names`, nesting at most `depth` levels more: with a chance of `nesting`
    /// percent it holds up to `children - 1` random children, else (mostly) one of `texts`; one in ten is
    /// written as an empty-element tag when `emptyTags`.
    static func randomElement(
        _ random: inout SeededRandom, names: [String], texts: [String], depth: Int, nesting: Int, children: Int,
        emptyTags: Bool = false
    ) -> String {
        let name = names[random.below(names.count)]
        var body = ""
        if depth > 0, random.chance(nesting) {
            for _ in 0..<random.below(children) {
                body += randomElement(
                    &random, names: names, texts: texts, depth: depth - 1, nesting: nesting, children: children,
                    emptyTags: emptyTags)
            }
        } else if random.chance(80) {
            body = texts[random.below(texts.count)]
        }
        return emptyTags && random.chance(10) ? "<\(name)/>" : "<\(name)>\(body)</\(name)>"
    }

    /// The error `body` throws, required to be a ``CourierError``.
    static func error(_ body: () throws -> Void) throws -> CourierError {
        let error = #expect(throws: CourierError.self) { try body() }
        return try #require(error)
    }

    /// The shape of the demo user-list page (`demo.UserListResponse`).
    static let userListShape: ValueShape = .object([
        "code": .integer,
        "message": .string,
        "data": .object([
            "page": .integer,
            "total": .integer,
            "users": .array(
                .object([
                    "id": .integer,
                    "name": .string,
                    "email": .string,
                    "age": .integer,
                    "score": .number,
                    "active": .bool,
                    "tags": .array(.string),
                    "address": .object(["city": .string, "street": .string, "zip": .string]),
                ])),
        ]),
    ])
}

