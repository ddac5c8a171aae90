#if Macros
@testable import CourierCodecs
import CourierCodecsTesting
import CourierMacros
import CourierTestSupport
import CourierTesting
import Foundation
import Testing

// Adversarial differential tests of the @ProtobufModel fast path against the Codable pivot (written by an
// attack on the path): mismatched member types, odd inputs and values, every limit, depth, size, concurrency.

private func hex(_ s: String) -> Data {
    let digits = s.filter { !$0.isWhitespace }
    var out = Data()
    var i = digits.startIndex
    while i < digits.endIndex {
        let j = digits.index(i, offsetBy: 2)
        out.append(UInt8(digits[i..<j], radix: 16)!)
        i = j
    }
    return out
}

private func varintBytes(_ v: UInt64) -> [UInt8] {
    var v = v
    var out: [UInt8] = []
    while v >= 0x80 {
        out.append(UInt8(v & 0x7F) | 0x80)
        v >>= 7
    }
    out.append(UInt8(v))
    return out
}

// MARK: models with every kind of mismatch against kitchen.Scalars

/// Wider (but exact) members: allowed by the plan.
@ProtobufModel
struct AWide: Codable, Equatable {
    var fDouble: Double
    var fFloat: Double
    var fInt64: Int
    var fUint64: UInt
    var fInt32: Int64
    var fFixed64: UInt64
    var fFixed32: Int64
    var fBool: Bool
    var fString: String
    var fUint32: Int
    var fSfixed32: Int
    var fSfixed64: Int
    var fSint32: Int64
    var fSint64: Int
}

/// Narrow / wrong-sign members: the plan should refuse to read (falls back), may write.
@ProtobufModel
struct ANarrow: Codable, Equatable {
    var fDouble: Float
    var fFloat: Float
    var fInt64: Int32
    var fUint64: Int64
    var fInt32: UInt32
    var fFixed64: Int64
    var fFixed32: Int32
    var fUint32: Int32
    var fSint64: Int32
}

/// All optional.
@ProtobufModel
struct AOptional: Codable, Equatable {
    var fDouble: Double?
    var fFloat: Float?
    var fInt64: Int64?
    var fUint64: UInt64?
    var fInt32: Int32?
    var fBool: Bool?
    var fString: String?
    var fBytes: String?
    var fColor: Int32?
}

/// Arrays on singular fields, nested optionals and arrays.
@ProtobufModel
struct AShapes: Codable, Equatable {
    var fInt32: [Int32]
    var fInt64: Int64??
    var fString: [String]?
}

@ProtobufModel
struct ANestedArrays: Codable, Equatable {
    var packedInt32: [[Int32]]
}

@ProtobufModel
struct AEnumAsBool: Codable, Equatable {
    var fColor: Bool
}

@ProtobufModel
struct AEnumAsString: Codable, Equatable {
    var fColor: String
}

@ProtobufModel
struct AEnumAsInt: Codable, Equatable {
    var fColor: Int32
}

@ProtobufModel
struct AFloatOnDouble: Codable, Equatable {
    var fDouble: Float
    var fFloat: Double
}

@ProtobufModel
struct AInts: Codable, Equatable {
    var fInt64: Int
    var fUint64: UInt
    var fInt32: Int
    var fFixed64: UInt
    var fFixed32: UInt
    var fUint32: UInt
    var fSfixed32: Int
    var fSfixed64: Int
    var fSint32: Int
    var fSint64: Int
}

@ProtobufModel
struct AUnsignedOnSigned: Codable, Equatable {
    var fInt64: UInt64
    var fInt32: UInt32
    var fSint64: UInt64
    var fSfixed64: UInt64
}

@ProtobufModel
struct ASignedOnUnsigned: Codable, Equatable {
    var fUint64: Int64
    var fFixed64: Int64
    var fUint32: Int32
    var fFixed32: Int32
}

// MARK: kitchen.KitchenSink models

@ProtobufModel
struct ABools: Codable, Equatable {
    var packedBool: [Bool]
}

@ProtobufModel
struct ABoolsOpt: Codable, Equatable {
    var packedBool: [Bool]?
    var maybeBool: Bool?
}

@ProtobufModel
struct AEmpty: Codable, Equatable {}

/// Proto names instead of JSON names.
@ProtobufModel
struct AProtoNames: Codable, Equatable {
    var snake: String?
    var packed: [Int32]?
    var choice: String?
    enum CodingKeys: String, CodingKey {
        case snake = "snake_case_name"
        case packed = "packed_int32"
        case choice = "choice_text"
    }
}

@ProtobufModel
struct AProtoNamesRequired: Codable, Equatable {
    var snake: String
    var big: UInt64
    enum CodingKeys: String, CodingKey {
        case snake = "snake_case_name"
        case big = "big_unsigned"
    }
}

@ProtobufModel
struct AJSONName: Codable, Equatable {
    var customJsonName: String
    var bigUnsigned: UInt64
}

@ProtobufModel
struct AUnknownMember: Codable, Equatable {
    var customJsonName: String
    var unknown: Data?
    enum CodingKeys: String, CodingKey {
        case customJsonName
        case unknown = "@unknown"
    }
}

@ProtobufModel
struct AUnknownMemberString: Codable, Equatable {
    var customJsonName: String
    var unknown: String?
    enum CodingKeys: String, CodingKey {
        case customJsonName
        case unknown = "@unknown"
    }
}

@ProtobufModel
struct AOneofs: Codable, Equatable {
    var choiceText: String?
    var choiceNumber: Int64?
    var choiceInner: MInner?
    var maybeInt32: Int32?
    var maybeString: String?
    var maybeBool: Bool?
    var maybeDouble: Double?
}

@ProtobufModel
struct AOneofsRequired: Codable, Equatable {
    var choiceText: String
    var maybeInt32: Int32
}

@ProtobufModel
struct ARepeated: Codable, Equatable {
    var packedInt32: [Int32]?
    var unpackedInt64: [Int64]?
    var strings: [String]?
    var inners: [MInner]?
    var packedDouble: [Double]
    var packedFixed32: [UInt32]
    var packedSint64: [Int64]
    var unpackedFloat: [Float]
    var unpackedUint32: [UInt32]
}

@ProtobufModel
struct AWrongMessage: Codable, Equatable {
    var scalars: MInner?  // a model of another message type
    var inner: AOptional?  // ditto
}

@ProtobufModel
struct AAllOptInner: Codable, Equatable {
    var label: String?
    var values: [Int32]?
}

@ProtobufModel
struct AWrongMessageOpt: Codable, Equatable {
    var scalars: AAllOptInner?
}

@ProtobufModel
struct ALegacyHolder: Codable, Equatable {
    var legacy: ALegacy?
    var customJsonName: String
}

@ProtobufModel
struct ALegacy: Codable, Equatable {
    var id: Int32
    var name: String?
    var count: Int32?
}

/// Defaults on members.
@ProtobufModel
struct ADefaults: Codable, Equatable {
    var label: String = "dflt"
    var values: [Int32] = [9]
    var color: Int32? = 5
    let constant: Int32 = 77
}

@ProtobufModel
struct AGeneric<T: Codable & Equatable & ProtobufField>: Codable, Equatable {
    var label: String
    var values: [T]
}

@ProtobufModel
struct AGenericUnconstrained<T: Codable & Equatable>: Codable, Equatable {
    var label: String
    var values: T
}

@ProtobufModel
struct ANodeA: Codable, Equatable {
    var value: Int32
    var children: [ANodeA]
}

@ProtobufModel
struct ANodeB: Codable, Equatable {
    var value: Int64?
    var children: [ANodeB]?
}

// Names that collide with generated identifiers.
@ProtobufModel
struct ANames: Codable, Equatable {
    var reader: String
    var writer: [Int32]
    var slot: Int32
    enum CodingKeys: String, CodingKey {
        case reader = "label"
        case writer = "values"
        case slot = "color"
    }
}

@ProtobufModel
struct ANames2: Codable, Equatable {
    var label: String
    // swift-format-ignore: NoLeadingUnderscores
    var _m0: [Int32]?  // the generated code's own names, as members
    // swift-format-ignore: NoLeadingUnderscores
    var _slot: Int32?
    var model: Int32?
    var `default`: Int32?
}

// Odd member names that compile and code as `Codable` does.
@ProtobufModel
struct ANames3: Codable, Equatable {
    var label: String
    var `init`: Int32?
    var protobufMembers: [Int32]?
    var `self`: Int32?
}

// Mapped members of map-entry messages / maps.
@ProtobufModel
struct AMapEntry: Codable, Equatable {
    var key: String
    var value: String
}

@ProtobufModel
struct AMapHolder: Codable, Equatable {
    var stringMap: [String: String]
}

// MARK: the tests

@Suite struct ProtobufModelAttackTests {
    static let kitchenSchema = ProtobufModelCodecTests.kitchenSchema
    static let demoSchema = ProtobufModelCodecTests.demoSchema
    let kitchen = ProtobufCodec(schema: Self.kitchenSchema)

    static func hints(_ type: String, limits: DecodingLimits? = nil) -> CodingHints {
        var hints = CodingHints()
        hints.messageType = type
        hints.limits = limits
        return hints
    }

    static let policies: [ProtobufCodec.Options] = {
        var keep = ProtobufCodec.Options()
        keep.unknownFields = .keep
        var discard = keep
        discard.unknownFields = .discard
        var reject = keep
        reject.unknownFields = .reject
        var ignoring = keep
        ignoring.ignoreUnknownMembers = true
        var noDefaults = keep
        noDefaults.includeDefaultValues = false
        var numbers = keep
        numbers.enumsAsNumbers = true
        return [keep, discard, reject, ignoring, noDefaults, numbers]
    }()

    static func codecs(_ schema: ProtobufSchema) -> [ProtobufCodec] {
        policies.map { ProtobufCodec(schema: schema, options: $0) }
    }

    // Packed/unpacked bools with values other than 0/1, multi-byte varints.
    @Test func boolValues() throws {
        let inputs = [
            "42 01 02", "42 02 80 01", "42 01 FF", "42 03 01 00 01", "40 02", "40 80 01", "40 FF FF FF FF 0F",
            "40 80 80 80 80 80 80 80 80 80 01", "42 0A 80 80 80 80 80 80 80 80 80 01",
            "E8 01 02", "E8 01 80 00",  // maybe_bool = 2, non-minimal 0
        ]
        for codec in Self.codecs(Self.kitchenSchema) {
            let hints = Self.hints("kitchen.KitchenSink")
            for input in inputs {
                ModelDifferential.check(ABools.self, codec, hex(input), hints)
                ModelDifferential.check(ABoolsOpt.self, codec, hex(input), hints)
                ModelDifferential.check(AEmpty.self, codec, hex(input), hints)
                ModelDifferential.check(MKitchen.self, codec, hex(input), hints)
            }
            let scalars = Self.hints("kitchen.Scalars")
            for input in ["40 02", "40 80 01", "40 FF 01", "40 80 80 80 80 80 80 80 80 80 01"] {
                ModelDifferential.check(MScalars.self, codec, hex(input), scalars)
                ModelDifferential.check(AOptional.self, codec, hex(input), scalars)
            }
        }
    }

    /// Scalar edge values through every mismatched model.
    @Test func scalarEdgeInputs() throws {
        var inputs: [Data] = []
        // f_int32 (5) with 10-byte negatives and large values; f_uint32 (11) 10-byte; f_sint32 (14) large
        let varintFields: [UInt64] = [3, 4, 5, 8, 11, 14, 15, 16]
        let values: [UInt64] = [
            0, 1, 0x7F, 0x80, 0x7FFF_FFFF, 0x8000_0000, 0xFFFF_FFFF, 0x1_0000_0000, UInt64(Int64.max),
            UInt64(bitPattern: Int64.min), .max, UInt64(bitPattern: -1), UInt64(bitPattern: -2), 0xFFFF_FFFF_0000_0000,
        ]
        for field in varintFields {
            for v in values {
                inputs.append(Data(varintBytes(field << 3) + varintBytes(v)))
            }
        }
        // fixed fields: 1 double, 2 float, 6 fixed64, 7 fixed32, 12 sfixed32, 13 sfixed64
        let doubles: [Double] = [
            0, -0.0, .infinity, -.infinity, .nan, .leastNonzeroMagnitude, .greatestFiniteMagnitude, 0.1, 1e-310,
            Double(Float.greatestFiniteMagnitude), Double(Float.greatestFiniteMagnitude) * 2, 16_777_217,
        ]
        for d in doubles {
            var b: [UInt8] = [0x09]
            withUnsafeBytes(of: d.bitPattern.littleEndian) { b += $0 }
            inputs.append(Data(b))
        }
        let floats: [Float] = [
            0, -0.0, .infinity, -.infinity, .nan, .signalingNaN, .leastNonzeroMagnitude, .greatestFiniteMagnitude, 0.1,
            1e-40, 16_777_217,
        ]
        for f in floats {
            var b: [UInt8] = [0x15]
            withUnsafeBytes(of: f.bitPattern.littleEndian) { b += $0 }
            inputs.append(Data(b))
        }
        var nanPayload: [UInt8] = [0x15]
        withUnsafeBytes(of: UInt32(0x7FA0_0001).littleEndian) { nanPayload += $0 }
        inputs.append(Data(nanPayload))
        for key: UInt8 in [0x31, 0x3D, 0x65, 0x69] {
            inputs.append(Data([key] + (key & 7 == 1 ? [UInt8](repeating: 0xFF, count: 8) : [0xFF, 0xFF, 0xFF, 0xFF])))
            inputs.append(Data([key] + (key & 7 == 1 ? [0, 0, 0, 0, 0, 0, 0, 0x80] : [0, 0, 0, 0x80])))
        }
        // strings and bytes
        inputs += [
            hex("4A 03 61 00 62"), hex("4A 00"), hex("52 03 61 00 62"), hex("52 02 C3 28"), hex("4A 04 F0 9F 98 80"),
            hex("4A 03 ED A0 80"),  // surrogate
            hex("4A 02 C0 80"),  // overlong NUL
            hex("4A 01 FF"),
            hex("4A 80 00"),  // non-minimal length
            hex("52 80 00"),
        ]
        for codec in Self.codecs(Self.kitchenSchema) {
            let hints = Self.hints("kitchen.Scalars")
            for input in inputs {
                ModelDifferential.check(MScalars.self, codec, input, hints)
                ModelDifferential.check(AWide.self, codec, input, hints)
                ModelDifferential.check(ANarrow.self, codec, input, hints)
                ModelDifferential.check(AOptional.self, codec, input, hints)
                ModelDifferential.check(AShapes.self, codec, input, hints)
                ModelDifferential.check(AEnumAsBool.self, codec, input, hints)
                ModelDifferential.check(AEnumAsString.self, codec, input, hints)
                ModelDifferential.check(AEnumAsInt.self, codec, input, hints)
                ModelDifferential.check(AFloatOnDouble.self, codec, input, hints)
                ModelDifferential.check(AInts.self, codec, input, hints)
                ModelDifferential.check(AUnsignedOnSigned.self, codec, input, hints)
                ModelDifferential.check(ASignedOnUnsigned.self, codec, input, hints)
                ModelDifferential.check(AEmpty.self, codec, input, hints)
            }
        }
    }

    /// Generated Scalars/KitchenSink/Inner messages through all the odd models.
    @Test func generatedThroughOddModels() throws {
        let writer = ProtobufCodec(schema: Self.kitchenSchema)
        for codec in Self.codecs(Self.kitchenSchema) {
            for seed in 0..<60 {
                var generator = ProtobufValueGenerator(schema: Self.kitchenSchema, seed: UInt64(seed))
                let sh = Self.hints("kitchen.Scalars")
                let s = try writer.encode(generator.value(for: "kitchen.Scalars"), hints: sh)
                ModelDifferential.check(AWide.self, codec, s, sh)
                ModelDifferential.check(ANarrow.self, codec, s, sh)
                ModelDifferential.check(AOptional.self, codec, s, sh)
                ModelDifferential.check(AShapes.self, codec, s, sh)
                ModelDifferential.check(AFloatOnDouble.self, codec, s, sh)
                ModelDifferential.check(AInts.self, codec, s, sh)
                ModelDifferential.check(AEmpty.self, codec, s, sh)
                let kh = Self.hints("kitchen.KitchenSink")
                let k = try writer.encode(generator.value(for: "kitchen.KitchenSink"), hints: kh)
                ModelDifferential.check(ABools.self, codec, k, kh)
                ModelDifferential.check(AProtoNames.self, codec, k, kh)
                ModelDifferential.check(AProtoNamesRequired.self, codec, k, kh)
                ModelDifferential.check(AJSONName.self, codec, k, kh)
                ModelDifferential.check(AUnknownMember.self, codec, k, kh)
                ModelDifferential.check(AUnknownMemberString.self, codec, k, kh)
                ModelDifferential.check(AOneofs.self, codec, k, kh)
                ModelDifferential.check(AOneofsRequired.self, codec, k, kh)
                ModelDifferential.check(ARepeated.self, codec, k, kh)
                ModelDifferential.check(AWrongMessage.self, codec, k, kh)
                ModelDifferential.check(AWrongMessageOpt.self, codec, k, kh)
                ModelDifferential.check(ALegacyHolder.self, codec, k, kh)
                ModelDifferential.check(AEmpty.self, codec, k, kh)
                ModelDifferential.check(AMapHolder.self, codec, k, kh)
                let ih = Self.hints("kitchen.KitchenSink.Inner")
                let i = try writer.encode(generator.value(for: "kitchen.KitchenSink.Inner"), hints: ih)
                ModelDifferential.check(ADefaults.self, codec, i, ih)
                ModelDifferential.check(AGeneric<Int32>.self, codec, i, ih)
                ModelDifferential.check(AGeneric<Int64>.self, codec, i, ih)
                ModelDifferential.check(AGeneric<UInt32>.self, codec, i, ih)
                ModelDifferential.check(AGeneric<Double>.self, codec, i, ih)
                ModelDifferential.check(AGenericUnconstrained<[Int32]>.self, codec, i, ih)
                ModelDifferential.check(ANames.self, codec, i, ih)
                ModelDifferential.check(ANames2.self, codec, i, ih)
                let nh = Self.hints("kitchen.Node")
                let n = try writer.encode(generator.value(for: "kitchen.Node"), hints: nh)
                ModelDifferential.check(ANodeA.self, codec, n, nh)
                ModelDifferential.check(ANodeB.self, codec, n, nh)
            }
        }
    }

    /// Unknown fields, an unread closed enum with an unknown value, legacy messages with/without required.
    @Test func unknownsAndLegacy() throws {
        let inputs = [
            "F8 07 01",  // unknown varint
            "FA 07 00",  // unknown empty length-delimited
            "FD 07 01 02 03 04",  // unknown fixed32
            "92 02 04 08 01 30 63",  // legacy {id 1, level 99}
            "92 02 02 30 05",  // legacy without id
            "92 02 02 08 01",  // legacy {id 1}
            "92 02 05 08 01 F8 07 01",  // legacy with an unknown field
            "92 02 04 08 01 08 02",  // legacy id twice
            "8A 02 01 61 F8 07 01",  // snake_case_name + unknown
            "12 05 F8 07 01 0A 00",  // inner with an unknown field
            "1A 03 F8 07 01",  // inners[0] with an unknown field
            "7A 06 0A 01 61 12 01 62",  // string_map entry
            "7A 00",  // empty map entry
            "7A 03 0A 01 61",  // entry without value
            "82 01 04 08 01 12 00",  // int_map entry with empty Inner
            "82 01 02 12 00",  // int_map entry without key
            "82 01 06 08 01 12 02 18 63",  // int_map Inner with color 99
            "7A 07 0A 01 61 F8 07 01",  // map entry with an unknown field
            "7A 06 0A 01 61 0A 01 62",  // map entry key twice
            "A2 01 04 08 01 10 63",  // color_map? (field 20) key wrong type
            "D0 01 63",  // choice_color 99
            "48 63",  // packed_color unpacked 99
            "4A 02 63 64",  // packed_color packed
        ]
        for codec in Self.codecs(Self.kitchenSchema) {
            let hints = Self.hints("kitchen.KitchenSink")
            for input in inputs {
                ModelDifferential.check(MKitchen.self, codec, hex(input), hints)
                ModelDifferential.check(AJSONName.self, codec, hex(input), hints)
                ModelDifferential.check(AUnknownMember.self, codec, hex(input), hints)
                ModelDifferential.check(ALegacyHolder.self, codec, hex(input), hints)
                ModelDifferential.check(AEmpty.self, codec, hex(input), hints)
                ModelDifferential.check(AOneofs.self, codec, hex(input), hints)
            }
        }
    }

    /// Tight limits swept exhaustively around a few inputs.
    @Test func limitSweep() throws {
        let inputs = [
            "0A 02 08 01 12 05 0A 01 61 10 01 1A 00 1A 02 10 05 22 03 01 02 03 F8 07 01 7A 06 0A 01 61 12 01 62 8A 02 02 61 62",
            "22 03 01 02 03 20 04 20 05",
            "F8 07 01 F8 07 02 F8 07 03",
            "1A 00 1A 00 1A 00 1A 00",
            "92 02 02 08 01",
            "7A 06 0A 01 61 12 01 62 7A 06 0A 01 62 12 01 63",
            "12 07 0A 03 61 62 63 10 01",
            "6A 03 61 62 63 6A 00",
        ]
        var count = 0
        for policy in Self.policies {
            let codec = ProtobufCodec(schema: Self.kitchenSchema, options: policy)
            for input in inputs {
                for total in 0..<90 {
                    var limits = ProtobufCodec.Options().limits
                    limits.maximumTotalValues = total
                    let hints = Self.hints("kitchen.KitchenSink", limits: limits)
                    ModelDifferential.check(MKitchen.self, codec, hex(input), hints)
                    ModelDifferential.check(ARepeated.self, codec, hex(input), hints)
                    ModelDifferential.check(AEmpty.self, codec, hex(input), hints)
                    count += 1
                }
                for container in 0..<12 {
                    var limits = ProtobufCodec.Options().limits
                    limits.maximumContainerCount = container
                    let hints = Self.hints("kitchen.KitchenSink", limits: limits)
                    ModelDifferential.check(MKitchen.self, codec, hex(input), hints)
                    ModelDifferential.check(ARepeated.self, codec, hex(input), hints)
                    ModelDifferential.check(AEmpty.self, codec, hex(input), hints)
                }
                for length in 0..<5 {
                    var limits = ProtobufCodec.Options().limits
                    limits.maximumStringLength = length
                    let hints = Self.hints("kitchen.KitchenSink", limits: limits)
                    ModelDifferential.check(MKitchen.self, codec, hex(input), hints)
                    ModelDifferential.check(AEmpty.self, codec, hex(input), hints)
                }
                for depth in 0..<4 {
                    var limits = ProtobufCodec.Options().limits
                    limits.maximumDepth = depth
                    let hints = Self.hints("kitchen.KitchenSink", limits: limits)
                    ModelDifferential.check(MKitchen.self, codec, hex(input), hints)
                    ModelDifferential.check(ARepeated.self, codec, hex(input), hints)
                    ModelDifferential.check(AEmpty.self, codec, hex(input), hints)
                }
                for size in [0, 1, 5, 100] {
                    var limits = ProtobufCodec.Options().limits
                    limits.maximumInputSize = size
                    let hints = Self.hints("kitchen.KitchenSink", limits: limits)
                    // Codec level only: `ModelDifferential.direct` skips decodeModel's maximumInputSize guard.
                    let viaCodec = Result { try codec.decode(MKitchen.self, from: hex(input), hints: hints, decoder: ValueDecoder()) }
                    let pivot = Result {
                        try ValueDecoder().decode(MKitchen.self, from: codec.decodeValue(hex(input), hints: hints, direct: false))
                    }
                    switch (viaCodec, pivot) {
                    case (.success(let a), .success(let b)): #expect(a == b)
                    case (.failure(let a), .failure(let b)): #expect(ModelDifferential.failure(a) == ModelDifferential.failure(b))
                    default: Issue.record("inputSize \(size): codec \(viaCodec) vs pivot \(pivot)")
                    }
                }
            }
        }
        #expect(count > 0)
    }

    /// Split packed/unpacked runs, empty runs, trailing partial varints, oneof repeats.
    @Test func packedAndOneofShapes() throws {
        let inputs = [
            "22 02 01 02 20 03 22 01 04",  // packed, unpacked, packed
            "22 02 01 80",  // trailing partial varint
            "22 00",
            "22 03 01 02",  // length past end
            "3A 04 00 00 00 00 3D 00 00 00 00",  // packed_fixed32 packed, then unpacked
            "3A 03 00 00 00",  // ragged fixed
            "32 08 00 00 00 00 00 00 F0 7F",  // packed_double +inf
            "50 01 52 01 02",  // unpacked_int64 unpacked then packed
            "5D 00 00 80 3F 5A 04 00 00 00 40",  // unpacked_float
            "60 05 62 02 06 07",  // unpacked_uint32 both
            "B2 01 01 61 B2 01 01 62",
            "B8 01 01 B2 01 01 61",
            "C2 01 00 C2 01 00",  // choice_inner twice
            "C2 01 00 B8 01 05",
            "D8 01 01 D8 01 02",  // maybe_int32 twice
            "12 00 12 00",  // inner twice
            "12 02 0A 00 12 02 10 01",  // inner twice (merge)
            "1A 02 10 01 1A 02 12 00",
            "2A 01 01 2A 01 02 28 03",  // packed_sint64
            "22 0B FF FF FF FF FF FF FF FF FF 01 00",
            "22 0A FF FF FF FF FF FF FF FF FF 02",
            "B2 01 00",  // choice_text empty
            "E2 01 00",  // maybe_string empty
            "F0 01 00",  // maybe_double wrong wire type
            "F1 01 00 00 00 00 00 00 00 80",  // maybe_double -0
        ]
        for codec in Self.codecs(Self.kitchenSchema) {
            let hints = Self.hints("kitchen.KitchenSink")
            for input in inputs {
                ModelDifferential.check(MKitchen.self, codec, hex(input), hints)
                ModelDifferential.check(ARepeated.self, codec, hex(input), hints)
                ModelDifferential.check(AOneofs.self, codec, hex(input), hints)
                ModelDifferential.check(AOneofsRequired.self, codec, hex(input), hints)
                ModelDifferential.check(ANestedArrays.self, codec, hex(input), hints)
                ModelDifferential.check(AProtoNames.self, codec, hex(input), hints)
                ModelDifferential.check(AEmpty.self, codec, hex(input), hints)
            }
        }
    }

    // MARK: encoding

    @Test func encodeEdgeValues() throws {
        let sh = Self.hints("kitchen.Scalars")
        for codec in Self.codecs(Self.kitchenSchema) {
            let floats: [Float] = [
                0, -0.0, 0.1, .nan, .infinity, -.infinity, .leastNonzeroMagnitude, .leastNormalMagnitude,
                .greatestFiniteMagnitude, -.greatestFiniteMagnitude, 16_777_217, 1e-40, 3.4028233e38,
            ]
            let doubles: [Double] = [
                0, -0.0, 0.1, .nan, .infinity, -.infinity, .leastNonzeroMagnitude, 1e-50, -1e-50, 1e39, -1e39,
                Double(Float.greatestFiniteMagnitude), 3.4028235e38, 3.4028235677973366e+38, 3.4028235677973362e+38,
                1.401298464324817e-45, 7e-46, 7.006492321624087e-46, 0.1, 16_777_217,
            ]
            for (i, f) in floats.enumerated() {
                let d = doubles[i % doubles.count]
                ModelDifferential.checkEncode(AFloatOnDouble(fDouble: f, fFloat: d), codec, sh)
            }
            for d in doubles {
                for f in floats.prefix(3) {
                    ModelDifferential.checkEncode(AFloatOnDouble(fDouble: f, fFloat: d), codec, sh)
                }
            }
            let ints: [Int] = [0, 1, -1, .max, .min, Int(Int32.max), Int(Int32.min), Int(Int32.max) + 1, Int(UInt32.max), Int(UInt32.max) + 1]
            let uints: [UInt] = [0, 1, .max, UInt(Int.max), UInt(Int.max) + 1, UInt(UInt32.max), UInt(UInt32.max) + 1]
            for v in ints {
                for u in uints {
                    ModelDifferential.checkEncode(
                        AInts(
                            fInt64: v, fUint64: u, fInt32: v, fFixed64: u, fFixed32: u, fUint32: u, fSfixed32: v,
                            fSfixed64: v, fSint32: v, fSint64: v), codec, sh)
                }
            }
            ModelDifferential.checkEncode(
                AUnsignedOnSigned(fInt64: .max, fInt32: .max, fSint64: .max, fSfixed64: .max), codec, sh)
            ModelDifferential.checkEncode(
                AUnsignedOnSigned(fInt64: 5, fInt32: 5, fSint64: 5, fSfixed64: 5), codec, sh)
            ModelDifferential.checkEncode(
                ASignedOnUnsigned(fUint64: -1, fFixed64: 1, fUint32: 1, fFixed32: 1), codec, sh)
            ModelDifferential.checkEncode(
                ASignedOnUnsigned(fUint64: 1, fFixed64: 1, fUint32: .min, fFixed32: 1), codec, sh)
            ModelDifferential.checkEncode(
                ASignedOnUnsigned(fUint64: .max, fFixed64: .max, fUint32: .max, fFixed32: .max), codec, sh)
            ModelDifferential.checkEncode(
                ANarrow(fDouble: 0.1, fFloat: 0.1, fInt64: -1, fUint64: -5, fInt32: .max, fFixed64: -1, fFixed32: -1, fUint32: -1, fSint64: .min),
                codec, sh)
            ModelDifferential.checkEncode(
                ANarrow(fDouble: 0.1, fFloat: 0.1, fInt64: 1, fUint64: 5, fInt32: 3, fFixed64: 1, fFixed32: 1, fUint32: 1, fSint64: -1),
                codec, sh)
            ModelDifferential.checkEncode(
                AOptional(fDouble: -0.0, fFloat: -0.0, fInt64: nil, fUint64: 0, fInt32: 0, fBool: false, fString: "", fBytes: "x", fColor: 1),
                codec, sh)
            ModelDifferential.checkEncode(
                AOptional(fDouble: nil, fFloat: nil, fInt64: nil, fUint64: nil, fInt32: nil, fBool: nil, fString: nil, fBytes: nil, fColor: nil),
                codec, sh)
            ModelDifferential.checkEncode(AShapes(fInt32: [1], fInt64: .some(nil), fString: ["a"]), codec, sh)
            ModelDifferential.checkEncode(AShapes(fInt32: [], fInt64: .some(.some(3)), fString: nil), codec, sh)
            ModelDifferential.checkEncode(AShapes(fInt32: [], fInt64: nil, fString: []), codec, sh)
            ModelDifferential.checkEncode(AEnumAsBool(fColor: true), codec, sh)
            ModelDifferential.checkEncode(AEnumAsInt(fColor: 2), codec, sh)
            ModelDifferential.checkEncode(AEnumAsInt(fColor: 0), codec, sh)
            ModelDifferential.checkEncode(AEnumAsString(fColor: "COLOR_RED"), codec, sh)
            for s in ["", "a\u{0}", "\u{0}", "é", "\u{FEFF}", String(repeating: "x", count: 200), "\u{10FFFF}"] {
                ModelDifferential.checkEncode(
                    AWide(fDouble: 1, fFloat: 1, fInt64: 1, fUint64: 1, fInt32: 1, fFixed64: 1, fFixed32: 1, fBool: true, fString: s, fUint32: 1, fSfixed32: 1, fSfixed64: 1, fSint32: 1, fSint64: 1),
                    codec, sh)
            }
            ModelDifferential.checkEncode(
                AWide(fDouble: 0, fFloat: 1e300, fInt64: .min, fUint64: .max, fInt32: .min, fFixed64: .max, fFixed32: -1, fBool: false, fString: "", fUint32: -1, fSfixed32: .min, fSfixed64: .min, fSint32: .min, fSint64: .min),
                codec, sh)
            ModelDifferential.checkEncode(
                AWide(fDouble: 0, fFloat: 0, fInt64: 0, fUint64: 0, fInt32: Int64(Int32.min), fFixed64: 0, fFixed32: Int64(UInt32.max), fBool: false, fString: "", fUint32: Int(UInt32.max), fSfixed32: Int(Int32.min), fSfixed64: 0, fSint32: Int64(Int32.min), fSint64: 0),
                codec, sh)

            let kh = Self.hints("kitchen.KitchenSink")
            for oneofs in [
                AOneofs(choiceText: "", choiceNumber: nil, choiceInner: nil, maybeInt32: 0, maybeString: "", maybeBool: false, maybeDouble: -0.0),
                AOneofs(choiceText: nil, choiceNumber: 0, choiceInner: nil, maybeInt32: nil, maybeString: nil, maybeBool: nil, maybeDouble: 0),
                AOneofs(choiceText: nil, choiceNumber: nil, choiceInner: MInner(label: "", values: []), maybeInt32: nil, maybeString: nil, maybeBool: nil, maybeDouble: nil),
                AOneofs(choiceText: "a", choiceNumber: 1, choiceInner: nil, maybeInt32: nil, maybeString: nil, maybeBool: nil, maybeDouble: nil),
                AOneofs(choiceText: "", choiceNumber: nil, choiceInner: MInner(label: "", values: []), maybeInt32: nil, maybeString: nil, maybeBool: nil, maybeDouble: .nan),
            ] {
                ModelDifferential.checkEncode(oneofs, codec, kh)
            }
            ModelDifferential.checkEncode(AOneofsRequired(choiceText: "", maybeInt32: 0), codec, kh)
            ModelDifferential.checkEncode(ABools(packedBool: [false, false, true]), codec, kh)
            ModelDifferential.checkEncode(ABoolsOpt(packedBool: [], maybeBool: false), codec, kh)
            ModelDifferential.checkEncode(ABoolsOpt(packedBool: nil, maybeBool: nil), codec, kh)
            ModelDifferential.checkEncode(ANestedArrays(packedInt32: [[1, 2], []]), codec, kh)
            ModelDifferential.checkEncode(ANestedArrays(packedInt32: []), codec, kh)
            ModelDifferential.checkEncode(AProtoNames(snake: "x", packed: [0, -1, 300], choice: ""), codec, kh)
            ModelDifferential.checkEncode(AProtoNames(snake: nil, packed: nil, choice: nil), codec, kh)
            ModelDifferential.checkEncode(AProtoNamesRequired(snake: "", big: .max), codec, kh)
            ModelDifferential.checkEncode(AJSONName(customJsonName: "q", bigUnsigned: 1 << 63), codec, kh)
            ModelDifferential.checkEncode(AUnknownMember(customJsonName: "q", unknown: Data([0xF8, 0x07, 0x01])), codec, kh)
            ModelDifferential.checkEncode(AUnknownMember(customJsonName: "q", unknown: nil), codec, kh)
            ModelDifferential.checkEncode(AUnknownMemberString(customJsonName: "q", unknown: "+AcB"), codec, kh)
            ModelDifferential.checkEncode(
                ARepeated(
                    packedInt32: [Int32.min, 0, .max], unpackedInt64: [0, .min], strings: ["", "a"], inners: [MInner(label: "", values: [0])],
                    packedDouble: [-0.0, .nan, 0], packedFixed32: [0], packedSint64: [.min, .max], unpackedFloat: [-0.0, .nan, 0.1], unpackedUint32: [0]),
                codec, kh)
            ModelDifferential.checkEncode(
                ARepeated(
                    packedInt32: [], unpackedInt64: [], strings: [], inners: [], packedDouble: [], packedFixed32: [], packedSint64: [],
                    unpackedFloat: [], unpackedUint32: []), codec, kh)
            ModelDifferential.checkEncode(AWrongMessage(scalars: MInner(label: "a", values: [1]), inner: nil), codec, kh)
            ModelDifferential.checkEncode(AWrongMessageOpt(scalars: AAllOptInner(label: nil, values: nil)), codec, kh)
            ModelDifferential.checkEncode(AWrongMessageOpt(scalars: AAllOptInner(label: "x", values: [])), codec, kh)
            ModelDifferential.checkEncode(ALegacyHolder(legacy: nil, customJsonName: ""), codec, kh)
            ModelDifferential.checkEncode(ALegacyHolder(legacy: ALegacy(id: 1, name: nil, count: nil), customJsonName: ""), codec, kh)
            ModelDifferential.checkEncode(AMapHolder(stringMap: ["a": "b"]), codec, kh)
            ModelDifferential.checkEncode(AEmpty(), codec, kh)

            let ih = Self.hints("kitchen.KitchenSink.Inner")
            ModelDifferential.checkEncode(ADefaults(), codec, ih)
            ModelDifferential.checkEncode(AGeneric<Int32>(label: "a", values: [1]), codec, ih)
            ModelDifferential.checkEncode(AGeneric<Int64>(label: "a", values: [1, .max]), codec, ih)
            ModelDifferential.checkEncode(AGeneric<UInt64>(label: "a", values: [.max]), codec, ih)
            ModelDifferential.checkEncode(AGeneric<Double>(label: "a", values: [1.5]), codec, ih)
            ModelDifferential.checkEncode(AGeneric<Bool>(label: "a", values: [true]), codec, ih)
            ModelDifferential.checkEncode(AGeneric<String>(label: "a", values: ["1"]), codec, ih)
            ModelDifferential.checkEncode(AGenericUnconstrained<[Int32]>(label: "a", values: [1]), codec, ih)
            ModelDifferential.checkEncode(ANames(reader: "r", writer: [1, 2], slot: 3), codec, ih)
            ModelDifferential.checkEncode(ANames2(label: "r", _m0: [1], _slot: nil, model: nil, default: nil), codec, ih)
            ModelDifferential.checkEncode(ANames2(label: "r", _m0: nil, _slot: 1, model: nil, default: nil), codec, ih)

            let nh = Self.hints("kitchen.Node")
            var deep = ANodeA(value: 1, children: [])
            for level in 0..<120 {
                deep = ANodeA(value: Int32(level), children: [deep])
                if level > 95 { ModelDifferential.checkEncode(deep, codec, nh) }
            }
        }
    }

    /// Map-entry messages as the model's message type.
    @Test func mapEntryMessages() throws {
        let layouts = Self.kitchenSchema.runtime.messages.filter(\.isMapEntry).map(\.fullName)
        #expect(!layouts.isEmpty)
        for codec in Self.codecs(Self.kitchenSchema) {
            for name in layouts {
                let hints = Self.hints(name)
                for input in ["0A 01 61 12 01 62", "", "0A 01 61", "08 01 10 01", "12 00"] {
                    ModelDifferential.check(AMapEntry.self, codec, hex(input), hints)
                }
                ModelDifferential.checkEncode(AMapEntry(key: "a", value: "b"), codec, hints)
            }
            // Legacy as the root type (required fields).
            let lh = Self.hints("legacy.Legacy")
            for input in ["08 01", "", "08 01 12 00", "10 05"] {
                ModelDifferential.check(ALegacy.self, codec, hex(input), lh)
            }
            ModelDifferential.checkEncode(ALegacy(id: 1, name: nil, count: nil), codec, lh)
            ModelDifferential.checkEncode(ALegacy(id: 0, name: "unnamed", count: 42), codec, lh)
        }
    }

    // MARK: size and depth

    static func nested(_ levels: Int, field: UInt8) -> Data {
        // Built from the inside out with lengths, without quadratic copying: compute lengths first.
        var lengths = [Int](repeating: 0, count: levels + 1)
        for i in stride(from: levels - 1, through: 0, by: -1) {
            let inner = lengths[i + 1]
            lengths[i] = i == levels - 1 ? 0 : 1 + varintBytes(UInt64(inner)).count + inner
        }
        var out: [UInt8] = []
        out.reserveCapacity(lengths[0] + 16)
        for i in 0..<levels {
            out.append(field)
            out += varintBytes(UInt64(lengths[i]))
        }
        return Data(out)
    }

    @Test func deepNesting() throws {
        let nh = Self.hints("kitchen.Node")
        for levels in [99, 100, 101, 10_000] {
            for field: UInt8 in [0x1A, 0x12] {
                let bytes = Self.nested(levels, field: field)
                ModelDifferential.check(MNode.self, kitchen, bytes, nh)
                ModelDifferential.check(ANodeB.self, kitchen, bytes, nh)
            }
        }
        var limits = ProtobufCodec.Options().limits
        limits.maximumDepth = 100_000
        for levels in [511, 512, 513] {
            let bytes = Self.nested(levels, field: 0x1A)
            ModelDifferential.check(MNode.self, kitchen, bytes, Self.hints("kitchen.Node", limits: limits))
        }
    }

    @Test func deepNestingOnTaskStack() async throws {
        var limits = ProtobufCodec.Options().limits
        limits.maximumDepth = 512
        let bytes = Self.nested(511, field: 0x1A)
        let codec = kitchen
        let result = await Task.detached {
            try? codec.decode(ANodeB.self, from: bytes, hints: Self.hints("kitchen.Node", limits: limits), decoder: ValueDecoder())
        }.value
        #expect(result != nil)
    }

    @Test func largeCounts() throws {
        let kh = Self.hints("kitchen.KitchenSink")
        let n = 100_000  // the attack ran 1,000,000; this keeps the suite quick in a debug build
        var packed: [UInt8] = [0x22] + varintBytes(UInt64(n))
        packed += [UInt8](repeating: 0x01, count: n)
        var unpacked: [UInt8] = []
        unpacked.reserveCapacity(3 * n)
        for _ in 0..<n { unpacked += [0x50, 0x01] }
        var messages: [UInt8] = []
        for _ in 0..<n { messages += [0x1A, 0x00] }
        var strings: [UInt8] = []
        for _ in 0..<n { strings += [0x6A, 0x00] }
        for (name, input) in [("packed", packed), ("unpacked", unpacked), ("messages", messages), ("strings", strings)] {
            let data = Data(input)
            let clock = ContinuousClock()
            let fast = clock.measure {
                _ = try? kitchen.decode(ARepeated.self, from: data, hints: kh, decoder: ValueDecoder())
            }
            let pivot = clock.measure {
                _ = try? ValueDecoder().decode(ARepeated.self, from: kitchen.decodeValue(data, hints: kh, direct: false))
            }
            print("largeCounts \(name): fast \(fast) pivot \(pivot)")
            ModelDifferential.check(ARepeated.self, kitchen, data, kh)
            ModelDifferential.check(MKitchen.self, kitchen, data, kh)
        }
        // Encode a large model.
        let model = ARepeated(
            packedInt32: Array(repeating: -1, count: n), unpackedInt64: Array(repeating: 1, count: 1000), strings: Array(repeating: "x", count: 1000),
            inners: Array(repeating: MInner(label: "a", values: [1, 2]), count: 10_000), packedDouble: [], packedFixed32: [],
            packedSint64: [], unpackedFloat: [], unpackedUint32: [])
        let clock = ContinuousClock()
        let t = clock.measure { _ = try? kitchen.encode(model: model, hints: kh, encoder: ValueEncoder()) }
        print("largeCounts encode: \(t)")
        ModelDifferential.checkEncode(model, kitchen, kh)
    }

    @Test func concurrentPlanCompilation() async throws {
        for round in 0..<6 {
            // A fresh schema each round: no plans yet.
            let schema = try ProtobufSchema(contentsOf: Repository.schema("kitchen_sink.pb"))
            let codec = ProtobufCodec(schema: schema)
            var generator = ProtobufValueGenerator(schema: schema, seed: UInt64(round))
            let kh = Self.hints("kitchen.KitchenSink")
            let bytes = try codec.encode(generator.value(for: "kitchen.KitchenSink"), hints: kh)
            let expected = try ValueDecoder().decode(MKitchen.self, from: codec.decodeValue(bytes, hints: kh, direct: false))
            let nh = Self.hints("kitchen.Node")
            let nodeBytes = Self.nested(30, field: 0x1A)
            let expectedNode = try ValueDecoder().decode(ANodeA.self, from: codec.decodeValue(nodeBytes, hints: nh, direct: false))
            let ok = await withTaskGroup(of: Bool.self) { group in
                for t in 0..<16 {
                    group.addTask {
                        if t % 2 == 0 {
                            guard let m = try? codec.decode(MKitchen.self, from: bytes, hints: kh, decoder: ValueDecoder()) else { return false }
                            return ModelDifferential.same(m, expected)
                        } else {
                            guard let m = try? codec.decode(ANodeA.self, from: nodeBytes, hints: nh, decoder: ValueDecoder()) else { return false }
                            let encoded = try? codec.encode(model: m, hints: nh, encoder: ValueEncoder())
                            return m == expectedNode && encoded == nodeBytes
                        }
                    }
                }
                var all = true
                for await r in group { all = all && r }
                return all
            }
            #expect(ok)
        }
    }

    @Test func oddMemberNamesCodeAsCodableDoes() throws {
        let codec = ProtobufCodec(schema: try ProtobufSchema(contentsOf: Repository.schema("kitchen_sink.pb")))
        var hints = CodingHints()
        hints.messageType = "kitchen.KitchenSink.Inner"
        #expect(ModelDifferential.check(ANames3.self, codec, hex("0a03616263"), hints))
        #expect(ModelDifferential.checkEncode(ANames3(label: "x", init: nil, protobufMembers: nil, self: nil), codec, hints))
    }
}
#endif
