/// One field of a message that ``ProtobufRawScanner`` accepted, in wire order. A nested message or group is
/// followed by the entries of its own fields; ``value`` then says where they end, so a reader skips them in
/// one step.
struct ProtobufRawEntry {
    enum Kind: UInt8 {
        /// `value` is the varint.
        case varint
        /// `value` is the 64-bit value.
        case fixed64
        /// `value` is the 32-bit value.
        case fixed32
        /// A string or bytes: `value` is the offset of the length prefix (the payload follows it).
        case lengthDelimited
        /// A payload read as a nested message: `value` is the index past its last nested entry.
        case message
        /// A group: `value` is the index past its last nested entry.
        case group
    }

    var value: UInt64
    var number: UInt32
    var kind: Kind
    /// For a `.message` or `.group`: its ``ProtobufRawScanner/Shape`` (0 for any other kind). It fits in the
    /// entry's padding: an entry stays 16 bytes.
    var shape: UInt16 = 0

    /// The index of the entry after this one and everything nested in it, this one being at `index`.
    @inline(__always)
    func next(after index: Int) -> Int {
        kind.rawValue >= Kind.message.rawValue ? Int(truncatingIfNeeded: value) : index + 1
    }
}

/// Why the raw scan stopped; the text is written only for the error that leaves the decoder (a rejected
/// guess costs no string). The scan does not throw it: a guess that fails is routine (about one
/// length-delimited payload in three on a typical page), so the scan's functions return a sentinel and leave
/// the failure in ``ProtobufRawScanner/failure``.
struct ProtobufRawFailure: Error {
    enum Reason: UInt8 {
        case varintTooLong, truncatedVarint, fieldNumberZero, invalidWireType, lengthBeyondEnd
        case truncatedFixed32, truncatedFixed64, unmatchedEndGroup, unclosedGroup
        case tooManyValues, tooLong, tooManyFields, groupsTooDeep
    }

    var reason: Reason
    var offset: Int
    /// The reason's numbers: the varint's byte limit, the wire type or field number, the length, the limit.
    var first: UInt64 = 0
    var second: UInt64 = 0

    /// Whether a guess that hit this is merely not a message (as opposed to a limit, which is an error).
    var isMalformed: Bool { reason.rawValue < Reason.tooManyValues.rawValue }

    /// The failure as the wire layer words it.
    var wireError: WireError { WireError(message: message, offset: offset, code: code) }

    private var code: CourierError.Code {
        switch reason {
        case .tooManyValues, .tooLong, .tooManyFields: return .sizeLimitExceeded
        case .groupsTooDeep: return .depthLimitExceeded
        default: return .malformedInput
        }
    }

    private var message: String {
        switch reason {
        case .varintTooLong: return "varint longer than \(first) bytes"
        case .truncatedVarint: return "truncated varint"
        case .fieldNumberZero: return "field number 0 is not allowed"
        case .invalidWireType: return "invalid wire type \(first) for field \(second)"
        case .lengthBeyondEnd: return "length prefix \(first) exceeds the \(second) bytes that remain"
        case .truncatedFixed32: return "truncated 32-bit value"
        case .truncatedFixed64: return "truncated 64-bit value"
        case .unmatchedEndGroup: return "unmatched end of group \(first)"
        case .unclosedGroup: return "group \(first) is not closed"
        case .tooManyValues:
            return "the message holds more values than the limit maximumTotalValues = \(Int64(bitPattern: first))"
        case .tooLong:
            return "a length-delimited value of \(first) bytes is longer than the limit maximumStringLength = "
                + "\(Int64(bitPattern: second))"
        case .tooManyFields:
            return "a message has more fields than the limit maximumContainerCount = \(Int64(bitPattern: first))"
        case .groupsTooDeep: return "groups nest deeper than the limit maximumDepth = \(Int64(bitPattern: first))"
        }
    }
}

/// The raw decoder's first pass: checks the bytes and the limits exactly as the guessing parse always did,
/// and records the fields of every message it accepts on a flat tape, without building anything.
///
/// A length-delimited payload is tried as a message once; when the try fails, its entries are dropped from the
/// tape and it costs no more than the bytes it read (no error text, no values, no strings). Every byte is read
/// by the innermost try that holds it directly, so nesting does not multiply the work.
///
/// Its functions report a failure by a sentinel (-1, nil or false) and leave it in ``failure``: a rejected guess
/// is the common case for text, and throwing it cost a runtime call and an unwind each time.
struct ProtobufRawScanner {
    /// The input's first byte (a placeholder, never read, when the input is empty).
    let base: UnsafePointer<UInt8>
    let maxDepth: Int
    let groupDepth: Int
    let maxTotal: Int
    let maxFields: Int
    let maxString: Int
    /// Values counted so far (messages, scalars, strings), restored when a guessed message is not one.
    var total = 0
    /// The shape of the message ``scanMessage(from:to:depth:endGroup:)`` scanned last: 1 + the number of runs
    /// of one field number it holds when its numbers only increase from run to run (each number then has a
    /// single run, in order) and there are fewer than 65,535 runs, else 0 (the builder counts and groups).
    private(set) var shape: UInt16 = 0
    /// The tape: `count` entries of `capacity` (owned: ``deallocate()`` frees it).
    private(set) var tape: UnsafeMutablePointer<ProtobufRawEntry>
    private(set) var count = 0
    private var capacity: Int
    /// Why the last function that returned its sentinel stopped.
    private(set) var failure = ProtobufRawFailure(reason: .truncatedVarint, offset: 0)

    init(_ bytes: UnsafeBufferPointer<UInt8>, limits: DecodingLimits, maxDepth: Int) {
        base = bytes.baseAddress ?? UnsafePointer(bitPattern: 1)!
        // Guessed nesting recurses as groups do: both stop at the ceiling of every depth limit.
        self.maxDepth = min(maxDepth, DecodingLimits.depthCeiling)
        groupDepth = min(limits.maximumDepth, self.maxDepth)
        maxTotal = limits.maximumTotalValues
        maxFields = limits.maximumContainerCount
        maxString = limits.maximumStringLength
        // Every entry holds at least two bytes of its own (a key and a value, or a group's two keys), so
        // half the input is room enough: allocated untouched, the pages are only faulted in as they fill,
        // and the tape never moves. Past 4M entries (a 64 MiB reservation) it grows instead.
        capacity = min(bytes.count / 2 + 1, 1 << 22)
        tape = .allocate(capacity: capacity)
    }

    /// Frees the tape.
    func deallocate() { tape.deallocate() }

    /// A limit as a failure's number (its bit pattern: a negative limit, which every value exceeds, is printed
    /// as the caller gave it).
    @inline(__always)
    static func limit(_ value: Int) -> UInt64 { UInt64(bitPattern: Int64(value)) }

    /// The entries recorded.
    var entries: UnsafeBufferPointer<ProtobufRawEntry> { UnsafeBufferPointer(start: tape, count: count) }

    @inline(__always)
    private mutating func append(_ entry: ProtobufRawEntry) {
        if count == capacity { grow() }
        (tape + count).initialize(to: entry)
        count += 1
    }

    private mutating func grow() {
        capacity *= 2
        let larger = UnsafeMutablePointer<ProtobufRawEntry>.allocate(capacity: capacity)
        larger.moveInitialize(from: tape, count: count)
        tape.deallocate()
        tape = larger
    }

    /// Counts a value; false (with ``failure``) beyond ``maxTotal``.
    @inline(__always)
    mutating func count(at offset: Int) -> Bool {
        total += 1
        if total > maxTotal {
            return refuse(ProtobufRawFailure(reason: .tooManyValues, offset: offset, first: Self.limit(maxTotal)))
        }
        return true
    }

    /// Records why the scan stops; returns the sentinel -1.
    @inline(never)
    private mutating func stop(_ reason: ProtobufRawFailure) -> Int {
        failure = reason
        return -1
    }

    /// Records why the scan stops; returns false (the sentinel of the functions that answer whether they read).
    @inline(never)
    private mutating func refuse(_ reason: ProtobufRawFailure) -> Bool {
        failure = reason
        return false
    }

    /// Reads the varint at `offset` in `base` (of at most `maxBytes` bytes, before `end`); nil, with the reason
    /// in `failure`, when it is longer or truncated.
    @inline(__always)
    static func varint(
        _ base: UnsafePointer<UInt8>, _ offset: inout Int, _ end: Int, maxBytes: Int,
        failure: inout ProtobufRawFailure
    ) -> UInt64? {
        if offset < end {
            let byte = base[offset]
            if byte < 0x80 {
                offset += 1
                return UInt64(byte)
            }
        }
        return longVarint(base, &offset, end, maxBytes: maxBytes, failure: &failure)
    }

    /// A varint of more than one byte: at most `maxBytes` of them are read, the tenth contributing its
    /// lowest bit.
    static func longVarint(
        _ base: UnsafePointer<UInt8>, _ offset: inout Int, _ end: Int, maxBytes: Int,
        failure: inout ProtobufRawFailure
    ) -> UInt64? {
        let start = offset
        let limit = min(end, start + maxBytes)
        var value: UInt64 = 0
        var next = start
        while next < limit {
            let digit = UInt64(base[next])
            let position = UInt64(7 * (next - start))
            next += 1
            if position < 64 { value |= (digit & 0x7f) << position }
            if digit < 0x80 {
                offset = next
                return value
            }
        }
        failure =
            next - start >= maxBytes
            ? ProtobufRawFailure(reason: .varintTooLong, offset: start, first: UInt64(maxBytes))
            : ProtobufRawFailure(reason: .truncatedVarint, offset: start)
        return nil
    }

    /// Scans the message in `start..<end` (a group's when `endGroup` is its number, else 0) and returns the
    /// offset after it (after the end-group key for a group), or -1 with the reason in ``failure``.
    mutating func scanMessage(from start: Int, to end: Int, depth: Int, endGroup: UInt32) -> Int {
        guard count(at: start) else { return -1 }
        let base = base
        var offset = start
        var fields = 0
        var last: UInt32 = 0
        var runs = 0
        var disordered = false
        while offset < end {
            let keyOffset = offset
            guard let fullKey = Self.varint(base, &offset, end, maxBytes: 10, failure: &failure) else { return -1 }
            let key = fullKey & 0xFFFF_FFFF
            let number = UInt32(truncatingIfNeeded: key >> 3)
            guard number != 0 else { return stop(ProtobufRawFailure(reason: .fieldNumberZero, offset: keyOffset)) }
            var scalar = true
            switch key & 7 {
            case 0:
                guard let value = Self.varint(base, &offset, end, maxBytes: 10, failure: &failure) else { return -1 }
                append(ProtobufRawEntry(value: value, number: number, kind: .varint))
            case 1:
                guard end - offset >= 8 else {
                    return stop(ProtobufRawFailure(reason: .truncatedFixed64, offset: offset))
                }
                let value = UnsafeRawPointer(base + offset).loadUnaligned(as: UInt64.self)
                offset += 8
                append(ProtobufRawEntry(value: UInt64(littleEndian: value), number: number, kind: .fixed64))
            case 5:
                guard end - offset >= 4 else {
                    return stop(ProtobufRawFailure(reason: .truncatedFixed32, offset: offset))
                }
                let value = UnsafeRawPointer(base + offset).loadUnaligned(as: UInt32.self)
                offset += 4
                append(
                    ProtobufRawEntry(value: UInt64(UInt32(littleEndian: value)), number: number, kind: .fixed32))
            case 2:
                scalar = false
                guard scanLengthDelimited(&offset, end, number: number, keyOffset: keyOffset, depth: depth) else {
                    return -1
                }
            case 3:
                scalar = false
                guard depth < groupDepth else {
                    return stop(
                        ProtobufRawFailure(reason: .groupsTooDeep, offset: keyOffset, first: Self.limit(groupDepth)))
                }
                let index = count
                append(ProtobufRawEntry(value: 0, number: number, kind: .group))
                offset = scanMessage(from: offset, to: end, depth: depth + 1, endGroup: number)
                guard offset >= 0 else { return -1 }
                tape[index].value = UInt64(count)
                tape[index].shape = shape
            case 4:
                guard endGroup == number else {
                    return stop(
                        ProtobufRawFailure(reason: .unmatchedEndGroup, offset: keyOffset, first: UInt64(number)))
                }
                shape = Self.shape(runs: runs, disordered: disordered)
                return offset
            default:
                return stop(
                    ProtobufRawFailure(
                        reason: .invalidWireType, offset: keyOffset, first: key & 7, second: UInt64(number)))
            }
            fields += 1
            if fields > maxFields {
                return stop(
                    ProtobufRawFailure(reason: .tooManyFields, offset: keyOffset, first: Self.limit(maxFields)))
            }
            if scalar, !count(at: keyOffset) { return -1 }
            if number < last { disordered = true }
            runs &+= number != last ? 1 : 0
            last = number
        }
        if endGroup != 0 {
            return stop(ProtobufRawFailure(reason: .unclosedGroup, offset: offset, first: UInt64(endGroup)))
        }
        shape = Self.shape(runs: runs, disordered: disordered)
        return offset
    }

    /// The ``shape`` of a message of `runs` runs of one number, `disordered` when a number was lower than the
    /// one before it.
    @inline(__always)
    private static func shape(runs: Int, disordered: Bool) -> UInt16 {
        disordered || runs >= 0xFFFF ? 0 : UInt16(truncatingIfNeeded: runs + 1)
    }

    /// Whether the payload's first field, read from a one-byte key, makes it malformed at once: number 0, an
    /// invalid wire type, an end of group, or a value longer than the payload. Most text fails here, and
    /// skipping its guess changes nothing: the guess would have counted one value at the payload's start, as
    /// the string that replaces it does.
    @inline(__always)
    static func failsAtOnce(_ base: UnsafePointer<UInt8>, _ payload: Range<Int>) -> Bool {
        // Without branches on the wire type (which text makes unpredictable): the bytes each wire type needs
        // after the key (a nibble each: 8 for fixed64, 1 for a length, 4 for fixed32) and the wire types that
        // are never a first field (4, 6 and 7).
        let key = Int(base[payload.lowerBound])
        let left = payload.count - 1
        let wireType = key & 7
        let needs = (0x40_0180 >> (4 * wireType)) & 0xF
        // A length-delimited first field's length (the key again when there is no byte left, which `needs`
        // rejects anyway).
        let length = Int(base[payload.lowerBound + (left > 0 ? 1 : 0)])
        var fails = (key < 8 ? 1 : 0) | ((0xD0 >> wireType) & 1) | (left < needs ? 1 : 0)
        fails |= (wireType == 2 ? 1 : 0) & (length < 0x80 ? 1 : 0) & (length >= left ? 1 : 0)
        return key < 0x80 && fails != 0
    }

    /// A length-delimited value: a nested message when its payload scans as one (above ``maxDepth`` no
    /// more), else a string or bytes. A guess that runs into a limit is an error, not a fallback. False, with
    /// the reason in ``failure``, when the value is malformed or beyond a limit.
    private mutating func scanLengthDelimited(
        _ offset: inout Int, _ end: Int, number: UInt32, keyOffset: Int, depth: Int
    ) -> Bool {
        let lengthOffset = offset
        let base = base
        guard let length = Self.varint(base, &offset, end, maxBytes: 5, failure: &failure) else { return false }
        guard length <= UInt64(end - offset) else {
            return refuse(
                ProtobufRawFailure(
                    reason: .lengthBeyondEnd, offset: lengthOffset, first: length, second: UInt64(end - offset)))
        }
        let payload = offset..<(offset + Int(length))
        offset = payload.upperBound
        if payload.count > maxString {
            return refuse(
                ProtobufRawFailure(
                    reason: .tooLong, offset: keyOffset, first: UInt64(payload.count), second: Self.limit(maxString)))
        }
        let index = count
        append(ProtobufRawEntry(value: UInt64(lengthOffset), number: number, kind: .lengthDelimited))
        if !payload.isEmpty, depth < maxDepth, !Self.failsAtOnce(base, payload) {
            let before = total
            if scanMessage(from: payload.lowerBound, to: payload.upperBound, depth: depth + 1, endGroup: 0) >= 0 {
                tape[index] = ProtobufRawEntry(value: UInt64(count), number: number, kind: .message, shape: shape)
                return true
            }
            // A limit is an error; anything else means it is not a message: what the guess recorded goes.
            guard failure.isMalformed else { return false }
            total = before
            count = index + 1
        }
        return count(at: payload.lowerBound)
    }
}
