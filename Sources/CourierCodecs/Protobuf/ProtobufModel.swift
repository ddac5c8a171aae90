// Models the protobuf codec reads and writes through generated code: `@ProtobufModel` (CourierMacros) writes a
// conformance that reads each member straight from the wire bytes by slot (`switch` on the member's position,
// no `Codable` container, no key lookup per field) and writes each member straight to the wire. The codec
// compiles a plan once per (message type, model type) that maps field numbers to slots and checks that every
// member's Swift type and field agree; anything the plan does not cover exactly goes through `Codable`, which
// the model keeps. Either way the answer is the one `ValueDecoder`/`ValueEncoder` give over the `Value` pivot.

/// A `Codable` model the protobuf codec reads and writes through generated code rather than through its
/// `Codable` containers: several times faster, with the same model, bytes and errors.
///
/// Write `@ProtobufModel` on the struct (the `CourierMacros` product, `Macros` trait) rather than conforming by
/// hand:
///
/// ```swift
/// import CourierMacros
///
/// @ProtobufModel
/// struct User: Codable {
///     var id: Int64
///     var name: String
///     var tags: [String]
///     var address: Address?
/// }
/// ```
///
/// ``ProtobufCodec/decode(_:from:hints:decoder:)`` and ``ProtobufCodec/encode(model:hints:encoder:)`` then read
/// and write `User` member by member. They go through `Codable` instead, with the same result, when a member's
/// type has no direct form (see ``ProtobufField``), when a member and its field do not agree (an `Int32` member
/// for an `int64` field, a member for an enum or a map), for unusual options (a key strategy,
/// ``ProtobufCodec/Options/includeDefaultValues`` off, unknown fields rejected) and for any input or value they
/// do not reproduce exactly (errors included: the error always comes from the `Codable` path).
public protocol ProtobufModel: ProtobufField, Codable {
    /// The coded members in declaration order (their position is their slot): coding key and Swift type.
    static var protobufMembers: [ProtobufMember] { get }

    /// Reads the model's members from `reader`, slot by slot (``ProtobufModelReader/nextMember()``).
    init(protobuf reader: inout ProtobufModelReader) throws(ProtobufModelReader.Stop)

    /// Writes the member in `slot` to `writer` (its generated `switch` calls the writer's `write(_:)`).
    func encodeProtobufMember(_ slot: Int, to writer: inout ProtobufModelWriter) throws(ProtobufModelWriter.Stop)
}

/// One coded member of a ``ProtobufModel``: its coding key and the shape of its Swift type.
public struct ProtobufMember: @unchecked Sendable {  // holds metatypes of models only
    /// The member's coding key (what `Codable` would look up).
    public let key: String
    let shape: ProtobufFieldShape

    /// A member of a type the codec reads and writes directly.
    public init<T: ProtobufField>(_ key: String, _ type: T.Type) {
        self.key = key
        self.shape = T.protobufShape.shape
    }

    /// A member of any other type: its model then always goes through `Codable`.
    public init<T>(_ key: String, _ type: T.Type) {
        self.key = key
        self.shape = .unsupported
    }

    /// A member of a type the codec reads and writes directly, named by its key path (what `@ProtobufModel`
    /// writes: the type need not be spelled).
    public init<Root, T: ProtobufField>(_ key: String, _ keyPath: KeyPath<Root, T>) {
        self.init(key, T.self)
    }

    /// A member of any other type, named by its key path: its model then always goes through `Codable`.
    public init<Root, T>(_ key: String, _ keyPath: KeyPath<Root, T>) {
        self.init(key, T.self)
    }
}

/// The shape of a member's Swift type, as the plan compiler matches it against a field.
indirect enum ProtobufFieldShape {
    case int32, int64, uint32, uint64, float, double, bool, string
    case message(any ProtobufModel.Type)
    case repeated(ProtobufFieldShape)
    case optional(ProtobufFieldShape)
    case unsupported
}

/// A type a ``ProtobufModel`` member can have and the codec reads and writes directly: `Int32`, `Int64`, `Int`,
/// `UInt32`, `UInt64`, `UInt`, `Float`, `Double`, `Bool`, `String`, other ``ProtobufModel``s, and arrays and
/// optionals of these. Courier provides every conformance; the requirements are for the generated code.
public protocol ProtobufField {
    /// The shape the plan compiler matches against the member's field.
    static var protobufShape: ProtobufFieldShapeToken { get }

    /// Reads the current field's value into `slot` (arrays append; singular fields are read once).
    static func mergeProtobuf(into slot: inout Self?, from reader: inout ProtobufModelReader)
        throws(ProtobufModelReader.Stop)

    /// The value `Codable` would see for a field absent from the input, or `nil` when it would see no member.
    static func absentProtobufValue(_ absence: ProtobufAbsence) -> Self?

    /// Writes the value (with its key) to the current field; nothing for what protobuf leaves out.
    func writeProtobuf(to writer: inout ProtobufModelWriter) throws(ProtobufModelWriter.Stop)
}

/// An opaque ``ProtobufField`` shape (what ``ProtobufField/protobufShape`` returns).
public struct ProtobufFieldShapeToken: @unchecked Sendable {  // holds metatypes of models only
    let shape: ProtobufFieldShape
    init(_ shape: ProtobufFieldShape) { self.shape = shape }
}

/// What `Codable` sees for a field absent from the input (``ProtobufField/absentProtobufValue(_:)``).
public struct ProtobufAbsence: Sendable {
    @usableFromInline enum Kind: Sendable { case zero, empty, omitted }
    @usableFromInline let kind: Kind
}

// MARK: - conformances

/// The scalar conformances' shared parts.
protocol ProtobufScalarField: ProtobufField {
    static var zero: Self { get }
    static func readProtobuf(_ reader: inout ProtobufModelReader) throws(ProtobufModelReader.Stop) -> Self
}

extension ProtobufScalarField {
    public static func mergeProtobuf(into slot: inout Self?, from reader: inout ProtobufModelReader)
        throws(ProtobufModelReader.Stop)
    {
        slot = try readProtobuf(&reader)
    }

    public static func absentProtobufValue(_ absence: ProtobufAbsence) -> Self? {
        absence.kind == .zero ? zero : nil
    }
}

extension Int32: ProtobufScalarField {
    public static var protobufShape: ProtobufFieldShapeToken { .init(.int32) }
    static var zero: Int32 { 0 }
    static func readProtobuf(_ reader: inout ProtobufModelReader) throws(ProtobufModelReader.Stop) -> Int32 {
        Int32(truncatingIfNeeded: try reader.signed())
    }
    public func writeProtobuf(to writer: inout ProtobufModelWriter) throws(ProtobufModelWriter.Stop) {
        try writer.signed(Int64(self))
    }
}

extension Int64: ProtobufScalarField {
    public static var protobufShape: ProtobufFieldShapeToken { .init(.int64) }
    static var zero: Int64 { 0 }
    static func readProtobuf(_ reader: inout ProtobufModelReader) throws(ProtobufModelReader.Stop) -> Int64 {
        try reader.signed()
    }
    public func writeProtobuf(to writer: inout ProtobufModelWriter) throws(ProtobufModelWriter.Stop) {
        try writer.signed(self)
    }
}

extension Int: ProtobufScalarField {
    public static var protobufShape: ProtobufFieldShapeToken {
        #if arch(x86_64) || arch(arm64) || arch(powerpc64le) || arch(s390x) || arch(riscv64)
        .init(.int64)
        #else
        .init(.unsupported)  // 32-bit: `Int` is `Int32`-sized, which the 64-bit rules do not describe
        #endif
    }
    static var zero: Int { 0 }
    static func readProtobuf(_ reader: inout ProtobufModelReader) throws(ProtobufModelReader.Stop) -> Int {
        Int(truncatingIfNeeded: try reader.signed())
    }
    public func writeProtobuf(to writer: inout ProtobufModelWriter) throws(ProtobufModelWriter.Stop) {
        try writer.signed(Int64(self))
    }
}

extension UInt32: ProtobufScalarField {
    public static var protobufShape: ProtobufFieldShapeToken { .init(.uint32) }
    static var zero: UInt32 { 0 }
    static func readProtobuf(_ reader: inout ProtobufModelReader) throws(ProtobufModelReader.Stop) -> UInt32 {
        UInt32(truncatingIfNeeded: try reader.unsigned())
    }
    public func writeProtobuf(to writer: inout ProtobufModelWriter) throws(ProtobufModelWriter.Stop) {
        try writer.unsigned(UInt64(self))
    }
}

extension UInt64: ProtobufScalarField {
    public static var protobufShape: ProtobufFieldShapeToken { .init(.uint64) }
    static var zero: UInt64 { 0 }
    static func readProtobuf(_ reader: inout ProtobufModelReader) throws(ProtobufModelReader.Stop) -> UInt64 {
        try reader.unsigned()
    }
    public func writeProtobuf(to writer: inout ProtobufModelWriter) throws(ProtobufModelWriter.Stop) {
        try writer.unsigned(self)
    }
}

extension UInt: ProtobufScalarField {
    public static var protobufShape: ProtobufFieldShapeToken {
        #if arch(x86_64) || arch(arm64) || arch(powerpc64le) || arch(s390x) || arch(riscv64)
        .init(.uint64)
        #else
        .init(.unsupported)  // 32-bit: `UInt` is `UInt32`-sized, which the 64-bit rules do not describe
        #endif
    }
    static var zero: UInt { 0 }
    static func readProtobuf(_ reader: inout ProtobufModelReader) throws(ProtobufModelReader.Stop) -> UInt {
        UInt(truncatingIfNeeded: try reader.unsigned())
    }
    public func writeProtobuf(to writer: inout ProtobufModelWriter) throws(ProtobufModelWriter.Stop) {
        try writer.unsigned(UInt64(self))
    }
}

extension Double: ProtobufScalarField {
    public static var protobufShape: ProtobufFieldShapeToken { .init(.double) }
    static var zero: Double { 0 }
    static func readProtobuf(_ reader: inout ProtobufModelReader) throws(ProtobufModelReader.Stop) -> Double {
        try reader.floating()
    }
    public func writeProtobuf(to writer: inout ProtobufModelWriter) throws(ProtobufModelWriter.Stop) {
        try writer.double(self)
    }
}

extension Float: ProtobufScalarField {
    public static var protobufShape: ProtobufFieldShapeToken { .init(.float) }
    static var zero: Float { 0 }
    static func readProtobuf(_ reader: inout ProtobufModelReader) throws(ProtobufModelReader.Stop) -> Float {
        Float(try reader.floating())
    }
    public func writeProtobuf(to writer: inout ProtobufModelWriter) throws(ProtobufModelWriter.Stop) {
        try writer.float(self)
    }
}

extension Bool: ProtobufScalarField {
    public static var protobufShape: ProtobufFieldShapeToken { .init(.bool) }
    static var zero: Bool { false }
    static func readProtobuf(_ reader: inout ProtobufModelReader) throws(ProtobufModelReader.Stop) -> Bool {
        try reader.unsigned() != 0
    }
    public func writeProtobuf(to writer: inout ProtobufModelWriter) throws(ProtobufModelWriter.Stop) {
        try writer.bool(self)
    }
}

extension String: ProtobufScalarField {
    public static var protobufShape: ProtobufFieldShapeToken { .init(.string) }
    static var zero: String { "" }
    static func readProtobuf(_ reader: inout ProtobufModelReader) throws(ProtobufModelReader.Stop) -> String {
        try reader.string()
    }
    public func writeProtobuf(to writer: inout ProtobufModelWriter) throws(ProtobufModelWriter.Stop) {
        try writer.string(self)
    }
}

extension Array: ProtobufField where Element: ProtobufField {
    public static var protobufShape: ProtobufFieldShapeToken { .init(.repeated(Element.protobufShape.shape)) }

    @inlinable
    public static func mergeProtobuf(into slot: inout [Element]?, from reader: inout ProtobufModelReader)
        throws(ProtobufModelReader.Stop)
    {
        // Moved out and back (not copied), so that the array stays uniquely referenced as it grows.
        var elements = slot.take() ?? []
        if reader.isPackedRun {
            let outer = try reader.beginPackedRun()
            while !reader.isAtRunEnd {
                var element: Element?
                try Element.mergeProtobuf(into: &element, from: &reader)
                guard let element = element.take() else { throw ProtobufModelReader.Stop() }
                elements.append(element)
                reader.countPackedElement()
            }
            reader.endPackedRun(outer)
        } else {
            var element: Element?
            try Element.mergeProtobuf(into: &element, from: &reader)
            guard let element = element.take() else { throw ProtobufModelReader.Stop() }
            elements.append(element)
        }
        slot = elements
    }

    @inlinable
    public static func absentProtobufValue(_ absence: ProtobufAbsence) -> [Element]? {
        absence.kind == .empty ? [] : nil
    }

    @inlinable
    public func writeProtobuf(to writer: inout ProtobufModelWriter) throws(ProtobufModelWriter.Stop) {
        if isEmpty { return }
        if writer.isPacked {
            let position = writer.beginPackedRun()
            for element in self { try element.writeProtobuf(to: &writer) }
            writer.endPackedRun(position)
        } else {
            for element in self { try element.writeProtobuf(to: &writer) }
        }
    }
}

extension Optional: ProtobufField where Wrapped: ProtobufField {
    public static var protobufShape: ProtobufFieldShapeToken { .init(.optional(Wrapped.protobufShape.shape)) }

    @inlinable
    public static func mergeProtobuf(into slot: inout Wrapped??, from reader: inout ProtobufModelReader)
        throws(ProtobufModelReader.Stop)
    {
        var inner: Wrapped? = slot.take() ?? nil
        try Wrapped.mergeProtobuf(into: &inner, from: &reader)
        slot = .some(inner)
    }

    @inlinable
    public static func absentProtobufValue(_ absence: ProtobufAbsence) -> Wrapped?? {
        // A member `Codable` does not see decodes as nil; one it sees holds what the field's absence gives.
        absence.kind == .omitted ? .some(nil) : Wrapped.absentProtobufValue(absence).map { .some($0) }
    }

    @inlinable
    public func writeProtobuf(to writer: inout ProtobufModelWriter) throws(ProtobufModelWriter.Stop) {
        // `encodeIfPresent` leaves a nil member out.
        if let self { try self.writeProtobuf(to: &writer) }
    }
}

extension ProtobufModel {
    /// A model's shape: a nested message.
    public static var protobufShape: ProtobufFieldShapeToken { .init(.message(Self.self)) }

    @inlinable
    public static func mergeProtobuf(into slot: inout Self?, from reader: inout ProtobufModelReader)
        throws(ProtobufModelReader.Stop)
    {
        slot = try reader.message(Self.self)
    }

    @inlinable
    public static func absentProtobufValue(_ absence: ProtobufAbsence) -> Self? { nil }

    @inlinable
    public func writeProtobuf(to writer: inout ProtobufModelWriter) throws(ProtobufModelWriter.Stop) {
        try writer.message(self)
    }
}
