#if Macros
import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxBuilder
import SwiftSyntaxMacros

/// `@ProtobufModel`: conforms a struct to `CourierCodecs.ProtobufModel` with generated code that reads and writes
/// its coded stored properties (the ones synthesized `Codable` would code) by slot, without a `Decoder` or an
/// `Encoder`.
///
/// The slots are the coded properties in declaration order. The extension lists them in `protobufMembers`, reads
/// them in `init(protobuf:)` and writes one in `encodeProtobufMember(_:to:)`.
struct ProtobufModelMacro: ExtensionMacro {
    /// The conformance extension of the struct `declaration`, or nothing when it conforms already or when the
    /// macro reports errors instead.
    static func expansion(
        of node: AttributeSyntax,
        attachedTo declaration: some DeclGroupSyntax,
        providingExtensionsOf type: some TypeSyntaxProtocol,
        conformingTo protocols: [TypeSyntax],
        in context: some MacroExpansionContext
    ) -> [ExtensionDeclSyntax] {
        guard let structDecl = declaration.as(StructDeclSyntax.self) else {
            context.diagnose(Diagnostic(node: node, message: ProtobufModelDiagnostic.notAStruct))
            return []
        }
        // The compiler leaves out the protocols the type already conforms to.
        guard protocols.contains(where: { $0.lastName == "ProtobufModel" }) else { return [] }
        let analysis = ProtobufModelMembers(of: structDecl)
        guard analysis.diagnostics.isEmpty else {
            for diagnostic in analysis.diagnostics { context.diagnose(diagnostic) }
            return []
        }
        let source = extensionSource(
            type: type.trimmedDescription, access: accessModifier(of: structDecl),
            storesMembers: !isInGenericContext(structDecl, context), members: analysis.members,
            writesCodingKeys: !analysis.declaresCodingKeys)
        return [DeclSyntax(stringLiteral: source).cast(ExtensionDeclSyntax.self)]
    }

    /// The access modifier, with a trailing space, of the generated members: the struct's own when it is
    /// `public` or `package`, else none.
    static func accessModifier(of declaration: StructDeclSyntax) -> String {
        for modifier in declaration.modifiers {
            switch modifier.name.tokenKind {
            case .keyword(.public), .keyword(.open): return "public "
            case .keyword(.package): return "package "
            default: continue
            }
        }
        return ""
    }

    /// Whether the extension cannot declare a static stored property: the struct is generic, or is nested in a
    /// generic type or in an extension (of a type that may be generic).
    static func isInGenericContext(_ declaration: StructDeclSyntax, _ context: some MacroExpansionContext) -> Bool {
        ([Syntax(declaration)] + context.lexicalContext).contains { node in
            node.is(ExtensionDeclSyntax.self)
                || node.asProtocol((any WithGenericParametersSyntax).self)?.genericParameterClause != nil
        }
    }

    /// The source of the extension that conforms `type` to `ProtobufModel` over `members`. `protobufMembers` is a
    /// static `let` when `storesMembers`, else a computed `var` (for generic contexts). Member types are never
    /// spelled: key paths carry them, so the extension (at file scope) needs no name that only the struct's own
    /// scope knows (a sibling nested type, a generic parameter, a local typealias).
    static func extensionSource(
        type: String, access: String, storesMembers: Bool, members: [CodedMember], writesCodingKeys: Bool = false
    ) -> String {
        let slots = members.indices
        let decoded = slots.filter { members[$0].decodes }
        // The keys synthesized `Codable` would use (an empty enum cannot have a raw type: none then).
        let codingKeys =
            writesCodingKeys && !members.isEmpty
            ? "enum CodingKeys: String, CodingKey {\n" + members.map { "case \($0.spelling)\n" }.joined() + "}\n\n"
            : ""
        let memberList =
            members.isEmpty
            ? "[]"
            : "[\n"
                + members.map { "CourierCodecs.ProtobufMember(\($0.keyLiteral), \\Self.\($0.spelling)),\n" }.joined()
                + "]"
        let membersDecl =
            storesMembers
            ? "static let protobufMembers: [CourierCodecs.ProtobufMember] = \(memberList)"
            : "static var protobufMembers: [CourierCodecs.ProtobufMember] {\n\(memberList)\n}"
        let locals = decoded.map {
            "var _m\($0) = CourierCodecs.ProtobufModelReader.unset { (model: Self) in model.\(members[$0].spelling) }\n"
        }.joined()
        let reads = decoded.map { "case \($0): try reader.read(&_m\($0))\n" }.joined()
        let assignments = decoded.map { "self.\(members[$0].spelling) = try reader.finish(_m\($0), \($0))\n" }.joined()
        let writes = slots.map { "case \($0): try writer.write(self.\(members[$0].spelling))\n" }.joined()
        return """
            extension \(type): CourierCodecs.ProtobufModel {
            \(codingKeys)\(access)\(membersDecl)

            \(access)init(protobuf reader: inout CourierCodecs.ProtobufModelReader) \
            throws(CourierCodecs.ProtobufModelReader.Stop) {
            \(locals)while let _slot = try reader.nextMember() {
            switch _slot {
            \(reads)default: try reader.skipMember()
            }
            }
            \(assignments)}

            \(access)func encodeProtobufMember(_ slot: Int, to writer: inout CourierCodecs.ProtobufModelWriter) \
            throws(CourierCodecs.ProtobufModelWriter.Stop) {
            switch slot {
            \(writes)default: break
            }
            }
            }
            """
    }
}
#endif
