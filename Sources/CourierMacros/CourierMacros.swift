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
/// The coded members are those synthesized `Codable` codes: the stored properties (minus `let`s with a value),
/// or the cases of the struct's `CodingKeys`. Members need a type annotation. A struct with its own
/// `init(from:)` or `encode(to:)` is refused, as the generated code would bypass them.
@attached(
    extension, conformances: ProtobufModel,
    names: named(protobufMembers), named(init(protobuf:)), named(encodeProtobufMember(_:to:)))
public macro ProtobufModel() = #externalMacro(module: "CourierMacrosPlugin", type: "ProtobufModelMacro")
#endif
