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
    /// The declared type, verbatim.
    let type: String
}

/// The coded members of a struct, in declaration order, and the problems that stop the expansion: the stored
/// properties synthesized `Codable` would code, or the ones its `CodingKeys` names.
struct ProtobufModelMembers {
    /// The members, slot 0 first.
    private(set) var members: [CodedMember] = []
    /// The errors found; the macro expands only when there are none.
    private(set) var diagnostics: [Diagnostic] = []

    /// Reads the members of `declaration`.
    init(of declaration: StructDeclSyntax) {
        let body = declaration.memberBlock.members
        checkNoCustomCoding(body)
        let properties = storedProperties(body)
        guard let codingKeys = Self.codingKeys(body) else {
            for property in properties where !(property.isLet && property.hasInitialValue) {
                code(property, keyLiteral: StringLiteralExprSyntax(content: property.name).description)
            }
            return
        }
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
    private mutating func code(_ property: StoredProperty, keyLiteral: String) {
        if let lazy = property.declaration.modifiers.first(where: { $0.name.tokenKind == .keyword(.lazy) }) {
            diagnose(lazy, .lazy(property.name))
        } else if let type = property.type?.as(ImplicitlyUnwrappedOptionalTypeSyntax.self) {
            diagnose(type, .implicitlyUnwrapped(property.name))
        } else if let type = property.type {
            members.append(
                CodedMember(spelling: property.spelling, keyLiteral: keyLiteral, type: type.trimmedDescription))
        } else {
            diagnose(property.pattern, .missingType(property.name))
        }
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

    /// The cases of the struct's `enum CodingKeys: CodingKey`, or `nil` when it declares none.
    private static func codingKeys(_ body: MemberBlockItemListSyntax) -> [CodingKeyCase]? {
        let codingKeys = body.lazy.compactMap { $0.decl.as(EnumDeclSyntax.self) }.first {
            $0.name.identifier?.name == "CodingKeys"
                && $0.inheritanceClause?.inheritedTypes.contains { $0.type.lastName == "CodingKey" } == true
        }
        guard let codingKeys else { return nil }
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
