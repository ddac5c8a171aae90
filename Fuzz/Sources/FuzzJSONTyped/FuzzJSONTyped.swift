// libFuzzer entry point for JSONCodec's direct typed path: for any bytes, decoding a few models straight
// from the bytes must give exactly what the Value pivot gives (the same model, or a CourierError with the
// same code and coding path), under each duplicate-key policy; and what decodes must encode to the same
// bytes both ways. Any difference traps.
import Courier
import Foundation

/// Any JSON document, read through the generic containers.
indirect enum AnyJSON: Codable, Equatable {
    case null, bool(Bool), number(Double), string(String), array([AnyJSON]), object([String: AnyJSON])

    struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    init(from decoder: any Decoder) throws {
        if let keyed = try? decoder.container(keyedBy: Key.self) {
            var object: [String: AnyJSON] = [:]
            for key in keyed.allKeys { object[key.stringValue] = try keyed.decode(AnyJSON.self, forKey: key) }
            self = .object(object)
        } else if var unkeyed = try? decoder.unkeyedContainer() {
            var array: [AnyJSON] = []
            while !unkeyed.isAtEnd { array.append(try unkeyed.decode(AnyJSON.self)) }
            self = .array(array)
        } else {
            let single = try decoder.singleValueContainer()
            if single.decodeNil() {
                self = .null
            } else if let b = try? single.decode(Bool.self) {
                self = .bool(b)
            } else if let s = try? single.decode(String.self) {
                self = .string(s)
            } else {
                self = .number(try single.decode(Double.self))
            }
        }
    }

    func encode(to encoder: any Encoder) throws {
        switch self {
        case .null:
            var c = encoder.singleValueContainer()
            try c.encodeNil()
        case .bool(let b):
            var c = encoder.singleValueContainer()
            try c.encode(b)
        case .number(let d):
            var c = encoder.singleValueContainer()
            try c.encode(d)
        case .string(let s):
            var c = encoder.singleValueContainer()
            try c.encode(s)
        case .array(let a):
            var c = encoder.unkeyedContainer()
            for element in a { try c.encode(element) }
        case .object(let o):
            var c = encoder.container(keyedBy: Key.self)
            for (k, v) in o.sorted(by: { $0.key < $1.key }) { try c.encode(v, forKey: Key(stringValue: k)) }
        }
    }
}

struct Item: Codable, Equatable {
    var id: Int?
    var name: String?
    var tags: [String]?
    var score: Double?
    var small: Int8?
    var big: UInt64?
    var flag: Bool?
    var child: [Item]?
    var raw: Value?
    var when: Date?
}

enum Outcome<T: Equatable>: Equatable {
    case value(T)
    case failure(CourierError.Code, [PathComponent])
    case other

    init(_ body: () throws -> T) {
        do {
            self = .value(try body())
        } catch let error as CourierError {
            self = .failure(error.code, error.context.codingPath)
        } catch {
            self = .other
        }
    }
}

private let codecs: [JSONCodec] = [JSONCodec.DuplicateKeyPolicy.lastWins, .firstWins, .reject].map { policy in
    var options = JSONCodec.Options()
    options.maximumDepth = 64
    options.duplicateKeys = policy
    return JSONCodec(options: options)
}

private func check<T: Codable & Equatable>(_ type: T.Type, _ data: Data, _ codec: JSONCodec, _ decoder: ValueDecoder) {
    let pivot = Outcome { try decoder.decode(T.self, from: codec.decode(data, hints: CodingHints())) }
    let direct = Outcome { try codec.decode(T.self, from: data, hints: CodingHints(), decoder: decoder) }
    guard pivot == direct else {
        fatalError("typed decode of \(T.self) differs: pivot \(pivot), direct \(direct)")
    }
    guard case .value(let model) = pivot else { return }
    let viaValue = Result { try codec.encode(ValueEncoder().encode(model)) as [UInt8] }
    let viaModel = Result { try codec.encode(model: model) }
    switch (viaValue, viaModel) {
    case (.success(let a), .success(let b)) where a == b: break
    case (.failure, .failure): break
    default: fatalError("typed encode of \(T.self) differs: \(viaValue) vs \(viaModel)")
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Data(bytes: data, count: size)
    let codec = codecs[size % codecs.count]
    var lenient = ValueDecoder()
    lenient.lenientNumbers = true
    lenient.dateStrategy = .secondsSince1970
    check(AnyJSON.self, bytes, codec, ValueDecoder())
    check(Item.self, bytes, codec, ValueDecoder())
    check([Item].self, bytes, codec, lenient)
    check([String: Int16].self, bytes, codec, lenient)
    check([Int: [Double]].self, bytes, codec, ValueDecoder())
    return 0
}
