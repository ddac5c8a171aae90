// Reading protobuf wire bytes straight into `Value`s (and checking them for the typed decoder), without
// protobuf-c. Only the plain shape of a message is handled here: whatever is unusual (malformed bytes,
// unknown fields kept or rejected, a singular field twice, two members of a oneof, a missing proto2
// `required` field, invalid UTF-8, overlong encodings) is a `WireAnomaly`, and the caller then runs the protobuf-c
// pivot, which gives the exact answer or the exact error. So this path only ever answers for inputs whose
// meaning is unambiguous, and answers what the pivot answers.

/// Something the direct wire path leaves to the protobuf-c pivot (never surfaced to users).
struct WireAnomaly: Error {}

/// Where one field of a message sits in the wire bytes: its first occurrence and how many there are.
struct WireSlot {
    /// The offset of the first occurrence's key (repeated fields are re-read from there).
    var keyStart: Int = 0
    /// The offset of the first occurrence's value (after the key).
    var valueStart: Int = 0
    /// Occurrences (packed runs count once).
    var count: Int = 0

    /// Counts one more occurrence of the field, whose key is at `keyStart` and value at `valueStart`: kept
    /// when it is the first.
    @inline(__always)
    mutating func add(keyStart: Int, valueStart: Int) {
        if count == 0 {
            self = WireSlot(keyStart: keyStart, valueStart: valueStart, count: 1)
        } else {
            count += 1
        }
    }
}

/// One indexed message: its type, its bytes and one ``WireSlot`` per field (field-number order).
struct WireMessage {
    var layout: MessageLayout
    var range: Range<Int>
    var slots: [WireSlot]
}

/// Reads wire bytes as the pivot would see them. `bytes` must outlive it. A class, so that the typed
/// decoder's many calls share one reader instead of copying it.
///
/// While `counting`, indexing also counts what ``ProtobufLimitScanner`` counts (values in all, fields per
/// message, string lengths; nesting is bounded by the `depth` of the reads) and treats going past a limit
/// as an anomaly, so that the pivot then raises the scanner's exact error: the direct read needs no
/// separate scan.
final class ProtobufWireReader {
    let bytes: UnsafeBufferPointer<UInt8>
    let runtime: ProtobufRuntime
    let options: ProtobufCodec.Options
    // The state below belongs to one decode on one thread, and no access to it overlaps another: no run-time
    // exclusivity checks.
    /// Whether indexing counts against the limits (once per message: off when re-reading checked bytes).
    @exclusivity(unchecked) var counting = true
    /// The values counted against `DecodingLimits.maximumTotalValues` so far.
    @exclusivity(unchecked) var total = 0
    /// Whether ``check(_:_:depth:)`` passed over the whole input (its strings are known to be UTF-8).
    @exclusivity(unchecked) var checked = false
    /// Whether short strings are built in the standard library's inline layout (``string(_:)``).
    private let buildsSmallStrings = JSONParser.smallStringsFromBits
    /// One reusable slot array per nesting level, for ``value(_:_:depth:)``.
    @exclusivity(unchecked) private var scratch: [[WireSlot]] = []
    /// Per nesting level, the member names last built for a message that left fields out (the messages of
    /// one level are mostly of one type and leave out the same fields: they share one names array).
    @exclusivity(unchecked) private var emittedNames: [(layout: ObjectIdentifier, omitted: UInt64, names: [String])] = []
    /// The slots ``check(_:_:depth:)`` recorded (see ``startRecording()``): each message's ``WireSlot``s side by
    /// side, so that the typed decoder need not index a message again. Raw storage: `check` writes a slot per
    /// field it meets, without the array's checks (the regions are within `tapeCount`, by construction).
    @exclusivity(unchecked) private var tape: UnsafeMutablePointer<WireSlot>? = nil
    @exclusivity(unchecked) private var tapeCount = 0
    @exclusivity(unchecked) private var tapeCapacity = 0
    /// The messages on the tape, in the order checked, which is the order of their payloads' first bytes: where
    /// each payload starts, its type and where its slots start on the tape.
    @exclusivity(unchecked) private var recorded: [(start: Int, layout: ObjectIdentifier, base: Int)] = []
    /// How many more slots (and entries in ``recorded``) the tape may take; recording stops when it would take
    /// more (or when a message is checked out of byte order), and the messages left unrecorded are indexed when
    /// they are read.
    @exclusivity(unchecked) private var tapeBudget = 0
    /// Where the last lookup in ``recorded`` found its message (messages are mostly read in byte order).
    @exclusivity(unchecked) private var lookupHint = 0

    init(bytes: UnsafeBufferPointer<UInt8>, runtime: ProtobufRuntime, options: ProtobufCodec.Options) {
        self.bytes = bytes
        self.runtime = runtime
        self.options = options
    }

    deinit {
        tape?.deallocate()
    }

    /// Starts the count for a root message of type `layout` (the scanner's initial total).
    func startBudget(_ layout: MessageLayout) {
        total = 1 + (options.includeDefaultValues ? layout.fields.count : 0)
    }

    /// Makes ``check(_:_:depth:)`` record the slots of the messages it checks, for ``slots(of:_:into:)``. The
    /// tape and its list of messages hold at most one slot or entry per four input bytes, plus 64: about six
    /// times the input's size in memory at most, however many empty messages of many fields (or of none) the
    /// input packs in.
    func startRecording() {
        tapeBudget = bytes.count / 4 + 64
        // Room for a message per 32 input bytes, up to 8,192 of them (a large input may hold few messages).
        recorded.reserveCapacity(min(bytes.count / 32 + 8, 8192))
    }

    /// The slots of the message of type `layout` in `payload`, into `slots` (its storage reused when it is the
    /// only reference): copied from the tape when ``check(_:_:depth:)`` recorded them, else indexed afresh.
    func slots(of layout: MessageLayout, _ payload: Range<Int>, into slots: inout [WireSlot]) throws(WireAnomaly) {
        guard let base = recordedBase(layout, payload.lowerBound), let tape else {
            return try index(layout, payload, into: &slots)
        }
        let source = UnsafeBufferPointer(start: tape + base, count: layout.hot.count)
        if slots.count == source.count {
            slots.withUnsafeMutableBufferPointer { _ = $0.update(fromContentsOf: source) }
        } else {
            slots.removeAll(keepingCapacity: true)
            slots.append(contentsOf: source)
        }
    }

    /// Where the recorded slots of the message of type `layout` whose payload starts at `start` begin on the tape.
    func recordedBase(_ layout: MessageLayout, _ start: Int) -> Int? {
        let n = recorded.count
        var at = lookupHint
        if !(at < n && recorded[at].start == start) {
            // Binary search: the starts increase.
            var low = 0
            var high = n
            while low < high {
                let mid = (low + high) / 2
                if recorded[mid].start < start { low = mid + 1 } else { high = mid }
            }
            guard low < n, recorded[low].start == start else { return nil }
            at = low
        }
        guard recorded[at].layout == ObjectIdentifier(layout) else { return nil }
        lookupHint = at + 1
        return recorded[at].base
    }

    /// Starts recording the message of type `layout` (`count` fields) whose payload starts at `start`: its
    /// `count` empty slots on the tape, and where they begin; nil when recording has stopped or stops now.
    private func record(_ layout: MessageLayout, count: Int, at start: Int) -> Int? {
        // Each message costs its slots and one more, for its entry in `recorded` (a message may have no fields).
        guard tapeBudget > count, recorded.last.map({ $0.start < start }) ?? true else {
            tapeBudget = 0
            return nil
        }
        tapeBudget -= count + 1
        if tapeCount + count > tapeCapacity {
            // First room for a slot per eight input bytes (typical messages need fewer), up to 32,768 slots (a
            // large input may hold few messages), then twice as much each time; never more than the budget allows.
            let wanted = tapeCapacity == 0 ? min(bytes.count / 8 + 16, 32768) : 2 * tapeCapacity
            let capacity = min(max(wanted, tapeCount + count), tapeCount + count + tapeBudget)
            let grown = UnsafeMutablePointer<WireSlot>.allocate(capacity: capacity)
            if let tape {
                grown.moveInitialize(from: tape, count: tapeCount)
                tape.deallocate()
            }
            tape = grown
            tapeCapacity = capacity
        }
        let base = tapeCount
        (tape.unsafelyUnwrapped + base).initialize(repeating: WireSlot(), count: count)
        tapeCount += count
        recorded.append((start, ObjectIdentifier(layout), base))
        return base
    }

    // MARK: primitives

    /// A varint at `offset` (at most 10 bytes, no bits past the 64th), advancing `offset`.
    @inline(__always)
    func varint(_ offset: inout Int, end: Int) throws(WireAnomaly) -> UInt64 {
        var i = offset
        guard i < end else { throw WireAnomaly() }
        let first = bytes[i]
        if first < 0x80 {
            offset = i + 1
            return UInt64(first)
        }
        var result = UInt64(first & 0x7f)
        var shift: UInt64 = 7
        i += 1
        while true {
            guard i < end else { throw WireAnomaly() }
            let byte = bytes[i]
            i += 1
            if shift == 63 {
                // The tenth byte: only its lowest bit still fits.
                guard byte <= 1 else { throw WireAnomaly() }
                result |= UInt64(byte) << 63
                offset = i
                return result
            }
            result |= UInt64(byte & 0x7f) << shift
            if byte < 0x80 {
                offset = i
                return result
            }
            shift += 7
        }
    }

    /// A varint in canonical form (at most `maxBytes` bytes, no trailing zero byte, at most 32 bits) that is usually
    /// one byte long: a key (fields 1 to 15) or a length (under 128 bytes). That byte is read here rather than
    /// through ``varint(_:end:)``'s own one-byte path, which would leave a length test to tell it from a long
    /// varint (measured: 1.3% more instructions per 10-user decode).
    @inline(__always)
    func minimalVarint(_ offset: inout Int, end: Int, maxBytes: Int) throws(WireAnomaly) -> UInt64 {
        let start = offset
        guard start < end else { throw WireAnomaly() }
        let first = bytes[start]
        if first < 0x80 {
            offset = start + 1
            return UInt64(first)
        }
        let value = try varint(&offset, end: end)
        guard offset - start <= maxBytes, bytes[offset - 1] != 0, value <= UInt64(UInt32.max) else {
            throw WireAnomaly()
        }
        return value
    }

    /// A field key in canonical form: at most 5 bytes, minimal, a number above 0 and a wire type protobuf-c
    /// knows (no groups).
    @inline(__always)
    func key(_ offset: inout Int, end: Int) throws(WireAnomaly) -> (number: UInt32, wire: UInt8) {
        let key = try minimalVarint(&offset, end: end, maxBytes: 5)
        let number = UInt32(truncatingIfNeeded: key >> 3)
        let wire = UInt8(key & 7)
        // Wire types 0, 1, 2 and 5 (bits of 0b10_0111).
        guard number != 0, (0b10_0111 as UInt8) >> wire & 1 != 0 else { throw WireAnomaly() }
        return (number, wire)
    }

    /// A length prefix (minimal, at most 4 bytes) and the payload range after it.
    @inline(__always)
    func lengthDelimited(_ offset: inout Int, end: Int) throws(WireAnomaly) -> Range<Int> {
        let length = try minimalVarint(&offset, end: end, maxBytes: 4)
        guard length <= UInt64(end - offset) else { throw WireAnomaly() }
        let payload = offset..<(offset + Int(length))
        offset = payload.upperBound
        return payload
    }

    @inline(__always)
    func fixed32(_ offset: inout Int, end: Int) throws(WireAnomaly) -> UInt32 {
        guard end - offset >= 4 else { throw WireAnomaly() }
        let v = UnsafeRawPointer(bytes.baseAddress! + offset).loadUnaligned(as: UInt32.self)
        offset += 4
        return UInt32(littleEndian: v)
    }

    @inline(__always)
    func fixed64(_ offset: inout Int, end: Int) throws(WireAnomaly) -> UInt64 {
        guard end - offset >= 8 else { throw WireAnomaly() }
        let v = UnsafeRawPointer(bytes.baseAddress! + offset).loadUnaligned(as: UInt64.self)
        offset += 8
        return UInt64(littleEndian: v)
    }

    /// Skips one value of wire type `wire`.
    @inline(__always)
    func skip(_ wire: UInt8, _ offset: inout Int, end: Int) throws(WireAnomaly) {
        switch wire {
        case 0: _ = try varint(&offset, end: end)
        case 1: _ = try fixed64(&offset, end: end)
        case 5: _ = try fixed32(&offset, end: end)
        default: _ = try lengthDelimited(&offset, end: end)
        }
    }

    /// The wire type a field's values have when not packed.
    @inline(__always)
    static func wireType(of type: ProtobufSchema.FieldType) -> UInt8 {
        switch type {
        case .int32, .int64, .uint32, .uint64, .sint32, .sint64, .bool, .enumeration: return 0
        case .fixed64, .sfixed64, .double: return 1
        case .fixed32, .sfixed32, .float: return 5
        case .string, .bytes, .message: return 2
        }
    }

    // MARK: indexing

    /// The index of the field numbered `number` in `layout` (`hot` is its ``MessageLayout/hot``), `guess`
    /// being the one after the last field read. Fields usually come in number order, and a repeated field's
    /// elements one after the other: the next field and the last one are tried before a search.
    @inline(__always)
    static func fieldIndex(_ layout: MessageLayout, _ hot: [HotField], _ number: UInt32, after guess: Int) -> Int? {
        if guess < hot.count, hot[guess].number == number { return guess }
        if guess > 0, hot[guess - 1].number == number { return guess - 1 }
        return layout.field(number: number)
    }

    /// Indexes the fields of the message of type `layout` in `range`: one pass, checking keys, wire types,
    /// value framing, single occurrences of singular fields and oneofs, and unknown fields.
    func index(_ layout: MessageLayout, _ range: Range<Int>) throws(WireAnomaly) -> WireMessage {
        var slots: [WireSlot] = []
        try index(layout, range, into: &slots)
        return WireMessage(layout: layout, range: range, slots: slots)
    }

    /// ``index(_:_:)`` into `slots` (emptied first, its storage reused when it is the only reference).
    func index(_ layout: MessageLayout, _ range: Range<Int>, into slots: inout [WireSlot]) throws(WireAnomaly) {
        let hot = layout.hot
        if slots.count == hot.count {
            slots.withUnsafeMutableBufferPointer { $0.update(repeating: WireSlot()) }
        } else {
            slots.removeAll(keepingCapacity: true)
            slots.append(contentsOf: repeatElement(WireSlot(), count: hot.count))
        }
        var oneofs: UInt64 = 0
        var offset = range.lowerBound
        let end = range.upperBound
        var guess = 0
        var occurrences = 0
        while offset < end {
            let keyStart = offset
            let (number, wire) = try key(&offset, end: end)
            occurrences += 1
            guard let i = Self.fieldIndex(layout, hot, number, after: guess) else {
                guard options.unknownFields == .discard else { throw WireAnomaly() }
                try skip(wire, &offset, end: end)
                continue
            }
            guess = i + 1
            let f = hot[i]
            let valueStart = offset
            let expected = Self.wireType(of: f.type)
            if wire == expected {
                try skip(wire, &offset, end: end)
                if counting {
                    if f.type == .message {
                        if options.includeDefaultValues { total += runtime.messages[f.messageIndex].fields.count }
                    } else if wire == 2, offset - valueStart > options.limits.maximumStringLength {
                        // The payload (and its prefix) is longer than the limit: look closer.
                        var at = valueStart
                        if try lengthDelimited(&at, end: end).count > options.limits.maximumStringLength {
                            throw WireAnomaly()
                        }
                    }
                }
            } else if wire == 2, f.storage == .repeated, f.type.isPackable {
                let payload = try lengthDelimited(&offset, end: end)
                occurrences += try checkPacked(payload, f.type) - 1
            } else {
                throw WireAnomaly()
            }
            guard slots[i].count == 0 || f.storage == .repeated else { throw WireAnomaly() }
            slots[i].add(keyStart: keyStart, valueStart: valueStart)
            if f.storage == .oneof {
                let group = layout.fields[i].oneofIndex
                guard group < 64, oneofs & (1 << UInt64(group)) == 0 else { throw WireAnomaly() }
                oneofs |= 1 << UInt64(group)
            }
        }
        if counting {
            total += occurrences
            guard occurrences <= options.limits.maximumContainerCount,
                total <= options.limits.maximumTotalValues
            else { throw WireAnomaly() }
        }
        if layout.hasRequiredFields {
            for i in hot.indices where hot[i].storage == .required && slots[i].count == 0 { throw WireAnomaly() }
        }
    }

    /// Checks that a packed payload holds whole, non-empty elements; returns how many.
    func checkPacked(_ payload: Range<Int>, _ type: ProtobufSchema.FieldType) throws(WireAnomaly) -> Int {
        guard !payload.isEmpty else { throw WireAnomaly() }
        switch Self.wireType(of: type) {
        case 1:
            guard payload.count % 8 == 0 else { throw WireAnomaly() }
            return payload.count / 8
        case 5:
            guard payload.count % 4 == 0 else { throw WireAnomaly() }
            return payload.count / 4
        default:
            var offset = payload.lowerBound
            var count = 0
            while offset < payload.upperBound {
                _ = try varint(&offset, end: payload.upperBound)
                count += 1
            }
            return count
        }
    }

    /// Calls `body` with the value offset of every occurrence of repeated field `i` (packed runs: the
    /// payload range, flagged).
    @inline(__always)
    func forEachOccurrence(
        _ message: WireMessage, _ i: Int, _ body: (_ valueStart: Int, _ packed: Range<Int>?) throws(WireAnomaly) -> Void
    ) throws(WireAnomaly) {
        let slot = message.slots[i]
        guard slot.count > 0 else { return }
        let f = message.layout.hot[i]
        let expected = Self.wireType(of: f.type)
        var offset = slot.keyStart
        let end = message.range.upperBound
        var seen = 0
        while offset < end && seen < slot.count {
            let (number, wire) = try key(&offset, end: end)
            if number == f.number {
                seen += 1
                if wire == expected {
                    let start = offset
                    try skip(wire, &offset, end: end)
                    try body(start, nil)
                } else {
                    let payload = try lengthDelimited(&offset, end: end)
                    try body(payload.lowerBound, payload)
                }
            } else {
                try skip(wire, &offset, end: end)
            }
        }
    }

    // MARK: checking (typed path)

    /// Checks a whole message tree the way ``value(_:_:depth:)`` reads it, without building anything: one
    /// pass per message, without an index (field sets as bit masks) for types of up to 64 fields.
    func check(_ layout: MessageLayout, _ range: Range<Int>, depth: Int) throws(WireAnomaly) {
        guard depth <= options.limits.maximumDepth else { throw WireAnomaly() }
        let hot = layout.hot
        guard hot.count <= 64, !layout.hasRequiredFields else {
            return try checkIndexed(layout, range, depth: depth)
        }
        var seen: UInt64 = 0
        var oneofs: UInt64 = 0
        var offset = range.lowerBound
        let end = range.upperBound
        var guess = 0
        var occurrences = 0
        let limits = options.limits
        // Where this message's slots go on the tape (what `index` would find), while recording.
        let base = tapeBudget > 0 ? record(layout, count: hot.count, at: range.lowerBound) : nil
        while offset < end {
            let keyStart = offset
            let (number, wire) = try key(&offset, end: end)
            occurrences += 1
            guard let i = Self.fieldIndex(layout, hot, number, after: guess) else {
                guard options.unknownFields == .discard else { throw WireAnomaly() }
                try skip(wire, &offset, end: end)
                continue
            }
            guess = i + 1
            let f = hot[i]
            let bit: UInt64 = 1 << UInt64(i)
            if let base { tape.unsafelyUnwrapped[base + i].add(keyStart: keyStart, valueStart: offset) }
            if f.storage != .repeated {
                guard seen & bit == 0 else { throw WireAnomaly() }
                seen |= bit
                if f.storage == .oneof {
                    let group = layout.fields[i].oneofIndex
                    guard group < 64, oneofs & (1 << UInt64(group)) == 0 else { throw WireAnomaly() }
                    oneofs |= 1 << UInt64(group)
                }
            }
            let expected = Self.wireType(of: f.type)
            if wire == expected {
                switch f.type {
                case .string, .bytes:
                    let payload = try lengthDelimited(&offset, end: end)
                    if counting, payload.count > limits.maximumStringLength { throw WireAnomaly() }
                    if f.type == .string, !Self.isUTF8(bytes, payload) { throw WireAnomaly() }
                case .message:
                    let payload = try lengthDelimited(&offset, end: end)
                    let sub = runtime.messages[f.messageIndex]
                    if counting, options.includeDefaultValues { total += sub.fields.count }
                    try check(sub, payload, depth: depth + 1)
                default:
                    try skip(wire, &offset, end: end)
                }
            } else if wire == 2, f.storage == .repeated, f.type.isPackable {
                let payload = try lengthDelimited(&offset, end: end)
                occurrences += try checkPacked(payload, f.type) - 1
            } else {
                throw WireAnomaly()
            }
        }
        if counting {
            total += occurrences
            guard occurrences <= limits.maximumContainerCount, total <= limits.maximumTotalValues else {
                throw WireAnomaly()
            }
        }
    }

    /// ``check(_:_:depth:)`` through an index (types of more than 64 fields, proto2 `required` fields).
    private func checkIndexed(_ layout: MessageLayout, _ range: Range<Int>, depth: Int) throws(WireAnomaly) {
        let message = try index(layout, range)
        let hot = layout.hot
        for i in hot.indices where message.slots[i].count > 0 {
            let f = hot[i]
            switch f.type {
            case .string:
                try forEachOccurrence(message, i) { (start, _) throws(WireAnomaly) in
                    var offset = start
                    let payload = try lengthDelimited(&offset, end: range.upperBound)
                    guard Self.isUTF8(bytes, payload) else { throw WireAnomaly() }
                }
            case .message:
                let sub = runtime.messages[f.messageIndex]
                try forEachOccurrence(message, i) { (start, _) throws(WireAnomaly) in
                    var offset = start
                    let payload = try lengthDelimited(&offset, end: range.upperBound)
                    try check(sub, payload, depth: depth + 1)
                }
            default: break
            }
        }
    }

    /// The string in `payload`; nil when it is not UTF-8 (not checked again once ``checked``). Strings of at most
    /// 15 bytes are built in String's inline layout, without the standard library validating them again.
    @inline(__always)
    func string(_ payload: Range<Int>) -> String? {
        if payload.count <= 15 && buildsSmallStrings {
            return ProtobufRawValueBuilder.smallString(bytes, payload, validated: checked)
        }
        let slice = UnsafeBufferPointer(rebasing: bytes[payload])
        return checked ? String(decoding: slice, as: UTF8.self) : ProtobufDecodeWalker.string(slice)
    }

    /// Whether `range` of `bytes` is valid UTF-8 (ASCII eight bytes at a time), without making a string.
    @inline(__always)
    static func isUTF8(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Bool {
        ProtobufRawValueBuilder.isUTF8(UnsafeBufferPointer(rebasing: bytes[range]))
    }

    // MARK: values

    /// The `Value` of the message of type `layout` in `range`, as the pivot's walker builds it: in one pass
    /// when the fields come in number order (``streamedValue(_:_:depth:)``), else through an index.
    func value(_ layout: MessageLayout, _ range: Range<Int>, depth: Int) throws(WireAnomaly) -> Value {
        guard depth <= options.limits.maximumDepth else { throw WireAnomaly() }
        if let value = try streamedValue(layout, range, depth: depth) { return value }
        return try indexedValue(layout, range, depth: depth)
    }

    /// ``value(_:_:depth:)`` through an index of the message's fields (any field order).
    func indexedValue(_ layout: MessageLayout, _ range: Range<Int>, depth: Int) throws(WireAnomaly) -> Value {
        // The messages of one level are read one after the other, each done before the next: they share one
        // slot array (no allocation per message).
        while scratch.count <= depth { scratch.append([]) }
        var slots: [WireSlot] = []
        swap(&slots, &scratch[depth])
        try index(layout, range, into: &slots)
        let message = WireMessage(layout: layout, range: range, slots: slots)
        slots = []
        let result = try value(of: message, depth: depth)
        scratch[depth] = message.slots
        return result
    }

    /// The `Value` of an indexed message.
    func value(of message: WireMessage, depth: Int) throws(WireAnomaly) -> Value {
        let layout = message.layout
        let names = layout.jsonNames
        var values: [Value] = []
        values.reserveCapacity(names.count)
        var keys: [String]? = nil
        for i in names.indices {
            if let value = try fieldValue(message, i, depth: depth) {
                values.append(value)
                keys?.append(names[i])
            } else if keys == nil {
                var emitted: [String] = []
                emitted.reserveCapacity(names.count - 1)
                emitted.append(contentsOf: names[0..<i])
                keys = emitted
            }
        }
        return .object(Value.Object(uniqueKeys: keys ?? names, values: values))
    }

    /// Whether field `i` of `message` appears in its `Value` (the walker's presence rules).
    @inline(__always)
    func isEmitted(_ message: WireMessage, _ i: Int) throws(WireAnomaly) -> Bool {
        try isEmitted(message.layout.hot[i], message.slots[i], end: message.range.upperBound)
    }

    /// Whether field `f`, found at `slot` in a message ending at `end`, appears in its `Value`.
    @inline(__always)
    func isEmitted(_ f: HotField, _ slot: WireSlot, end: Int) throws(WireAnomaly) -> Bool {
        switch f.storage {
        case .repeated: return slot.count > 0 || options.includeDefaultValues
        case .implicit:
            if f.type == .message { return slot.count > 0 }
            if slot.count == 0 { return options.includeDefaultValues }
            if options.includeDefaultValues { return true }
            return try !isZero(slot.valueStart, f, end: end)
        case .hasFlag, .pointer, .oneof, .required: return slot.count > 0
        }
    }

    /// The `Value` of field `i`, nil when the walker leaves it out.
    func fieldValue(_ message: WireMessage, _ i: Int, depth: Int) throws(WireAnomaly) -> Value? {
        guard try isEmitted(message, i) else { return nil }
        let f = message.layout.hot[i]
        let slot = message.slots[i]
        let end = message.range.upperBound
        if f.storage == .repeated {
            if f.isMap { return try map(message, i, depth: depth) }
            var array: [Value] = []
            array.reserveCapacity(slot.count)
            try forEachOccurrence(message, i) { (start, packed) throws(WireAnomaly) in
                if let packed {
                    var offset = packed.lowerBound
                    while offset < packed.upperBound {
                        array.append(try scalar(&offset, f, end: packed.upperBound, depth: depth))
                    }
                } else {
                    var offset = start
                    array.append(try scalar(&offset, f, end: end, depth: depth))
                }
            }
            return .array(array)
        }
        if slot.count == 0 { return defaultValue(f) }
        var offset = slot.valueStart
        return try scalar(&offset, f, end: end, depth: depth)
    }

    /// The value a field without presence has when absent.
    func defaultValue(_ f: HotField) -> Value {
        switch f.type {
        case .int32, .sint32, .sfixed32, .uint32, .fixed32, .int64, .sint64, .sfixed64, .uint64, .fixed64:
            return .int(0)
        case .float, .double: return .double(0)
        case .bool: return .bool(false)
        case .enumeration: return enumValue(0, f)
        case .string: return .string("")
        case .bytes: return .bytes([])
        case .message: return .object(Value.Object())  // not reached: messages have presence
        }
    }

    @inline(__always)
    func enumValue(_ number: Int32, _ f: HotField) -> Value {
        if !options.enumsAsNumbers, let name = runtime.enums[f.enumIndex].nameByNumber[number] { return name }
        return .int(Int64(number))
    }

    /// Whether the value at `offset` is what protobuf-c's C storage holds as zero.
    private func isZero(_ start: Int, _ f: HotField, end: Int) throws(WireAnomaly) -> Bool {
        var offset = start
        switch f.type {
        case .int32, .sint32, .uint32, .enumeration, .bool:
            let v = try varint(&offset, end: end)
            return f.type == .bool ? v == 0 : UInt32(truncatingIfNeeded: v) == 0
        case .int64, .sint64, .uint64: return try varint(&offset, end: end) == 0
        case .fixed32, .sfixed32, .float: return try fixed32(&offset, end: end) == 0
        case .fixed64, .sfixed64, .double: return try fixed64(&offset, end: end) == 0
        case .string, .bytes: return try lengthDelimited(&offset, end: end).isEmpty
        case .message: return false
        }
    }

    /// Whether `value`, just read from `start` for field `f`, is what protobuf-c's C storage holds as zero
    /// (``isZero(_:_:end:)`` without reading the bytes again, except for an enum, whose value may be a name).
    @inline(__always)
    private func isZero(_ value: Value, _ f: HotField, at start: Int, end: Int) throws(WireAnomaly) -> Bool {
        if f.type == .enumeration { return try isZero(start, f, end: end) }
        switch value {
        case .int(let n): return n == 0
        case .bool(let b): return !b
        case .double(let d): return d.bitPattern == 0
        case .string(let s): return s.isEmpty
        case .bytes(let b): return b.isEmpty
        default: return false
        }
    }

    /// Reads one value of field `f` at `offset` (not packed framing: one element).
    @inline(__always)
    func scalar(_ offset: inout Int, _ f: HotField, end: Int, depth: Int) throws(WireAnomaly) -> Value {
        switch f.type {
        case .int32:
            return .int(Int64(Int32(truncatingIfNeeded: try varint(&offset, end: end))))
        case .sint32:
            let u = UInt32(truncatingIfNeeded: try varint(&offset, end: end))
            return .int(Int64(Int32(bitPattern: (u >> 1) ^ (0 &- (u & 1)))))
        case .sfixed32: return .int(Int64(Int32(bitPattern: try fixed32(&offset, end: end))))
        case .uint32: return .int(Int64(UInt32(truncatingIfNeeded: try varint(&offset, end: end))))
        case .fixed32: return .int(Int64(try fixed32(&offset, end: end)))
        case .int64: return .int(Int64(bitPattern: try varint(&offset, end: end)))
        case .sint64:
            let u = try varint(&offset, end: end)
            return .int(Int64(bitPattern: (u >> 1) ^ (0 &- (u & 1))))
        case .sfixed64: return .int(Int64(bitPattern: try fixed64(&offset, end: end)))
        case .uint64:
            let u = try varint(&offset, end: end)
            return u <= UInt64(Int64.max) ? .int(Int64(u)) : .uint(u)
        case .fixed64:
            let u = try fixed64(&offset, end: end)
            return u <= UInt64(Int64.max) ? .int(Int64(u)) : .uint(u)
        case .float: return .double(Double(Float(bitPattern: try fixed32(&offset, end: end))))
        case .double: return .double(Double(bitPattern: try fixed64(&offset, end: end)))
        case .bool: return .bool(try varint(&offset, end: end) != 0)
        case .enumeration:
            return enumValue(Int32(truncatingIfNeeded: try varint(&offset, end: end)), f)
        case .string:
            let payload = try lengthDelimited(&offset, end: end)
            guard let s = string(payload) else { throw WireAnomaly() }
            return .string(s)
        case .bytes:
            let payload = try lengthDelimited(&offset, end: end)
            return .bytes(Array(UnsafeBufferPointer(rebasing: bytes[payload])))
        case .message:
            let payload = try lengthDelimited(&offset, end: end)
            // The runtime keeps the layout alive: borrowed, not retained.
            return try runtime.messageRefs[f.messageIndex]._withUnsafeGuaranteedRef { layout in
                Result { () throws(WireAnomaly) in try value(layout, payload, depth: depth + 1) }
            }.get()
        }
    }

    /// A map field: an object keyed by the entries' keys as strings (later entries replace earlier ones).
    private func map(_ message: WireMessage, _ i: Int, depth: Int) throws(WireAnomaly) -> Value {
        let f = message.layout.hot[i]
        let entryLayout = runtime.messages[f.messageIndex]
        guard let keyIndex = entryLayout.field(number: 1), let valueIndex = entryLayout.field(number: 2) else {
            throw WireAnomaly()
        }
        let keyField = entryLayout.hot[keyIndex]
        let valueField = entryLayout.hot[valueIndex]
        var object = Value.Object(minimumCapacity: message.slots[i].count)
        let end = message.range.upperBound
        try forEachOccurrence(message, i) { (start, _) throws(WireAnomaly) in
            var offset = start
            let payload = try lengthDelimited(&offset, end: end)
            guard depth + 1 <= options.limits.maximumDepth else { throw WireAnomaly() }
            let entry = try index(entryLayout, payload)
            let keyValue: Value
            if entry.slots[keyIndex].count > 0 {
                var at = entry.slots[keyIndex].valueStart
                keyValue = try scalar(&at, keyField, end: payload.upperBound, depth: depth + 1)
            } else {
                keyValue = defaultValue(keyField)
            }
            let key: String
            switch keyValue {
            case .string(let s): key = s
            case .int(let n): key = String(n)
            case .uint(let n): key = String(n)
            case .bool(let b): key = b ? "true" : "false"
            default: throw WireAnomaly()
            }
            let value: Value
            if entry.slots[valueIndex].count > 0 {
                var at = entry.slots[valueIndex].valueStart
                value = try scalar(&at, valueField, end: payload.upperBound, depth: depth + 1)
            } else if valueField.type == .message {
                value = try self.value(runtime.messages[valueField.messageIndex], 0..<0, depth: depth + 2)
            } else {
                value = defaultValue(valueField)
            }
            object.updateValue(value, forKey: key)
        }
        return .object(object)
    }
}

// MARK: one-pass values

extension ProtobufWireReader {
    /// The `Value` of the message of type `layout` in `range` in one pass, without an index: each field is read
    /// where it stands, and the member storage is allocated once at its final size. It counts and rejects
    /// exactly what ``index(_:_:into:)`` does. Nil, with nothing counted, when the fields are not in number
    /// order with each repeated field's occurrences side by side, for a map field, and for types of more than
    /// 64 fields or with proto2 `required` fields: ``indexedValue(_:_:depth:)`` then reads the message.
    func streamedValue(_ layout: MessageLayout, _ range: Range<Int>, depth: Int) throws(WireAnomaly) -> Value? {
        let hot = layout.hotFields
        guard hot.count <= 64, !layout.hasRequiredFields else { return nil }
        let budget = total
        var values: [Value] = []
        values.reserveCapacity(hot.count)
        var omitted: UInt64 = 0
        var oneofs: UInt64 = 0
        var next = 0
        var occurrences = 0
        var offset = range.lowerBound
        let end = range.upperBound
        while offset < end {
            let keyStart = offset
            let (number, wire) = try key(&offset, end: end)
            occurrences += 1
            // Fields come in number order: look forward from the next one (absent fields are passed over).
            var i = next
            while i < hot.count, hot[i].number < number { i += 1 }
            if i == hot.count || hot[i].number != number {
                guard let found = layout.field(number: number) else {
                    guard options.unknownFields == .discard else { throw WireAnomaly() }
                    try skip(wire, &offset, end: end)
                    continue
                }
                i = found
            }
            let f = hot[i]
            guard i >= next, !f.isMap else {
                total = budget
                return nil
            }
            while next < i {
                absent(hot[next], next, &values, &omitted)
                next += 1
            }
            next = i + 1
            if f.storage == .repeated {
                offset = keyStart
                values.append(.array(try run(f, &offset, end: end, occurrences: &occurrences, depth: depth)))
                continue
            }
            if f.storage == .oneof {
                let group = layout.fields[i].oneofIndex
                guard group < 64, oneofs & (1 << UInt64(group)) == 0 else { throw WireAnomaly() }
                oneofs |= 1 << UInt64(group)
            }
            guard wire == Self.wireType(of: f.type) else { throw WireAnomaly() }
            let valueStart = offset
            let value = try element(&offset, f, end: end, depth: depth)
            // An implicit-presence field holding its zero is left out, as from protobuf-c's C storage.
            if f.storage == .implicit, !options.includeDefaultValues, try isZero(value, f, at: valueStart, end: end) {
                omitted |= 1 << UInt64(i)
                continue
            }
            values.append(value)
        }
        while next < hot.count {
            absent(hot[next], next, &values, &omitted)
            next += 1
        }
        if counting {
            total += occurrences
            guard occurrences <= options.limits.maximumContainerCount, total <= options.limits.maximumTotalValues
            else { throw WireAnomaly() }
        }
        let names = omitted == 0 ? layout.jsonNames : emittedNames(layout, omitted, depth: depth)
        return .object(Value.Object(uniqueKeys: names, values: values))
    }

    /// One value of field `f` at `offset`, counted as ``index(_:_:into:)`` counts it (a message's declared
    /// fields, a string's length).
    @inline(__always)
    private func element(_ offset: inout Int, _ f: HotField, end: Int, depth: Int) throws(WireAnomaly) -> Value {
        switch f.type {
        case .string:
            let payload = try lengthDelimited(&offset, end: end)
            if counting, payload.count > options.limits.maximumStringLength { throw WireAnomaly() }
            guard let s = string(payload) else { throw WireAnomaly() }
            return .string(s)
        case .bytes:
            var at = offset
            if counting, try lengthDelimited(&at, end: end).count > options.limits.maximumStringLength {
                throw WireAnomaly()
            }
        case .message:
            if counting, options.includeDefaultValues { total += runtime.messages[f.messageIndex].fields.count }
        default: break
        }
        return try scalar(&offset, f, end: end, depth: depth)
    }

    /// The elements of the occurrences of repeated field `f` that start at `offset` (at the first one's key) and
    /// follow one another, in an array allocated at its final size; `offset` ends after the last one.
    private func run(_ f: HotField, _ offset: inout Int, end: Int, occurrences: inout Int, depth: Int)
        throws(WireAnomaly) -> [Value]
    {
        let expected = Self.wireType(of: f.type)
        // First the framing and the count (the first key is already counted).
        var count = 0
        var at = offset
        var keys = 0
        while at < end {
            let keyEnd = at
            let (number, wire) = try key(&at, end: end)
            guard number == f.number else {
                at = keyEnd
                break
            }
            keys += 1
            if wire == expected {
                try skip(wire, &at, end: end)
                count += 1
            } else if wire == 2, f.type.isPackable {
                let elements = try checkPacked(try lengthDelimited(&at, end: end), f.type)
                count += elements
                occurrences += elements - 1
            } else {
                throw WireAnomaly()
            }
        }
        occurrences += keys - 1
        let runEnd = at
        var array: [Value] = []
        array.reserveCapacity(count)
        at = offset
        while at < runEnd {
            let (_, wire) = try key(&at, end: end)
            if wire == expected {
                array.append(try element(&at, f, end: end, depth: depth))
            } else {
                let payload = try lengthDelimited(&at, end: end)
                var element = payload.lowerBound
                while element < payload.upperBound {
                    array.append(try scalar(&element, f, end: payload.upperBound, depth: depth))
                }
            }
        }
        offset = runEnd
        return array
    }

    /// Field `i` (`f`) is absent: its default value when the walker emits one, else it is left out.
    @inline(__always)
    private func absent(_ f: HotField, _ i: Int, _ values: inout [Value], _ omitted: inout UInt64) {
        guard options.includeDefaultValues else {
            omitted |= 1 << UInt64(i)
            return
        }
        switch f.storage {
        case .repeated: values.append(f.isMap ? .object(Value.Object()) : .array([]))
        case .implicit where f.type != .message: values.append(defaultValue(f))
        default: omitted |= 1 << UInt64(i)
        }
    }

    /// The member names of `layout` without the fields in the `omitted` mask: shared with the last message of
    /// this nesting level that left out the same fields.
    private func emittedNames(_ layout: MessageLayout, _ omitted: UInt64, depth: Int) -> [String] {
        let id = ObjectIdentifier(layout)
        if depth < emittedNames.count, emittedNames[depth].layout == id, emittedNames[depth].omitted == omitted {
            return emittedNames[depth].names
        }
        let all = layout.jsonNames
        var names: [String] = []
        names.reserveCapacity(all.count - omitted.nonzeroBitCount)
        for i in all.indices where omitted & (1 << UInt64(i)) == 0 { names.append(all[i]) }
        while emittedNames.count <= depth { emittedNames.append((id, 0, [])) }
        emittedNames[depth] = (id, omitted, names)
        return names
    }
}
