@testable import CourierCodecs
import CourierCodecsTesting
import CourierTestSupport
import CourierTesting
import Foundation
import Testing

/// One member of any scalar kind the keyed container takes, written under any name: the typed encode's
/// direct scalar writes (signed integers, `Double`, `Bool`, `String`, `[String]`) against the pivot.
struct PBScalarMember: Encodable {
    enum Kind: CaseIterable {
        case int, int8, int32, int64, uint8, uint32, double, float, bool, string, strings, optionalInt
    }

    struct Name: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    var names: [String]
    var kind: Kind
    var seed: Int

    static let integers: [Int64] = [
        0, 1, -1, 127, 128, 300, Int64(Int32.max), Int64(Int32.max) + 1, Int64(Int32.min), Int64(Int32.min) - 1,
        .max, .min, 1 << 40,
    ]
    static let doubles: [Double] = [0, -0.0, 1.5, -2, .nan, .infinity, -.infinity, 1e300, 3.4e38, 1e-40]
    static let strings: [String] = ["", "a", "RED", "GREEN", "2", "-7", "AAEC", "a\u{0}b", "\u{0}", "héllo", "NaN", "x".repeated(200)]

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: Name.self)
        for (n, name) in names.enumerated() {
            let key = Name(stringValue: name)
            let i = Self.integers[(seed + n) % Self.integers.count]
            let s = Self.strings[(seed + n) % Self.strings.count]
            switch kind {
            case .int: try c.encode(Int(i), forKey: key)
            case .int8: try c.encode(Int8(truncatingIfNeeded: i), forKey: key)
            case .int32: try c.encode(Int32(truncatingIfNeeded: i), forKey: key)
            case .int64: try c.encode(i, forKey: key)
            case .uint8: try c.encode(UInt8(truncatingIfNeeded: i), forKey: key)
            case .uint32: try c.encode(UInt32(truncatingIfNeeded: i), forKey: key)
            case .double: try c.encode(Self.doubles[(seed + n) % Self.doubles.count], forKey: key)
            case .float: try c.encode(Float(Self.doubles[(seed + n) % Self.doubles.count]), forKey: key)
            case .bool: try c.encode((seed + n) % 2 == 0, forKey: key)
            case .string: try c.encode(s, forKey: key)
            case .strings: try c.encode(Array(Self.strings.prefix((seed + n) % 4)) + (seed % 5 == 0 ? [s] : []), forKey: key)
            case .optionalInt: try c.encodeIfPresent(seed % 3 == 0 ? nil : Int32(truncatingIfNeeded: i), forKey: key)
            }
        }
    }
}

extension String {
    fileprivate func repeated(_ count: Int) -> String { String(repeating: self, count: count) }
}

@Suite struct ProtobufTypedScalarWriteTests {
    static let scalarFields = [
        "fDouble", "fFloat", "fInt64", "fUint64", "fInt32", "fFixed64", "fFixed32", "fBool", "fString", "fBytes",
        "fUint32", "fSfixed32", "fSfixed64", "fSint32", "fSint64", "fColor",
    ]
    static let sinkFields = [
        "packedInt32", "packedSint64", "packedDouble", "packedBool", "packedColor", "unpackedInt64", "strings", "blobs",
        "stringMap", "choiceText", "choiceNumber", "choiceBytes", "choiceColor", "maybeInt32", "maybeString",
        "maybeBool", "maybeDouble", "maybeBytes", "maybeColor", "customJsonName", "bigUnsigned", "scalars", "inner",
        "inners",
    ]

    /// Every kind into every field, alone, in field order, backwards, twice, and two oneof members.
    @Test(arguments: PBScalarMember.Kind.allCases)
    func scalarMembersEncodeTheSameWay(kind: PBScalarMember.Kind) throws {
        let codec = ProtobufCodec(schema: ProtobufTestSupport.kitchen)
        let scalars = ProtobufTestSupport.hints("kitchen.Scalars")
        let sink = ProtobufTestSupport.hints("kitchen.KitchenSink")
        for seed in 0..<13 {
            for name in Self.scalarFields {
                ProtobufTypedEncodingTests.checkModel(codec, PBScalarMember(names: [name], kind: kind, seed: seed), scalars)
            }
            for name in Self.sinkFields {
                ProtobufTypedEncodingTests.checkModel(codec, PBScalarMember(names: [name], kind: kind, seed: seed), sink)
            }
            for names in [Self.scalarFields, Self.scalarFields.reversed(), ["fInt32", "fInt32"], ["fInt32", "nope"]] {
                ProtobufTypedEncodingTests.checkModel(codec, PBScalarMember(names: names, kind: kind, seed: seed), scalars)
            }
            for names in [["choiceText", "choiceNumber"], ["maybeInt32", "maybeString", "maybeBool", "customJsonName"]] {
                ProtobufTypedEncodingTests.checkModel(codec, PBScalarMember(names: names, kind: kind, seed: seed), sink)
            }
        }
    }

    /// The repeated-message encoder fits an existential's inline buffer (no allocation per repeated field).
    @Test func theRepeatedEncoderFitsInline() {
        #expect(MemoryLayout<ProtobufRepeatedEncoder>.size <= 3 * MemoryLayout<Int>.size)
    }
}
