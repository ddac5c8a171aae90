// CourierMacros: `@ProtobufModel`, which writes a model's ``ProtobufModel`` conformance. Importing it imports
// CourierCodecs (and the Courier core) too.
@_exported public import CourierCodecs

#if Macros
/// Makes a `Codable` struct a `ProtobufModel` (CourierCodecs): `ProtobufCodec` then reads and writes it member
/// by member, straight from and to the wire bytes, instead of through its `Codable` containers (same model, same
/// bytes, same errors, several times faster).
///
/// ```swift
/// @ProtobufModel
/// struct User: Codable {
///     var id: Int64
///     var name: String
///     var tags: [String]
///     var address: Address?  // Address is a @ProtobufModel too
/// }
/// ```
///
/// The coded members are those synthesized `Codable` codes: the stored properties (a `let` with a value is
/// written, not read), or the cases of the struct's `CodingKeys`. When the
/// struct declares no `CodingKeys`, the macro writes the ones `Codable` would synthesize, so that keys declared
/// elsewhere (in an extension) fail to compile rather than be ignored.
///
/// Refused at compile time, because the generated code would read or write the members differently from
/// `Codable`: a struct's own `init(from:)` or `encode(to:)`, a property wrapper on a coded property, and stored
/// properties or `CodingKeys` inside `#if`. An `init(from:)` or `encode(to:)` written in an extension cannot be
/// seen by the macro: do not give a `@ProtobufModel` struct one. The model must not be isolated to a global actor
/// (`@MainActor`): the codec reads it on any thread. A `public` model needs `public import CourierMacros`.
@attached(
    extension, conformances: ProtobufModel,
    names: named(CodingKeys), named(protobufMembers), named(init(protobuf:)), named(encodeProtobufMember(_:to:)))
public macro ProtobufModel() = #externalMacro(module: "CourierMacrosPlugin", type: "ProtobufModelMacro")
#endif
