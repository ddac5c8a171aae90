import Courier
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Writes XML straight from an `Encodable`, without the `Value` tree, giving exactly the bytes
/// of `XMLWriter.document(ValueEncoder().encode(model))`.
///
/// Elements are written as the model encodes them: a node's start tag when its container is asked for,
/// its end tag when the model moves on to an enclosing container. Whatever streaming cannot reproduce
/// byte for byte — a key encoded twice, an attribute after a child element, a write to a container that
/// was already closed, a prefixed (`p:x`) name, a container of another kind asked of the same encoder,
/// any error — makes ``encode(_:rootName:options:encoder:)`` return `nil`, and the caller runs the
/// pivot, which then gives its bytes or its error. Dates, data, URLs, decimals and `Value`s are
/// materialised as `Value`s by the same `ValueEncoder` and written by `XMLWriter`.
enum XMLDirectEncoder {
    /// The document, or `nil` when the pivot must encode `model`.
    static func encode<T: Encodable>(
        _ model: T, rootName: String, options: XMLCodec.Options, encoder: ValueEncoder
    ) -> [UInt8]? {
        if XMLEncodingSink.isSpecial(T.self) { return nil }
        guard XMLMapping.isQualifiedName(rootName), !rootName.utf8.contains(UInt8(ascii: ":")) else { return nil }
        if case .some(let rule) = options.arrayItemName, rule.itemName(for: "s").utf8.contains(UInt8(ascii: ":")) {
            return nil
        }
        let sink = XMLEncodingSink(options: options, encoder: encoder)
        sink.writer.out.reserveCapacity(1024)
        sink.names.reserveCapacity(32)
        if options.writesDeclaration {
            sink.writer.append("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n")
        }
        let root = XMLEncodingNode(sink: sink, parent: nil, component: nil, name: rootName, depth: 0, isMember: false)
        sink.top = root
        do {
            try model.encode(to: root)
            guard !sink.failed else { return nil }
            try sink.activate(root)
            try sink.close(root)
        } catch {
            return nil
        }
        if options.prettyPrinted { sink.writer.out.append(UInt8(ascii: "\n")) }
        return sink.writer.out
    }
}

/// Streaming cannot give the pivot's bytes here.
struct XMLEncodingFallback: Error {}

/// A scalar a container was handed.
enum XMLScalar {
    case null
    case bool(Bool)
    case int(Int64)
    case uint(UInt64)
    case double(Double)
    case string(String)

    static func float(_ f: Float) -> XMLScalar {
        // As ValueEncoder: through the shortest decimal text.
        guard f.isFinite, let d = Double(f.description) else { return .double(Double(f)) }
        return .double(d)
    }
}

/// The output and the stack of open elements of one encode.
final class XMLEncodingSink {
    @exclusivity(unchecked) var writer: XMLWriter
    let encoder: ValueEncoder
    let userInfo: [CodingUserInfoKey: Any]
    let snakeCase: Bool
    let pretty: Bool
    let maximumDepth: Int
    let repeatedArrays: Bool
    /// The innermost open node.
    @exclusivity(unchecked) var top: XMLEncodingNode?
    /// Set where a non-throwing `Encoder` method met something streaming cannot reproduce.
    @exclusivity(unchecked) var failed = false
    @exclusivity(unchecked) private var snakeCache: [String: String] = [:]
    /// The member names of the open objects, outermost first (for keys written twice).
    @exclusivity(unchecked) var names: [String] = []

    init(options: XMLCodec.Options, encoder: ValueEncoder) {
        writer = XMLWriter(options: options)
        self.encoder = encoder
        userInfo = encoder.userInfo
        snakeCase = encoder.keyStrategy == .convertToSnakeCase
        pretty = options.prettyPrinted
        maximumDepth = options.maximumDepth
        repeatedArrays = options.arrayItemName == nil
    }

    /// The member name for `key`, as `ValueEncoder` names it.
    @inline(__always)
    func name(for key: some CodingKey) -> String {
        guard snakeCase else { return key.stringValue }
        let original = key.stringValue
        if let known = snakeCache[original] { return known }
        let converted = KeyCodingStrategy.snakeCase(fromCamelCase: original)
        snakeCache[original] = converted
        return converted
    }

    /// Types `ValueEncoder` encodes specially, materialised as a `Value`.
    @inline(__always)
    static func isSpecial<T>(_ type: T.Type) -> Bool {
        T.self == Value.self || T.self == Date.self || T.self == Data.self || T.self == URL.self
            || T.self == Decimal.self
    }

    /// Runs `body`; any error it throws, the model's own included, makes the encode fall back: a model may
    /// catch the error and go on, and what was written of the value (its start tag, its first members)
    /// stays in the stream, where the pivot would have dropped the whole value.
    @inline(__always)
    func failing(_ body: () throws -> Void) rethrows {
        do {
            try body()
        } catch {
            failed = true
            throw error
        }
    }

    func materialise<T: Encodable>(_ value: T) throws -> Value {
        if T.self == Value.self { return value as! Value }
        return try encoder.encode(value)
    }

    // MARK: The stack

    /// Makes `node` the innermost open node, closing the ones opened inside it.
    @inline(__always)
    func activate(_ node: XMLEncodingNode) throws(XMLEncodingFallback) {
        guard !failed, node.isOpen else { throw XMLEncodingFallback() }
        while let open = top, open !== node { try close(open) }
    }

    func push(_ node: XMLEncodingNode) {
        node.below = top
        top = node
    }

    /// Writes `node`'s end and pops it (it must be the innermost).
    func close(_ node: XMLEncodingNode) throws(XMLEncodingFallback) {
        switch node.kind {
        case .pending:
            // Nothing encoded: an empty object.
            try openElement(node.name, depth: node.depth)
            writer.append("/>")
        case .object:
            names.removeSubrange(node.namesStart...)
            if node.startClosed {
                closeTag(node.name, depth: node.depth, afterChildren: node.hasChildren)
            } else {
                writer.append("/>")
            }
        case .wrappedArray:
            if node.count == 0 {
                writer.append("/>")
            } else {
                closeTag(node.name, depth: node.depth, afterChildren: true)
            }
        case .repeatedArray, .done:
            break
        }
        node.isOpen = false
        top = node.below
        node.below = nil
    }

    // MARK: Writing

    /// `<name`, after the depth check and indentation of `XMLWriter.element`.
    @inline(__always)
    func openElement(_ name: String, depth: Int) throws(XMLEncodingFallback) {
        guard depth < maximumDepth else { throw XMLEncodingFallback() }
        if pretty && depth > 0 {
            writer.out.append(UInt8(ascii: "\n"))
            writer.indent(depth)
        }
        writer.out.append(UInt8(ascii: "<"))
        writer.append(name)
    }

    @inline(__always)
    func closeTag(_ name: String, depth: Int, afterChildren: Bool) {
        writer.closeTag(name, depth: depth, afterChildren: afterChildren)
    }

    /// An element holding a scalar, as `XMLWriter.element` writes it.
    func scalarElement(_ name: String, depth: Int, _ scalar: XMLScalar) throws(XMLEncodingFallback) {
        try openElement(name, depth: depth)
        if case .null = scalar {
            writer.append(" xsi:nil=\"true\" xmlns:xsi=\"")
            writer.append(XMLMapping.xsiNamespace)
            writer.append("\"/>")
            return
        }
        writer.out.append(UInt8(ascii: ">"))
        try text(scalar, attribute: false)
        closeTag(name, depth: depth, afterChildren: false)
    }

    /// A scalar as element text or an attribute value.
    func text(_ scalar: XMLScalar, attribute: Bool) throws(XMLEncodingFallback) {
        switch scalar {
        case .null: break
        case .bool(let b): writer.append(b ? "true" : "false")
        case .int(let i):
            if i < 0 {
                writer.out.append(UInt8(ascii: "-"))
                digits(i.magnitude)
            } else {
                digits(UInt64(i))
            }
        case .uint(let u): digits(u)
        case .double(let d): writer.append(XMLMapping.text(of: d))
        case .string(let s):
            do {
                try writer.escaped(s, attribute: attribute)
            } catch {
                throw XMLEncodingFallback()
            }
        }
    }

    private func digits(_ value: UInt64) {
        if value < 10 {
            writer.out.append(UInt8(ascii: "0") &+ UInt8(value))
            return
        }
        var buffer: (UInt64, UInt64, UInt64) = (0, 0, 0)
        var v = value
        withUnsafeMutableBytes(of: &buffer) { raw in
            var i = 24
            while v > 0 {
                i -= 1
                raw[i] = UInt8(ascii: "0") &+ UInt8(v % 10)
                v /= 10
            }
            writer.out.append(contentsOf: UnsafeMutableRawBufferPointer(rebasing: raw[i...]))
        }
    }

    /// A materialised value at an element, as `XMLWriter` writes it (`member`: an object's member,
    /// whose array value follows the array layout).
    func valueElement(_ name: String, depth: Int, _ value: Value, member: Bool) throws(XMLEncodingFallback) {
        do {
            if member, case .array(let elements) = value {
                try writer.arrayMember(name, elements, depth: depth)
            } else {
                try writer.element(name, value, depth: depth)
            }
        } catch {
            throw XMLEncodingFallback()
        }
    }

    /// Encodes `value` as the element `name`: a scalar of a common type at once, a special type
    /// materialised, anything else through a new node.
    func child<T: Encodable>(
        _ value: T, name: String, depth: Int, member: Bool, parent: XMLEncodingNode, component: PathComponent
    ) throws {
        if T.self == String.self { return try scalarElement(name, depth: depth, .string(value as! String)) }
        if T.self == Int.self { return try scalarElement(name, depth: depth, .int(Int64(value as! Int))) }
        if T.self == Bool.self { return try scalarElement(name, depth: depth, .bool(value as! Bool)) }
        if T.self == Double.self { return try scalarElement(name, depth: depth, .double(value as! Double)) }
        if T.self == [String].self {
            return try scalars(value as! [String], name: name, depth: depth, member: member) { .string($0) }
        }
        if T.self == [Int].self {
            return try scalars(value as! [Int], name: name, depth: depth, member: member) { .int(Int64($0)) }
        }
        if T.self == [Double].self {
            return try scalars(value as! [Double], name: name, depth: depth, member: member) { .double($0) }
        }
        if Self.isSpecial(T.self) {
            return try valueElement(name, depth: depth, try materialise(value), member: member)
        }
        let node = XMLEncodingNode(
            sink: self, parent: parent, component: component, name: name, depth: depth, isMember: member)
        push(node)
        try value.encode(to: node)
        try activate(node)
        try close(node)
    }
}

extension XMLEncodingSink {
    /// An array of scalars as `XMLWriter` lays it out: repeated elements for an object's member without
    /// an item naming, else one wrapper holding item elements.
    func scalars<E>(
        _ elements: [E], name: String, depth: Int, member: Bool, _ scalar: (E) -> XMLScalar
    ) throws(XMLEncodingFallback) {
        if member && repeatedArrays {
            for element in elements { try scalarElement(name, depth: depth, scalar(element)) }
            return
        }
        try openElement(name, depth: depth)
        if elements.isEmpty {
            writer.append("/>")
            return
        }
        writer.out.append(UInt8(ascii: ">"))
        let itemName = writer.options.arrayItemName?.itemName(for: name) ?? "item"
        for element in elements { try scalarElement(itemName, depth: depth + 1, scalar(element)) }
        closeTag(name, depth: depth, afterChildren: true)
    }
}

/// One element being encoded (or, for an array member in the repeated layout, a run of elements):
/// the `Encoder` handed to the model and its single-value container.
final class XMLEncodingNode: Encoder, SingleValueEncodingContainer {
    enum Kind {
        case pending, object, wrappedArray, repeatedArray, done
    }

    let sink: XMLEncodingSink
    let parent: XMLEncodingNode?
    let component: PathComponent?
    /// The element's name (for a repeated array, its items' name).
    let name: String
    let depth: Int
    /// Whether this is an object's member (an array then follows the array layout).
    let isMember: Bool
    @exclusivity(unchecked) var kind = Kind.pending
    @exclusivity(unchecked) var isOpen = true
    @exclusivity(unchecked) var below: XMLEncodingNode?
    // Object state.
    @exclusivity(unchecked) var startClosed = false
    @exclusivity(unchecked) var hasChildren = false
    /// Where this object's member names start in the sink's name stack.
    @exclusivity(unchecked) var namesStart = 0
    /// The member names, once there are many.
    @exclusivity(unchecked) private var nameSet: Set<String> = []
    // Array state.
    @exclusivity(unchecked) var count = 0
    @exclusivity(unchecked) var itemName = ""

    init(
        sink: XMLEncodingSink, parent: XMLEncodingNode?, component: PathComponent?, name: String, depth: Int,
        isMember: Bool
    ) {
        self.sink = sink
        self.parent = parent
        self.component = component
        self.name = name
        self.depth = depth
        self.isMember = isMember
    }

    var codingPath: [any CodingKey] {
        var result: [any CodingKey] = []
        var node: XMLEncodingNode? = self
        while let n = node {
            if let c = n.component { result.append(ValueCodingKey(c)) }
            node = n.parent
        }
        return result.reversed()
    }

    var userInfo: [CodingUserInfoKey: Any] { sink.userInfo }

    // MARK: Becoming a container

    func becomeObject() -> Bool {
        switch kind {
        case .object: return true
        case .pending:
            do {
                try sink.activate(self)
                try sink.openElement(name, depth: depth)
            } catch {
                return false
            }
            namesStart = sink.names.count
            kind = .object
            return true
        default: return false
        }
    }

    func becomeArray() -> Bool {
        switch kind {
        case .wrappedArray, .repeatedArray: return true
        case .pending:
            do {
                try sink.activate(self)
                if isMember && sink.repeatedArrays {
                    kind = .repeatedArray
                    itemName = name
                } else {
                    try sink.openElement(name, depth: depth)
                    kind = .wrappedArray
                    itemName = sink.writer.options.arrayItemName?.itemName(for: name) ?? "item"
                }
            } catch {
                return false
            }
            return true
        default: return false
        }
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        if !becomeObject() { sink.failed = true }
        return KeyedEncodingContainer(XMLKeyedEncoding<Key>(node: self))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        if !becomeArray() { sink.failed = true }
        return XMLUnkeyedEncoding(node: self)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer { self }

    // MARK: Object members

    enum Role {
        case attribute(String)
        case text
        case child
    }

    /// Starts the member `name`: checks it as `XMLWriter` would and that streaming keeps its place.
    func startMember(_ name: String) throws(XMLEncodingFallback) -> Role {
        guard kind == .object else { throw XMLEncodingFallback() }
        try sink.activate(self)
        // This object's member names are the top of the sink's name stack: the nodes opened inside it
        // are closed, and took theirs off.
        let written = sink.names.count - namesStart
        if written < 16 {
            var i = namesStart
            while i < sink.names.count {
                if sink.names[i] == name { throw XMLEncodingFallback() }
                i += 1
            }
            sink.names.append(name)
            if written == 15 { nameSet = Set(sink.names[namesStart...]) }
        } else {
            guard nameSet.insert(name).inserted else { throw XMLEncodingFallback() }
            sink.names.append(name)
        }
        let first = name.utf8.first
        if first == UInt8(ascii: "@") {
            let attribute = String(name.dropFirst())
            guard !startClosed, XMLMapping.isQualifiedName(attribute), !attribute.utf8.contains(UInt8(ascii: ":"))
            else { throw XMLEncodingFallback() }
            return .attribute(attribute)
        }
        if first == UInt8(ascii: "#"), name == "#text" {
            guard !startClosed else { throw XMLEncodingFallback() }
            sink.writer.out.append(UInt8(ascii: ">"))
            startClosed = true
            return .text
        }
        guard XMLMapping.isQualifiedName(name), !name.utf8.contains(UInt8(ascii: ":")) else {
            throw XMLEncodingFallback()
        }
        if !startClosed {
            sink.writer.out.append(UInt8(ascii: ">"))
            startClosed = true
        }
        hasChildren = true
        return .child
    }

    func member(_ scalar: XMLScalar, _ name: String) throws {
        try sink.failing { try writeMember(scalar, name) }
    }

    private func writeMember(_ scalar: XMLScalar, _ name: String) throws {
        switch try startMember(name) {
        case .attribute(let attribute):
            sink.writer.out.append(UInt8(ascii: " "))
            sink.writer.append(attribute)
            sink.writer.append("=\"")
            try sink.text(scalar, attribute: true)
            sink.writer.out.append(UInt8(ascii: "\""))
        case .text:
            try sink.text(scalar, attribute: false)
        case .child:
            try sink.scalarElement(name, depth: depth + 1, scalar)
        }
    }

    func member<T: Encodable>(_ value: T, _ name: String) throws {
        try sink.failing { try writeMember(value, name) }
    }

    private func writeMember<T: Encodable>(_ value: T, _ name: String) throws {
        switch try startMember(name) {
        case .attribute(let attribute):
            let materialised = try sink.materialise(value)
            sink.writer.out.append(UInt8(ascii: " "))
            sink.writer.append(attribute)
            sink.writer.append("=\"")
            do {
                try sink.writer.attributeText(materialised)
            } catch {
                throw XMLEncodingFallback()
            }
            sink.writer.out.append(UInt8(ascii: "\""))
        case .text:
            let materialised = try sink.materialise(value)
            do {
                try sink.writer.scalarText(materialised)
            } catch {
                throw XMLEncodingFallback()
            }
        case .child:
            try sink.child(value, name: name, depth: depth + 1, member: true, parent: self, component: .key(name))
        }
    }

    /// A node for a member whose value the model writes later (nested containers, super encoders).
    func deferredMember(_ name: String, component: PathComponent) -> XMLEncodingNode {
        let node = XMLEncodingNode(
            sink: sink, parent: self, component: component, name: name, depth: depth + 1, isMember: true)
        do {
            guard case .child = try startMember(name) else { throw XMLEncodingFallback() }
            sink.push(node)
        } catch {
            sink.failed = true
            node.isOpen = false
        }
        return node
    }

    // MARK: Array items

    /// Makes this array the innermost open node and closes its start tag before the first item.
    private func beginItem() throws(XMLEncodingFallback) {
        guard kind == .wrappedArray || kind == .repeatedArray else { throw XMLEncodingFallback() }
        try sink.activate(self)
        if kind == .wrappedArray && count == 0 { sink.writer.out.append(UInt8(ascii: ">")) }
    }

    func item(_ scalar: XMLScalar) throws {
        try sink.failing { try writeItem(scalar) }
    }

    private func writeItem(_ scalar: XMLScalar) throws {
        try beginItem()
        try sink.scalarElement(itemName, depth: itemDepth, scalar)
        count += 1
    }

    func item<T: Encodable>(_ value: T) throws {
        try sink.failing { try writeItem(value) }
    }

    private func writeItem<T: Encodable>(_ value: T) throws {
        try beginItem()
        let index = count
        count += 1
        try sink.child(value, name: itemName, depth: itemDepth, member: false, parent: self, component: .index(index))
    }

    var itemDepth: Int { kind == .wrappedArray ? depth + 1 : depth }

    func deferredItem() -> XMLEncodingNode {
        let node = XMLEncodingNode(
            sink: sink, parent: self, component: .index(count), name: itemName, depth: itemDepth, isMember: false)
        do {
            try beginItem()
            count += 1
            sink.push(node)
        } catch {
            sink.failed = true
            node.isOpen = false
        }
        return node
    }

    // MARK: SingleValueEncodingContainer

    private func single(_ scalar: XMLScalar) throws {
        try sink.failing { try writeSingle(scalar) }
    }

    private func writeSingle(_ scalar: XMLScalar) throws {
        guard kind == .pending else { throw XMLEncodingFallback() }
        try sink.activate(self)
        try sink.scalarElement(name, depth: depth, scalar)
        kind = .done
    }

    func encodeNil() throws { try single(.null) }
    func encode(_ value: Bool) throws { try single(.bool(value)) }
    func encode(_ value: String) throws { try single(.string(value)) }
    func encode(_ value: Double) throws { try single(.double(value)) }
    func encode(_ value: Float) throws { try single(.float(value)) }
    func encode(_ value: Int) throws { try single(.int(Int64(value))) }
    func encode(_ value: Int8) throws { try single(.int(Int64(value))) }
    func encode(_ value: Int16) throws { try single(.int(Int64(value))) }
    func encode(_ value: Int32) throws { try single(.int(Int64(value))) }
    func encode(_ value: Int64) throws { try single(.int(value)) }
    func encode(_ value: UInt) throws { try single(.uint(UInt64(value))) }
    func encode(_ value: UInt8) throws { try single(.int(Int64(value))) }
    func encode(_ value: UInt16) throws { try single(.int(Int64(value))) }
    func encode(_ value: UInt32) throws { try single(.int(Int64(value))) }
    func encode(_ value: UInt64) throws { try single(.uint(value)) }
    func encode<T: Encodable>(_ value: T) throws {
        try sink.failing { try writeSingle(value) }
    }

    private func writeSingle<T: Encodable>(_ value: T) throws {
        if XMLEncodingSink.isSpecial(T.self) {
            guard kind == .pending else { throw XMLEncodingFallback() }
            try sink.activate(self)
            try sink.valueElement(name, depth: depth, try sink.materialise(value), member: isMember)
            kind = .done
            return
        }
        try value.encode(to: self)
    }
}

extension PathComponent {
    /// As `ValueEncoder` makes a component of a key.
    fileprivate init(codingKey key: some CodingKey) {
        if let i = key.intValue, key.stringValue == String(i) {
            self = .index(i)
        } else {
            self = .key(key.stringValue)
        }
    }
}

struct XMLKeyedEncoding<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let node: XMLEncodingNode

    var codingPath: [any CodingKey] { node.codingPath }

    @inline(__always)
    private func put(_ scalar: XMLScalar, _ key: Key) throws {
        try node.member(scalar, node.sink.name(for: key))
    }

    mutating func encodeNil(forKey key: Key) throws { try put(.null, key) }
    mutating func encode(_ value: Bool, forKey key: Key) throws { try put(.bool(value), key) }
    mutating func encode(_ value: String, forKey key: Key) throws { try put(.string(value), key) }
    mutating func encode(_ value: Double, forKey key: Key) throws { try put(.double(value), key) }
    mutating func encode(_ value: Float, forKey key: Key) throws { try put(.float(value), key) }
    mutating func encode(_ value: Int, forKey key: Key) throws { try put(.int(Int64(value)), key) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { try put(.int(Int64(value)), key) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { try put(.int(Int64(value)), key) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { try put(.int(Int64(value)), key) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { try put(.int(value), key) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { try put(.uint(UInt64(value)), key) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { try put(.int(Int64(value)), key) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { try put(.int(Int64(value)), key) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { try put(.int(Int64(value)), key) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { try put(.uint(value), key) }
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        try node.member(value, node.sink.name(for: key))
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type, forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
        let nested = node.deferredMember(node.sink.name(for: key), component: PathComponent(codingKey: key))
        if nested.isOpen, !nested.becomeObject() { node.sink.failed = true }
        return KeyedEncodingContainer(XMLKeyedEncoding<NestedKey>(node: nested))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        let nested = node.deferredMember(node.sink.name(for: key), component: PathComponent(codingKey: key))
        if nested.isOpen, !nested.becomeArray() { node.sink.failed = true }
        return XMLUnkeyedEncoding(node: nested)
    }

    mutating func superEncoder() -> any Encoder {
        node.deferredMember("super", component: .key("super"))
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        node.deferredMember(node.sink.name(for: key), component: PathComponent(codingKey: key))
    }
}

struct XMLUnkeyedEncoding: UnkeyedEncodingContainer {
    let node: XMLEncodingNode

    var codingPath: [any CodingKey] { node.codingPath }
    var count: Int { node.count }

    mutating func encodeNil() throws { try node.item(.null) }
    mutating func encode(_ value: Bool) throws { try node.item(.bool(value)) }
    mutating func encode(_ value: String) throws { try node.item(.string(value)) }
    mutating func encode(_ value: Double) throws { try node.item(.double(value)) }
    mutating func encode(_ value: Float) throws { try node.item(.float(value)) }
    mutating func encode(_ value: Int) throws { try node.item(.int(Int64(value))) }
    mutating func encode(_ value: Int8) throws { try node.item(.int(Int64(value))) }
    mutating func encode(_ value: Int16) throws { try node.item(.int(Int64(value))) }
    mutating func encode(_ value: Int32) throws { try node.item(.int(Int64(value))) }
    mutating func encode(_ value: Int64) throws { try node.item(.int(value)) }
    mutating func encode(_ value: UInt) throws { try node.item(.uint(UInt64(value))) }
    mutating func encode(_ value: UInt8) throws { try node.item(.int(Int64(value))) }
    mutating func encode(_ value: UInt16) throws { try node.item(.int(Int64(value))) }
    mutating func encode(_ value: UInt32) throws { try node.item(.int(Int64(value))) }
    mutating func encode(_ value: UInt64) throws { try node.item(.uint(value)) }
    mutating func encode<T: Encodable>(_ value: T) throws { try node.item(value) }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type
    ) -> KeyedEncodingContainer<NestedKey> {
        let nested = node.deferredItem()
        if nested.isOpen, !nested.becomeObject() { node.sink.failed = true }
        return KeyedEncodingContainer(XMLKeyedEncoding<NestedKey>(node: nested))
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let nested = node.deferredItem()
        if nested.isOpen, !nested.becomeArray() { node.sink.failed = true }
        return XMLUnkeyedEncoding(node: nested)
    }

    mutating func superEncoder() -> any Encoder { node.deferredItem() }
}
