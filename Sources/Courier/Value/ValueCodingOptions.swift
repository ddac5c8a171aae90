/// How `Date` values are represented in a ``Value`` by ``ValueEncoder`` and ``ValueDecoder``.
///
/// ```swift
/// var decoder = ValueDecoder()
/// decoder.dateStrategy = .millisecondsSince1970
/// ```
public struct DateCodingStrategy: Hashable, Sendable, CustomStringConvertible {
    enum Base: Hashable { case iso8601, secondsSince1970, millisecondsSince1970 }
    let base: Base

    /// An ISO 8601 / RFC 3339 string (`2024-05-01T12:30:00Z`, fractional seconds when present). The default.
    public static let iso8601 = DateCodingStrategy(base: .iso8601)
    /// Seconds since 1970-01-01T00:00:00Z as a number.
    public static let secondsSince1970 = DateCodingStrategy(base: .secondsSince1970)
    /// Milliseconds since 1970-01-01T00:00:00Z as a number.
    public static let millisecondsSince1970 = DateCodingStrategy(base: .millisecondsSince1970)

    public var description: String { "\(base)" }
}

/// How `Data` values are represented in a ``Value``.
///
/// ```swift
/// var encoder = ValueEncoder()
/// encoder.dataStrategy = .bytes      // protobuf `bytes` fields
/// ```
public struct DataCodingStrategy: Hashable, Sendable, CustomStringConvertible {
    enum Base: Hashable { case base64, bytes }
    let base: Base

    /// A base64 string (RFC 4648). The default. Decoding also accepts ``Value/bytes(_:)``.
    public static let base64 = DataCodingStrategy(base: .base64)
    /// ``Value/bytes(_:)``. Decoding also accepts a base64 string.
    public static let bytes = DataCodingStrategy(base: .bytes)

    public var description: String { "\(base)" }
}

/// How coding keys map to object member names.
///
/// ```swift
/// var decoder = ValueDecoder()
/// decoder.keyStrategy = .convertFromSnakeCase   // "user_id" → userId
/// var encoder = ValueEncoder()
/// encoder.keyStrategy = .convertToSnakeCase     // userId → "user_id"
/// ```
public struct KeyCodingStrategy: Hashable, Sendable, CustomStringConvertible {
    enum Base: Hashable { case useDefaultKeys, convertFromSnakeCase, convertToSnakeCase }
    let base: Base

    /// Member names are the coding keys' string values. The default.
    public static let useDefaultKeys = KeyCodingStrategy(base: .useDefaultKeys)
    /// Decoding: `snake_case` member names match `camelCase` keys (`user_id` → `userId`).
    public static let convertFromSnakeCase = KeyCodingStrategy(base: .convertFromSnakeCase)
    /// Encoding: `camelCase` keys are written as `snake_case` member names (`userId` → `user_id`).
    public static let convertToSnakeCase = KeyCodingStrategy(base: .convertToSnakeCase)

    public var description: String { "\(base)" }

    /// `user_id` → `userId`; leading and trailing underscores are kept.
    package static func camelCase(fromSnakeCase key: String) -> String {
        guard key.contains("_") else { return key }
        let scalars = Array(key.unicodeScalars)
        guard let first = scalars.firstIndex(where: { $0 != "_" }) else { return key }
        let last = scalars.lastIndex(where: { $0 != "_" })!
        var result = String.UnicodeScalarView()
        result.append(contentsOf: scalars[..<first])
        var upperNext = false
        for scalar in scalars[first...last] {
            if scalar == "_" {
                upperNext = true
            } else if upperNext {
                result.append(contentsOf: String(scalar).uppercased().unicodeScalars)
                upperNext = false
            } else {
                result.append(scalar)
            }
        }
        result.append(contentsOf: scalars[(last + 1)...])
        return String(result)
    }

    /// `userID` → `user_id`, `userId` → `user_id`, `URLValue` → `url_value`.
    package static func snakeCase(fromCamelCase key: String) -> String {
        let scalars = Array(key.unicodeScalars)
        guard scalars.contains(where: { $0.properties.isUppercase }) else { return key }
        var result = ""
        for (i, scalar) in scalars.enumerated() {
            let isUpper = scalar.properties.isUppercase
            if isUpper && i > 0 && scalars[i - 1] != "_" {
                let previousLower = !scalars[i - 1].properties.isUppercase
                let nextLower = i + 1 < scalars.count && scalars[i + 1].properties.isLowercase
                if previousLower || nextLower { result += "_" }
            }
            result += isUpper ? String(scalar).lowercased() : String(scalar)
        }
        return result
    }
}

/// A coding key made from a path component, for `codingPath` arrays and dictionary keys (shared by every
/// codec's encoders and decoders in the package).
package struct ValueCodingKey: CodingKey {
    package var stringValue: String
    package var intValue: Int?

    package init(stringValue: String) {
        self.stringValue = stringValue
        intValue = nil
    }

    package init(intValue: Int) {
        stringValue = String(intValue)
        self.intValue = intValue
    }

    package init(_ component: PathComponent) {
        switch component {
        case .key(let k): self.init(stringValue: k)
        case .index(let i): self.init(intValue: i)
        }
    }

    package static let `super` = ValueCodingKey(stringValue: "super")
}

/// A linked list of path components, shared by nested decoders and encoders so no array is copied per
/// level; rendered only when an error or `codingPath` needs it.
final class PathNode: Sendable {
    let parent: PathNode?
    let component: PathComponent

    init(parent: PathNode?, component: PathComponent) {
        self.parent = parent
        self.component = component
    }

    static func components(_ node: PathNode?, appending extra: PathComponent? = nil) -> [PathComponent] {
        var result: [PathComponent] = []
        if let extra { result.append(extra) }
        var current = node
        while let n = current {
            result.append(n.component)
            current = n.parent
        }
        result.reverse()
        return result
    }

    static func codingPath(_ node: PathNode?) -> [any CodingKey] {
        components(node).map { ValueCodingKey($0) }
    }
}

extension PathComponent {
    init(_ key: some CodingKey) {
        if let i = key.intValue, key.stringValue == String(i) {
            self = .index(i)
        } else {
            self = .key(key.stringValue)
        }
    }
}
