// A strict RFC 8259 parser over raw bytes, producing a `Value`.
//
// The parser is iterative (an explicit stack of open containers), so hostile nesting can never
// overflow the call stack; the depth limit bounds the explicit stack as well. It never builds a
// `String` per character: strings without escapes are scanned eight bytes at a time and turned into a
// `String` at once, built in place when short (at most 15 bytes, stored inline by `String`).

/// A syntax failure found by ``JSONParser``: the error code, a reason and the byte offset. Turned into a
/// ``CourierError`` with line and column by ``JSONCodec``.
struct JSONParseFailure: Error {
    var code: CourierError.Code
    var reason: String
    var offset: Int
}

/// Eight bytes at a time (SWAR): masks with the high bit set in each byte lane that matches. The lowest lane
/// set is exact (a borrow only runs upward from a lane that matches), so ``first(_:)`` finds the first
/// matching byte; lanes above it may be set falsely.
enum JSONLanes {
    static var ones: UInt64 { 0x0101_0101_0101_0101 }
    static var high: UInt64 { 0x8080_8080_8080_8080 }

    /// The lanes equal to `byte`.
    @inline(__always)
    static func equal(_ x: UInt64, _ byte: UInt8) -> UInt64 {
        let y = x ^ (ones &* UInt64(byte))
        return (y &- ones) & ~y & high
    }

    /// The ASCII lanes below `byte` (at most 0x80).
    @inline(__always)
    static func below(_ x: UInt64, _ byte: UInt8) -> UInt64 {
        (x &- ones &* UInt64(byte)) & ~x & high
    }

    /// The lanes a reader of a JSON string must look at: `"`, `\`, control characters and non-ASCII bytes.
    @inline(__always)
    static func attention(_ x: UInt64) -> UInt64 {
        equal(x, UInt8(ascii: "\"")) | equal(x, UInt8(ascii: "\\")) | below(x, 0x20) | (x & high)
    }

    /// The offset of the first lane set in `lanes` (not zero).
    @inline(__always)
    static func first(_ lanes: UInt64) -> Int {
        #if _endian(little)
        lanes.trailingZeroBitCount >> 3
        #else
        lanes.leadingZeroBitCount >> 3
        #endif
    }
}

/// A stack in raw memory owned by one ``JSONParser``: elements `0..<count` from `base` are initialized. No
/// array metadata, uniqueness or placeholder values: pushing initializes a slot, taking moves out of it.
private struct RawStack<Element> {
    private(set) var base: UnsafeMutablePointer<Element>
    private(set) var count = 0
    private var capacity: Int
    /// Whether ``base`` is the stack's own allocation (rather than its first slots in a block of its owner).
    private var ownsBase = false

    /// A stack on `capacity` slots at `base`, which its owner frees after ``release()``.
    init(slots base: UnsafeMutableRawPointer, capacity: Int) {
        self.base = base.bindMemory(to: Element.self, capacity: capacity)
        self.capacity = capacity
    }

    /// The bytes of `capacity` slots.
    static func bytes(_ capacity: Int) -> Int { capacity * MemoryLayout<Element>.stride }

    @inline(__always)
    mutating func push(_ element: consuming Element) {
        if count == capacity { grow() }
        (base + count).initialize(to: element)
        count += 1
    }

    @inline(never)
    private mutating func grow() {
        let newCapacity = capacity * 2
        let newBase = UnsafeMutablePointer<Element>.allocate(capacity: newCapacity)
        newBase.moveInitialize(from: base, count: count)
        if ownsBase { base.deallocate() }
        ownsBase = true
        base = newBase
        capacity = newCapacity
    }

    @inline(__always)
    mutating func removeLast() {
        count -= 1
        (base + count).deinitialize(count: 1)
    }

    /// Moves the elements from `start` up into an array of that capacity (each through `transform`) and
    /// shrinks the stack to `start`.
    ///
    /// The array is reserved and appended to rather than built with `init(unsafeUninitializedCapacity:)`:
    /// that initializer allocates through an unspecialized standard-library entry point that looks the array
    /// storage's type metadata up in the runtime's cache on every call, while `reserveCapacity` is
    /// specialized here and reaches the metadata through a once-initialized reference.
    @inline(__always)
    mutating func take<T>(from start: Int, _ transform: (consuming Element) -> T) -> [T] {
        let n = count - start
        let source = base + start
        count = start
        var array: [T] = []
        array.reserveCapacity(n)
        for i in 0..<n { array.append(transform((source + i).move())) }
        return array
    }

    /// Drops the elements from `start` up.
    mutating func removeAll(from start: Int) {
        (base + start).deinitialize(count: count - start)
        count = start
    }

    /// Drops the elements and frees the stack's own memory (the owner's last use).
    func release() {
        base.deinitialize(count: count)
        if ownsBase { base.deallocate() }
    }
}

package struct JSONParser: ~Copyable {
    private let bytes: UnsafePointer<UInt8>
    private let count: Int
    private var pos = 0
    private let maximumDepth: Int
    /// The limits checked while reading (``DecodingLimits``).
    private let limits: DecodingLimits
    /// Values started so far, checked against `limits.maximumTotalValues`.
    private var totalValues = 0
    private let duplicateKeys: JSONCodec.DuplicateKeyPolicy
    private var scratch: [UInt8] = []

    /// Whether short strings are built from their bytes directly (``smallStringsFromBits``).
    private let buildsSmallStrings = Self.smallStringsFromBits
    /// Member-name arrays of recently closed objects, by member count modulo ``sharedSlots``: objects of the
    /// same layout (the elements of a list) share one `keys` array instead of each allocating its own.
    /// `nil` until the first object closes.
    private var sharedKeys: UnsafeMutablePointer<[String]>?
    private static let sharedSlots = 8
    /// Whether the last string was anything but plain ASCII between its quotes (it had escapes or non-ASCII
    /// bytes): such member names are compared as `String`s (canonical equivalence, as `Value.Object` compares
    /// them), not byte for byte.
    private var lastStringIsNotPlainASCII = false

    /// A member name of an open object: the name, the byte offset of its opening quote and its raw length
    /// between the quotes (-1 when it had escapes or non-ASCII bytes).
    private struct MemberName {
        var name: String
        var start: Int
        var length: Int
    }

    // Members of all open containers, innermost last: elements and values, and names.
    private var values: RawStack<Value>
    private var names: RawStack<MemberName>
    private var valueTop: Int { values.count }
    private var keyTop: Int { names.count }

    /// One open container: where its elements and names start on the stacks.
    private struct Frame {
        var isObject: Bool
        var valueStart: Int
        var keyStart: Int
    }

    /// The open containers, innermost last.
    private var frames: RawStack<Frame>
    /// The first slots of the three stacks, in one allocation (most documents never need more).
    private let slots: UnsafeMutableRawPointer

    init(bytes: UnsafePointer<UInt8>, count: Int, limits: DecodingLimits, duplicateKeys: JSONCodec.DuplicateKeyPolicy) {
        self.bytes = bytes
        self.count = count
        self.maximumDepth = limits.maximumDepth
        self.limits = limits
        self.duplicateKeys = duplicateKeys
        let valueBytes = RawStack<Value>.bytes(32)
        let nameBytes = RawStack<MemberName>.bytes(16)
        slots = .allocate(byteCount: valueBytes + nameBytes + RawStack<Frame>.bytes(8), alignment: 16)
        values = RawStack(slots: slots, capacity: 32)
        names = RawStack(slots: slots + valueBytes, capacity: 16)
        frames = RawStack(slots: slots + valueBytes + nameBytes, capacity: 8)
    }

    deinit {
        values.release()
        names.release()
        frames.release()
        slots.deallocate()
        if let sharedKeys {
            sharedKeys.deinitialize(count: Self.sharedSlots)
            sharedKeys.deallocate()
        }
    }

    // MARK: - Structure

    /// Parses the whole input as exactly one JSON value surrounded by optional whitespace.
    mutating func parse() throws(JSONParseFailure) -> Value {
        var value: Value

        parsing: while true {
            skipWhitespace()
            guard pos < count else {
                throw fail(frames.count == 0 && valueTop == 0 ? "the input is empty" : "unexpected end of input")
            }
            totalValues += 1
            if totalValues > limits.maximumTotalValues {
                throw limitFailure("the document holds more values", "maximumTotalValues", limits.maximumTotalValues)
            }
            if frames.count > 0, case let frame = frames.base[frames.count - 1],
                valueTop - frame.valueStart >= limits.maximumContainerCount
            {
                throw limitFailure(
                    frame.isObject ? "an object has more members" : "an array has more elements",
                    "maximumContainerCount", limits.maximumContainerCount)
            }
            switch bytes[pos] {
            case UInt8(ascii: "{"):
                guard frames.count < maximumDepth else { throw depthFailure() }
                pos += 1
                skipWhitespace()
                if pos < count, bytes[pos] == UInt8(ascii: "}") {
                    pos += 1
                    value = .object(Value.Object())
                } else {
                    frames.push(Frame(isObject: true, valueStart: valueTop, keyStart: keyTop))
                    try parseMemberName()
                    continue parsing
                }
            case UInt8(ascii: "["):
                guard frames.count < maximumDepth else { throw depthFailure() }
                pos += 1
                skipWhitespace()
                if pos < count, bytes[pos] == UInt8(ascii: "]") {
                    pos += 1
                    value = .array([])
                } else {
                    frames.push(Frame(isObject: false, valueStart: valueTop, keyStart: keyTop))
                    continue parsing
                }
            case UInt8(ascii: "\""):
                value = .string(try parseString())
            case UInt8(ascii: "t"):
                try expectLiteral("true")
                value = .bool(true)
            case UInt8(ascii: "f"):
                try expectLiteral("false")
                value = .bool(false)
            case UInt8(ascii: "n"):
                try expectLiteral("null")
                value = .null
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                value = try parseNumber()
            case UInt8(ascii: "]") where frames.count > 0 && !frames.base[frames.count - 1].isObject:
                throw fail("a trailing comma before ']' is not allowed")
            case UInt8(ascii: "}"):
                throw fail("unexpected '}'")
            default:
                throw fail("unexpected \(describe(bytes[pos])); expected a value")
            }

            // Attach the finished value to the open container; close containers as they end.
            while true {
                guard frames.count > 0 else {
                    skipWhitespace()
                    guard pos == count else { throw fail("unexpected \(describe(bytes[pos])) after the value") }
                    return value
                }
                let frame = frames.base[frames.count - 1]
                var moved = Value.null  // moves the value onto the stack, leaving a trivial one
                swap(&moved, &value)
                values.push(moved)
                skipWhitespace()
                guard pos < count else {
                    throw fail(frame.isObject ? "unexpected end of input in an object" : "unexpected end of input in an array")
                }
                let c = bytes[pos]
                if c == UInt8(ascii: ",") {
                    pos += 1
                    if frame.isObject {
                        skipWhitespace()
                        try parseMemberName()
                    }
                    continue parsing
                }
                if frame.isObject {
                    guard c == UInt8(ascii: "}") else {
                        throw fail("expected ',' or '}' after an object member, found \(describe(c))")
                    }
                    pos += 1
                    value = .object(try closeObject(frame))
                } else {
                    guard c == UInt8(ascii: "]") else {
                        throw fail("expected ',' or ']' after an array element, found \(describe(c))")
                    }
                    pos += 1
                    value = .array(values.take(from: frame.valueStart) { $0 })
                }
                frames.removeLast()
            }
        }
    }

    private func depthFailure() -> JSONParseFailure {
        JSONParseFailure(
            code: .depthLimitExceeded, reason: "nesting deeper than \(maximumDepth) levels (limit maximumDepth)",
            offset: pos)
    }

    /// A ``CourierError/Code/sizeLimitExceeded`` failure at the cursor: "`what` than `limit` (`value`)".
    private func limitFailure(_ what: String, _ limit: String, _ value: Int, at offset: Int? = nil) -> JSONParseFailure {
        JSONParseFailure(code: .sizeLimitExceeded, reason: "\(what) than the limit \(limit) = \(value)", offset: offset ?? pos)
    }

    /// The slots of ``sharedKeys``, allocated on first use.
    private mutating func sharedSlots() -> UnsafeMutablePointer<[String]> {
        if let sharedKeys { return sharedKeys }
        let shared = UnsafeMutablePointer<[String]>.allocate(capacity: Self.sharedSlots)
        shared.initialize(repeating: [], count: Self.sharedSlots)
        sharedKeys = shared
        return shared
    }

    /// The array of an earlier object with the member names from `start` up, in the same order (the names
    /// are then dropped from the stack), or `nil`. Its names are unique, so these are too.
    private mutating func sharedMatch(from start: Int) -> [String]? {
        let n = keyTop - start
        let shared = sharedSlots() + n % Self.sharedSlots
        guard shared.pointee.count == n else { return nil }
        let stack = names.base + start
        let same = shared.pointee.withUnsafeBufferPointer { shared in
            var i = 0
            while i < n, shared[i] == stack[i].name { i += 1 }
            return i == n
        }
        guard same else { return nil }
        names.removeAll(from: start)
        return shared.pointee
    }

    /// The member names from `start` up, taken off the stack and kept for later objects of that layout.
    private mutating func share(from start: Int) -> [String] {
        let taken = names.take(from: start) { $0.name }
        sharedSlots()[taken.count % Self.sharedSlots] = taken
        return taken
    }

    /// Builds the object of the closing frame, applying the duplicate-key policy.
    private mutating func closeObject(_ frame: Frame) throws(JSONParseFailure) -> Value.Object {
        let n = keyTop - frame.keyStart
        if n <= 16 && allPlain(from: frame.keyStart) {
            // Plain names, compared byte for byte: the layout of an earlier object, or new and unique.
            if let keys = sharedMatch(from: frame.keyStart) {
                return Value.Object(uncheckedUniqueKeys: keys, values: values.take(from: frame.valueStart) { $0 })
            }
            if !hasDuplicateKey(from: frame.keyStart) {
                let keys = share(from: frame.keyStart)
                return Value.Object(uncheckedUniqueKeys: keys, values: values.take(from: frame.valueStart) { $0 })
            }
        }
        var object = Value.Object(minimumCapacity: n)
        for i in 0..<n {
            let key = names.base[frame.keyStart + i].name
            if object.contains(key) {
                switch duplicateKeys.base {
                case .lastWins: object.updateValue(values.base[frame.valueStart + i], forKey: key)
                case .firstWins: break
                case .reject:
                    throw JSONParseFailure(
                        code: .malformedInput, reason: "the member name \"\(key)\" appears twice",
                        offset: names.base[frame.keyStart + i].start)
                }
            } else {
                object.append(key, values.base[frame.valueStart + i])
            }
        }
        names.removeAll(from: frame.keyStart)
        values.removeAll(from: frame.valueStart)
        return object
    }

    /// Whether the names from `keyStart` up are all plain ASCII without escapes (so equal names are equal
    /// bytes).
    private func allPlain(from keyStart: Int) -> Bool {
        var i = keyStart
        while i < keyTop {
            if names.base[i].length < 0 { return false }
            i += 1
        }
        return true
    }

    /// Compares the plain names of a small object pairwise, byte for byte (lengths first).
    private func hasDuplicateKey(from keyStart: Int) -> Bool {
        let end = keyTop
        let names = names.base
        var i = keyStart
        while i < end {
            let length = names[i].length
            let name = bytes + names[i].start + 1
            var j = keyStart
            while j < i {
                if names[j].length == length {
                    let other = bytes + names[j].start + 1
                    var k = 0
                    while k < length && name[k] == other[k] { k += 1 }
                    if k == length { return true }
                }
                j += 1
            }
            i += 1
        }
        return false
    }

    /// Reads `"name"` and the following `:` onto the name stacks (the cursor is at the opening quote).
    private mutating func parseMemberName() throws(JSONParseFailure) {
        guard pos < count else { throw fail("unexpected end of input in an object") }
        guard bytes[pos] == UInt8(ascii: "\"") else {
            if bytes[pos] == UInt8(ascii: "}") { throw fail("a trailing comma before '}' is not allowed") }
            throw fail("expected a member name in double quotes, found \(describe(bytes[pos]))")
        }
        let start = pos
        let name = try parseString()
        let length = lastStringIsNotPlainASCII ? -1 : pos - start - 2
        names.push(MemberName(name: name, start: start, length: length))
        skipWhitespace()
        guard pos < count, bytes[pos] == UInt8(ascii: ":") else {
            throw fail(pos < count ? "expected ':' after a member name, found \(describe(bytes[pos]))"
                : "unexpected end of input after a member name")
        }
        pos += 1
    }

    @inline(__always)
    private mutating func skipWhitespace() {
        while pos < count {
            switch bytes[pos] {
            case UInt8(ascii: " "), UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: "\t"): pos += 1
            default: return
            }
        }
    }

    private mutating func expectLiteral(_ literal: StaticString) throws(JSONParseFailure) {
        let n = literal.utf8CodeUnitCount
        let text = literal.utf8Start
        for i in 0..<n {
            guard pos + i < count, bytes[pos + i] == text[i] else {
                throw fail(pos + i < count ? "invalid literal; expected '\(literal)'" : "unexpected end of input in a literal")
            }
        }
        pos += n
    }

    // MARK: - Strings

    /// Parses a string; the cursor is at the opening quote and ends after the closing quote.
    private mutating func parseString() throws(JSONParseFailure) -> String {
        lastStringIsNotPlainASCII = false
        pos += 1
        let begin = pos
        var p = pos
        while true {
            // Eight bytes at a time, straight to the first one that needs attention.
            if p + 8 <= count {
                let lanes = JSONLanes.attention(UnsafeRawPointer(bytes + p).loadUnaligned(as: UInt64.self))
                if lanes == 0 {
                    p += 8
                    continue
                }
                p += JSONLanes.first(lanes)
            }
            guard p < count else {
                pos = p
                throw fail("unterminated string")
            }
            let b = bytes[p]
            if b == UInt8(ascii: "\"") {
                if p - begin > limits.maximumStringLength {
                    throw limitFailure("a string is longer", "maximumStringLength", limits.maximumStringLength, at: begin - 1)
                }
                pos = p + 1
                if p - begin <= 15 { return shortString(begin, p - begin) }
                return String(decoding: UnsafeBufferPointer(start: bytes + begin, count: p - begin), as: UTF8.self)
            } else if b == UInt8(ascii: "\\") {
                lastStringIsNotPlainASCII = true
                return try parseEscapedString(begin: begin, from: p)
            } else if b < 0x20 {
                pos = p
                throw fail("unescaped control character \(describe(b)) in a string")
            } else if b >= 0x80 {
                lastStringIsNotPlainASCII = true
                p = try validateUTF8Sequence(at: p)
            } else {
                p += 1
            }
        }
    }

    /// A string of at most 15 valid UTF-8 bytes, which `String` stores inline (a "small string", no
    /// allocation): built from its bytes without validating them again when ``buildsSmallStrings``.
    @inline(__always)
    private func shortString(_ begin: Int, _ length: Int) -> String {
        #if _endian(little) && _pointerBitWidth(_64)
        if buildsSmallStrings {
            var low: UInt64 = 0
            var high: UInt64 = 0
            if begin + 16 <= count {
                // Two loads and masks.
                let raw = UnsafeRawPointer(bytes + begin)
                low = raw.loadUnaligned(as: UInt64.self)
                high = raw.loadUnaligned(fromByteOffset: 8, as: UInt64.self)
                if length < 8 {
                    low &= (1 &<< UInt64(truncatingIfNeeded: 8 * length)) &- 1
                    high = 0
                } else {
                    high &= (1 &<< UInt64(truncatingIfNeeded: 8 * (length - 8))) &- 1
                }
            } else {
                withUnsafeMutableBytes(of: &low) { low in
                    withUnsafeMutableBytes(of: &high) { high in
                        for i in 0..<length {
                            if i < 8 { low[i] = bytes[begin + i] } else { high[i - 8] = bytes[begin + i] }
                        }
                    }
                }
            }
            return Self.smallString(low, high, count: length, isASCII: !lastStringIsNotPlainASCII)
        }
        #endif
        return String(decoding: UnsafeBufferPointer(start: bytes + begin, count: length), as: UTF8.self)
    }

    /// The small `String` of the `count` (at most 15) valid UTF-8 bytes in `low` and `high` (little-endian,
    /// the rest zero): the standard library's inline layout on 64-bit platforms, the bytes followed by a
    /// discriminator byte (small, immortal, ASCII or not) holding the count. ``smallStringsFromBits``
    /// checks that layout against strings the standard library builds before the parser relies on it.
    /// `package`: the schema-less protobuf decoder builds its short strings the same way.
    @inlinable
    package static func smallString(_ low: UInt64, _ high: UInt64, count: Int, isASCII: Bool) -> String {
        let discriminator: UInt64 = (isASCII ? 0xE0 : 0xA0) | UInt64(truncatingIfNeeded: count)
        var bits = (low, high | discriminator &<< 56)
        // Moved out of the bits, not bit-cast from them: a bit cast retains its result, and a small string has
        // nothing to retain (the retain was a call into the runtime per string).
        return withUnsafeMutablePointer(to: &bits) { bits in
            bits.withMemoryRebound(to: String.self, capacity: 1) { $0.move() }
        }
    }

    /// Whether ``smallString(_:_:count:isASCII:)`` builds exactly the strings the standard library builds
    /// (compared bit for bit, never used as strings unless equal), ASCII and not, empty to 15 bytes.
    /// `package` for the schema-less protobuf decoder (CourierCodecs).
    package static let smallStringsFromBits: Bool = {
        #if _endian(little) && _pointerBitWidth(_64)
        let samples: [[UInt8]] = [[], Array("a".utf8), Array("0123456789abcde".utf8), Array("zoë".utf8), Array("é€😀".utf8)]
        for sample in samples {
            var low: UInt64 = 0
            var high: UInt64 = 0
            withUnsafeMutableBytes(of: &low) { low in
                withUnsafeMutableBytes(of: &high) { high in
                    for (i, byte) in sample.enumerated() {
                        if i < 8 { low[i] = byte } else { high[i - 8] = byte }
                    }
                }
            }
            let isASCII = sample.allSatisfy { $0 < 0x80 }
            let discriminator: UInt64 = (isASCII ? 0xE0 : 0xA0) | UInt64(sample.count)
            let expected = (low, high | discriminator << 56)
            let built = unsafeBitCast(String(decoding: sample, as: UTF8.self), to: (UInt64, UInt64).self)
            guard built == expected else { return false }
        }
        return true
        #else
        return false
        #endif
    }()

    /// Checks one multi-byte UTF-8 sequence starting at `p`; returns the offset after it.
    @inline(__always)
    private mutating func validateUTF8Sequence(at p: Int) throws(JSONParseFailure) -> Int {
        let b0 = bytes[p]
        @inline(__always) func continuation(_ i: Int, _ low: UInt8 = 0x80, _ high: UInt8 = 0xBF) -> Bool {
            i < count && bytes[i] >= low && bytes[i] <= high
        }
        let ok: Bool
        let length: Int
        switch b0 {
        case 0xC2...0xDF:
            length = 2
            ok = continuation(p + 1)
        case 0xE0:
            length = 3
            ok = continuation(p + 1, 0xA0) && continuation(p + 2)
        case 0xE1...0xEC, 0xEE...0xEF:
            length = 3
            ok = continuation(p + 1) && continuation(p + 2)
        case 0xED:
            length = 3
            ok = continuation(p + 1, 0x80, 0x9F) && continuation(p + 2)
        case 0xF0:
            length = 4
            ok = continuation(p + 1, 0x90) && continuation(p + 2) && continuation(p + 3)
        case 0xF1...0xF3:
            length = 4
            ok = continuation(p + 1) && continuation(p + 2) && continuation(p + 3)
        case 0xF4:
            length = 4
            ok = continuation(p + 1, 0x80, 0x8F) && continuation(p + 2) && continuation(p + 3)
        default:
            length = 1
            ok = false
        }
        guard ok else {
            throw JSONParseFailure(code: .invalidUTF8, reason: "invalid UTF-8 byte sequence in a string", offset: p)
        }
        return p + length
    }

    /// The slow path for strings with escapes: decodes into the scratch buffer.
    private mutating func parseEscapedString(begin: Int, from start: Int) throws(JSONParseFailure) -> String {
        scratch.removeAll(keepingCapacity: true)
        scratch.append(contentsOf: UnsafeBufferPointer(start: bytes + begin, count: start - begin))
        var p = start
        while true {
            guard p < count else {
                pos = p
                throw fail("unterminated string")
            }
            if scratch.count > limits.maximumStringLength {
                throw limitFailure("a string is longer", "maximumStringLength", limits.maximumStringLength, at: begin - 1)
            }
            let b = bytes[p]
            switch b {
            case UInt8(ascii: "\""):
                pos = p + 1
                return String(decoding: scratch, as: UTF8.self)
            case UInt8(ascii: "\\"):
                guard p + 1 < count else {
                    pos = p + 1
                    throw fail("unterminated string")
                }
                let e = bytes[p + 1]
                p += 2
                switch e {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): scratch.append(e)
                case UInt8(ascii: "b"): scratch.append(0x08)
                case UInt8(ascii: "f"): scratch.append(0x0C)
                case UInt8(ascii: "n"): scratch.append(0x0A)
                case UInt8(ascii: "r"): scratch.append(0x0D)
                case UInt8(ascii: "t"): scratch.append(0x09)
                case UInt8(ascii: "u"):
                    let escapeStart = p - 2
                    var scalar = try hex4(at: p)
                    p += 4
                    if scalar >= 0xD800 && scalar <= 0xDBFF {
                        guard p + 1 < count, bytes[p] == UInt8(ascii: "\\"), bytes[p + 1] == UInt8(ascii: "u") else {
                            throw JSONParseFailure(
                                code: .malformedInput, reason: "a high surrogate \\u escape is not followed by a low one",
                                offset: escapeStart)
                        }
                        let low = try hex4(at: p + 2)
                        guard low >= 0xDC00 && low <= 0xDFFF else {
                            throw JSONParseFailure(
                                code: .malformedInput, reason: "a high surrogate \\u escape is not followed by a low one",
                                offset: escapeStart)
                        }
                        p += 6
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    } else if scalar >= 0xDC00 && scalar <= 0xDFFF {
                        throw JSONParseFailure(
                            code: .malformedInput, reason: "a lone low surrogate \\u escape", offset: escapeStart)
                    }
                    appendUTF8(scalar)
                default:
                    pos = p - 1
                    throw fail("invalid escape '\\\(describe(e))' in a string")
                }
            default:
                if b < 0x20 {
                    pos = p
                    throw fail("unescaped control character \(describe(b)) in a string")
                }
                let next = b >= 0x80 ? try validateUTF8Sequence(at: p) : p + 1
                scratch.append(contentsOf: UnsafeBufferPointer(start: bytes + p, count: next - p))
                p = next
            }
        }
    }

    private mutating func hex4(at p: Int) throws(JSONParseFailure) -> UInt32 {
        var v: UInt32 = 0
        for i in 0..<4 {
            guard p + i < count else {
                pos = p + i
                throw fail("unterminated \\u escape")
            }
            let c = bytes[p + i]
            let digit: UInt8
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = c &- UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = c &- UInt8(ascii: "a") &+ 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = c &- UInt8(ascii: "A") &+ 10
            default:
                pos = p + i
                throw fail("invalid hexadecimal digit in a \\u escape")
            }
            v = v << 4 | UInt32(digit)
        }
        return v
    }

    private mutating func appendUTF8(_ scalar: UInt32) {
        switch scalar {
        case 0..<0x80:
            scratch.append(UInt8(scalar))
        case 0x80..<0x800:
            scratch.append(UInt8(0xC0 | scalar >> 6))
            scratch.append(UInt8(0x80 | scalar & 0x3F))
        case 0x800..<0x10000:
            scratch.append(UInt8(0xE0 | scalar >> 12))
            scratch.append(UInt8(0x80 | scalar >> 6 & 0x3F))
            scratch.append(UInt8(0x80 | scalar & 0x3F))
        default:
            scratch.append(UInt8(0xF0 | scalar >> 18))
            scratch.append(UInt8(0x80 | scalar >> 12 & 0x3F))
            scratch.append(UInt8(0x80 | scalar >> 6 & 0x3F))
            scratch.append(UInt8(0x80 | scalar & 0x3F))
        }
    }

    // MARK: - Numbers

    private static let powersOfTen: [Double] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18,
        1e19, 1e20, 1e21, 1e22,
    ]

    /// Parses a number: exact integers as `.int`/`.uint`, decimals as `.double` when the double
    /// reproduces the text's value exactly, everything else as `.number` with its lexical form.
    private mutating func parseNumber() throws(JSONParseFailure) -> Value {
        let (value, end) = try Self.number(bytes, count: count, at: pos, maximumLength: limits.maximumNumberLength)
        pos = end
        return value
    }

    /// The offset after the number that starts at `begin` by RFC 8259's grammar (`-? (0 | [1-9][0-9]*)
    /// (. [0-9]+)? ([eE] [+-]? [0-9]+)?`), or `nil` when no number starts there. Checks the text only: the
    /// typed decoder's scan and `JSONWriter.isJSONNumber` use it; ``number(_:count:at:maximumLength:)`` reads
    /// the value as it goes.
    static func numberEnd(_ bytes: UnsafePointer<UInt8>, count: Int, at begin: Int) -> Int? {
        @inline(__always) func isDigit(_ c: UInt8) -> Bool { c &- UInt8(ascii: "0") < 10 }
        @inline(__always) func digits(_ p: inout Int) -> Bool {
            guard p < count, isDigit(bytes[p]) else { return false }
            repeat { p += 1 } while p < count && isDigit(bytes[p])
            return true
        }
        var p = begin
        if p < count, bytes[p] == UInt8(ascii: "-") { p += 1 }
        guard p < count else { return nil }
        if bytes[p] == UInt8(ascii: "0") {
            p += 1
            if p < count, isDigit(bytes[p]) { return nil }
        } else if !digits(&p) {
            return nil
        }
        if p < count, bytes[p] == UInt8(ascii: ".") {
            p += 1
            guard digits(&p) else { return nil }
        }
        if p < count, bytes[p] | 0x20 == UInt8(ascii: "e") {
            p += 1
            if p < count, bytes[p] == UInt8(ascii: "+") || bytes[p] == UInt8(ascii: "-") { p += 1 }
            guard digits(&p) else { return nil }
        }
        return p
    }

    /// Parses the number starting at `begin` (a `-` or a digit); returns it and the offset after it.
    /// Shared by the parser and the typed decoder (``JSONTape``), so both read numbers identically.
    static func number(
        _ bytes: UnsafePointer<UInt8>, count: Int, at begin: Int, maximumLength: Int
    ) throws(JSONParseFailure) -> (value: Value, end: Int) {
        @inline(__always) func isDigit(_ c: UInt8) -> Bool { c &- UInt8(ascii: "0") < 10 }
        @inline(__always) func fail(_ reason: String, _ offset: Int) -> JSONParseFailure {
            JSONParseFailure(code: .malformedInput, reason: reason, offset: offset)
        }
        @inline(__always) func lexical(_ begin: Int, _ end: Int) -> String {
            String(decoding: UnsafeBufferPointer(start: bytes + begin, count: end - begin), as: UTF8.self)
        }
        var p = begin
        let negative = bytes[p] == UInt8(ascii: "-")
        if negative { p += 1 }
        guard p < count, isDigit(bytes[p]) else {
            throw fail(p < count ? "expected a digit after '-'" : "unexpected end of input in a number", p)
        }
        var mantissa: UInt64 = 0
        var significantDigits = 0  // digits after leading zeros, integer and fraction parts
        var overflow = false
        @inline(__always) func accumulate(_ c: UInt8) {
            let d = UInt64(c &- UInt8(ascii: "0"))
            if significantDigits == 0 && d == 0 { return }
            significantDigits += 1
            if significantDigits > 19 {
                let (m, o1) = mantissa.multipliedReportingOverflow(by: 10)
                let (s, o2) = m.addingReportingOverflow(d)
                if o1 || o2 { overflow = true } else { mantissa = s }
            } else {
                mantissa = mantissa &* 10 &+ d
            }
        }
        if bytes[p] == UInt8(ascii: "0") {
            p += 1
            if p < count, isDigit(bytes[p]) {
                throw fail("leading zeros are not allowed in a number", p)
            }
        } else {
            while p < count, isDigit(bytes[p]) {
                accumulate(bytes[p])
                p += 1
            }
        }
        var isInteger = true
        var fractionDigits = 0
        if p < count, bytes[p] == UInt8(ascii: ".") {
            isInteger = false
            p += 1
            guard p < count, isDigit(bytes[p]) else {
                throw fail("expected a digit after the decimal point", p)
            }
            while p < count, isDigit(bytes[p]) {
                accumulate(bytes[p])
                fractionDigits += 1
                p += 1
            }
        }
        var exponent = 0
        if p < count, bytes[p] == UInt8(ascii: "e") || bytes[p] == UInt8(ascii: "E") {
            isInteger = false
            p += 1
            var exponentNegative = false
            if p < count, bytes[p] == UInt8(ascii: "+") || bytes[p] == UInt8(ascii: "-") {
                exponentNegative = bytes[p] == UInt8(ascii: "-")
                p += 1
            }
            guard p < count, isDigit(bytes[p]) else {
                throw fail("expected a digit in the exponent", p)
            }
            while p < count, isDigit(bytes[p]) {
                if exponent < 1_000_000_000 { exponent = exponent * 10 + Int(bytes[p] &- UInt8(ascii: "0")) }
                p += 1
            }
            if exponentNegative { exponent = -exponent }
        }
        if p - begin > maximumLength {
            throw JSONParseFailure(
                code: .sizeLimitExceeded,
                reason: "a number is longer than the limit maximumNumberLength = \(maximumLength)", offset: begin)
        }

        if isInteger && !overflow {
            if negative {
                if mantissa <= UInt64(Int64.max) { return (.int(-Int64(mantissa)), p) }
                if mantissa == UInt64(Int64.max) + 1 { return (.int(.min), p) }
            } else {
                return (mantissa <= UInt64(Int64.max) ? .int(Int64(mantissa)) : .uint(mantissa), p)
            }
            return (.number(lexical(begin, p)), p)
        }
        if !isInteger && !overflow {
            let decimalExponent = exponent - fractionDigits
            if mantissa == 0 { return (.double(negative ? -0.0 : 0.0), p) }
            // Clinger's fast path: both operands exact, one correctly rounded operation. With at most 15
            // significant digits the double's shortest form is the text's value again.
            if significantDigits <= 15 && decimalExponent >= -22 && decimalExponent <= 22 {
                var d = Double(mantissa)
                if decimalExponent < 0 {
                    d /= Self.powersOfTen[-decimalExponent]
                } else {
                    d *= Self.powersOfTen[decimalExponent]
                }
                return (.double(negative ? -d : d), p)
            }
        }
        // Slow path: the text becomes a double only if the double's shortest form has the same digits.
        let text = lexical(begin, p)
        if !isInteger, let d = Double(text), d.isFinite,
            let fromText = ExactDecimal(lexical: text), ExactDecimal(lexical: d.description) == fromText
        {
            return (.double(d), p)
        }
        return (.number(text), p)
    }

    @inline(__always)
    private func isDigit(_ c: UInt8) -> Bool { c &- UInt8(ascii: "0") < 10 }

    private func lexical(_ begin: Int, _ end: Int) -> String {
        String(decoding: UnsafeBufferPointer(start: bytes + begin, count: end - begin), as: UTF8.self)
    }

    // MARK: - Errors

    private func fail(_ reason: String) -> JSONParseFailure {
        JSONParseFailure(code: .malformedInput, reason: reason, offset: pos)
    }

    private func describe(_ byte: UInt8) -> String {
        if byte >= 0x21 && byte < 0x7F { return "'\(Character(Unicode.Scalar(byte)))'" }
        let hex = String(byte, radix: 16, uppercase: true)
        return "byte 0x\(hex.count == 1 ? "0" + hex : hex)"
    }

    /// The 1-based line and column (in bytes) of `offset` in `bytes`.
    static func location(of offset: Int, in bytes: UnsafePointer<UInt8>, count: Int) -> (line: Int, column: Int) {
        var line = 1
        var lineStart = 0
        let end = min(offset, count)
        var i = 0
        while i < end {
            if bytes[i] == UInt8(ascii: "\n") {
                line += 1
                lineStart = i + 1
            }
            i += 1
        }
        return (line, end - lineStart + 1)
    }
}
