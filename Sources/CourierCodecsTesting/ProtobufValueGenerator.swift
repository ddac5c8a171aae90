public import CourierCodecs
import CourierTesting

/// Generates random `Value`s that fit a protobuf message type of a `ProtobufSchema`, from a seed, for
/// round-trip tests of your own schemas: every value it makes is exactly what `ProtobufCodec` (default
/// options) decodes after encoding it, so `decode(encode(v)) == v` must hold.
///
/// Values use the fields' JSON names; fields without presence are always there, optional fields, messages and
/// oneof members sometimes; numbers cover each type's whole range (floats are exact `Float`s, no NaN); strings
/// mix ASCII, accents, CJK, emoji and the odd NUL; enums are value names, now and then an unknown number (open enums only).
///
/// ```swift
/// var generator = ProtobufValueGenerator(schema: schema, seed: 42)
/// let codec = ProtobufCodec(schema: schema)
/// for _ in 0..<1000 {
///     let value = try generator.value(for: "demo.UserListResponse")
///     let bytes = try codec.encode(value, hints: hints)
///     #expect(try codec.decode(bytes, hints: hints) == value)
/// }
/// ```
public struct ProtobufValueGenerator: Sendable {
    /// The schema whose types are generated.
    public var schema: ProtobufSchema
    /// How many levels of nested messages to generate (deeper message fields are left out). Default 4.
    public var maxDepth = 4
    /// The most elements of a repeated field or entries of a map. Default 4.
    public var maxCount = 4
    /// The longest generated string, in Unicode scalars, and bytes value. Default 12.
    public var maxLength = 12
    private var random: SeededRandom

    /// A generator whose output is fully determined by `seed`.
    public init(schema: ProtobufSchema, seed: UInt64) {
        self.schema = schema
        self.random = SeededRandom(seed: seed)
    }

    /// A random value of the message type named `messageType` (`demo.User`). Throws
    /// `CourierError.Code.unknownMessageType` when the schema lacks it.
    public mutating func value(for messageType: String) throws -> Value {
        guard let type = schema.messageType(named: messageType) else {
            throw CourierError(.unknownMessageType, detail: "the schema has no message type named \(messageType)")
        }
        return message(type, depth: 1)
    }

    // MARK: randomness

    private mutating func next() -> UInt64 { random.next() }
    private mutating func below(_ n: Int) -> Int { random.below(max(n, 1)) }
    private mutating func chance(_ percent: Int) -> Bool { random.chance(percent) }

    // MARK: messages

    private mutating func message(_ type: ProtobufSchema.MessageType, depth: Int) -> Value {
        var object = Value.Object(minimumCapacity: type.fields.count)
        var chosenOneof: [String: Int] = [:]
        for name in type.oneofs {
            let members = type.fields.filter { $0.oneof == name }
            if !members.isEmpty, chance(75) {
                let pick = members[below(members.count)]
                if pick.type != .message || depth < maxDepth { chosenOneof[name] = pick.number }
            }
        }
        for field in type.fields {
            if let oneof = field.oneof {
                if chosenOneof[oneof] == field.number { object.append(field.jsonName, single(field, depth: depth)) }
                continue
            }
            switch field.cardinality {
            case .implicit:
                if field.type == .message {
                    if depth < maxDepth, chance(60) { object.append(field.jsonName, single(field, depth: depth)) }
                } else {
                    object.append(field.jsonName, chance(20) ? zero(field) : single(field, depth: depth))
                }
            case .required:
                object.append(field.jsonName, single(field, depth: depth))
            case .optional:
                if field.type == .message && depth >= maxDepth { continue }
                if chance(50) { object.append(field.jsonName, single(field, depth: depth)) }
            case .repeated:
                var elements: [Value] = []
                if field.type != .message || depth < maxDepth {
                    for _ in 0..<below(maxCount + 1) { elements.append(single(field, depth: depth)) }
                }
                object.append(field.jsonName, .array(elements))
            case .map:
                object.append(field.jsonName, map(field, depth: depth))
            }
        }
        return .object(object)
    }

    private mutating func map(_ field: ProtobufSchema.Field, depth: Int) -> Value {
        var entries = Value.Object()
        guard let entryName = field.typeName, let entry = schema.messageType(named: entryName),
            let keyField = entry.fields.first(where: { $0.number == 1 }),
            let valueField = entry.fields.first(where: { $0.number == 2 })
        else { return .object(entries) }
        if valueField.type == .message && depth >= maxDepth { return .object(entries) }
        for _ in 0..<below(maxCount + 1) {
            let key: String
            switch single(keyField, depth: depth) {
            case .string(let s): key = s
            case .bool(let b): key = b ? "true" : "false"
            case .int(let i): key = String(i)
            case .uint(let u): key = String(u)
            default: continue
            }
            entries.updateValue(single(valueField, depth: depth), forKey: key)
        }
        return .object(entries)
    }

    private func zero(_ field: ProtobufSchema.Field) -> Value {
        switch field.type {
        case .double, .float: return .double(0)
        case .bool: return .bool(false)
        case .string: return .string("")
        case .bytes: return .bytes([])
        case .enumeration:
            if let first = field.enumValues.first(where: { $0.number == 0 }) { return .string(first.name) }
            return .int(0)
        case .message: return .object(Value.Object())
        default: return .int(0)
        }
    }

    private mutating func integer(bits: Int, signed: Bool) -> UInt64 {
        switch below(4) {
        case 0: return UInt64(below(128))
        case 1: return signed ? UInt64(bitPattern: -Int64(below(1000) + 1)) : UInt64(below(100_000))
        default:
            let raw = next()
            if bits == 64 { return raw }
            let masked = raw & 0xFFFF_FFFF
            return signed ? UInt64(bitPattern: Int64(Int32(truncatingIfNeeded: masked))) : masked
        }
    }

    private mutating func single(_ field: ProtobufSchema.Field, depth: Int) -> Value {
        switch field.type {
        case .int32, .sint32, .sfixed32:
            return .int(Int64(bitPattern: integer(bits: 32, signed: true)))
        case .int64, .sint64, .sfixed64:
            return .int(Int64(bitPattern: integer(bits: 64, signed: true)))
        case .uint32, .fixed32:
            return .int(Int64(integer(bits: 32, signed: false)))
        case .uint64, .fixed64:
            return Value(integer(bits: 64, signed: false))
        case .float:
            let f = Float(bitPattern: UInt32(truncatingIfNeeded: next()))
            return .double(f.isFinite ? Double(f) : Double(below(1000)) / 8)
        case .double:
            let d = Double(bitPattern: next())
            return .double(d.isFinite ? d : Double(below(1000)) / 8)
        case .bool:
            return .bool(chance(50))
        case .string:
            return .string(text())
        case .bytes:
            return .bytes((0..<below(maxLength + 1)).map { _ in UInt8(truncatingIfNeeded: next()) })
        case .enumeration:
            if field.enumValues.isEmpty || (!field.isClosedEnum && chance(10)) {
                var number = Int32(truncatingIfNeeded: next() % 1000) + 100
                while field.enumValues.contains(where: { $0.number == number }) { number += 1 }
                return .int(Int64(number))
            }
            return .string(field.enumValues[below(field.enumValues.count)].name)
        case .message:
            guard let name = field.typeName, let type = schema.messageType(named: name) else {
                return .object(Value.Object())
            }
            return message(type, depth: depth + 1)
        }
    }

    private static let alphabets: [ClosedRange<UInt32>] = [
        0x61...0x7A, 0x20...0x7E, 0xC0...0xFF, 0x4E00...0x4FFF, 0x1F600...0x1F64F, 0x0...0x1F,
    ]

    private mutating func text() -> String {
        var scalars = String.UnicodeScalarView()
        let length = below(maxLength + 1)
        let alphabet = Self.alphabets[below(Self.alphabets.count)]
        for _ in 0..<length {
            let range = chance(85) ? alphabet : Self.alphabets[below(Self.alphabets.count)]
            let raw = range.lowerBound + UInt32(below(Int(range.upperBound - range.lowerBound) + 1))
            if let scalar = Unicode.Scalar(raw) { scalars.append(scalar) }
        }
        return String(scalars)
    }
}
