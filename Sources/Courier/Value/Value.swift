/// The format-neutral value every Courier codec maps to and from: the pivot between JSON, XML and
/// Protocol Buffers, and the "raw" result of a call.
///
/// Numbers keep their exactness: integers that fit 64 bits are ``int(_:)`` (or ``uint(_:)`` above
/// `Int64.max`), binary floating point is ``double(_:)``, and anything that fits neither — a 30-digit
/// integer, a decimal with more digits than a `Double` holds — is ``number(_:)`` with its exact lexical
/// form. Objects keep their members' order (see ``Object``).
///
/// Equality is the JSON data-model equality: numbers compare by mathematical value whatever their case
/// (`.int(1) == .double(1.0)`), objects compare as unordered sets of members, arrays in order.
///
/// ```swift
/// let user: Value = ["id": 7, "name": "Ada", "tags": ["admin"], "score": 99.5]
/// user["name"]?.stringValue          // "Ada"
/// user["tags"]?[0]                    // .string("admin")
/// let model = try ValueDecoder().decode(User.self, from: user)
/// ```
public enum Value: Sendable {
    /// JSON `null`, an XML element with `xsi:nil`, an unset optional field.
    case null
    /// A boolean.
    case bool(Bool)
    /// A signed integer that fits 64 bits.
    case int(Int64)
    /// An unsigned integer above `Int64.max` (smaller ones are always ``int(_:)``).
    case uint(UInt64)
    /// A binary floating-point number.
    case double(Double)
    /// A number kept exactly in its lexical form (JSON number grammar) because it fits neither 64-bit
    /// integers nor a `Double` without loss.
    case number(String)
    /// A Unicode string.
    case string(String)
    /// Raw bytes (protobuf `bytes`; base64 text in JSON and XML).
    case bytes([UInt8])
    /// An ordered list.
    case array([Value])
    /// An object whose members keep their order.
    case object(Object)
}

// MARK: - Convenience accessors

extension Value {
    /// Whether this is ``null``.
    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// The boolean, if this is ``bool(_:)``.
    public var boolValue: Bool? {
        if case .bool(let b) = self { return b }
        return nil
    }

    /// The string, if this is ``string(_:)``.
    public var stringValue: String? {
        if case .string(let s) = self { return s }
        return nil
    }

    /// The value as an `Int64` if it is an integer (or an integral double / exact number) that fits.
    public var int64Value: Int64? {
        switch self {
        case .int(let i): return i
        case .uint(let u): return u <= UInt64(Int64.max) ? Int64(u) : nil
        case .double(let d):
            guard d.rounded(.towardZero) == d, d >= -9.223372036854775808e18, d < 9.223372036854775808e18 else {
                return nil
            }
            return Int64(d)
        case .number(let s): return Int64(s)
        default: return nil
        }
    }

    /// The value as a `Double` if it is any kind of number (an exact ``number(_:)`` is rounded).
    public var doubleValue: Double? {
        switch self {
        case .int(let i): return Double(i)
        case .uint(let u): return Double(u)
        case .double(let d): return d
        case .number(let s): return Double(s)
        default: return nil
        }
    }

    /// Whether this is one of the number cases.
    public var isNumber: Bool {
        switch self {
        case .int, .uint, .double, .number: return true
        default: return false
        }
    }

    /// The elements, if this is ``array(_:)``.
    public var arrayValue: [Value]? {
        if case .array(let a) = self { return a }
        return nil
    }

    /// The object, if this is ``object(_:)``.
    public var objectValue: Object? {
        if case .object(let o) = self { return o }
        return nil
    }

    /// The bytes, if this is ``bytes(_:)``.
    public var bytesValue: [UInt8]? {
        if case .bytes(let b) = self { return b }
        return nil
    }

    /// The member named `key` when this is an object (the first one, if the key repeats).
    public subscript(key: String) -> Value? {
        get {
            guard case .object(let o) = self else { return nil }
            return o[key]
        }
        set {
            guard case .object(var o) = self else { return }
            self = .null
            o[key] = newValue
            self = .object(o)
        }
    }

    /// The element at `index` when this is an array and the index is in range.
    public subscript(index: Int) -> Value? {
        guard case .array(let a) = self, a.indices.contains(index) else { return nil }
        return a[index]
    }

    /// Follows a path of object keys and array indices (`["data", "users", 3, "age"]`).
    public subscript(path path: [PathComponent]) -> Value? {
        var current: Value? = self
        for component in path {
            switch component {
            case .key(let k): current = current?[k]
            case .index(let i): current = current?[i]
            }
        }
        return current
    }

    /// Follows `path` like ``subscript(path:)``, except that an index step on an object reads the member
    /// named by its digits (`data.3` finds `{"data": {"3": …}}` too), as a dotted path cannot tell them apart.
    public subscript(lenientPath path: [PathComponent]) -> Value? {
        var current: Value? = self
        for component in path {
            switch component {
            case .key(let k): current = current?[k]
            case .index(let i):
                if case .object? = current { current = current?[String(i)] } else { current = current?[i] }
            }
        }
        return current
    }

    /// A short name of the value's kind, for messages ("string", "integer", "object", ...).
    public var kindName: String {
        switch self {
        case .null: return "null"
        case .bool: return "boolean"
        case .int, .uint: return "integer"
        case .double, .number: return "number"
        case .string: return "string"
        case .bytes: return "bytes"
        case .array: return "array"
        case .object: return "object"
        }
    }
}

/// One step of a path into a ``Value``: an object key or an array index.
public enum PathComponent: Sendable, Hashable, CustomStringConvertible, ExpressibleByStringLiteral,
    ExpressibleByIntegerLiteral
{
    /// An object member name.
    case key(String)
    /// An array position.
    case index(Int)

    public init(stringLiteral value: String) { self = .key(value) }
    public init(integerLiteral value: Int) { self = .index(value) }

    public var description: String {
        switch self {
        case .key(let k): return k
        case .index(let i): return "[\(i)]"
        }
    }

    /// Parses a dotted path as endpoints and page layouts write it: `data.items` or `data.users.3.name`
    /// (a part made of digits is an array index). Empty parts are skipped.
    ///
    /// ```swift
    /// PathComponent.parse(dotted: "data.users.3") // [.key("data"), .key("users"), .index(3)]
    /// ```
    public static func parse(dotted: String) -> [PathComponent] {
        dotted.split(separator: ".").map { part in Int(part).map(PathComponent.index) ?? .key(String(part)) }
    }

    /// Renders a path the way Courier's messages do: `data.users[3].age`.
    public static func render(_ path: [PathComponent]) -> String {
        var out = ""
        for component in path {
            switch component {
            case .key(let k):
                if !out.isEmpty { out += "." }
                out += k
            case .index(let i):
                out += "[\(i)]"
            }
        }
        return out
    }

    /// Reads a dotted path, the inverse of ``render(_:)``: `data.users[3].age` and `data.users.3.age` are
    /// both `["data", "users", 3, "age"]` (a segment of digits alone is an index; an object member named by
    /// digits is still found, see ``Value/subscript(lenientPath:)``). Empty segments are skipped.
    ///
    /// ```swift
    /// PathComponent.parse("data.items[0].name")     // [.key("data"), .key("items"), .index(0), .key("name")]
    /// ```
    public static func parse(_ dotted: String) -> [PathComponent] {
        var path: [PathComponent] = []
        for segment in dotted.split(separator: ".") {
            var rest = Substring(segment)
            // Trailing `[n]` groups are indices (read last to first); what precedes the first is the key.
            var indices: [Int] = []
            while rest.hasSuffix("]"), let open = rest.lastIndex(of: "["),
                  let index = Int(rest[rest.index(after: open)..<rest.index(before: rest.endIndex)]), index >= 0
            {
                indices.append(index)
                rest = rest[..<open]
            }
            if !rest.isEmpty {
                if let index = Int(rest), index >= 0, rest.allSatisfy(\.isASCII) {
                    path.append(.index(index))
                } else {
                    path.append(.key(String(rest)))
                }
            }
            path += indices.reversed().map(PathComponent.index)
        }
        return path
    }

    /// Renders a path as a JSON Pointer (RFC 6901): `/data/users/3/age`.
    public static func jsonPointer(_ path: [PathComponent]) -> String {
        var out = ""
        for component in path {
            out += "/"
            switch component {
            case .key(let k):
                out += k.replacingOccurrences(of: "~", with: "~0").replacingOccurrences(of: "/", with: "~1")
            case .index(let i):
                out += String(i)
            }
        }
        return out
    }
}

extension String {
    fileprivate func replacingOccurrences(of target: String, with replacement: String) -> String {
        guard contains(target) else { return self }
        return split(separator: target, omittingEmptySubsequences: false).joined(separator: replacement)
    }
}

// MARK: - Literals

extension Value: ExpressibleByNilLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByArrayLiteral,
    ExpressibleByDictionaryLiteral
{
    public init(nilLiteral: ()) { self = .null }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(integerLiteral value: Int64) { self = .int(value) }
    public init(floatLiteral value: Double) { self = .double(value) }
    public init(stringLiteral value: String) { self = .string(value) }
    public init(arrayLiteral elements: Value...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, Value)...) {
        var object = Object(minimumCapacity: elements.count)
        for (k, v) in elements { object.append(k, v) }
        self = .object(object)
    }

    /// An integer value in its canonical case: ``int(_:)`` when it fits `Int64`, else ``uint(_:)``.
    public init(_ value: UInt64) {
        self = value <= UInt64(Int64.max) ? .int(Int64(value)) : .uint(value)
    }

    /// An integer value.
    public init(_ value: Int) { self = .int(Int64(value)) }
}
