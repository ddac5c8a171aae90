/// The expected shape of a value, for formats that cannot say it themselves: in XML a single `<tag>`
/// may be one element of a list and `<age>42</age>` may be a number. Codecs use it to decode into the
/// right kind; it comes from a Codable model (``ValueShape/init(of:)``) or from a JSON Schema.
///
/// New cases may be added in later versions: a `switch` over it should have a `default` branch.
///
/// ```swift
/// let shape: ValueShape = .object(["users": .array(.object(["age": .integer, "tags": .array(.string)]))])
/// var hints = CodingHints()
/// hints.shape = shape
/// ```
public indirect enum ValueShape: Sendable, Hashable {
    /// Anything: decode as the format says.
    case any
    /// A boolean.
    case bool
    /// An integer.
    case integer
    /// Any number.
    case number
    /// A string.
    case string
    /// Bytes (base64 text in textual formats).
    case bytes
    /// A list of elements of one shape.
    case array(ValueShape)
    /// An object with known members (others decode as `.any`).
    case object([String: ValueShape])
    /// A map from names to values of one shape.
    case map(ValueShape)
    /// An optional value of a shape.
    case optional(ValueShape)

    /// The shape of member `key` when this is an object or map shape (`.any` when unknown).
    public func member(_ key: String) -> ValueShape {
        switch self {
        case .object(let members): return members[key] ?? .any
        case .map(let element): return element
        case .optional(let wrapped): return wrapped.member(key)
        default: return .any
        }
    }

    /// The element shape when this is an array shape.
    public var element: ValueShape? {
        switch self {
        case .array(let element): return element
        case .optional(let wrapped): return wrapped.element
        default: return nil
        }
    }

    /// `inner` placed at `path`: objects for keys, arrays for indices (`["data", "items"]` and `.array(.string)`
    /// give `.object(["data": .object(["items": .array(.string)])])`), for decoding a model inside an envelope.
    public static func nesting(_ inner: ValueShape, at path: [PathComponent]) -> ValueShape {
        path.reversed().reduce(inner) { shape, component in
            switch component {
            case .key(let key): return .object([key: shape])
            case .index: return .array(shape)
            }
        }
    }

    /// The shape with every object member renamed by `rename` (map keys are data, not renamed).
    package func mappingKeys(_ rename: (String) -> String) -> ValueShape {
        switch self {
        case .object(let members):
            var renamed: [String: ValueShape] = [:]
            for (key, member) in members { renamed[rename(key)] = member.mappingKeys(rename) }
            return .object(renamed)
        case .array(let element): return .array(element.mappingKeys(rename))
        case .map(let element): return .map(element.mappingKeys(rename))
        case .optional(let wrapped): return .optional(wrapped.mappingKeys(rename))
        default: return self
        }
    }

    /// The shape with any ``optional(_:)`` wrapper removed.
    public var unwrapped: ValueShape {
        if case .optional(let wrapped) = self { return wrapped.unwrapped }
        return self
    }
}
