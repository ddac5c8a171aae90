public import Courier
import Foundation

/// A coding key of any name, for models that read whatever members an object has.
public struct AnyKey: CodingKey, Hashable, Sendable {
    public var stringValue: String
    public var intValue: Int? { nil }
    public init(stringValue: String) { self.stringValue = stringValue }
    public init?(intValue: Int) { nil }
}

/// Catches errors thrown while its members encode and goes on, as some models do: what a member wrote before
/// throwing (its name or start tag, a scalar, its first members) must leave no trace, as in the `Value` path,
/// which drops the member. The typed encoders of every codec are checked against that path with each ``mode``.
public struct CatchingModel: Encodable, Sendable {
    /// Which shape: 0 a NaN member, 1 a member that throws at once, 2 one that writes its scalar and throws,
    /// 3 one that writes a member and throws, 4 the same in an unkeyed container beside an infinite `Float`,
    /// 5 a second single value, 6 an infinite `Date`, 7 a NaN `Decimal`; from 8 on, mode `mode - 8` nested as
    /// a member and as an element of a caught list.
    public var mode: Int
    /// How many modes there are (the nested ones included).
    public static let modes = 16

    public init(mode: Int) { self.mode = mode }

    enum Keys: String, CodingKey { case value, unit, extra, id, x, y }
    struct Refusal: Error {}

    /// Throws before writing anything.
    struct Refusing: Encodable {
        func encode(to encoder: any Encoder) throws { throw Refusal() }
    }

    /// Writes its scalar, then throws.
    struct HalfScalar: Encodable {
        func encode(to encoder: any Encoder) throws {
            var single = encoder.singleValueContainer()
            try single.encode(5)
            throw Refusal()
        }
    }

    /// Writes one member, then throws.
    struct HalfObject: Encodable {
        func encode(to encoder: any Encoder) throws {
            var keyed = encoder.container(keyedBy: Keys.self)
            try keyed.encode(1, forKey: .x)
            throw Refusal()
        }
    }

    public func encode(to encoder: any Encoder) throws {
        switch mode {
        case 0:
            var keyed = encoder.container(keyedBy: Keys.self)
            try? keyed.encode(Double.nan, forKey: .value)
            try keyed.encode("kg", forKey: .unit)
        case 1:
            var keyed = encoder.container(keyedBy: Keys.self)
            try? keyed.encode(Refusing(), forKey: .extra)
            try keyed.encode(1, forKey: .id)
        case 2:
            var keyed = encoder.container(keyedBy: Keys.self)
            try? keyed.encode(HalfScalar(), forKey: .x)
            try keyed.encode(1, forKey: .y)
        case 3:
            var keyed = encoder.container(keyedBy: Keys.self)
            try? keyed.encode(HalfObject(), forKey: .x)
            try keyed.encode(1, forKey: .y)
        case 4:
            var unkeyed = encoder.unkeyedContainer()
            try unkeyed.encode(1)
            try? unkeyed.encode(Float.infinity)
            try? unkeyed.encode(HalfObject())
            try? unkeyed.encode(HalfScalar())
            try unkeyed.encode(2)
        case 5:
            var single = encoder.singleValueContainer()
            try single.encode(1)
            try? single.encode(2)
        case 6:
            var keyed = encoder.container(keyedBy: Keys.self)
            try? keyed.encode(Date(timeIntervalSince1970: .infinity), forKey: .value)
            try keyed.encode(1, forKey: .id)
        case 7:
            var keyed = encoder.container(keyedBy: Keys.self)
            try? keyed.encode(Decimal.nan, forKey: .x)
            try keyed.encode(1, forKey: .id)
        default:
            var keyed = encoder.container(keyedBy: Keys.self)
            try keyed.encode(CatchingModel(mode: mode - 8), forKey: .x)
            try? keyed.encode([CatchingModel(mode: mode - 8)], forKey: .y)
            try keyed.encode(2, forKey: .id)
        }
    }
}

/// Reads an object's members out of order: every member from the last to the first, every third one again,
/// and names that are absent (one ASCII, one not) or canonically equivalent to a member's (é as one or two
/// scalars). The typed decoders look the members of a large object read this way up through a table of their
/// names, which must find what reading every name finds.
public struct OutOfOrderModel: Decodable, Equatable, Sendable {
    public var values: [String: Int]
    public var again: [Int]
    /// The probes' values, in order: `missing`, `k\u{e9}`, `e\u{301}`, `\u{e9}`, `k0`, `k39`.
    public var absent: [Int?]
    public var contained: [Bool]

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: AnyKey.self)
        let keys = container.allKeys
        var values: [String: Int] = [:]
        for key in keys.reversed() { values[key.stringValue] = try container.decode(Int.self, forKey: key) }
        self.values = values
        again = try keys.enumerated().filter { $0.offset % 3 == 0 }.map { try container.decode(Int.self, forKey: $0.element) }
        let probes = ["missing", "k\u{e9}", "e\u{301}", "\u{e9}", "k0", "k39"].map(AnyKey.init(stringValue:))
        absent = try probes.map { try container.decodeIfPresent(Int.self, forKey: $0) }
        contained = probes.map(container.contains)
    }
}

extension Value {
    /// Whether `self` and `other` are the same value, member order included and doubles compared by their bits
    /// (so NaNs match NaNs with the same payload and `-0.0` does not match `0.0`).
    public func isIdentical(to other: Value) -> Bool {
        switch (self, other) {
        case (.object(let x), .object(let y)):
            return x.keys == y.keys && zip(x.values, y.values).allSatisfy { $0.isIdentical(to: $1) }
        case (.array(let x), .array(let y)):
            return x.count == y.count && zip(x, y).allSatisfy { $0.isIdentical(to: $1) }
        case (.double(let x), .double(let y)): return x.bitPattern == y.bitPattern
        default: return self == other
        }
    }
}
