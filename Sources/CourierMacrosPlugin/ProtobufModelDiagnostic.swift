#if Macros
import SwiftDiagnostics

/// An error `@ProtobufModel` reports instead of expanding: a declaration it cannot read and write the way
/// synthesized `Codable` would.
struct ProtobufModelDiagnostic: DiagnosticMessage {
    /// A stable name of the problem, the diagnostic's ID.
    let id: String
    /// The text the compiler shows.
    let message: String

    /// The ID, in the `CourierMacros.ProtobufModel` domain.
    var diagnosticID: MessageID { MessageID(domain: "CourierMacros.ProtobufModel", id: id) }
    /// Always an error: the macro expands to nothing instead.
    var severity: DiagnosticSeverity { .error }

    /// The macro is attached to a class, an enum, an actor, a protocol or an extension.
    static let notAStruct = Self(id: "notAStruct", message: "@ProtobufModel applies to structs")

    /// The struct writes its own `init(from:)` or `encode(to:)`.
    static let customCoding = Self(
        id: "customCoding",
        message:
            "@ProtobufModel reads and writes the members directly and would bypass your custom init(from:)/encode(to:)"
    )

    /// A coded stored property of an implicitly unwrapped optional type.
    static func implicitlyUnwrapped(_ name: String) -> Self {
        Self(
            id: "implicitlyUnwrapped",
            message: "@ProtobufModel cannot code the implicitly unwrapped optional '\(name)'; declare it with '?'"
        )
    }

    /// A coded `lazy` property.
    static func lazy(_ name: String) -> Self {
        Self(id: "lazy", message: "@ProtobufModel cannot code the lazy property '\(name)'")
    }

    /// A stored property declared with a tuple pattern, `var (a, b): (Int, Int)`.
    static let tuplePattern = Self(
        id: "tuplePattern",
        message: "@ProtobufModel needs each stored property declared by name, not with a tuple pattern"
    )

    /// A coded stored property with an attribute that may be a property wrapper.
    static func attributed(_ name: String) -> Self {
        Self(
            id: "attributed",
            message:
                "@ProtobufModel cannot code '\(name)': Codable codes a property wrapper as the wrapper, which the generated code does not read"
        )
    }

    /// A coded stored property named `Type` or `Protocol`, which no key path or member access can name.
    static func reservedName(_ name: String) -> Self {
        Self(id: "reservedName", message: "@ProtobufModel cannot name a member '\(name)' in generated code; rename it")
    }

    /// A `#if` block declaring stored properties, `CodingKeys`, `init(from:)` or `encode(to:)`.
    static let conditional = Self(
        id: "conditional",
        message:
            "@ProtobufModel reads only unconditional members: move stored properties, CodingKeys and coding methods out of #if"
    )

    /// A nested `CodingKeys` that is not an enum, whose keys the macro cannot list.
    static let codingKeysNotAnEnum = Self(
        id: "codingKeysNotAnEnum", message: "@ProtobufModel needs CodingKeys to be an enum whose cases it can read")

    /// A `CodingKeys` case that names no stored property.
    static func unknownCodingKey(_ name: String) -> Self {
        Self(id: "unknownCodingKey", message: "CodingKeys case '\(name)' matches no stored property")
    }

    /// A `CodingKeys` case for a `let` that has an initial value, which no initializer can set.
    static func immutableCodingKey(_ name: String) -> Self {
        Self(id: "immutableCodingKey", message: "'\(name)' cannot be decoded: it is a 'let' with an initial value")
    }

    /// A stored property without a `CodingKeys` case and without an initial value.
    static func uncodedWithoutValue(_ name: String) -> Self {
        Self(
            id: "uncodedWithoutValue",
            message: "'\(name)' has no case in CodingKeys, so it needs an initial value"
        )
    }
}
#endif
