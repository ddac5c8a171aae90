#if Macros
import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxBuilder

/// A stored property `@ProtobufModel` reads and writes: one slot of the generated code.
struct CodedMember: Equatable {
    /// The name as declared, backticks included: what follows `self.`.
    let spelling: String
    /// The key, as a string literal in source form (`"full_name"`).
    let keyLiteral: String
    /// The declared type, verbatim (empty when inferred).
    let type: String
    /// Whether `init(from:)` decodes it: not a `let` with an initial value, which synthesized `Codable` encodes
    /// but cannot decode.
    var decodes = true
}

/// The coded members of a struct, in declaration order, and the problems that stop the expansion: the stored
/// properties synthesized `Codable` would code, or the ones its `CodingKeys` names.
struct ProtobufModelMembers {
    /// The members, slot 0 first.
    private(set) var members: [CodedMember] = []
    /// The errors found; the macro expands only when there are none.
    private(set) var diagnostics: [Diagnostic] = []
    /// Whether the struct declares its own `CodingKeys` (else the macro writes the ones `Codable` would
    /// synthesize, so that a `CodingKeys` declared where the macro cannot see it fails to compile).
    private(set) var declaresCodingKeys = false

    /// Reads the members of `declaration`.
    init(of declaration: StructDeclSyntax) {
        let body = declaration.memberBlock.members
        checkNoCustomCoding(body)
        checkNoConditionalMembers(body)
        let properties = storedProperties(body)
        guard let codingKeys = codingKeys(body) else {
            for property in properties {
                code(
                    property, keyLiteral: StringLiteralExprSyntax(content: property.name).description,
                    decodes: !(property.isLet && property.hasInitialValue))
            }
            return
        }
        declaresCodingKeys = true
        let names = Set(properties.map(\.name))
        for key in codingKeys where !names.contains(key.name) {
            diagnose(key.node, .unknownCodingKey(key.name))
        }
        for property in properties {
            if let key = codingKeys.first(where: { $0.name == property.name }) {
                if property.isLet && property.hasInitialValue {
                    diagnose(key.node, .immutableCodingKey(property.name))
                } else {
                    code(property, keyLiteral: key.keyLiteral)
                }
            } else if !property.hasInitialValue {
                diagnose(property.pattern, .uncodedWithoutValue(property.name))
            }
        }
    }

    /// Records an error at `node`.
    private mutating func diagnose(_ node: some SyntaxProtocol, _ message: ProtobufModelDiagnostic) {
        diagnostics.append(Diagnostic(node: node, message: message))
    }

    /// Appends `property` as the next member, or diagnoses why it cannot be coded.
    private mutating func code(_ property: StoredProperty, keyLiteral: String, decodes: Bool = true) {
        if let lazy = property.declaration.modifiers.first(where: { $0.name.tokenKind == .keyword(.lazy) }) {
            diagnose(lazy, .lazy(property.name))
        } else if let wrapper = property.declaration.attributes.first(where: { !Self.isBuiltIn($0) }) {
            diagnose(wrapper, .attributed(property.name))
        } else if ["Type", "Protocol"].contains(property.name) {
            diagnose(property.pattern, .reservedName(property.name))
        } else if let type = property.type?.as(ImplicitlyUnwrappedOptionalTypeSyntax.self) {
            diagnose(type, .implicitlyUnwrapped(property.name))
        } else {
            // The generated code names members by key path and closure, never by type: an inferred type is fine.
            members.append(
                CodedMember(
                    spelling: property.spelling, keyLiteral: keyLiteral,
                    type: property.type?.trimmedDescription ?? "", decodes: decodes))
        }
    }

    /// Whether `attribute` is one of the compiler's own that leave a stored property's coding alone (anything
    /// else on a stored property may be a property wrapper, which synthesized `Codable` codes as the wrapper).
    private static func isBuiltIn(_ attribute: AttributeListSyntax.Element) -> Bool {
        guard case .attribute(let attribute) = attribute else { return false }
        let builtIn = ["available", "usableFromInline", "exclusivity", "preconcurrency", "objc", "nonobjc"]
        return builtIn.contains(attribute.attributeName.trimmedDescription)
    }

    /// Diagnoses `#if` blocks that declare members the generated code would have to see (stored properties,
    /// `CodingKeys`, `init(from:)`, `encode(to:)`): it reads only the struct's unconditional members.
    private mutating func checkNoConditionalMembers(_ body: MemberBlockItemListSyntax) {
        for member in body {
            guard let conditional = member.decl.as(IfConfigDeclSyntax.self) else { continue }
            let declarations = conditional.clauses.compactMap { $0.elements?.as(MemberBlockItemListSyntax.self) }
                .flatMap { $0.map(\.decl) }
            let matters = declarations.contains { declaration in
                if let variable = declaration.as(VariableDeclSyntax.self) {
                    return !variable.modifiers.contains { [.keyword(.static), .keyword(.class)].contains($0.name.tokenKind) }
                }
                if declaration.is(IfConfigDeclSyntax.self) || declaration.is(InitializerDeclSyntax.self) { return true }
                if let function = declaration.as(FunctionDeclSyntax.self) { return function.name.text == "encode" }
                return Self.declaredName(declaration) == "CodingKeys"
            }
            if matters { diagnose(conditional.clauses.first?.poundKeyword ?? conditional.poundEndif, .conditional) }
        }
    }

    /// The name a nested type declaration declares.
    private static func declaredName(_ declaration: DeclSyntax) -> String? {
        if let type = declaration.asProtocol((any NamedDeclSyntax).self) { return type.name.identifier?.name ?? type.name.text }
        return nil
    }

    /// Diagnoses a hand-written `init(from:)` or `encode(to:)`.
    private mutating func checkNoCustomCoding(_ body: MemberBlockItemListSyntax) {
        for member in body {
            if let initializer = member.decl.as(InitializerDeclSyntax.self),
                initializer.signature.parameterClause.parameters.map(\.firstName.text) == ["from"]
            {
                diagnose(initializer.initKeyword, .customCoding)
            } else if let function = member.decl.as(FunctionDeclSyntax.self), function.name.text == "encode",
                function.signature.parameterClause.parameters.map(\.firstName.text) == ["to"]
            {
                diagnose(function.name, .customCoding)
            }
        }
    }

    /// The instance stored properties, in declaration order; diagnoses tuple patterns that would be coded.
    private mutating func storedProperties(_ body: MemberBlockItemListSyntax) -> [StoredProperty] {
        let typeLevel: [TokenKind] = [.keyword(.static), .keyword(.class)]
        var properties: [StoredProperty] = []
        for member in body {
            guard let variable = member.decl.as(VariableDeclSyntax.self),
                !variable.modifiers.contains(where: { typeLevel.contains($0.name.tokenKind) })
            else { continue }
            let isLet = variable.bindingSpecifier.tokenKind == .keyword(.let)
            let bindings = Array(variable.bindings)
            for (index, binding) in bindings.enumerated() where binding.isStored {
                guard let pattern = binding.pattern.as(IdentifierPatternSyntax.self) else {
                    if !isLet || binding.initializer == nil { diagnose(binding.pattern, .tuplePattern) }
                    continue
                }
                // `var a, b: Int`: `a` takes its type from the next annotated binding.
                let type =
                    binding.typeAnnotation?.type
                    ?? (binding.initializer == nil
                        ? bindings[(index + 1)...].lazy.compactMap(\.typeAnnotation).first?.type : nil)
                let hasInitialValue =
                    binding.initializer != nil || (!isLet && type?.is(OptionalTypeSyntax.self) == true)
                properties.append(
                    StoredProperty(
                        spelling: pattern.identifier.trimmedDescription,
                        name: pattern.identifier.identifier?.name ?? pattern.identifier.text,
                        type: type, isLet: isLet, hasInitialValue: hasInitialValue, pattern: pattern,
                        declaration: variable))
            }
        }
        return properties
    }

    /// The cases of the struct's nested `CodingKeys` (whatever its conformances say: `Codable` uses any nested type
    /// of that name), or `nil` when it declares none; diagnoses one that is not an enum.
    private mutating func codingKeys(_ body: MemberBlockItemListSyntax) -> [CodingKeyCase]? {
        guard let declaration = body.lazy.map(\.decl).first(where: { Self.declaredName($0) == "CodingKeys" }) else {
            return nil
        }
        guard let codingKeys = declaration.as(EnumDeclSyntax.self) else {
            diagnose(declaration, .codingKeysNotAnEnum)
            return []
        }
        return codingKeys.memberBlock.members
            .compactMap { $0.decl.as(EnumCaseDeclSyntax.self) }
            .flatMap(\.elements)
            .map { element in
                let name = element.name.identifier?.name ?? element.name.text
                let rawValue = element.rawValue?.value.as(StringLiteralExprSyntax.self)
                return CodingKeyCase(
                    name: name,
                    keyLiteral: rawValue?.trimmedDescription ?? StringLiteralExprSyntax(content: name).description,
                    node: element)
            }
    }
}

/// An instance stored property as declared.
private struct StoredProperty {
    /// The name as declared, backticks included.
    let spelling: String
    /// The name without backticks.
    let name: String
    /// The annotated type (for `var a, b: Int`, `b`'s for `a` too); `nil` when inferred.
    let type: TypeSyntax?
    /// Whether it is a `let`.
    let isLet: Bool
    /// Whether it has an initial value: an explicit one, or the implicit `nil` of an optional `var`.
    let hasInitialValue: Bool
    /// Its name in the declaration, where diagnostics point.
    let pattern: IdentifierPatternSyntax
    /// The declaration it is part of.
    let declaration: VariableDeclSyntax
}

/// A case of `CodingKeys`.
private struct CodingKeyCase {
    /// The case name without backticks.
    let name: String
    /// The key: the case's string raw value as written, or else its name as a string literal.
    let keyLiteral: String
    /// The case, where diagnostics point.
    let node: EnumCaseElementSyntax
}

extension PatternBindingSyntax {
    /// Whether the binding stores its value: it has no accessors, or only `willSet` and `didSet`.
    fileprivate var isStored: Bool {
        switch accessorBlock?.accessors {
        case nil: true
        case .getter: false
        case .accessors(let accessors):
            accessors.allSatisfy { [.keyword(.willSet), .keyword(.didSet)].contains($0.accessorSpecifier.tokenKind) }
        }
    }
}

extension TypeSyntax {
    /// The last component of a type name: `ProtobufModel` for `CourierCodecs.ProtobufModel`.
    var lastName: String? {
        if let type = self.as(IdentifierTypeSyntax.self) { return type.name.identifier?.name }
        if let type = self.as(MemberTypeSyntax.self) { return type.name.identifier?.name }
        return nil
    }
}
#endif
