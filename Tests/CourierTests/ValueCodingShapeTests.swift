import Courier
import Foundation
import Testing

private struct Address: Decodable {
    var city: String
    var zip: String?
}

private enum Status: String, Decodable { case active, banned }

private struct Profile: Decodable {
    var id: Int64
    var name: String
    var status: Status
    var score: Double
    var verified: Bool
    var tags: [String]
    var address: Address
    var previous: [Address]?
    var settings: [String: Int]
    var joined: Date
    var avatar: Data
    var raw: Value
    var homepage: URL?
}

private final class TreeNode: Decodable {
    var label: String
    var children: [TreeNode]
    var parent: TreeNode?
    var weight: Int
}

private indirect enum Expression: Decodable {
    case number(Int)
    case sum(Expression, Expression)
}

@Suite struct ValueCodingShapeTests {
    @Test func derivesTheShapeOfAModel() {
        let shape = ValueShape(of: Profile.self)
        let address: ValueShape = .object(["city": .string, "zip": .optional(.string)])
        #expect(shape == .object([
            "id": .integer, "name": .string, "status": .string, "score": .number, "verified": .bool,
            "tags": .array(.string), "address": address, "previous": .optional(.array(address)),
            "settings": .map(.integer), "joined": .string, "avatar": .bytes, "raw": .any,
            "homepage": .optional(.string),
        ]))
        #expect(shape.member("previous").element == address)
    }

    @Test func collectionsAndOptionalsAtTheTop() {
        #expect(ValueShape(of: [Int].self) == .array(.integer))
        #expect(ValueShape(of: [[String]?].self) == .array(.optional(.array(.string))))
        #expect(ValueShape(of: Int?.self) == .optional(.integer))
        #expect(ValueShape(of: [String: [Address]].self) == .map(.array(.object(["city": .string, "zip": .optional(.string)]))))
        #expect(ValueShape(of: Set<Status>.self) == .array(.string))
    }

    @Test func recursiveTypesTerminate() {
        let shape = ValueShape(of: TreeNode.self)
        #expect(shape == .object(["label": .string, "children": .array(.any), "parent": .optional(.any), "weight": .integer]))
        // Enums with payloads decode through a keyed container whose keys the recorder cannot list:
        // their shape is an object with unknown members, and recording terminates.
        #expect(ValueShape(of: Expression.self) == .object([:]))
        #expect(ValueShape(of: [Expression].self) == .array(.object([:])))
    }
}
