/// The raw decoder's second pass: builds the `Value` of a scanned message from ``ProtobufRawScanner``'s tape,
/// which holds only what was accepted, so nothing is built twice or thrown away.
///
/// An object's fields are grouped by number in order of first appearance, each group's array allocated at its
/// final size. Sibling objects with the same field numbers (the elements of a repeated message) share one
/// array of member names. Not copyable: it owns its scratch storage and frees it when it ends.
struct ProtobufRawValueBuilder: ~Copyable {
    let bytes: UnsafeBufferPointer<UInt8>
    let tape: UnsafeBufferPointer<ProtobufRawEntry>
    private let smallNames = Self.smallNames
    /// Whether strings of at most 15 bytes are built in the standard library's inline layout directly.
    private let buildsSmallStrings = JSONParser.smallStringsFromBits
    /// How many fields each number of the objects being built has, in runs (a stack: the innermost object's
    /// runs on top). The storage is reused by every message, never shrunk, and owned: freed with the builder.
    /// ``numbers`` lives in the same allocation, after the run stack's ``runCapacity`` slots.
    private var runs: UnsafeMutablePointer<Int>
    private var runCapacity = 64
    private var runTop = 0
    /// The field numbers of the message being grouped: the first ``numberCount`` of them.
    private var numbers: UnsafeMutablePointer<UInt32>
    private var numberCapacity = 16
    private var numberCount = 0
    /// The last ``ways`` member-name arrays built at each depth (slot `depth * ways + way`), where their
    /// numbers are in ``pool``, and which way each depth replaces next (in its first way's
    /// ``Layout/nextWay``).
    private var layouts: [Layout] = []
    private var pool: [UInt32] = []
    private static let ways = 4

    private struct Layout {
        var start = 0
        var count = -1
        var nextWay = 0
        var names: [String] = []
    }

    /// Member names of the field numbers below 256.
    private static let smallNames = (0..<256).map { String($0) }

    init(bytes: UnsafeBufferPointer<UInt8>, tape: UnsafeBufferPointer<ProtobufRawEntry>) {
        self.bytes = bytes
        self.tape = tape
        (runs, numbers) = Self.scratch(runCapacity, numberCapacity)
        layouts.reserveCapacity(8 * Self.ways)
        pool.reserveCapacity(64)
    }

    deinit {
        runs.deallocate()
    }

    /// One allocation for a run stack of `runCapacity` slots followed by `numberCapacity` numbers.
    private static func scratch(_ runCapacity: Int, _ numberCapacity: Int)
        -> (UnsafeMutablePointer<Int>, UnsafeMutablePointer<UInt32>)
    {
        let runBytes = runCapacity * MemoryLayout<Int>.stride
        let raw = UnsafeMutableRawPointer.allocate(
            byteCount: runBytes + numberCapacity * MemoryLayout<UInt32>.stride, alignment: MemoryLayout<Int>.alignment)
        return (
            raw.bindMemory(to: Int.self, capacity: runCapacity),
            (raw + runBytes).bindMemory(to: UInt32.self, capacity: numberCapacity)
        )
    }

    /// Moves the run stack and the numbers to one allocation of twice the room for `runs` (or `numbers`).
    @inline(never)
    private mutating func grow(runs growRuns: Bool) {
        let newRuns = growRuns ? runCapacity * 2 : runCapacity
        let newNumbers = growRuns ? numberCapacity : numberCapacity * 2
        let (larger, largerNumbers) = Self.scratch(newRuns, newNumbers)
        larger.moveInitialize(from: runs, count: runTop)
        largerNumbers.moveInitialize(from: numbers, count: numberCount)
        runs.deallocate()
        (runs, numbers, runCapacity, numberCapacity) = (larger, largerNumbers, newRuns, newNumbers)
    }

    /// The field numbers of the message being grouped.
    private var numberList: UnsafeBufferPointer<UInt32> { UnsafeBufferPointer(start: numbers, count: numberCount) }

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

    /// The object of the fields in `tape[from..<to]`, at `depth` (0 for the outermost message), whose
    /// ``ProtobufRawScanner/shape`` is `shape`.
    mutating func object(_ from: Int, _ to: Int, depth: Int = 0, shape: UInt16) -> Value {
        if shape != 0 { return ordered(from, to, runs: Int(shape) - 1, depth: depth) }
        return counted(from, to, depth: depth)
    }

    /// The object of fields whose numbers the scan found in order, in `runs` runs: built in one pass, each
    /// value as it comes (a run of more than one is measured when it starts), the numbers kept on the run
    /// stack until the member names are looked up.
    private mutating func ordered(_ from: Int, _ to: Int, runs count: Int, depth: Int) -> Value {
        let base = runTop
        defer { runTop = base }
        var values: [Value] = []
        values.reserveCapacity(count)
        var i = from
        while i < to {
            let entry = tape[i]
            pushRun(Int(entry.number))
            let next = entry.next(after: i)
            if next == to || tape[next].number != entry.number {
                values.append(value(i, depth: depth))
                i = next
                continue
            }
            var end = tape[next].next(after: next)
            var run = 2
            while end < to && tape[end].number == entry.number {
                end = tape[end].next(after: end)
                run += 1
            }
            var list: [Value] = []
            list.reserveCapacity(run)
            while i < end {
                list.append(value(i, depth: depth))
                i = tape[i].next(after: i)
            }
            values.append(.array(list))
        }
        numberCount = 0
        for slot in base..<runTop { pushNumber(UInt32(truncatingIfNeeded: runs[slot])) }
        return .object(Value.Object(uniqueKeys: memberNames(depth: depth), values: values))
    }

    /// The object of the fields in `tape[from..<to]` when the scan did not record their shape: counted first.
    private mutating func counted(_ from: Int, _ to: Int, depth: Int) -> Value {
        // Pass 1: the numbers in order of first appearance, when each number's occurrences are side by side;
        // otherwise the general grouping. While the numbers only increase (as encoders write them) a new one is
        // new; once one has gone down (a payload guessed to be a message, often), a number not seen yet is
        // looked for among at most 16 before it.
        numberCount = 0
        var last: UInt32 = 0
        var disordered = false
        var i = from
        // The length of each run of one number, on a stack shared with the nested objects built below (only
        // its top moves; the slots above it are reused rather than removed).
        let base = runTop
        defer { runTop = base }
        while i < to {
            let entry = tape[i]
            if entry.number != last {
                if entry.number < last { disordered = true }
                if disordered, numberCount >= 16 || numberList.contains(entry.number) {
                    runTop = base
                    return grouped(from, to, depth: depth)
                }
                pushNumber(entry.number)
                pushRun(1)
                last = entry.number
            } else {
                runs[runTop - 1] += 1
            }
            i = entry.next(after: i)
        }
        let names = memberNames(depth: depth)
        var values: [Value] = []
        values.reserveCapacity(names.count)
        i = from
        for slot in 0..<names.count {
            let run = runs[base + slot]
            if run == 1 {
                values.append(value(i, depth: depth))
                i = tape[i].next(after: i)
                continue
            }
            var list: [Value] = []
            list.reserveCapacity(run)
            for _ in 0..<run {
                list.append(value(i, depth: depth))
                i = tape[i].next(after: i)
            }
            values.append(.array(list))
        }
        return .object(Value.Object(uniqueKeys: names, values: values))
    }

    /// The object of fields whose repeats are not adjacent: grouped by a linear search of the numbers seen,
    /// through a table once there are more than 16 of them.
    private mutating func grouped(_ from: Int, _ to: Int, depth: Int) -> Value {
        // The run stack holds each number's count (from `base`), then the numbers themselves (from `numbersAt`),
        // which the values built below keep (they regroup ``numbers``).
        numberCount = 0
        let base = runTop
        defer { runTop = base }
        var table: [UInt32: Int] = [:]
        var repeats = false
        var i = from
        while i < to {
            let number = tape[i].number
            if let slot = slot(of: number, table) {
                runs[base + slot] += 1
                repeats = true
            } else {
                pushNumber(number)
                pushRun(1)
                if numberCount > 16 {
                    if table.isEmpty {
                        for (slot, known) in numberList.enumerated() { table[known] = slot }
                    } else {
                        table[number] = numberCount - 1
                    }
                }
            }
            i = tape[i].next(after: i)
        }
        let names = memberNames(depth: depth)
        let numbersAt = pushNumbersAsRuns()
        let count = numberCount
        // Single values go straight to their slot; only numbers that repeat collect a list.
        var values = [Value](repeating: .null, count: count)
        var lists: [[Value]] = []
        if repeats {
            lists = (0..<count).map { slot in
                var list: [Value] = []
                list.reserveCapacity(runs[base + slot] > 1 ? runs[base + slot] : 0)
                return list
            }
        }
        i = from
        while i < to {
            let number = tape[i].number
            let slot =
                table.isEmpty ? (numbersAt..<(numbersAt + count)).first { runs[$0] == Int(number) }! - numbersAt
                : table[number]!
            if runs[base + slot] == 1 {
                values[slot] = value(i, depth: depth)
            } else {
                lists[slot].append(value(i, depth: depth))
            }
            i = tape[i].next(after: i)
        }
        if repeats {
            for slot in 0..<count where runs[base + slot] > 1 { values[slot] = .array(lists[slot]) }
        }
        return .object(Value.Object(uniqueKeys: names, values: values))
    }

    /// Pushes ``numbers`` on the run stack; returns where they start. (Read by index: growing the run stack
    /// moves the numbers with it.)
    private mutating func pushNumbersAsRuns() -> Int {
        let base = runTop
        for k in 0..<numberCount { pushRun(Int(numbers[k])) }
        return base
    }

    @inline(__always)
    private mutating func pushRun(_ value: Int) {
        if runTop == runCapacity { grow(runs: true) }
        runs[runTop] = value
        runTop += 1
    }

    /// Appends `number` to ``numbers``.
    @inline(__always)
    private mutating func pushNumber(_ number: UInt32) {
        if numberCount == numberCapacity { grow(runs: false) }
        numbers[numberCount] = number
        numberCount += 1
    }

    private func slot(of number: UInt32, _ table: [UInt32: Int]) -> Int? {
        table.isEmpty ? numberList.firstIndex(of: number) : table[number]
    }

    /// The member names of ``numbers``: ones built before at `depth` when they match (the elements of a
    /// repeated message mostly have one of a few layouts).
    private mutating func memberNames(depth: Int) -> [String] {
        let first = depth * Self.ways
        if first < layouts.count {
            for slot in first..<(first + Self.ways) where matches(slot) { return layouts[slot].names }
        } else {
            layouts += repeatElement(Layout(), count: first + Self.ways - layouts.count)
        }
        let names = numberList.map { number in number < 256 ? smallNames[Int(number)] : String(number) }
        let slot = first + layouts[first].nextWay
        layouts[first].nextWay = (layouts[first].nextWay + 1) % Self.ways
        layouts[slot].start = pool.count
        layouts[slot].count = numberCount
        layouts[slot].names = names
        pool.append(contentsOf: numberList)
        return names
    }

    /// Whether the layout in `slot` has the numbers of ``numbers`` (read in place: nothing retained).
    private func matches(_ slot: Int) -> Bool {
        let count = layouts[slot].count
        guard count == numberCount else { return false }
        let start = layouts[slot].start
        for k in 0..<count where pool[start + k] != numbers[k] { return false }
        return true
    }

    /// The value of the entry at `index`, a field of a message at `depth`.
    private mutating func value(_ index: Int, depth: Int) -> Value {
        let entry = tape[index]
        // Tested by two comparisons rather than switched on: the jump table's indirect branch was the
        // builder's hottest instruction (a fifth of this function's time), and the comparisons cost 2 to 3%
        // less on the whole decode of a 5,000-user page.
        if entry.kind == .lengthDelimited {
            let range = Self.payload(bytes, entry)
            if range.count <= 15 && buildsSmallStrings { return shortString(range) }
            let payload = UnsafeBufferPointer(rebasing: bytes[range])
            if Self.utf8(payload) == .invalid { return .bytes(Array(payload)) }
            return .string(String(decoding: payload, as: UTF8.self))
        }
        if entry.kind.rawValue >= ProtobufRawEntry.Kind.message.rawValue {
            return object(index + 1, entry.next(after: index), depth: depth + 1, shape: entry.shape)
        }
        // A fixed32 is below 2^32, so `Value(_: UInt64)` gives it the `.int` it always had.
        return Value(entry.value)
    }

    /// What ``utf8(_:)`` found.
    enum UTF8Kind { case ascii, nonASCII, invalid }

    /// The string (or bytes, when not UTF-8) of a payload of at most 15 bytes, built in String's inline layout
    /// (``smallString(_:_:validated:)``).
    @inline(__always)
    private func shortString(_ payload: Range<Int>) -> Value {
        if let string = Self.smallString(bytes, payload, validated: false) { return .string(string) }
        return .bytes(Array(bytes[payload]))
    }

    /// The string of `payload`, at most 15 bytes of `bytes`, built in String's inline layout
    /// (`JSONParser.smallString`; callers check `JSONParser.smallStringsFromBits` first) without the standard
    /// library validating the bytes again; nil when they are not UTF-8. `validated`: the bytes are known to be
    /// UTF-8 (only whether they are ASCII is read). The bytes are read in two words, past the payload but never
    /// past `bytes`, or copied into them when the payload ends less than 16 bytes before the end of `bytes`.
    /// Shared by the raw decoder, the schema-guided wire reader and the XML readers.
    @inline(__always)
    static func smallString(_ bytes: UnsafeBufferPointer<UInt8>, _ payload: Range<Int>, validated: Bool) -> String? {
        let count = payload.count
        var low: UInt64 = 0
        var high: UInt64 = 0
        if payload.lowerBound + 16 <= bytes.count {
            let start = UnsafeRawPointer(bytes.baseAddress! + payload.lowerBound)
            low = start.loadUnaligned(as: UInt64.self) & Self.lowBytes(count)
            high = start.loadUnaligned(fromByteOffset: 8, as: UInt64.self) & Self.lowBytes(count - 8)
        } else {
            // Near the end of `bytes`: the payload is copied into two zeroed words (little-endian, as above).
            var words: (UInt64, UInt64) = (0, 0)
            withUnsafeMutableBytes(of: &words) { words in
                words.copyMemory(from: UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: bytes[payload])))
            }
            (low, high) = words
        }
        if (low | high) & 0x8080_8080_8080_8080 == 0 {
            return JSONParser.smallString(low, high, count: count, isASCII: true)
        }
        if !validated, unicode(UnsafeBufferPointer(rebasing: bytes[payload])) == .invalid { return nil }
        return JSONParser.smallString(low, high, count: count, isASCII: false)
    }

    /// A mask of the lowest `count` bytes of a word (none for `count` ≤ 0, all for `count` ≥ 8).
    @inline(__always)
    private static func lowBytes(_ count: Int) -> UInt64 {
        count >= 8 ? ~0 : count <= 0 ? 0 : (1 &<< UInt64(8 * count)) &- 1
    }

    /// Whether `bytes` are ASCII, else well-formed UTF-8 (what `String(validating:as:)` accepts: no overlong
    /// forms, no surrogates, nothing above U+10FFFF), else neither. ASCII is found eight bytes at a time, the
    /// last eight read again rather than one by one.
    @inline(__always)
    static func utf8(_ bytes: UnsafeBufferPointer<UInt8>) -> UTF8Kind {
        let count = bytes.count
        guard let start = UnsafeRawPointer(bytes.baseAddress) else { return .ascii }
        var bits: UInt64 = 0
        if count >= 8 {
            var i = 0
            while i + 8 <= count {
                bits |= start.loadUnaligned(fromByteOffset: i, as: UInt64.self)
                i += 8
            }
            bits |= start.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)
        } else {
            for byte in bytes { bits |= UInt64(byte) }
        }
        return bits & 0x8080_8080_8080_8080 == 0 ? .ascii : unicode(bytes)
    }

    /// Whether `bytes` are well-formed UTF-8 (``utf8(_:)`` is not `.invalid`), for the schema-guided decoders.
    static func isUTF8(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        utf8(bytes) != .invalid
    }

    /// ``utf8(_:)`` of bytes that are not all ASCII.
    static func unicode(_ bytes: UnsafeBufferPointer<UInt8>) -> UTF8Kind {
        let count = bytes.count
        var i = 0
        while i < count {
            if i + 8 <= count,
                UnsafeRawPointer(bytes.baseAddress! + i).loadUnaligned(as: UInt64.self) & 0x8080_8080_8080_8080 == 0
            {
                i += 8
                continue
            }
            let lead = bytes[i]
            if lead < 0x80 {
                i += 1
                continue
            }
            let length: Int
            var low: UInt8 = 0x80
            var high: UInt8 = 0xBF
            switch lead {
            case 0xC2...0xDF: length = 2
            case 0xE0...0xEF:
                length = 3
                if lead == 0xE0 { low = 0xA0 } else if lead == 0xED { high = 0x9F }
            case 0xF0...0xF4:
                length = 4
                if lead == 0xF0 { low = 0x90 } else if lead == 0xF4 { high = 0x8F }
            default: return .invalid
            }
            guard count - i >= length, bytes[i + 1] >= low, bytes[i + 1] <= high else { return .invalid }
            var k = 2
            while k < length {
                guard bytes[i + k] & 0xC0 == 0x80 else { return .invalid }
                k += 1
            }
            i += length
        }
        return .nonASCII
    }
}
