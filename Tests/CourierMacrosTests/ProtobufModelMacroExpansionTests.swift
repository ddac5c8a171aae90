#if Macros
@testable import CourierMacrosPlugin
import SwiftSyntax
import SwiftSyntaxBuilder
import SwiftSyntaxMacroExpansion
import SwiftSyntaxMacrosGenericTestSupport
import Testing

/// The source `@ProtobufModel` expands to, and the errors it reports instead.
@Suite struct ProtobufModelMacroExpansionTests {
    @Test func codesTheMembersSynthesizedCodableWould() {
        expect(
            """
            @ProtobufModel
            public struct User: Codable, Equatable {
                public var id: Int64
                public var name: String
                var tags: [String]
                var address: Address?
                var score: Double = 1
                let kind = "user"
                static var shared = 1
                var computed: Int { 1 }
            }
            """,
            expandsTo: """
                public struct User: Codable, Equatable {
                    public var id: Int64
                    public var name: String
                    var tags: [String]
                    var address: Address?
                    var score: Double = 1
                    let kind = "user"
                    static var shared = 1
                    var computed: Int { 1 }
                }

                extension User: CourierCodecs.ProtobufModel {
                    enum CodingKeys: String, CodingKey {
                        case id
                        case name
                        case tags
                        case address
                        case score
                        case kind
                    }

                    public static let protobufMembers: [CourierCodecs.ProtobufMember] = [
                        CourierCodecs.ProtobufMember("id", \\Self.id),
                        CourierCodecs.ProtobufMember("name", \\Self.name),
                        CourierCodecs.ProtobufMember("tags", \\Self.tags),
                        CourierCodecs.ProtobufMember("address", \\Self.address),
                        CourierCodecs.ProtobufMember("score", \\Self.score),
                        CourierCodecs.ProtobufMember("kind", \\Self.kind),
                    ]

                    public init(protobuf reader: inout CourierCodecs.ProtobufModelReader) throws(CourierCodecs.ProtobufModelReader.Stop) {
                        var _m0 = CourierCodecs.ProtobufModelReader.unset { (model: Self) in
                            model.id
                        }
                        var _m1 = CourierCodecs.ProtobufModelReader.unset { (model: Self) in
                            model.name
                        }
                        var _m2 = CourierCodecs.ProtobufModelReader.unset { (model: Self) in
                            model.tags
                        }
                        var _m3 = CourierCodecs.ProtobufModelReader.unset { (model: Self) in
                            model.address
                        }
                        var _m4 = CourierCodecs.ProtobufModelReader.unset { (model: Self) in
                            model.score
                        }
                        while let _slot = try reader.nextMember() {
                            switch _slot {
                            case 0:
                                try reader.read(&_m0)
                            case 1:
                                try reader.read(&_m1)
                            case 2:
                                try reader.read(&_m2)
                            case 3:
                                try reader.read(&_m3)
                            case 4:
                                try reader.read(&_m4)
                            default:
                                try reader.skipMember()
                            }
                        }
                        self.id = try reader.finish(_m0, 0)
                        self.name = try reader.finish(_m1, 1)
                        self.tags = try reader.finish(_m2, 2)
                        self.address = try reader.finish(_m3, 3)
                        self.score = try reader.finish(_m4, 4)
                    }

                    public func encodeProtobufMember(_ slot: Int, to writer: inout CourierCodecs.ProtobufModelWriter) throws(CourierCodecs.ProtobufModelWriter.Stop) {
                        switch slot {
                        case 0:
                            try writer.write(self.id)
                        case 1:
                            try writer.write(self.name)
                        case 2:
                            try writer.write(self.tags)
                        case 3:
                            try writer.write(self.address)
                        case 4:
                            try writer.write(self.score)
                        case 5:
                            try writer.write(self.kind)
                        default:
                            break
                        }
                    }
                }
                """
        )
    }

    @Test func codingKeysChooseAndRenameTheMembers() {
        expect(
            """
            @ProtobufModel
            struct User: Codable {
                var id: Int64
                var name: String
                var cache: [String: Int] = [:]
                var note: String?
                let version: Int
                enum CodingKeys: String, CodingKey {
                    case version = "v", name = "full_name"
                    case id
                }
            }
            """,
            expandsTo: """
                struct User: Codable {
                    var id: Int64
                    var name: String
                    var cache: [String: Int] = [:]
                    var note: String?
                    let version: Int
                    enum CodingKeys: String, CodingKey {
                        case version = "v", name = "full_name"
                        case id
                    }
                }

                extension User: CourierCodecs.ProtobufModel {
                    static let protobufMembers: [CourierCodecs.ProtobufMember] = [
                        CourierCodecs.ProtobufMember("id", \\Self.id),
                        CourierCodecs.ProtobufMember("full_name", \\Self.name),
                        CourierCodecs.ProtobufMember("v", \\Self.version),
                    ]

                    init(protobuf reader: inout CourierCodecs.ProtobufModelReader) throws(CourierCodecs.ProtobufModelReader.Stop) {
                        var _m0 = CourierCodecs.ProtobufModelReader.unset { (model: Self) in
                            model.id
                        }
                        var _m1 = CourierCodecs.ProtobufModelReader.unset { (model: Self) in
                            model.name
                        }
                        var _m2 = CourierCodecs.ProtobufModelReader.unset { (model: Self) in
                            model.version
                        }
                        while let _slot = try reader.nextMember() {
                            switch _slot {
                            case 0:
                                try reader.read(&_m0)
                            case 1:
                                try reader.read(&_m1)
                            case 2:
                                try reader.read(&_m2)
                            default:
                                try reader.skipMember()
                            }
                        }
                        self.id = try reader.finish(_m0, 0)
                        self.name = try reader.finish(_m1, 1)
                        self.version = try reader.finish(_m2, 2)
                    }

                    func encodeProtobufMember(_ slot: Int, to writer: inout CourierCodecs.ProtobufModelWriter) throws(CourierCodecs.ProtobufModelWriter.Stop) {
                        switch slot {
                        case 0:
                            try writer.write(self.id)
                        case 1:
                            try writer.write(self.name)
                        case 2:
                            try writer.write(self.version)
                        default:
                            break
                        }
                    }
                }
                """
        )
    }

    @Test func codingKeysWithIntegerRawValuesKeepTheCaseNames() {
        expect(
            """
            @ProtobufModel
            struct Point: Codable {
                var x: Int
                var y: Int
                enum CodingKeys: Int, CodingKey {
                    case x = 1, y = 2
                }
            }
            """,
            expandsTo: """
                struct Point: Codable {
                    var x: Int
                    var y: Int
                    enum CodingKeys: Int, CodingKey {
                        case x = 1, y = 2
                    }
                }

                extension Point: CourierCodecs.ProtobufModel {
                    static let protobufMembers: [CourierCodecs.ProtobufMember] = [
                        CourierCodecs.ProtobufMember("x", \\Self.x),
                        CourierCodecs.ProtobufMember("y", \\Self.y),
                    ]

                    init(protobuf reader: inout CourierCodecs.ProtobufModelReader) throws(CourierCodecs.ProtobufModelReader.Stop) {
                        var _m0 = CourierCodecs.ProtobufModelReader.unset { (model: Self) in
                            model.x
                        }
                        var _m1 = CourierCodecs.ProtobufModelReader.unset { (model: Self) in
                            model.y
                        }
                        while let _slot = try reader.nextMember() {
                            switch _slot {
                            case 0:
                                try reader.read(&_m0)
                            case 1:
                                try reader.read(&_m1)
                            default:
                                try reader.skipMember()
                            }
                        }
                        self.x = try reader.finish(_m0, 0)
                        self.y = try reader.finish(_m1, 1)
                    }

                    func encodeProtobufMember(_ slot: Int, to writer: inout CourierCodecs.ProtobufModelWriter) throws(CourierCodecs.ProtobufModelWriter.Stop) {
                        switch slot {
                        case 0:
                            try writer.write(self.x)
                        case 1:
                            try writer.write(self.y)
                        default:
                            break
                        }
                    }
                }
                """
        )
    }

    /// `Codable` uses any nested type named `CodingKeys`, whatever its conformances say (an extension may add
    /// `CodingKey`), so the macro reads it too.
    @Test func anEnumNamedCodingKeysIsReadWhateverItsConformances() {
        expect(
            """
            @ProtobufModel
            struct Token: Codable {
                var value: String
                enum CodingKeys: String {
                    case other
                }
            }
            """,
            expandsTo: """
                struct Token: Codable {
                    var value: String
                    enum CodingKeys: String {
                        case other
                    }
                }
                """,
            diagnostics: [
                DiagnosticSpec(message: "CodingKeys case 'other' matches no stored property", line: 5, column: 14),
                DiagnosticSpec(message: "'value' has no case in CodingKeys, so it needs an initial value", line: 3, column: 9),
            ]
        )
    }

    @Test func everyBindingOfADeclarationIsAMember() {
        expect(
            """
            @ProtobufModel
            struct Pair: Codable {
                var a, b: Int
                var c: Int, d: String
                let e: Bool, f = 1
            }
            """,
            expandsTo: """
                struct Pair: Codable {
                    var a, b: Int
                    var c: Int, d: String
                    let e: Bool, f = 1
                }

                extension Pair: CourierCodecs.ProtobufModel {
                    enum CodingKeys: String, CodingKey {
                        case a
                        case b
                        case c
                        case d
                        case e
                        case f
                    }

                    static let protobufMembers: [CourierCodecs.ProtobufMember] = [
                        CourierCodecs.ProtobufMember("a", \\Self.a),
                        CourierCodecs.ProtobufMember("b", \\Self.b),
                        CourierCodecs.ProtobufMember("c", \\Self.c),
                        CourierCodecs.ProtobufMember("d", \\Self.d),
                        CourierCodecs.ProtobufMember("e", \\Self.e),
                        CourierCodecs.ProtobufMember("f", \\Self.f),
                    ]

                    init(protobuf reader: inout CourierCodecs.ProtobufModelReader) throws(CourierCodecs.ProtobufModelReader.Stop) {
                        var _m0 = CourierCodecs.ProtobufModelReader.unset { (model: Self) in
                            model.a
                        }
                        var _m1 = CourierCodecs.ProtobufModelReader.unset { (model: Self) in
                            model.b
                        }
                        var _m2 = CourierCodecs.ProtobufModelReader.unset { (model: Self) in
                            model.c
                        }
                        var _m3 = CourierCodecs.ProtobufModelReader.unset { (model: Self) in
                            model.d
                        }
                        var _m4 = CourierCodecs.ProtobufModelReader.unset { (model: Self) in
                            model.e
                        }
                        while let _slot = try reader.nextMember() {
                            switch _slot {
                            case 0:
                                try reader.read(&_m0)
                            case 1:
                                try reader.read(&_m1)
                            case 2:
                                try reader.read(&_m2)
                            case 3:
                                try reader.read(&_m3)
                            case 4:
                                try reader.read(&_m4)
                            default:
                                try reader.skipMember()
                            }
                        }
                        self.a = try reader.finish(_m0, 0)
                        self.b = try reader.finish(_m1, 1)
                        self.c = try reader.finish(_m2, 2)
                        self.d = try reader.finish(_m3, 3)
                        self.e = try reader.finish(_m4, 4)
                    }

                    func encodeProtobufMember(_ slot: Int, to writer: inout CourierCodecs.ProtobufModelWriter) throws(CourierCodecs.ProtobufModelWriter.Stop) {
                        switch slot {
                        case 0:
                            try writer.write(self.a)
                        case 1:
                            try writer.write(self.b)
                        case 2:
                            try writer.write(self.c)
                        case 3:
                            try writer.write(self.d)
                        case 4:
                            try writer.write(self.e)
                        case 5:
                            try writer.write(self.f)
                        default:
                            break
                        }
                    }
                }
                """
        )
    }

    @Test func backtickedNamesKeyWithoutBackticks() {
        expect(
            """
            @ProtobufModel
            struct Settings: Codable {
                var `default`: Int
                var `class`: String
                enum CodingKeys: CodingKey {
                    case `default`, `class`
                }
            }
            """,
            expandsTo: """
                struct Settings: Codable {
                    var `default`: Int
                    var `class`: String
                    enum CodingKeys: CodingKey {
                        case `default`, `class`
                    }
                }

                extension Settings: CourierCodecs.ProtobufModel {
                    static let protobufMembers: [CourierCodecs.ProtobufMember] = [
                        CourierCodecs.ProtobufMember("default", \\Self.`default`),
                        CourierCodecs.ProtobufMember("class", \\Self.`class`),
                    ]

                    init(protobuf reader: inout CourierCodecs.ProtobufModelReader) throws(CourierCodecs.ProtobufModelReader.Stop) {
                        var _m0 = CourierCodecs.ProtobufModelReader.unset { (model: Self) in
                            model.`default`
                        }
                        var _m1 = CourierCodecs.ProtobufModelReader.unset { (model: Self) in
                            model.`class`
                        }
                        while let _slot = try reader.nextMember() {
                            switch _slot {
                            case 0:
                                try reader.read(&_m0)
                            case 1:
                                try reader.read(&_m1)
                            default:
                                try reader.skipMember()
                            }
                        }
                        self.`default` = try reader.finish(_m0, 0)
                        self.`class` = try reader.finish(_m1, 1)
                    }

                    func encodeProtobufMember(_ slot: Int, to writer: inout CourierCodecs.ProtobufModelWriter) throws(CourierCodecs.ProtobufModelWriter.Stop) {
                        switch slot {
                        case 0:
                            try writer.write(self.`default`)
                        case 1:
                            try writer.write(self.`class`)
                        default:
                            break
                        }
                    }
                }
                """
        )
    }

    /// A property wrapper is coded by `Codable` as the wrapper, which the generated code would not read: refused.
    @Test func propertyWrappersAreRefused() {
        expect(
            """
            @ProtobufModel
            struct Level: Codable {
                @Clamped var value: Int
                var observed: Int { didSet { print(observed) } }
                var stored: Int { get { 1 } set {} }
            }
            """,
            expandsTo: """
                struct Level: Codable {
                    @Clamped var value: Int
                    var observed: Int { didSet { print(observed) } }
                    var stored: Int { get { 1 } set {} }
                }
                """,
            diagnostics: [
                DiagnosticSpec(
                    message:
                        "@ProtobufModel cannot code 'value': Codable codes a property wrapper as the wrapper, which the generated code does not read",
                    line: 3, column: 5)
            ]
        )
    }

    @Test func conditionalMembersAreRefused() {
        let message =
            "@ProtobufModel reads only unconditional members: move stored properties, CodingKeys and coding methods out of #if"
        expect(
            """
            @ProtobufModel
            struct Flags: Codable {
                var a: Int
                #if DEBUG
                var b: Int = 0
                #endif
                #if os(Linux)
                func helper() {}
                #endif
            }
            """,
            expandsTo: """
                struct Flags: Codable {
                    var a: Int
                    #if DEBUG
                    var b: Int = 0
                    #endif
                    #if os(Linux)
                    func helper() {}
                    #endif
                }
                """,
            diagnostics: [DiagnosticSpec(message: message, line: 4, column: 5)]
        )
    }

    @Test func membersNamedTypeOrProtocolAndKeysThatAreNoEnumAreRefused() {
        expect(
            """
            @ProtobufModel
            struct Odd: Codable {
                var `Type`: Int
                struct CodingKeys: CodingKey {
                    var stringValue: String
                    var intValue: Int?
                    init?(stringValue: String) { self.stringValue = stringValue }
                    init?(intValue: Int) { nil }
                }
            }
            """,
            expandsTo: """
                struct Odd: Codable {
                    var `Type`: Int
                    struct CodingKeys: CodingKey {
                        var stringValue: String
                        var intValue: Int?
                        init?(stringValue: String) { self.stringValue = stringValue }
                        init?(intValue: Int) { nil }
                    }
                }
                """,
            diagnostics: [
                DiagnosticSpec(
                    message: "@ProtobufModel needs CodingKeys to be an enum whose cases it can read", line: 4, column: 5),
                DiagnosticSpec(
                    message: "'Type' has no case in CodingKeys, so it needs an initial value", line: 3, column: 9),
            ]
        )
        expect(
            """
            @ProtobufModel
            struct Odd: Codable {
                var `Type`: Int
            }
            """,
            expandsTo: """
                struct Odd: Codable {
                    var `Type`: Int
                }
                """,
            diagnostics: [
                DiagnosticSpec(
                    message: "@ProtobufModel cannot name a member 'Type' in generated code; rename it", line: 3,
                    column: 9)
            ]
        )
    }

    @Test func packageStructsGetPackageMembers() {
        expect(
            """
            @ProtobufModel
            package struct Flag: Codable {
                var on: Bool
            }
            """,
            expandsTo: """
                package struct Flag: Codable {
                    var on: Bool
                }

                extension Flag: CourierCodecs.ProtobufModel {
                    enum CodingKeys: String, CodingKey {
                        case on
                    }

                    package static let protobufMembers: [CourierCodecs.ProtobufMember] = [
                        CourierCodecs.ProtobufMember("on", \\Self.on),
                    ]

                    package init(protobuf reader: inout CourierCodecs.ProtobufModelReader) throws(CourierCodecs.ProtobufModelReader.Stop) {
                        var _m0 = CourierCodecs.ProtobufModelReader.unset { (model: Self) in
                            model.on
                        }
                        while let _slot = try reader.nextMember() {
                            switch _slot {
                            case 0:
                                try reader.read(&_m0)
                            default:
                                try reader.skipMember()
                            }
                        }
                        self.on = try reader.finish(_m0, 0)
                    }

                    package func encodeProtobufMember(_ slot: Int, to writer: inout CourierCodecs.ProtobufModelWriter) throws(CourierCodecs.ProtobufModelWriter.Stop) {
                        switch slot {
                        case 0:
                            try writer.write(self.on)
                        default:
                            break
                        }
                    }
                }
                """
        )
    }

    @Test func privateStructsGetMembersWithoutAccessModifier() {
        expect(
            """
            @ProtobufModel
            private struct Flag: Codable {
                var on: Bool
            }
            """,
            expandsTo: """
                private struct Flag: Codable {
                    var on: Bool
                }

                extension Flag: CourierCodecs.ProtobufModel {
                    enum CodingKeys: String, CodingKey {
                        case on
                    }

                    static let protobufMembers: [CourierCodecs.ProtobufMember] = [
                        CourierCodecs.ProtobufMember("on", \\Self.on),
                    ]

                    init(protobuf reader: inout CourierCodecs.ProtobufModelReader) throws(CourierCodecs.ProtobufModelReader.Stop) {
                        var _m0 = CourierCodecs.ProtobufModelReader.unset { (model: Self) in
                            model.on
                        }
                        while let _slot = try reader.nextMember() {
                            switch _slot {
                            case 0:
                                try reader.read(&_m0)
                            default:
                                try reader.skipMember()
                            }
                        }
                        self.on = try reader.finish(_m0, 0)
                    }

                    func encodeProtobufMember(_ slot: Int, to writer: inout CourierCodecs.ProtobufModelWriter) throws(CourierCodecs.ProtobufModelWriter.Stop) {
                        switch slot {
                        case 0:
                            try writer.write(self.on)
                        default:
                            break
                        }
                    }
                }
                """
        )
    }

    @Test func anEmptyStructStillConforms() {
        expect(
            """
            @ProtobufModel
            struct Empty: Codable {
                let kind = "empty"
            }
            """,
            expandsTo: """
                struct Empty: Codable {
                    let kind = "empty"
                }

                extension Empty: CourierCodecs.ProtobufModel {
                    enum CodingKeys: String, CodingKey {
                        case kind
                    }

                    static let protobufMembers: [CourierCodecs.ProtobufMember] = [
                        CourierCodecs.ProtobufMember("kind", \\Self.kind),
                    ]

                    init(protobuf reader: inout CourierCodecs.ProtobufModelReader) throws(CourierCodecs.ProtobufModelReader.Stop) {
                        while let _slot = try reader.nextMember() {
                            switch _slot {
                            default:
                                try reader.skipMember()
                            }
                        }
                    }

                    func encodeProtobufMember(_ slot: Int, to writer: inout CourierCodecs.ProtobufModelWriter) throws(CourierCodecs.ProtobufModelWriter.Stop) {
                        switch slot {
                        case 0:
                            try writer.write(self.kind)
                        default:
                            break
                        }
                    }
                }
                """
        )
    }

    @Test func aGenericStructExtendsTheGivenType() {
        expect(
            """
            @ProtobufModel
            struct Box<Value: Codable>: Codable {
                var value: Value
                var values: [Value]
            }
            """,
            expandsTo: """
                struct Box<Value: Codable>: Codable {
                    var value: Value
                    var values: [Value]
                }

                extension Box: CourierCodecs.ProtobufModel {
                    enum CodingKeys: String, CodingKey {
                        case value
                        case values
                    }

                    static var protobufMembers: [CourierCodecs.ProtobufMember] {
                        [
                            CourierCodecs.ProtobufMember("value", \\Self.value),
                            CourierCodecs.ProtobufMember("values", \\Self.values),
                        ]
                    }

                    init(protobuf reader: inout CourierCodecs.ProtobufModelReader) throws(CourierCodecs.ProtobufModelReader.Stop) {
                        var _m0 = CourierCodecs.ProtobufModelReader.unset { (model: Self) in
                            model.value
                        }
                        var _m1 = CourierCodecs.ProtobufModelReader.unset { (model: Self) in
                            model.values
                        }
                        while let _slot = try reader.nextMember() {
                            switch _slot {
                            case 0:
                                try reader.read(&_m0)
                            case 1:
                                try reader.read(&_m1)
                            default:
                                try reader.skipMember()
                            }
                        }
                        self.value = try reader.finish(_m0, 0)
                        self.values = try reader.finish(_m1, 1)
                    }

                    func encodeProtobufMember(_ slot: Int, to writer: inout CourierCodecs.ProtobufModelWriter) throws(CourierCodecs.ProtobufModelWriter.Stop) {
                        switch slot {
                        case 0:
                            try writer.write(self.value)
                        case 1:
                            try writer.write(self.values)
                        default:
                            break
                        }
                    }
                }
                """
        )
    }

    @Test func nestedStructsStoreTheirMembersOnlyOutsideGenericTypesAndExtensions() {
        expect(
            """
            enum Namespace {
                @ProtobufModel
                struct Plain: Codable {}
            }
            struct Outer<T> {
                @ProtobufModel
                struct InGeneric: Codable {}
            }
            extension Namespace {
                @ProtobufModel
                struct InExtension: Codable {}
            }
            """,
            expandsTo: """
                enum Namespace {
                    struct Plain: Codable {}
                }
                struct Outer<T> {
                    struct InGeneric: Codable {}
                }
                extension Namespace {
                    struct InExtension: Codable {}
                }

                extension Namespace.Plain: CourierCodecs.ProtobufModel {
                    static let protobufMembers: [CourierCodecs.ProtobufMember] = []

                    init(protobuf reader: inout CourierCodecs.ProtobufModelReader) throws(CourierCodecs.ProtobufModelReader.Stop) {
                        while let _slot = try reader.nextMember() {
                            switch _slot {
                            default:
                                try reader.skipMember()
                            }
                        }
                    }

                    func encodeProtobufMember(_ slot: Int, to writer: inout CourierCodecs.ProtobufModelWriter) throws(CourierCodecs.ProtobufModelWriter.Stop) {
                        switch slot {
                        default:
                            break
                        }
                    }
                }

                extension Outer.InGeneric: CourierCodecs.ProtobufModel {
                    static var protobufMembers: [CourierCodecs.ProtobufMember] {
                        []
                    }

                    init(protobuf reader: inout CourierCodecs.ProtobufModelReader) throws(CourierCodecs.ProtobufModelReader.Stop) {
                        while let _slot = try reader.nextMember() {
                            switch _slot {
                            default:
                                try reader.skipMember()
                            }
                        }
                    }

                    func encodeProtobufMember(_ slot: Int, to writer: inout CourierCodecs.ProtobufModelWriter) throws(CourierCodecs.ProtobufModelWriter.Stop) {
                        switch slot {
                        default:
                            break
                        }
                    }
                }

                extension Namespace.InExtension: CourierCodecs.ProtobufModel {
                    static var protobufMembers: [CourierCodecs.ProtobufMember] {
                        []
                    }

                    init(protobuf reader: inout CourierCodecs.ProtobufModelReader) throws(CourierCodecs.ProtobufModelReader.Stop) {
                        while let _slot = try reader.nextMember() {
                            switch _slot {
                            default:
                                try reader.skipMember()
                            }
                        }
                    }

                    func encodeProtobufMember(_ slot: Int, to writer: inout CourierCodecs.ProtobufModelWriter) throws(CourierCodecs.ProtobufModelWriter.Stop) {
                        switch slot {
                        default:
                            break
                        }
                    }
                }
                """
        )
    }

    @Test func aStructThatAlreadyConformsGetsNothing() {
        expect(
            """
            @ProtobufModel
            struct Flag: Codable {
                var on: Bool
            }
            """,
            expandsTo: """
                struct Flag: Codable {
                    var on: Bool
                }
                """,
            alreadyConforms: true
        )
    }

    // MARK: - diagnostics

    @Test(arguments: ["class", "enum", "actor", "protocol"])
    func onlyStructsAreAccepted(kind: String) {
        expect(
            """
            @ProtobufModel
            \(kind) User {
            }
            """,
            expandsTo: """
                \(kind) User {
                }
                """,
            diagnostics: [DiagnosticSpec(message: "@ProtobufModel applies to structs", line: 1, column: 1)]
        )
    }

    @Test func customInitFromAndEncodeToAreRefused() {
        let message =
            "@ProtobufModel reads and writes the members directly and would bypass your custom init(from:)/encode(to:)"
        expect(
            """
            @ProtobufModel
            struct User: Codable {
                var id: Int
                init(from decoder: any Decoder) throws { id = 0 }
                func encode(to encoder: any Encoder) throws {}
                init(from id: Int, other: Int) { self.id = id }
                func encode(_ value: Int) {}
            }
            """,
            expandsTo: """
                struct User: Codable {
                    var id: Int
                    init(from decoder: any Decoder) throws { id = 0 }
                    func encode(to encoder: any Encoder) throws {}
                    init(from id: Int, other: Int) { self.id = id }
                    func encode(_ value: Int) {}
                }
                """,
            diagnostics: [
                DiagnosticSpec(message: message, line: 4, column: 5),
                DiagnosticSpec(message: message, line: 5, column: 10),
            ]
        )
    }

    /// Members are named by key path and closure, never by type: inferred types need no annotation, and a `let`
    /// with a value is written (as `Codable` encodes it) but not read.
    @Test func inferredTypesNeedNoAnnotationAndLetsWithValuesAreOnlyWritten() {
        expect(
            """
            @ProtobufModel
            struct User: Codable {
                var id = 5
                let name = "skipped, so no annotation needed"
            }
            """,
            expandsTo: """
                struct User: Codable {
                    var id = 5
                    let name = "skipped, so no annotation needed"
                }

                extension User: CourierCodecs.ProtobufModel {
                    enum CodingKeys: String, CodingKey {
                        case id
                        case name
                    }

                    static let protobufMembers: [CourierCodecs.ProtobufMember] = [
                        CourierCodecs.ProtobufMember("id", \\Self.id),
                        CourierCodecs.ProtobufMember("name", \\Self.name),
                    ]

                    init(protobuf reader: inout CourierCodecs.ProtobufModelReader) throws(CourierCodecs.ProtobufModelReader.Stop) {
                        var _m0 = CourierCodecs.ProtobufModelReader.unset { (model: Self) in
                            model.id
                        }
                        while let _slot = try reader.nextMember() {
                            switch _slot {
                            case 0:
                                try reader.read(&_m0)
                            default:
                                try reader.skipMember()
                            }
                        }
                        self.id = try reader.finish(_m0, 0)
                    }

                    func encodeProtobufMember(_ slot: Int, to writer: inout CourierCodecs.ProtobufModelWriter) throws(CourierCodecs.ProtobufModelWriter.Stop) {
                        switch slot {
                        case 0:
                            try writer.write(self.id)
                        case 1:
                            try writer.write(self.name)
                        default:
                            break
                        }
                    }
                }
                """
        )
    }

    @Test func implicitlyUnwrappedOptionalsAreRefused() {
        expect(
            """
            @ProtobufModel
            struct User: Codable {
                var id: Int!
            }
            """,
            expandsTo: """
                struct User: Codable {
                    var id: Int!
                }
                """,
            diagnostics: [
                DiagnosticSpec(
                    message: "@ProtobufModel cannot code the implicitly unwrapped optional 'id'; declare it with '?'",
                    line: 3, column: 13)
            ]
        )
    }

    @Test func lazyPropertiesAreRefused() {
        expect(
            """
            @ProtobufModel
            struct User: Codable {
                lazy var cache: Int = 0
            }
            """,
            expandsTo: """
                struct User: Codable {
                    lazy var cache: Int = 0
                }
                """,
            diagnostics: [
                DiagnosticSpec(message: "@ProtobufModel cannot code the lazy property 'cache'", line: 3, column: 5)
            ]
        )
    }

    @Test func tuplePatternsAreRefused() {
        expect(
            """
            @ProtobufModel
            struct Pair: Codable {
                var (a, b): (Int, Int)
                let (c, d) = (1, 2)
            }
            """,
            expandsTo: """
                struct Pair: Codable {
                    var (a, b): (Int, Int)
                    let (c, d) = (1, 2)
                }
                """,
            diagnostics: [
                DiagnosticSpec(
                    message: "@ProtobufModel needs each stored property declared by name, not with a tuple pattern",
                    line: 3, column: 9)
            ]
        )
    }

    @Test func codingKeysProblemsAreReportedTogether() {
        expect(
            """
            @ProtobufModel
            struct User: Codable {
                var id: Int
                var name: String
                let kind = "user"
                lazy var cache: Int = 0
                var note: String? = nil
                var total: Int { 1 }
                enum CodingKeys: String, CodingKey {
                    case id, kind, fullName = "full_name", total
                }
            }
            """,
            expandsTo: """
                struct User: Codable {
                    var id: Int
                    var name: String
                    let kind = "user"
                    lazy var cache: Int = 0
                    var note: String? = nil
                    var total: Int { 1 }
                    enum CodingKeys: String, CodingKey {
                        case id, kind, fullName = "full_name", total
                    }
                }
                """,
            diagnostics: [
                DiagnosticSpec(message: "CodingKeys case 'fullName' matches no stored property", line: 10, column: 24),
                DiagnosticSpec(message: "CodingKeys case 'total' matches no stored property", line: 10, column: 48),
                DiagnosticSpec(
                    message: "'name' has no case in CodingKeys, so it needs an initial value", line: 4, column: 9),
                DiagnosticSpec(
                    message: "'kind' cannot be decoded: it is a 'let' with an initial value", line: 10, column: 18),
            ]
        )
    }
}

/// Asserts that `source` expands to `expanded` with exactly `diagnostics`, recording each mismatch as an issue.
/// `alreadyConforms` expands it as for a struct that conforms to `ProtobufModel` already.
private func expect(
    _ source: String,
    expandsTo expanded: String,
    diagnostics: [DiagnosticSpec] = [],
    alreadyConforms: Bool = false,
    fileID: StaticString = #fileID,
    filePath: StaticString = #filePath,
    line: UInt = #line,
    column: UInt = #column
) {
    let conformances: [TypeSyntax] = alreadyConforms ? [] : ["ProtobufModel"]
    assertMacroExpansion(
        source,
        expandedSource: expanded,
        diagnostics: diagnostics,
        macroSpecs: ["ProtobufModel": MacroSpec(type: ProtobufModelMacro.self, conformances: conformances)],
        indentationWidth: .spaces(4),
        failureHandler: {
            Issue.record(
                Comment(rawValue: $0.message),
                sourceLocation: SourceLocation(
                    fileID: $0.location.fileID, filePath: $0.location.filePath, line: $0.location.line,
                    column: $0.location.column))
        },
        fileID: fileID,
        filePath: filePath,
        line: line,
        column: column
    )
}
#endif
