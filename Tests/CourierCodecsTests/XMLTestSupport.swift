import CourierCodecs
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

