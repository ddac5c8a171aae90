#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `Value` is `Codable`, so a model can keep part of a response raw (`var extra: Value`).
///
/// ``ValueDecoder`` and ``ValueEncoder`` pass a `Value` through unchanged. With other coders (Foundation's
/// `JSONDecoder`, for instance) the value is rebuilt from what the coder offers: objects, arrays, null,
/// booleans, integers, doubles and strings; an exact ``Value/number(_:)`` is written as a `Decimal` and
/// ``Value/bytes(_:)`` as `Data`.
///
/// ```swift
/// struct Envelope: Decodable { var code: Int; var data: Value }
/// let envelope = try value.decode(Envelope.self)
/// envelope.data["users"]?[0]
/// ```
extension Value: Codable {
    public init(from decoder: any Decoder) throws {
        if let direct = decoder as? ValueDecoding {
            self = direct.value
            return
        }
        if let keyed = try? decoder.container(keyedBy: ValueCodingKey.self) {
            var object = Value.Object(minimumCapacity: keyed.allKeys.count)
            for key in keyed.allKeys {
                object.updateValue(try keyed.decode(Value.self, forKey: key), forKey: key.stringValue)
            }
            self = .object(object)
            return
        }
        if var unkeyed = try? decoder.unkeyedContainer() {
            var elements: [Value] = []
            while !unkeyed.isAtEnd { elements.append(try unkeyed.decode(Value.self)) }
            self = .array(elements)
            return
        }
        let single = try decoder.singleValueContainer()
        if single.decodeNil() {
            self = .null
        } else if let b = try? single.decode(Bool.self) {
            self = .bool(b)
        } else if let i = try? single.decode(Int64.self) {
            self = .int(i)
        } else if let u = try? single.decode(UInt64.self) {
            self = .uint(u)
        } else if let d = try? single.decode(Double.self) {
            self = .double(d)
        } else {
            self = .string(try single.decode(String.self))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .null:
            var single = encoder.singleValueContainer()
            try single.encodeNil()
        case .bool(let b):
            var single = encoder.singleValueContainer()
            try single.encode(b)
        case .int(let i):
            var single = encoder.singleValueContainer()
            try single.encode(i)
        case .uint(let u):
            var single = encoder.singleValueContainer()
            try single.encode(u)
        case .double(let d):
            var single = encoder.singleValueContainer()
            try single.encode(d)
        case .number(let text):
            var single = encoder.singleValueContainer()
            if let decimal = Decimal(string: text) {
                try single.encode(decimal)
            } else {
                try single.encode(text)
            }
        case .string(let s):
            var single = encoder.singleValueContainer()
            try single.encode(s)
        case .bytes(let bytes):
            var single = encoder.singleValueContainer()
            try single.encode(Data(bytes))
        case .array(let elements):
            var unkeyed = encoder.unkeyedContainer()
            for element in elements { try unkeyed.encode(element) }
        case .object(let object):
            var keyed = encoder.container(keyedBy: ValueCodingKey.self)
            for (key, member) in object { try keyed.encode(member, forKey: ValueCodingKey(stringValue: key)) }
        }
    }
}
