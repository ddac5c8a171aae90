import Courier
import CourierTesting
import Foundation
import Testing

// The fixed-cost shortcuts of the JSON codec: the parser's short strings built from their bytes, member-name
// arrays shared among objects of one layout, and the typed encoder's reused child encoders and summary
// of written names. Each must give exactly what the plain path gives.

/// Writes members whose names share a length and first byte (one bit of the typed encoder's name
/// summary), repeated when `repeats` is set.
struct TypedLookalikeNames: Encodable {
    var repeats: Bool

    struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: Key.self)
        for (i, name) in ["axb", "ayb", "azb", "a", "", "aab"].enumerated() {
            try c.encode(i, forKey: Key(stringValue: name))
        }
        if repeats { try c.encode("again", forKey: Key(stringValue: "ayb")) }
    }
}

/// Keeps every encoder it is given (so none can be reused) while encoding nested values.
final class EncoderKeeper: @unchecked Sendable {
    var kept: [any Encoder] = []
}

struct TypedKeptEncoders: Encodable {
    let keeper: EncoderKeeper
    var depth: Int

    enum Keys: String, CodingKey { case depth, child, list }

    func encode(to encoder: any Encoder) throws {
        keeper.kept.append(encoder)
        var c = encoder.container(keyedBy: Keys.self)
        try c.encode(depth, forKey: .depth)
        if depth > 0 {
            try c.encode(TypedKeptEncoders(keeper: keeper, depth: depth - 1), forKey: .child)
            try c.encode(
                [TypedAddress(city: "c", street: nil, zip: "z", location: [Double(depth)])], forKey: .list)
        }
    }
}

@Suite struct JSONSmallDocumentTests {
    /// Objects of one layout, of lookalike layouts (same member count, other names or order), and of
    /// counts that share a slot of the parser's name table.
    @Test func objectsSharingLayoutsKeepTheirOwnNames() throws {
        let text = """
            [{"a":1,"b":2},{"a":3,"b":4},{"b":5,"a":6},{"c":7,"d":8},{"a":9,"b":10},
             {"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"i":9},{"x":1},
             {"r":1,"s":2,"t":3,"u":4,"v":5,"w":6,"x":7,"y":8,"z":9},{"a\\u0062":1,"b":2},{"ab":1,"b":2},
             {"a":{"a":1,"b":2},"b":[{"a":1,"b":2},{"b":1,"a":2}]}]
            """
        let value = try JSONCodec().decode(Array(text.utf8))
        guard case .array(let objects) = value else {
            Issue.record("not an array: \(value)")
            return
        }
        let expected: [[String]] = [
            ["a", "b"], ["a", "b"], ["b", "a"], ["c", "d"], ["a", "b"], ["a", "b", "c", "d", "e", "f", "g", "h", "i"],
            ["x"], ["r", "s", "t", "u", "v", "w", "x", "y", "z"], ["ab", "b"], ["ab", "b"], ["a", "b"],
        ]
        #expect(objects.map { $0.objectValue?.keys ?? [] } == expected)
        #expect(objects[2]["a"] == 6 && objects[2]["b"] == 5)
        #expect(objects[10]["b"]?[1]?.objectValue?.keys == ["b", "a"])
        #expect(try JSONCodec().encodeString(value) == text.filter { !$0.isWhitespace }.replacingOccurrences(of: "\\u0062", with: "b"))
    }

    /// The same documents, short and padded (so strings near the end are read both ways), decode to the same
    /// values with the same member order.
    @Test func shortAndLongInputsDecodeAlike() throws {
        var generator = ValueGenerator(seed: 77)
        for _ in 0..<200 {
            let value = generator.next(maxDepth: 4, maxWidth: 5)
            let bytes: [UInt8] = try JSONCodec().encode(value)
            let padded = bytes + [UInt8](repeating: UInt8(ascii: " "), count: 5000)
            let short = try JSONCodec().decode(bytes)
            let long = try JSONCodec().decode(padded)
            #expect(short == long)
            #expect(try JSONCodec().encode(short) as [UInt8] == bytes)
            #expect(try JSONCodec().encode(long) as [UInt8] == bytes)
        }
    }

    /// Strings of every short length, ASCII and not, as names and values, in the middle of the input and at
    /// its very end: the parser builds them bit for bit as the standard library does, and they behave so.
    @Test func shortStringsAreTheStandardLibrarysOwn() throws {
        let pieces = ["a", "Z", "é", "€", "😀", "0", " ", "~"]
        for length in 0...18 {
            for first in pieces {
                var text = ""
                while text.utf8.count < length { text += text.utf8.count % 3 == 0 ? first : "x" }
                let expected = String(decoding: Array(text.utf8), as: UTF8.self)
                let escaped = String(decoding: try JSONCodec().encode(.string(text)) as [UInt8], as: UTF8.self)
                for document in ["[\(escaped)]", "{\(escaped):\(escaped)}", escaped, "[\(escaped),1,2,3,4,5,6,7,8,9]"] {
                    let value = try JSONCodec().decode(Array(document.utf8))
                    let strings = [value.stringValue, value[0]?.stringValue, value.objectValue?.keys.first, value[text]?.stringValue]
                    for case let string? in strings {
                        #expect(string == expected && string.hashValue == expected.hashValue)
                        #expect(Array(string.utf8) == Array(expected.utf8) && string.count == expected.count)
                        #expect(string.unicodeScalars.count == expected.unicodeScalars.count)
                        #expect(string.lowercased() == expected.lowercased())
                        if expected.utf8.count <= 15 {  // inline: the same bits
                            #expect(unsafeBitCast(string, to: (UInt64, UInt64).self) == unsafeBitCast(expected, to: (UInt64, UInt64).self))
                        }
                    }
                }
            }
        }
    }

    /// Lists of objects that repeat one layout, short and long.
    @Test(arguments: [3, 300])
    func listsOfOneLayoutRoundTrip(count: Int) throws {
        let list = (0..<count).map { i in
            TypedAddress(city: "city \(i % 7)", street: i % 3 == 0 ? nil : "s\(i)", zip: "\(i)", location: [Double(i)])
        }
        let bytes = try JSONCodec().encode(model: list)
        let value = try JSONCodec().decode(bytes)
        #expect(try JSONCodec().encode(value) as [UInt8] == bytes)
        #expect(try ValueDecoder().decode([TypedAddress].self, from: value) == list)
        #expect(typedDifference([TypedAddress].self, bytes) == nil)
    }

    @Test func lookalikeMemberNamesEncodeLikeTheValuePath() throws {
        for repeats in [false, true] {
            for codec in JSONTypedEncodingTests.codecs {
                #expect(typedEncodingDifference(TypedLookalikeNames(repeats: repeats), codec: codec, encoder: ValueEncoder()) == nil)
            }
        }
        let bytes = try JSONCodec().encode(model: TypedLookalikeNames(repeats: true))
        #expect(String(decoding: bytes, as: UTF8.self) == #"{"axb":0,"ayb":"again","azb":2,"a":3,"":4,"aab":5}"#)
    }

    /// Encoders a model keeps are not reused for later values; one codec encodes many models in turn.
    @Test func keptAndReusedEncodersWriteTheSameBytes() throws {
        for codec in JSONTypedEncodingTests.codecs {
            let keeper = EncoderKeeper()
            #expect(typedEncodingDifference(TypedKeptEncoders(keeper: keeper, depth: 4), codec: codec, encoder: ValueEncoder()) == nil)
            #expect(!keeper.kept.isEmpty)
        }
        let codec = JSONCodec()
        var generator = ModelGenerator(seed: 901)
        for _ in 0..<30 {
            let model = try generator.next(TypedPage.self)
            let first = try codec.encode(model: model)
            #expect(try codec.encode(model: model) == first)
            #expect(typedEncodingDifference(model, codec: codec, encoder: ValueEncoder()) == nil)
        }
    }
}
