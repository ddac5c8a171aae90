/// The raw decoder's second pass: builds the `Value` of a scanned message from ``ProtobufRawScanner``'s tape,
/// which holds only what was accepted, so nothing is built twice or thrown away.
///
/// An object's fields are grouped by number in order of first appearance, each group's array allocated at its
/// final size. Sibling objects with the same field numbers (the elements of a repeated message) share one
/// array of member names.
struct ProtobufRawValueBuilder {
    let bytes: UnsafeBufferPointer<UInt8>
    let tape: UnsafeBufferPointer<ProtobufRawEntry>
    private let smallNames = Self.smallNames
    /// The field numbers of the message being grouped (reused by every message).
    private var numbers: [UInt32] = []
    /// The last member names built at each depth, with their numbers.
    private var lastNumbers: [[UInt32]] = []
    private var lastNames: [[String]] = []

    /// Member names of the field numbers below 256.
    private static let smallNames = (0..<256).map { String($0) }

    init(bytes: UnsafeBufferPointer<UInt8>, tape: UnsafeBufferPointer<ProtobufRawEntry>) {
        self.bytes = bytes
        self.tape = tape
    }

    /// The payload of a `.lengthDelimited` entry (its length prefix was checked by the scan).
    static func payload(_ bytes: UnsafeBufferPointer<UInt8>, _ entry: ProtobufRawEntry) -> Range<Int> {
        var offset = Int(truncatingIfNeeded: entry.value)
        var length = 0
        var shift = 0
        while true {
            let byte = bytes[offset]
            offset += 1
            length |= Int(byte & 0x7f) << shift
            if byte < 0x80 { break }
            shift += 7
        }
        return offset..<(offset + length)
    }

    /// The object of the fields in `tape[from..<to]`, at `depth` (0 for the outermost message).
    mutating func object(_ from: Int, _ to: Int, depth: Int = 0) -> Value {
        // Pass 1: the numbers in order of first appearance, when repeats are adjacent (numbers never decrease,
        // as encoders write them); otherwise the general grouping.
        numbers.removeAll(keepingCapacity: true)
        var last: UInt32 = 0
        var i = from
        while i < to {
            let entry = tape[i]
            if entry.number != last {
                if entry.number < last { return grouped(from, to, depth: depth) }
                numbers.append(entry.number)
                last = entry.number
            }
            i = entry.next(after: i)
        }
        let names = memberNames(depth: depth)
        var values: [Value] = []
        values.reserveCapacity(names.count)
        i = from
        while i < to {
            let number = tape[i].number
            var end = tape[i].next(after: i)
            if end == to || tape[end].number != number {
                values.append(value(i, depth: depth))
                i = end
                continue
            }
            var run = 2
            end = tape[end].next(after: end)
            while end < to && tape[end].number == number {
                run += 1
                end = tape[end].next(after: end)
            }
            var list: [Value] = []
            list.reserveCapacity(run)
            while i < end {
                list.append(value(i, depth: depth))
                i = tape[i].next(after: i)
            }
            values.append(.array(list))
        }
        return .object(Value.Object(uniqueKeys: names, values: values))
    }

    /// The object of fields whose repeats are not adjacent: grouped through a table of the numbers.
    private mutating func grouped(_ from: Int, _ to: Int, depth: Int) -> Value {
        numbers.removeAll(keepingCapacity: true)
        var slots: [UInt32: Int] = [:]
        var counts: [Int] = []
        var i = from
        while i < to {
            let number = tape[i].number
            if let slot = slots[number] {
                counts[slot] += 1
            } else {
                slots[number] = numbers.count
                numbers.append(number)
                counts.append(1)
            }
            i = tape[i].next(after: i)
        }
        let names = memberNames(depth: depth)
        var lists = counts.map { count in
            var list: [Value] = []
            list.reserveCapacity(count)
            return list
        }
        i = from
        while i < to {
            lists[slots[tape[i].number]!].append(value(i, depth: depth))
            i = tape[i].next(after: i)
        }
        let values = lists.map { list in list.count == 1 ? list[0] : Value.array(list) }
        return .object(Value.Object(uniqueKeys: names, values: values))
    }

    /// The member names of ``numbers``: the last ones built at `depth` when they match.
    private mutating func memberNames(depth: Int) -> [String] {
        if depth < lastNumbers.count, lastNumbers[depth] == numbers { return lastNames[depth] }
        let names = numbers.map { number in number < 256 ? smallNames[Int(number)] : String(number) }
        while lastNumbers.count <= depth {
            lastNumbers.append([])
            lastNames.append([])
        }
        lastNumbers[depth] = numbers
        lastNames[depth] = names
        return names
    }

    /// The value of the entry at `index`, a field of a message at `depth`.
    private mutating func value(_ index: Int, depth: Int) -> Value {
        let entry = tape[index]
        switch entry.kind {
        case .varint, .fixed64: return Value(entry.value)
        case .fixed32: return .int(Int64(entry.value))
        case .lengthDelimited:
            let payload = bytes[Self.payload(bytes, entry)]
            if let text = String(validating: payload, as: UTF8.self) { return .string(text) }
            return .bytes(Array(payload))
        case .message, .group: return object(index + 1, entry.next(after: index), depth: depth + 1)
        }
    }
}
