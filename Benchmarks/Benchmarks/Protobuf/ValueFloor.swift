import Courier

/// The floor of any decoder that returns a `Value`: one that parses nothing. It builds the tree of a decoded
/// document again from a flat program of its pieces, in document order: each array and object allocated at its
/// final size, each object sharing the decoded tree's member names (as the decoders share them), each string
/// (and byte string) made anew from its bytes (as any decoder must; `String(decoding:)` keeps strings of up to 15 bytes
/// inline). What it costs is the tree itself: its allocations, its stores and, when the benchmark drops it, its
/// release. A decoder to `Value` can come near it only (by building short strings more cheaply than
/// `String(decoding:)`, say, not by allocating less); `protobuf.decode.valuefloor` and `protobuf.decode.rawfloor` set
/// it beside swift-protobuf's generated code for the trees of `ProtobufCodec` and of `ProtobufRawDecoder`.
final class ValueFloor: @unchecked Sendable {  // one benchmark builds from it at a time
    private enum Step {
        case null
        case bool(Bool)
        case int(Int64)
        case uint(UInt64)
        case double(Double)
        case string(start: Int, count: Int)
        case bytes(start: Int, count: Int)
        case number(String)
        case array(count: Int)
        case object(keys: [String])
    }

    private var steps: [Step] = []
    private var utf8: [UInt8] = []

    /// The program that builds `tree` again.
    init(_ tree: Value) {
        record(tree)
    }

    private func record(_ value: Value) {
        switch value {
        case .null: steps.append(.null)
        case .bool(let b): steps.append(.bool(b))
        case .int(let i): steps.append(.int(i))
        case .uint(let u): steps.append(.uint(u))
        case .double(let d): steps.append(.double(d))
        case .number(let text): steps.append(.number(text))
        case .bytes(let b):
            steps.append(.bytes(start: utf8.count, count: b.count))
            utf8.append(contentsOf: b)
        case .string(let s):
            steps.append(.string(start: utf8.count, count: s.utf8.count))
            utf8.append(contentsOf: s.utf8)
        case .array(let items):
            steps.append(.array(count: items.count))
            items.forEach(record)
        case .object(let object):
            steps.append(.object(keys: object.keys))
            object.values.forEach(record)
        }
    }

    /// The tree, built again.
    func build() -> Value {
        utf8.withUnsafeBufferPointer { utf8 in
            steps.withUnsafeBufferPointer { steps in
                var next = 0
                return Self.value(steps, utf8, &next)
            }
        }
    }

    private static func value(
        _ steps: UnsafeBufferPointer<Step>, _ utf8: UnsafeBufferPointer<UInt8>, _ next: inout Int
    ) -> Value {
        let step = steps[next]
        next += 1
        switch step {
        case .null: return .null
        case .bool(let b): return .bool(b)
        case .int(let i): return .int(i)
        case .uint(let u): return .uint(u)
        case .double(let d): return .double(d)
        case .number(let text): return .number(text)
        case .bytes(let start, let count): return .bytes(Array(utf8[start..<(start + count)]))
        case .string(let start, let count):
            return .string(String(decoding: UnsafeBufferPointer(rebasing: utf8[start..<(start + count)]), as: UTF8.self))
        case .array(let count):
            var items: [Value] = []
            items.reserveCapacity(count)
            for _ in 0..<count { items.append(value(steps, utf8, &next)) }
            return .array(items)
        case .object(let keys):
            var values: [Value] = []
            values.reserveCapacity(keys.count)
            for _ in 0..<keys.count { values.append(value(steps, utf8, &next)) }
            return .object(Value.Object(uniqueKeys: keys, values: values))
        }
    }
}
