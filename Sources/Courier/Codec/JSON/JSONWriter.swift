// Writes a `Value` as JSON text into a growable raw byte buffer (``JSONOutput``).

/// The owner of a ``JSONOutput``'s memory: frees it when the last copy of the output is gone.
final class JSONOutputStorage {
    var base: UnsafeMutablePointer<UInt8>

    init(capacity: Int) {
        base = .allocate(capacity: capacity)
    }

    deinit {
        base.deallocate()
    }
}

/// A growable byte buffer in raw memory: appends check the capacity only (no array uniqueness or bounds
/// checks), which is most of the cost of writing JSON a byte or a short run at a time. Only the one writer
/// that made it appends to it; ``bytes`` copies the text out.
struct JSONOutput {
    private(set) var base: UnsafeMutablePointer<UInt8>
    private(set) var count = 0
    private var capacity: Int
    private let storage: JSONOutputStorage

    init(capacity: Int) {
        let capacity = max(capacity, 16)
        storage = JSONOutputStorage(capacity: capacity)
        base = storage.base
        self.capacity = capacity
    }

    /// The text written so far.
    var bytes: [UInt8] {
        [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            if count > 0 { buffer.baseAddress!.initialize(from: base, count: count) }
            initialized = count
        }
    }

    /// Makes room for `extra` more bytes.
    @inline(__always)
    mutating func reserve(_ extra: Int) {
        if capacity - count < extra { grow(extra) }
    }

    @inline(never)
    private mutating func grow(_ extra: Int) {
        let newCapacity = max(capacity * 2, count + extra)
        let newBase = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
        newBase.initialize(from: base, count: count)
        base.deallocate()
        storage.base = newBase
        base = newBase
        capacity = newCapacity
    }

    @inline(__always)
    mutating func append(_ byte: UInt8) {
        reserve(1)
        base[count] = byte
        count += 1
    }

    /// Appends `byte` where ``reserve(_:)`` made room.
    @inline(__always)
    mutating func appendReserved(_ byte: UInt8) {
        base[count] = byte
        count += 1
    }

    @inline(__always)
    mutating func append(contentsOf bytes: UnsafeBufferPointer<UInt8>) {
        reserve(bytes.count)
        if let source = bytes.baseAddress { (base + count).initialize(from: source, count: bytes.count) }
        count += bytes.count
    }

    /// Counts `n` bytes written straight at `base + count`, where ``reserve(_:)`` made room.
    @inline(__always)
    mutating func advance(by n: Int) {
        count += n
    }

    /// Appends `bytes` where ``reserve(_:)`` made room.
    @inline(__always)
    mutating func appendReserved(_ bytes: UnsafePointer<UInt8>, count n: Int) {
        (base + count).initialize(from: bytes, count: n)
        count += n
    }
}

struct JSONWriter {
    var output: JSONOutput
    private let pretty: Bool
    private let sortedKeys: Bool
    private let escapeSlashes: Bool
    private let maximumDepth: Int
    /// For display (``Value/description``): writes what JSON cannot hold instead of throwing — non-finite
    /// doubles as `NaN`, `Infinity` and `-Infinity`, a malformed ``Value/number(_:)`` as a string, containers
    /// deeper than ``displayDepth`` as `[…]` and `{…}`.
    private var lenient = false
    /// The deepest containers ``display(_:)`` writes out (the stack, not the reader, is the limit).
    static let displayDepth = 128

    init(options: JSONCodec.Options, capacity: Int = 1024) {
        pretty = options.pretty
        sortedKeys = options.sortedKeys
        escapeSlashes = options.escapeSlashes
        maximumDepth = options.maximumDepth
        output = JSONOutput(capacity: capacity)
    }

    /// `value` as compact JSON text for people (see ``lenient``); never fails.
    static func display(_ value: Value) -> String {
        var options = JSONCodec.Options()
        options.maximumDepth = displayDepth
        var writer = JSONWriter(options: options, capacity: 64)
        writer.lenient = true
        do {
            try writer.write(value)
        } catch {
            return "<\(error)>"
        }
        return String(decoding: writer.output.bytes, as: UTF8.self)
    }

    /// Writes `value`; the coding path is rebuilt only when an error is thrown.
    mutating func write(_ value: Value) throws(CourierError) {
        try write(value, depth: 0)
    }

    mutating func write(_ value: Value, depth: Int) throws(CourierError) {
        switch value {
        case .null: append("null")
        case .bool(let b): append(b ? "true" : "false")
        case .int(let i):
            if i < 0 {
                output.append(UInt8(ascii: "-"))
                writeDigits(i.magnitude)
            } else {
                writeDigits(UInt64(i))
            }
        case .uint(let u): writeDigits(u)
        case .double(let d):
            guard d.isFinite else {
                if lenient {
                    var text = d.isNaN ? "NaN" : d < 0 ? "-Infinity" : "Infinity"
                    text.withUTF8 { output.append(contentsOf: $0) }
                    return
                }
                throw CourierError(.encodingFailed, detail: "JSON cannot represent the number \(d)")
            }
            var text = d.description
            text.withUTF8 { output.append(contentsOf: $0) }
        case .number(let text):
            guard Self.isJSONNumber(text) else {
                if lenient {
                    writeString(text)
                    return
                }
                throw CourierError(.encodingFailed, detail: "\"\(text)\" is not a JSON number")
            }
            var text = text
            text.withUTF8 { output.append(contentsOf: $0) }
        case .string(let s): writeString(s)
        case .bytes(let b):
            var text: [UInt8] = [UInt8(ascii: "\"")]
            Base64.encode(b, into: &text)
            text.append(UInt8(ascii: "\""))
            text.withUnsafeBufferPointer { output.append(contentsOf: $0) }
        case .array(let elements):
            guard depth < maximumDepth else {
                if lenient { return append("[…]") }
                throw depthError()
            }
            if elements.isEmpty {
                append("[]")
                return
            }
            output.append(UInt8(ascii: "["))
            for (i, element) in elements.enumerated() {
                if i > 0 { output.append(UInt8(ascii: ",")) }
                if pretty { newline(depth + 1) }
                do {
                    try write(element, depth: depth + 1)
                } catch {
                    throw prefixed(error, .index(i))
                }
            }
            if pretty { newline(depth) }
            output.append(UInt8(ascii: "]"))
        case .object(let object):
            guard depth < maximumDepth else {
                if lenient { return append("{…}") }
                throw depthError()
            }
            if object.isEmpty {
                append("{}")
                return
            }
            output.append(UInt8(ascii: "{"))
            if sortedKeys {
                try object.sortedByKey().withMembers { (keys, values) throws(CourierError) in
                    try writeMembers(keys, values, depth: depth)
                }
            } else {
                // Read in place from `value`, without copying the object out of it.
                try value.withObjectMembers { (keys, values) throws(CourierError) in
                    try writeMembers(keys, values, depth: depth)
                }
            }
            if pretty { newline(depth) }
            output.append(UInt8(ascii: "}"))
        }
    }

    /// Writes an object's members (`keys` and their `values`), between its braces.
    private mutating func writeMembers(
        _ keys: UnsafeBufferPointer<String>, _ values: UnsafeBufferPointer<Value>, depth: Int
    ) throws(CourierError) {
        for i in keys.indices {
            if i > 0 { output.append(UInt8(ascii: ",")) }
            if pretty { newline(depth + 1) }
            writeString(keys[i])
            output.append(UInt8(ascii: ":"))
            if pretty { output.append(UInt8(ascii: " ")) }
            do {
                try write(values[i], depth: depth + 1)
            } catch {
                throw prefixed(error, .key(keys[i]))
            }
        }
    }

    private func depthError() -> CourierError {
        CourierError(.depthLimitExceeded, detail: "the value is nested deeper than \(maximumDepth) levels")
    }

    private func prefixed(_ error: CourierError, _ component: PathComponent) -> CourierError {
        var error = error
        error.context.codingPath.insert(component, at: 0)
        return error
    }

    @inline(__always)
    mutating func append(_ text: StaticString) {
        output.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    mutating func newline(_ depth: Int) {
        output.reserve(1 + depth * 2)
        output.appendReserved(UInt8(ascii: "\n"))
        for _ in 0..<depth * 2 { output.appendReserved(UInt8(ascii: " ")) }
    }

    /// Writes `value` in decimal, straight into the output (no `String`).
    mutating func writeDigits(_ value: UInt64) {
        if value < 10 {
            output.append(UInt8(truncatingIfNeeded: value) &+ UInt8(ascii: "0"))
            return
        }
        var length = 1
        var scale: UInt64 = 10
        while length < 20 && value >= scale {
            length += 1
            scale = scale &* 10
        }
        output.reserve(length)
        var v = value
        var i = length
        let end = output.base + output.count
        while i > 0 {
            i -= 1
            (end + i).initialize(to: UInt8(truncatingIfNeeded: v % 10) &+ UInt8(ascii: "0"))
            v /= 10
        }
        output.advance(by: length)
    }

    /// Writes `string` in quotes, escaped. A string that needs no escape (most do not) is found so eight
    /// bytes at a time and copied whole.
    mutating func writeString(_ string: String) {
        var string = string
        string.withUTF8 { utf8 in
            let n = utf8.count
            output.reserve(n + 2)
            output.appendReserved(UInt8(ascii: "\""))
            if let p = utf8.baseAddress {
                if isPlain(p, n) {
                    output.appendReserved(p, count: n)
                } else {
                    writeEscaped(p, n)
                    output.reserve(1)
                }
            }
            output.appendReserved(UInt8(ascii: "\""))
        }
    }

    /// Whether the `n` bytes at `p` need no escape.
    @inline(__always)
    private func isPlain(_ p: UnsafePointer<UInt8>, _ n: Int) -> Bool {
        var i = 0
        while i + 8 <= n {
            if Self.needsEscape(UnsafeRawPointer(p + i).loadUnaligned(as: UInt64.self), escapeSlashes) { return false }
            i += 8
        }
        guard i < n else { return true }
        // The last few bytes, padded with spaces (which need no escape).
        var tail: UInt64 = 0x2020_2020_2020_2020
        withUnsafeMutableBytes(of: &tail) { $0.baseAddress!.copyMemory(from: p + i, byteCount: n - i) }
        return !Self.needsEscape(tail, escapeSlashes)
    }

    /// Writes the `n` bytes at `p` escaped (the slow path of ``writeString(_:)``).
    private mutating func writeEscaped(_ p: UnsafePointer<UInt8>, _ n: Int) {
        var runStart = 0
        for i in 0..<n {
            let b = p[i]
            guard b < 0x20 || b == UInt8(ascii: "\"") || b == UInt8(ascii: "\\") || (b == UInt8(ascii: "/") && escapeSlashes)
            else { continue }
            output.append(contentsOf: UnsafeBufferPointer(start: p + runStart, count: i - runStart))
            writeEscape(b)
            runStart = i + 1
        }
        output.append(contentsOf: UnsafeBufferPointer(start: p + runStart, count: n - runStart))
    }

    /// Whether any of the eight bytes is `"`, `\\`, a control character, or `/` when `slashes`.
    @inline(__always)
    private static func needsEscape(_ x: UInt64, _ slashes: Bool) -> Bool {
        var lanes = JSONLanes.equal(x, UInt8(ascii: "\"")) | JSONLanes.equal(x, UInt8(ascii: "\\")) | JSONLanes.below(x, 0x20)
        if slashes { lanes |= JSONLanes.equal(x, UInt8(ascii: "/")) }
        return lanes != 0
    }

    /// Writes the escape of `b` (a control character, `"`, `\` or `/`).
    private mutating func writeEscape(_ b: UInt8) {
        let escape: UInt8
        switch b {
        case 0x0A: escape = UInt8(ascii: "n")
        case 0x0D: escape = UInt8(ascii: "r")
        case 0x09: escape = UInt8(ascii: "t")
        case 0x08: escape = UInt8(ascii: "b")
        case 0x0C: escape = UInt8(ascii: "f")
        case 0..<0x20: escape = UInt8(ascii: "u")
        default: escape = b
        }
        output.reserve(6)
        output.appendReserved(UInt8(ascii: "\\"))
        output.appendReserved(escape)
        if escape == UInt8(ascii: "u") {
            let hex = StaticString("0123456789abcdef").utf8Start
            output.appendReserved(UInt8(ascii: "0"))
            output.appendReserved(UInt8(ascii: "0"))
            output.appendReserved(hex[Int(b >> 4)])
            output.appendReserved(hex[Int(b & 0xF)])
        }
    }

    /// Whether `text` follows the JSON number grammar.
    static func isJSONNumber(_ text: String) -> Bool {
        var text = text
        return text.withUTF8 { utf8 in
            guard let base = utf8.baseAddress else { return false }
            return JSONParser.numberEnd(base, count: utf8.count, at: 0) == utf8.count
        }
    }
}

/// Standard base64 (RFC 4648 §4, with padding), for `.bytes` in textual formats.
enum Base64 {
    private static let alphabet: [UInt8] = Array(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    static func encode(_ bytes: [UInt8], into output: inout [UInt8]) {
        output.reserveCapacity(output.count + (bytes.count + 2) / 3 * 4)
        var i = 0
        while i + 3 <= bytes.count {
            let n = UInt32(bytes[i]) << 16 | UInt32(bytes[i + 1]) << 8 | UInt32(bytes[i + 2])
            output.append(alphabet[Int(n >> 18 & 63)])
            output.append(alphabet[Int(n >> 12 & 63)])
            output.append(alphabet[Int(n >> 6 & 63)])
            output.append(alphabet[Int(n & 63)])
            i += 3
        }
        let rest = bytes.count - i
        if rest > 0 {
            let n = UInt32(bytes[i]) << 16 | (rest == 2 ? UInt32(bytes[i + 1]) << 8 : 0)
            output.append(alphabet[Int(n >> 18 & 63)])
            output.append(alphabet[Int(n >> 12 & 63)])
            output.append(rest == 2 ? alphabet[Int(n >> 6 & 63)] : UInt8(ascii: "="))
            output.append(UInt8(ascii: "="))
        }
    }

    static func encode(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        encode(bytes, into: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// Decodes standard or URL-safe base64, padded or not; ignores no other characters.
    static func decode(_ text: String) -> [UInt8]? {
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count / 4 * 3)
        var accumulator: UInt32 = 0
        var bits = 0
        var padding = 0
        for c in text.utf8 {
            let v: UInt32
            switch c {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): v = UInt32(c - UInt8(ascii: "A"))
            case UInt8(ascii: "a")...UInt8(ascii: "z"): v = UInt32(c - UInt8(ascii: "a") + 26)
            case UInt8(ascii: "0")...UInt8(ascii: "9"): v = UInt32(c - UInt8(ascii: "0") + 52)
            case UInt8(ascii: "+"), UInt8(ascii: "-"): v = 62
            case UInt8(ascii: "/"), UInt8(ascii: "_"): v = 63
            case UInt8(ascii: "="):
                padding += 1
                continue
            default: return nil
            }
            guard padding == 0 else { return nil }
            accumulator = accumulator << 6 | v
            bits += 6
            if bits >= 8 {
                bits -= 8
                out.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
            }
        }
        // Leftover bits must be zero padding; a single leftover character (6 bits) is invalid.
        guard bits < 6, accumulator & ((1 << UInt32(bits)) - 1) == 0, padding <= 2 else { return nil }
        return out
    }
}
