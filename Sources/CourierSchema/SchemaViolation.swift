/// One JSON Schema violation: where in the instance, which keyword where in the schema, and why.
public struct SchemaViolation: Sendable, Hashable, CustomStringConvertible {
    /// The instance location as a JSON Pointer (`/data/users/3/age`).
    public var instanceLocation: String
    /// The keyword's location in the schema as a JSON Pointer (`/properties/age/minimum`).
    public var keywordLocation: String
    /// The keyword that failed (`minimum`).
    public var keyword: String
    /// A readable message ("data/users/3/age: -1 is less than the minimum of 0").
    public var message: String

    /// A violation.
    public init(instanceLocation: String, keywordLocation: String, keyword: String, message: String) {
        self.instanceLocation = instanceLocation
        self.keywordLocation = keywordLocation
        self.keyword = keyword
        self.message = message
    }

    public var description: String { message }
}

/// The violations a failed validation found, attached to its `CourierError` (codes
/// `CourierError.Code.schemaViolation` and `CourierError.Code.validationLimitExceeded`) as a
/// `CourierError.Detail`: the message names the first and counts the others, and the debug description
/// lists them all.
///
/// ```swift
/// catch let error as CourierError {
///     for violation in error.violations { print(violation.instanceLocation, violation.keyword) }
/// }
/// ```
public struct SchemaViolations: CourierError.Detail, Hashable {
    /// The violations, in the order the validation found them.
    public var violations: [SchemaViolation]

    /// The template name of "and N more" in `MessageTable.templates` (`{count}` is replaced).
    public static let moreTemplate = "schema.moreViolations"

    /// The template's built-in wording per language.
    static let moreDefaults: [CourierError.Language: String] = [
        .english: " (and {count} more)",
        .simplifiedChinese: "（另有 {count} 处）",
    ]

    /// Attaches `violations`.
    public init(_ violations: [SchemaViolation]) { self.violations = violations }

    /// The first violation's message, and how many more there are.
    public func elaboration(in language: CourierError.Language) -> String? {
        guard let first = violations.first else { return nil }
        var text = " " + first.message
        if violations.count > 1 {
            text += MessageCatalog.compose(
                template: Self.moreTemplate, in: language, defaults: Self.moreDefaults,
                ["count": "\(violations.count - 1)"])
        }
        return text
    }

    /// The violations after the first, one per line.
    public var debugLines: [String] { violations.dropFirst().map { "- \($0.message)" } }
}

extension CourierError {
    /// The schema violations, for `Category.validation` errors (all of them; the message names the first):
    /// the ``SchemaViolations`` in `details`, or none. Setting an empty list removes the detail.
    public var violations: [SchemaViolation] {
        get { details[SchemaViolations.self]?.violations ?? [] }
        set { details[SchemaViolations.self] = newValue.isEmpty ? nil : SchemaViolations(newValue) }
    }
}
