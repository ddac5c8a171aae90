// A structural index of a JSON document for the typed decoder: one validating pass records every
// token (kind, byte offsets, and for containers the tape index after them and their element count),
// so the decoder can read members in place, skip whole containers and look keys up by their raw bytes.
//
// The scanner is deliberately conservative: it accepts only input that `JSONParser` accepts within the
// same limits and without repeated member names. Whenever it is not sure (a syntax error, a limit
// reached, a repeated or possibly repeated name), it returns `nil` and the caller takes the `Value`
// path, which then gives the exact error, or applies the duplicate-key policy, by construction.

/// One token of a ``JSONTape``, in 16 bytes: the kind and two flags share a word with the start offset.
struct JSONToken {
    enum Kind: UInt8 {
        case object, array, string, number, `true`, `false`, null
    }

    /// Bits 0–26 the start offset, bit 27 ``exotic``, bit 28 ``escaped``, bits 29–31 the kind.
    private var packed: UInt32
    /// Strings: the offset of the closing quote. Numbers and literals: the offset after the token.
    /// Containers: the offset after the closing bracket.
    var end: UInt32
    /// The tape index after this token and everything inside it.
    var next: UInt32
    /// Containers: the number of elements (arrays) or members (objects).
    var count: UInt32

    /// Offsets stay below this bound (128 MiB); larger input takes the Value path.
    static let offsetLimit = 1 << 27

    init(kind: Kind, escaped: Bool, exotic: Bool, start: UInt32, end: UInt32, next: UInt32, count: UInt32) {
        packed = start | UInt32(kind.rawValue) << 29 | (escaped ? 1 << 28 : 0) | (exotic ? 1 << 27 : 0)
        self.end = end
        self.next = next
        self.count = count
    }

    /// The offset of the token's first byte (`{`, `[`, `"`, `-`, a digit or a letter).
    var start: UInt32 { packed & (1 << 27 - 1) }
    var kind: Kind { Kind(rawValue: UInt8(truncatingIfNeeded: packed >> 29)) ?? .null }
    /// Strings: whether the text between the quotes holds a `\` escape.
    var escaped: Bool { packed & 1 << 28 != 0 }
    /// Strings: whether the text holds an escape or a non-ASCII byte (names compared as `String`s).
    var exotic: Bool { packed & 1 << 27 != 0 }
}

/// The tape of a whole document (member names precede their values).
enum JSONTape {
    /// Scans `bytes` into tokens, or returns `nil` when the document is not certainly accepted by
    /// ``JSONParser`` within `limits` with every member name unique in its object.
    static func scan(_ bytes: UnsafePointer<UInt8>, count: Int, limits: DecodingLimits) -> [JSONToken]? {
        guard count > 0, count < JSONToken.offsetLimit else { return nil }
        var scanner = Scanner(bytes: bytes, count: count, limits: limits)
        return scanner.scan()
    }

    private struct Scanner {
        let bytes: UnsafePointer<UInt8>
        let count: Int
        let limits: DecodingLimits
        var pos = 0
        var tokens: [JSONToken] = []

        init(bytes: UnsafePointer<UInt8>, count: Int, limits: DecodingLimits) {
            self.bytes = bytes
            self.count = count
            self.limits = limits
            tokens.reserveCapacity(min(count / 8 + 16, 1 << 20))
        }

        @inline(__always)
        mutating func skipWhitespace() {
            while pos < count {
                switch bytes[pos] {
                case UInt8(ascii: " "), UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: "\t"): pos += 1
                default: return
                }
            }
        }

        @inline(__always)
        mutating func append(_ kind: JSONToken.Kind, start: Int, end: Int, escaped: Bool = false, exotic: Bool = false) {
            let index = tokens.count
            tokens.append(
                JSONToken(
                    kind: kind, escaped: escaped, exotic: exotic, start: UInt32(truncatingIfNeeded: start),
                    end: UInt32(truncatingIfNeeded: end), next: UInt32(truncatingIfNeeded: index + 1), count: 0))
        }

        mutating func scan() -> [JSONToken]? {
            var stack: [Int] = []
            stack.reserveCapacity(16)
            var total = 0
            let maximumDepth = limits.maximumDepth
            let maximumContainerCount = limits.maximumContainerCount
            let maximumTotalValues = limits.maximumTotalValues

            parsing: while true {
                skipWhitespace()
                guard pos < count else { return nil }
                total += 1
                if total > maximumTotalValues { return nil }
                if let top = stack.last {
                    if Int(tokens[top].count) >= maximumContainerCount { return nil }
                    tokens[top].count += 1
                }
                let start = pos
                switch bytes[pos] {
                case UInt8(ascii: "{"):
                    guard stack.count < maximumDepth else { return nil }
                    pos += 1
                    append(.object, start: start, end: 0)
                    skipWhitespace()
                    if pos < count, bytes[pos] == UInt8(ascii: "}") {
                        pos += 1
                        tokens[tokens.count - 1].end = UInt32(truncatingIfNeeded: pos)
                    } else {
                        stack.append(tokens.count - 1)
                        guard memberName() else { return nil }
                        continue parsing
                    }
                case UInt8(ascii: "["):
                    guard stack.count < maximumDepth else { return nil }
                    pos += 1
                    append(.array, start: start, end: 0)
                    skipWhitespace()
                    if pos < count, bytes[pos] == UInt8(ascii: "]") {
                        pos += 1
                        tokens[tokens.count - 1].end = UInt32(truncatingIfNeeded: pos)
                    } else {
                        stack.append(tokens.count - 1)
                        continue parsing
                    }
                case UInt8(ascii: "\""):
                    guard string() else { return nil }
                case UInt8(ascii: "t"):
                    guard literal("true") else { return nil }
                    append(.true, start: start, end: pos)
                case UInt8(ascii: "f"):
                    guard literal("false") else { return nil }
                    append(.false, start: start, end: pos)
                case UInt8(ascii: "n"):
                    guard literal("null") else { return nil }
                    append(.null, start: start, end: pos)
                case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                    guard number() else { return nil }
                    append(.number, start: start, end: pos)
                default:
                    return nil
                }

                // Close the containers that end here.
                while true {
                    guard let top = stack.last else {
                        skipWhitespace()
                        return pos == count ? tokens : nil
                    }
                    skipWhitespace()
                    guard pos < count else { return nil }
                    let c = bytes[pos]
                    let isObject = tokens[top].kind == .object
                    if c == UInt8(ascii: ",") {
                        pos += 1
                        if isObject {
                            skipWhitespace()
                            guard memberName() else { return nil }
                        }
                        continue parsing
                    }
                    guard c == (isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")) else { return nil }
                    pos += 1
                    if isObject, !namesAreUnique(top) { return nil }
                    tokens[top].end = UInt32(truncatingIfNeeded: pos)
                    tokens[top].next = UInt32(truncatingIfNeeded: tokens.count)
                    stack.removeLast()
                }
            }
        }

        /// Reads `"name"` and the `:` after it.
        mutating func memberName() -> Bool {
            guard pos < count, bytes[pos] == UInt8(ascii: "\"") else { return false }
            guard string() else { return false }
            skipWhitespace()
            guard pos < count, bytes[pos] == UInt8(ascii: ":") else { return false }
            pos += 1
            return true
        }

        /// Moves past a number that ``JSONParser/number(_:count:at:maximumLength:)`` accepts (the same
        /// grammar and length limit), without computing its value: the typed decoder reads it when asked.
        mutating func number() -> Bool {
            guard let end = JSONParser.numberEnd(bytes, count: count, at: pos),
                end - pos <= limits.maximumNumberLength
            else { return false }
            pos = end
            return true
        }

        mutating func literal(_ text: StaticString) -> Bool {
            let n = text.utf8CodeUnitCount
            guard pos + n <= count else { return false }
            for i in 0..<n where bytes[pos + i] != text.utf8Start[i] { return false }
            pos += n
            return true
        }

        /// Validates a string (the cursor is at its opening quote) and appends its token.
        mutating func string() -> Bool {
            let start = pos
            var p = pos + 1
            var escaped = false
            var exotic = false
            while true {
                // Eight bytes at a time, straight to the first one that needs attention.
                while p + 8 <= count {
                    let lanes = JSONLanes.attention(UnsafeRawPointer(bytes + p).loadUnaligned(as: UInt64.self))
                    if lanes != 0 {
                        p += JSONLanes.first(lanes)
                        break
                    }
                    p += 8
                }
                guard p < count else { return false }
                let b = bytes[p]
                if b == UInt8(ascii: "\"") { break }
                if b == UInt8(ascii: "\\") {
                    escaped = true
                    guard p + 1 < count else { return false }
                    switch bytes[p + 1] {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
                        UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                        p += 2
                    case UInt8(ascii: "u"):
                        guard let scalar = hex4(p + 2) else { return false }
                        p += 6
                        if scalar >= 0xD800 && scalar <= 0xDBFF {
                            guard p + 1 < count, bytes[p] == UInt8(ascii: "\\"), bytes[p + 1] == UInt8(ascii: "u"),
                                let low = hex4(p + 2), low >= 0xDC00 && low <= 0xDFFF
                            else { return false }
                            p += 6
                        } else if scalar >= 0xDC00 && scalar <= 0xDFFF {
                            return false
                        }
                    default:
                        return false
                    }
                } else if b < 0x20 {
                    return false
                } else if b >= 0x80 {
                    exotic = true
                    guard let next = JSONTape.utf8Sequence(bytes, count: count, at: p) else { return false }
                    p = next
                } else {
                    p += 1
                }
            }
            // Escapes only shorten the text, so the raw length bounds the decoded one.
            guard p - start - 1 <= limits.maximumStringLength else { return false }
            pos = p + 1
            append(.string, start: start, end: p, escaped: escaped, exotic: exotic || escaped)
            return true
        }

        func hex4(_ p: Int) -> UInt32? {
            guard p + 4 <= count else { return nil }
            var v: UInt32 = 0
            for i in 0..<4 {
                let c = bytes[p + i]
                let digit: UInt8
                switch c {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = c &- UInt8(ascii: "0")
                case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = c &- UInt8(ascii: "a") &+ 10
                case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = c &- UInt8(ascii: "A") &+ 10
                default: return nil
                }
                v = v << 4 | UInt32(digit)
            }
            return v
        }

        /// Whether the member names of the object at tape index `object` are all different, the way
        /// ``JSONParser`` compares them: small objects with plain ASCII names byte for byte, others as
        /// `String`s.
        func namesAreUnique(_ object: Int) -> Bool {
            let n = Int(tokens[object].count)
            if n < 2 { return true }
            let bytes = bytes
            let plain: Bool? =
                n > 16
                ? nil
                : tokens.withUnsafeBufferPointer { tape in
                    withUnsafeTemporaryAllocation(of: UInt64.self, capacity: 32) { scratch in
                        JSONTape.plainNamesAreUnique(tape, object: object, count: n, bytes: bytes, scratch: scratch)
                    }
                }
            if let plain { return plain }
            var seen = Set<String>(minimumCapacity: n)
            var k = object + 1
            for _ in 0..<n {
                if !seen.insert(JSONTape.string(tokens[k], bytes)).inserted { return false }
                k = Int(tokens[k + 1].next)
            }
            return true
        }
    }

    /// Whether the `count` (at most half of `scratch.count`) member names of the object at `object` differ
    /// byte for byte, or `nil` when one of them is escaped or not ASCII (those are compared as `String`s). A
    /// fingerprint per name (its length and first seven bytes) settles most pairs; names with equal
    /// fingerprints are compared in full. `scratch` holds the fingerprints, then the names' tape indices.
    static func plainNamesAreUnique(
        _ tape: UnsafeBufferPointer<JSONToken>, object: Int, count n: Int, bytes: UnsafePointer<UInt8>,
        scratch: UnsafeMutableBufferPointer<UInt64>
    ) -> Bool? {
        let half = scratch.count / 2
        var k = object + 1
        for i in 0..<n {
            let token = tape[k]
            if token.exotic { return nil }
            let text = bytes + Int(token.start) + 1
            let length = Int(token.end - token.start) - 1
            var print = UInt64(min(length, 255)) << 56
            for b in 0..<min(length, 7) { print |= UInt64(text[b]) << (b &* 8) }
            for j in 0..<i where scratch[j] == print {
                // Short names are whole in their fingerprint; long ones are compared past their first seven bytes.
                if length < 8 { return false }
                let other = tape[Int(scratch[half + j])]
                if Int(other.end - other.start) - 1 == length,
                    memcmpEqual(text + 7, bytes + Int(other.start) + 8, length - 7)
                {
                    return false
                }
            }
            scratch[i] = print
            scratch[half + i] = UInt64(k)
            k = Int(tape[k + 1].next)
        }
        return true
    }

    @inline(__always)
    static func memcmpEqual(_ a: UnsafePointer<UInt8>, _ b: UnsafePointer<UInt8>, _ n: Int) -> Bool {
        var i = 0
        while i < n {
            if a[i] != b[i] { return false }
            i += 1
        }
        return true
    }

    /// Checks one multi-byte UTF-8 sequence at `p`; the offset after it, or `nil` when it is invalid.
    @inline(__always)
    static func utf8Sequence(_ bytes: UnsafePointer<UInt8>, count: Int, at p: Int) -> Int? {
        @inline(__always) func continuation(_ i: Int, _ low: UInt8 = 0x80, _ high: UInt8 = 0xBF) -> Bool {
            i < count && bytes[i] >= low && bytes[i] <= high
        }
        switch bytes[p] {
        case 0xC2...0xDF:
            return continuation(p + 1) ? p + 2 : nil
        case 0xE0:
            return continuation(p + 1, 0xA0) && continuation(p + 2) ? p + 3 : nil
        case 0xE1...0xEC, 0xEE...0xEF:
            return continuation(p + 1) && continuation(p + 2) ? p + 3 : nil
        case 0xED:
            return continuation(p + 1, 0x80, 0x9F) && continuation(p + 2) ? p + 3 : nil
        case 0xF0:
            return continuation(p + 1, 0x90) && continuation(p + 2) && continuation(p + 3) ? p + 4 : nil
        case 0xF1...0xF3:
            return continuation(p + 1) && continuation(p + 2) && continuation(p + 3) ? p + 4 : nil
        case 0xF4:
            return continuation(p + 1, 0x80, 0x8F) && continuation(p + 2) && continuation(p + 3) ? p + 4 : nil
        default:
            return nil
        }
    }

    /// The text of a validated string token.
    @inline(__always)
    static func string(_ token: JSONToken, _ bytes: UnsafePointer<UInt8>) -> String {
        let begin = Int(token.start) + 1
        let length = Int(token.end) - begin
        if !token.escaped {
            return String(decoding: UnsafeBufferPointer(start: bytes + begin, count: length), as: UTF8.self)
        }
        return unescape(bytes + begin, length)
    }

    /// Decodes the escapes of validated string text.
    static func unescape(_ p: UnsafePointer<UInt8>, _ n: Int) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(n)
        @inline(__always) func hex(_ q: UnsafePointer<UInt8>) -> UInt32 {
            var v: UInt32 = 0
            for i in 0..<4 {
                let c = q[i]
                let digit: UInt8
                switch c {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = c &- UInt8(ascii: "0")
                case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = c &- UInt8(ascii: "a") &+ 10
                default: digit = c &- UInt8(ascii: "A") &+ 10
                }
                v = v << 4 | UInt32(digit)
            }
            return v
        }
        var i = 0
        while i < n {
            let b = p[i]
            guard b == UInt8(ascii: "\\") else {
                out.append(b)
                i += 1
                continue
            }
            let e = p[i + 1]
            i += 2
            switch e {
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "u"):
                var scalar = hex(p + i)
                i += 4
                if scalar >= 0xD800 && scalar <= 0xDBFF {
                    let low = hex(p + i + 2)
                    i += 6
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                }
                switch scalar {
                case 0..<0x80:
                    out.append(UInt8(scalar))
                case 0x80..<0x800:
                    out.append(UInt8(0xC0 | scalar >> 6))
                    out.append(UInt8(0x80 | scalar & 0x3F))
                case 0x800..<0x10000:
                    out.append(UInt8(0xE0 | scalar >> 12))
                    out.append(UInt8(0x80 | scalar >> 6 & 0x3F))
                    out.append(UInt8(0x80 | scalar & 0x3F))
                default:
                    out.append(UInt8(0xF0 | scalar >> 18))
                    out.append(UInt8(0x80 | scalar >> 12 & 0x3F))
                    out.append(UInt8(0x80 | scalar >> 6 & 0x3F))
                    out.append(UInt8(0x80 | scalar & 0x3F))
                }
            default: out.append(e)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}
