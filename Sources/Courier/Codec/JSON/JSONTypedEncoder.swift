#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// The typed JSON encoder: writes an `Encodable` model straight into JSON bytes through a ``JSONWriter``,
// without the intermediate `Value`. It streams: every member is written as the model encodes it. What
// streaming cannot reproduce byte for byte — a member encoded twice (the Value path keeps the first
// position and the last value), nested containers and super encoders (filled after later members), a
// value replaced after it was written — marks the attempt as abandoned, and the caller re-encodes through
// the Value path, as it does for every error, so output and errors are the Value path's own.

/// What all encoders of one typed encode share. Only the encoders of one encoding call touch it, one
/// member at a time, so its exclusivity checks are switched off.
final class JSONTypedEncodingState {
    @exclusivity(unchecked) var writer: JSONWriter
    let options: EncodingOptions
    let pretty: Bool
    let maximumDepth: Int
    /// Set when the output can no longer equal the Value path's: the caller takes the Value path.
    @exclusivity(unchecked) var abandoned = false
    /// The open containers, innermost last.
    @exclusivity(unchecked) var frames: [Frame] = []
    /// The member names written in the open objects (for repeated names).
    @exclusivity(unchecked) var names: [String] = []
    /// The names of the open objects with many members, as sets, innermost last (``Frame/hasNameSet``).
    @exclusivity(unchecked) var nameSets: [Set<String>] = []
    /// Finished child encoders nobody else holds, reused for the next children (one allocation per
    /// nesting level rather than per nested value). Emptied by ``drain()``: the encoders hold the state.
    @exclusivity(unchecked) var pool = JSONCoderPool<JSONTypedEncoding>()

    struct Frame {
        let owner: ObjectIdentifier
        let isObject: Bool
        let depth: Int
        var count = 0
        let namesStart: Int
        /// Whether the names are in a set (the last of ``nameSets``) rather than compared one by one:
        /// the frame stays plain data, cheap to copy.
        var hasNameSet = false
        /// A one-bit-per-name summary of the names written (``nameBit(_:)``): a name whose bit is not
        /// set is new without comparing it to the others.
        var nameBits: UInt64 = 0
    }

    init(codecOptions: JSONCodec.Options, options: EncodingOptions) {
        writer = JSONWriter(options: codecOptions)
        self.options = options
        pretty = codecOptions.pretty
        maximumDepth = codecOptions.maximumDepth
        frames.reserveCapacity(16)
        pool = JSONCoderPool(capacity: 8)
    }

    /// A child encoder, from the pool when it has one.
    @inline(__always)
    func child(parent: JSONTypedEncoding, component: PathComponent?, depth: Int) -> JSONTypedEncoding {
        guard let reused = pool.take() else {
            return JSONTypedEncoding(state: self, parent: parent, component: component, depth: depth)
        }
        reused.parent = parent
        reused.component = component
        reused.depth = depth
        reused.written = .nothing
        return reused
    }

    /// Takes `encoder` back for reuse when nothing else holds it.
    @inline(__always)
    func recycle(_ encoder: inout JSONTypedEncoding) { pool.recycle(&encoder) }

    /// Releases the pooled encoders (they hold this state strongly).
    func drain() { pool.drain() }

    /// The bit of `name` in ``Frame/nameBits``: from its length and its first byte.
    @inline(__always)
    static func nameBit(_ name: String) -> UInt64 {
        let utf8 = name.utf8
        let first = Int(utf8.first ?? 0)
        return 1 &<< UInt64(truncatingIfNeeded: (utf8.count &* 7 &+ first) & 63)
    }

    /// Whether `name` is new in the innermost object (recording it).
    func insertName(_ name: String) -> Bool {
        let top = frames.count - 1
        let start = frames[top].namesStart
        if frames[top].hasNameSet { return nameSets[nameSets.count - 1].insert(name).inserted }
        if names.count - start < 16 {
            let bit = Self.nameBit(name)
            if frames[top].nameBits & bit != 0 {
                for i in start..<names.count where names[i] == name { return false }
            }
            frames[top].nameBits |= bit
            names.append(name)
            return true
        }
        var set = Set(names[start...])
        let inserted = set.insert(name).inserted
        nameSets.append(set)
        frames[top].hasNameSet = true
        return inserted
    }
}

/// The `Encoder` for one value.
final class JSONTypedEncoding: JSONPooledCoder, Encoder, SingleValueEncodingContainer {
    enum Written { case nothing, scalar, container }

    let state: JSONTypedEncodingState
    @exclusivity(unchecked) var parent: JSONTypedEncoding?
    @exclusivity(unchecked) var component: PathComponent?
    @exclusivity(unchecked) var depth: Int
    @exclusivity(unchecked) var written = Written.nothing

    init(state: JSONTypedEncodingState, parent: JSONTypedEncoding?, component: PathComponent?, depth: Int) {
        self.state = state
        self.parent = parent
        self.component = component
        self.depth = depth
    }

    var codingPath: [any CodingKey] {
        var result: [PathComponent] = []
        var node: JSONTypedEncoding? = self
        while let n = node {
            if let c = n.component { result.append(c) }
            node = n.parent
        }
        return result.reversed().map { ValueCodingKey($0) }
    }

    var userInfo: [CodingUserInfoKey: Any] { state.options.userInfo }

    /// A container that writes nowhere, for requests the stream cannot follow (the attempt is abandoned).
    private func sink() -> ValueEncoding {
        state.abandoned = true
        return ValueEncoding(parent: nil, component: nil, options: state.options)
    }

    /// Opens this encoder's container, or finds it open; `false` when the stream cannot follow.
    private func open(isObject: Bool) -> Bool {
        switch written {
        case .nothing:
            guard depth < state.maximumDepth, !state.abandoned else { return false }
            state.writer.output.append(isObject ? UInt8(ascii: "{") : UInt8(ascii: "["))
            state.frames.append(
                JSONTypedEncodingState.Frame(
                    owner: ObjectIdentifier(self), isObject: isObject, depth: depth, namesStart: state.names.count))
            written = .container
            return true
        case .container:
            guard let top = state.frames.last, top.owner == ObjectIdentifier(self), top.isObject == isObject else {
                return false
            }
            return true
        case .scalar:
            return false
        }
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        guard open(isObject: true) else { return sink().container(keyedBy: type) }
        return KeyedEncodingContainer(JSONTypedKeyedContainer<Key>(encoder: self))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        guard open(isObject: false) else { return sink().unkeyedContainer() }
        return JSONTypedUnkeyedContainer(encoder: self)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer { self }

    /// Closes what this encoder wrote: its container, or `{}` when it wrote nothing (the Value path's
    /// empty object).
    func finish() throws {
        switch written {
        case .nothing:
            guard depth < state.maximumDepth else { throw abandon() }
            state.writer.append("{}")
            written = .container
        case .scalar: break
        case .container:
            guard let top = state.frames.last, top.owner == ObjectIdentifier(self) else {
                state.abandoned = true
                return
            }
            if state.pretty && top.count > 0 { state.writer.newline(depth) }
            state.writer.output.append(top.isObject ? UInt8(ascii: "}") : UInt8(ascii: "]"))
            state.names.removeSubrange(top.namesStart...)
            if top.hasNameSet { state.nameSets.removeLast() }
            state.frames.removeLast()
        }
    }

    /// Whether this encoder's container is the innermost open one (so writing into it keeps the order).
    @inline(__always)
    func isCurrent() -> Bool {
        guard !state.abandoned, let top = state.frames.last, top.owner == ObjectIdentifier(self) else {
            state.abandoned = true
            return false
        }
        return true
    }

    /// Writes the separator and indentation before the next element or member of the current container.
    @inline(__always)
    func separate() {
        let top = state.frames.count - 1
        if state.frames[top].count > 0 { state.writer.output.append(UInt8(ascii: ",")) }
        state.frames[top].count += 1
        if state.pretty { state.writer.newline(depth + 1) }
    }

    // MARK: Values

    /// Writes `value` as a child at `component` (or into this encoder when `component` is `nil`).
    ///
    /// Any error abandons the attempt, the model's own included: a model may catch it and go on, and
    /// what was written of the value (its member name, its first members) stays in the stream, where the
    /// Value path would have dropped the whole value.
    func box<T: Encodable>(_ value: T, component: PathComponent?, depth: Int) throws {
        do {
            if component == nil {
                if Self.isSpecial(T.self) {
                    try scalar()
                    _ = try special(value, depth: depth)
                } else {
                    try value.encode(to: self)
                }
                return
            }
            if try special(value, depth: depth) { return }
            var child = state.child(parent: self, component: component, depth: depth)
            try value.encode(to: child)
            try child.finish()
            state.recycle(&child)
        } catch {
            state.abandoned = true
            throw error
        }
    }

    /// Marks the attempt as abandoned and returns the error to throw. Every throw of the direct encoder
    /// goes through here: a model that catches the error and goes on must not leave a half-written value
    /// in the output (the caller takes the Value path instead).
    @inline(__always)
    func abandon() -> JSONTypedEncodingAbandoned {
        state.abandoned = true
        return JSONTypedEncodingAbandoned()
    }

    /// Writes the rare types through the Value path's own conversion; `false` for other types.
    @inline(__always)
    private func special<T: Encodable>(_ value: T, depth: Int) throws -> Bool {
        if T.self == String.self {
            state.writer.writeString(unsafeBitCast(value, to: String.self))
            return true
        }
        guard T.self == Value.self || T.self == Date.self || T.self == Data.self || T.self == URL.self
            || T.self == Decimal.self
        else { return false }
        let converted = try ValueEncoding(parent: nil, component: nil, options: state.options).box(value, component: nil)
        try state.writer.write(converted, depth: depth)
        return true
    }

    @inline(__always)
    func writeDouble(_ d: Double) throws {
        guard d.isFinite else { throw abandon() }
        var text = d.description
        text.withUTF8 { state.writer.output.append(contentsOf: $0) }
    }

    @inline(__always)
    func writeFloat(_ f: Float) throws {
        guard case .double(let d) = ValueEncoding.float(f) else { throw abandon() }
        try writeDouble(d)
    }

    @inline(__always)
    func writeInteger(_ v: Int64) {
        if v < 0 { state.writer.output.append(UInt8(ascii: "-")) }
        state.writer.writeDigits(v.magnitude)
    }

    // MARK: SingleValueEncodingContainer

    /// Whether this encoder may write its one scalar now.
    @inline(__always)
    func scalar() throws {
        guard written == .nothing, !state.abandoned else { throw abandon() }
        written = .scalar
    }

    func encodeNil() throws {
        try scalar()
        state.writer.append("null")
    }
    func encode(_ value: Bool) throws {
        try scalar()
        if value { state.writer.append("true") } else { state.writer.append("false") }
    }
    func encode(_ value: String) throws {
        try scalar()
        state.writer.writeString(value)
    }
    func encode(_ value: Double) throws {
        try scalar()
        try writeDouble(value)
    }
    func encode(_ value: Float) throws {
        try scalar()
        try writeFloat(value)
    }
    func encode(_ value: Int) throws { try integer(Int64(value)) }
    func encode(_ value: Int8) throws { try integer(Int64(value)) }
    func encode(_ value: Int16) throws { try integer(Int64(value)) }
    func encode(_ value: Int32) throws { try integer(Int64(value)) }
    func encode(_ value: Int64) throws { try integer(value) }
    func encode(_ value: UInt) throws { try unsigned(UInt64(value)) }
    func encode(_ value: UInt8) throws { try unsigned(UInt64(value)) }
    func encode(_ value: UInt16) throws { try unsigned(UInt64(value)) }
    func encode(_ value: UInt32) throws { try unsigned(UInt64(value)) }
    func encode(_ value: UInt64) throws { try unsigned(value) }
    func encode<T: Encodable>(_ value: T) throws { try box(value, component: nil, depth: depth) }

    @inline(__always)
    static func isSpecial<T>(_ type: T.Type) -> Bool {
        T.self == String.self || T.self == Value.self || T.self == Date.self || T.self == Data.self || T.self == URL.self
            || T.self == Decimal.self
    }

    private func integer(_ value: Int64) throws {
        try scalar()
        writeInteger(value)
    }

    private func unsigned(_ value: UInt64) throws {
        try scalar()
        state.writer.writeDigits(value)
    }
}

/// Thrown inside the direct encoder when the stream cannot follow; the caller takes the Value path.
struct JSONTypedEncodingAbandoned: Error {}

// MARK: - Keyed

private struct JSONTypedKeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let encoder: JSONTypedEncoding

    var codingPath: [any CodingKey] { encoder.codingPath }

    /// Writes `"name":` for `key`, or abandons when the stream cannot follow.
    @inline(__always)
    private func member(_ key: Key) throws -> String {
        guard encoder.isCurrent() else { throw encoder.abandon() }
        let name = encoder.state.options.name(for: key)
        guard encoder.state.insertName(name) else { throw encoder.abandon() }
        encoder.separate()
        encoder.state.writer.writeString(name)
        encoder.state.writer.output.append(UInt8(ascii: ":"))
        if encoder.state.pretty { encoder.state.writer.output.append(UInt8(ascii: " ")) }
        return name
    }

    mutating func encodeNil(forKey key: Key) throws {
        _ = try member(key)
        encoder.state.writer.append("null")
    }
    mutating func encode(_ value: Bool, forKey key: Key) throws {
        _ = try member(key)
        if value { encoder.state.writer.append("true") } else { encoder.state.writer.append("false") }
    }
    mutating func encode(_ value: String, forKey key: Key) throws {
        _ = try member(key)
        encoder.state.writer.writeString(value)
    }
    mutating func encode(_ value: Double, forKey key: Key) throws {
        _ = try member(key)
        try encoder.writeDouble(value)
    }
    mutating func encode(_ value: Float, forKey key: Key) throws {
        _ = try member(key)
        try encoder.writeFloat(value)
    }
    mutating func encode(_ value: Int, forKey key: Key) throws { try integer(Int64(value), key) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { try integer(Int64(value), key) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { try integer(Int64(value), key) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { try integer(Int64(value), key) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { try integer(value, key) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { try unsigned(UInt64(value), key) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { try unsigned(UInt64(value), key) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { try unsigned(UInt64(value), key) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { try unsigned(UInt64(value), key) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { try unsigned(value, key) }
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        let name = try member(key)
        try encoder.box(value, component: .key(name), depth: encoder.depth + 1)
    }

    private func integer(_ value: Int64, _ key: Key) throws {
        _ = try member(key)
        encoder.writeInteger(value)
    }

    private func unsigned(_ value: UInt64, _ key: Key) throws {
        _ = try member(key)
        encoder.state.writer.writeDigits(value)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type, forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
        encoder.state.abandoned = true
        return ValueEncoding(parent: nil, component: nil, options: encoder.state.options).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        encoder.state.abandoned = true
        return ValueEncoding(parent: nil, component: nil, options: encoder.state.options).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder {
        encoder.state.abandoned = true
        return ValueEncoding(parent: nil, component: nil, options: encoder.state.options)
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        encoder.state.abandoned = true
        return ValueEncoding(parent: nil, component: nil, options: encoder.state.options)
    }
}

// MARK: - Unkeyed

private struct JSONTypedUnkeyedContainer: UnkeyedEncodingContainer {
    let encoder: JSONTypedEncoding
    private(set) var count = 0

    init(encoder: JSONTypedEncoding) {
        self.encoder = encoder
    }

    var codingPath: [any CodingKey] { encoder.codingPath }

    @inline(__always)
    private mutating func element() throws {
        guard encoder.isCurrent() else { throw encoder.abandon() }
        count = encoder.state.frames[encoder.state.frames.count - 1].count + 1
        encoder.separate()
    }

    mutating func encodeNil() throws {
        try element()
        encoder.state.writer.append("null")
    }
    mutating func encode(_ value: Bool) throws {
        try element()
        if value { encoder.state.writer.append("true") } else { encoder.state.writer.append("false") }
    }
    mutating func encode(_ value: String) throws {
        try element()
        encoder.state.writer.writeString(value)
    }
    mutating func encode(_ value: Double) throws {
        try element()
        try encoder.writeDouble(value)
    }
    mutating func encode(_ value: Float) throws {
        try element()
        try encoder.writeFloat(value)
    }
    mutating func encode(_ value: Int) throws { try integer(Int64(value)) }
    mutating func encode(_ value: Int8) throws { try integer(Int64(value)) }
    mutating func encode(_ value: Int16) throws { try integer(Int64(value)) }
    mutating func encode(_ value: Int32) throws { try integer(Int64(value)) }
    mutating func encode(_ value: Int64) throws { try integer(value) }
    mutating func encode(_ value: UInt) throws { try unsigned(UInt64(value)) }
    mutating func encode(_ value: UInt8) throws { try unsigned(UInt64(value)) }
    mutating func encode(_ value: UInt16) throws { try unsigned(UInt64(value)) }
    mutating func encode(_ value: UInt32) throws { try unsigned(UInt64(value)) }
    mutating func encode(_ value: UInt64) throws { try unsigned(value) }
    mutating func encode<T: Encodable>(_ value: T) throws {
        try element()
        try encoder.box(value, component: .index(count - 1), depth: encoder.depth + 1)
    }

    private mutating func integer(_ value: Int64) throws {
        try element()
        encoder.writeInteger(value)
    }

    private mutating func unsigned(_ value: UInt64) throws {
        try element()
        encoder.state.writer.writeDigits(value)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type
    ) -> KeyedEncodingContainer<NestedKey> {
        encoder.state.abandoned = true
        return ValueEncoding(parent: nil, component: nil, options: encoder.state.options).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        encoder.state.abandoned = true
        return ValueEncoding(parent: nil, component: nil, options: encoder.state.options).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder {
        encoder.state.abandoned = true
        return ValueEncoding(parent: nil, component: nil, options: encoder.state.options)
    }
}

extension JSONCodec {
    /// The direct path of ``encode(model:hints:encoder:)``; `nil` when the Value path must answer
    /// (sorted keys, a shape the stream cannot follow, or any error, which the Value path then reports).
    func encodeDirect<T: Encodable>(_ model: T, encoder: ValueEncoder) -> JSONOutput? {
        guard !options.sortedKeys, T.self != Value.self else { return nil }
        let encodingOptions = EncodingOptions(
            dateStrategy: encoder.dateStrategy, dataStrategy: encoder.dataStrategy, keyStrategy: encoder.keyStrategy,
            userInfo: encoder.userInfo)
        let state = JSONTypedEncodingState(codecOptions: options, options: encodingOptions)
        defer { state.drain() }
        let root = JSONTypedEncoding(state: state, parent: nil, component: nil, depth: 0)
        do {
            try root.box(model, component: nil, depth: 0)
            try root.finish()
        } catch {
            return nil
        }
        guard !state.abandoned, state.frames.isEmpty else { return nil }
        return state.writer.output
    }
}
