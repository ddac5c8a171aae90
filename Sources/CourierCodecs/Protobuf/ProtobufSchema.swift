#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CProtobufC

/// Protocol Buffers message types loaded at run time from a compiled `FileDescriptorSet`, or from a
/// `.proto` file that `protoc` compiles on the fly. ``ProtobufCodec`` uses it to decode and encode messages
/// with protobuf-c; no generated code is involved.
///
/// Loading builds protobuf-c descriptors in memory (owned by the schema and freed with it). Messages are
/// named by their full name, `package.Message` (`demo.UserListResponse`).
///
/// ```swift
/// let schema = try ProtobufSchema(contentsOf: URL(fileURLWithPath: "Schemas/demo.pb"))
/// schema.messageNames                      // ["demo.Address", "demo.User", ...]
/// let user = schema.messageType(named: "demo.User")
/// user?.fields.map(\.jsonName)             // ["id", "name", "email", ...]
/// let codec = ProtobufCodec(schema: schema)
/// ```
public struct ProtobufSchema: Sendable {
    let runtime: ProtobufRuntime

    /// Loads a serialized `google.protobuf.FileDescriptorSet` (what `protoc --descriptor_set_out
    /// --include_imports` writes). Throws `CourierError.Code.invalidConfiguration` when the bytes are not
    /// one, or when a field refers to a type the set does not contain.
    public init(descriptorSet: Data) throws {
        let parsed: ParsedDescriptorSet
        do {
            parsed = try DescriptorParser.parse([UInt8](descriptorSet))
        } catch {
            throw CourierError(
                .invalidConfiguration,
                detail: "the descriptor set is not a valid FileDescriptorSet: \(error.message)",
                context: .init(offset: error.offset))
        }
        runtime = try ProtobufRuntime(parsed)
    }

    /// Loads a schema from a file: a compiled descriptor set (`.pb`, `.desc`, `.binpb`) or a `.proto` file,
    /// which is compiled with `protoc --descriptor_set_out --include_imports -I<its directory>` (found on
    /// `PATH`, or at the path in the `PROTOC` environment variable). A missing `protoc` or a compile error
    /// throws `CourierError.Code.invalidConfiguration` with protoc's message in the detail.
    public init(contentsOf url: URL) throws {
        if url.pathExtension.lowercased() == "proto" {
            try self.init(descriptorSet: try ProtocRunner.compile(url))
            return
        }
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw CourierError(
                .invalidConfiguration, detail: "cannot read the descriptor set \(url.path)", underlying: error)
        }
        try self.init(descriptorSet: data)
    }

    /// The full names of every message type, in the order the descriptor set declares them.
    public var messageNames: [String] { runtime.messages.map(\.fullName) }

    /// The message type named `fullName` (`demo.User`), if the schema has it.
    public func messageType(named fullName: String) -> MessageType? {
        guard let index = runtime.messageIndex[fullName] else { return nil }
        return runtime.publicMessage(index)
    }

    /// A message type: its fields in field-number order and its oneofs.
    public struct MessageType: Sendable, Hashable {
        /// The full name (`demo.User`).
        public var name: String
        /// The fields, ordered by field number.
        public var fields: [Field]
        /// The oneof groups' names (synthetic proto3 `optional` oneofs excluded).
        public var oneofs: [String]
        /// Whether this is the synthesized entry type of a `map<K, V>` field (key is field 1, value field 2).
        public var isMapEntry: Bool
    }

    /// One field of a message type.
    public struct Field: Sendable, Hashable {
        /// The name in the `.proto` file (`author_id`).
        public var name: String
        /// The proto3 JSON name (`authorId`), the member name ``ProtobufCodec`` decodes to.
        public var jsonName: String
        /// The field number.
        public var number: Int
        /// The scalar type, or `.message` / `.enumeration`.
        public var type: FieldType
        /// How many values the field holds and how presence is tracked.
        public var cardinality: Cardinality
        /// The full name of the message or enum type for `.message` and `.enumeration` fields.
        public var typeName: String?
        /// The oneof group the field belongs to.
        public var oneof: String?
        /// The enum's values (name and number, declaration order) for `.enumeration` fields.
        public var enumValues: [EnumValue]
        /// For `.enumeration` fields: whether the enum is closed (declared in a proto2 file), so that other
        /// implementations treat numbers it does not list as unknown fields. The codec reads them as numbers.
        public var isClosedEnum: Bool
        /// The proto2 `[default = ...]`, as the codec decodes it.
        public var defaultValue: Value?
    }

    /// One value of an enum.
    public struct EnumValue: Sendable, Hashable {
        /// The value's name (`TOPIC_STATUS_DRAFT`).
        public var name: String
        /// Its number.
        public var number: Int32
    }

    /// How many values a field holds and how its presence is known.
    public enum Cardinality: String, Sendable, Hashable {
        /// A proto3 singular field without presence: absent means its zero value.
        case implicit
        /// A field with explicit presence (proto2 `optional`, proto3 `optional`, a oneof member, a message).
        case optional
        /// A proto2 `required` field.
        case required
        /// A `repeated` field.
        case repeated
        /// A `map<K, V>` field (a repeated map-entry message on the wire).
        case map
    }

    /// A field's wire type as declared in the `.proto` file.
    public enum FieldType: String, Sendable, Hashable, CaseIterable {
        /// The scalar types, named as in a `.proto` file.
        case double, float, int64, uint64, int32, fixed64, fixed32, bool, string, bytes, uint32, sfixed32
        /// The remaining scalar types, named as in a `.proto` file.
        case sfixed64, sint32, sint64
        /// An enum (the codec writes names).
        case enumeration = "enum"
        /// A nested message.
        case message

        init?(descriptorType: Int32) {
            switch descriptorType {
            case 1: self = .double
            case 2: self = .float
            case 3: self = .int64
            case 4: self = .uint64
            case 5: self = .int32
            case 6: self = .fixed64
            case 7: self = .fixed32
            case 8: self = .bool
            case 9: self = .string
            case 11: self = .message
            case 12: self = .bytes
            case 13: self = .uint32
            case 14: self = .enumeration
            case 15: self = .sfixed32
            case 16: self = .sfixed64
            case 17: self = .sint32
            case 18: self = .sint64
            default: return nil  // 10: groups, which protobuf-c does not support
            }
        }

        var cType: ProtobufCType {
            switch self {
            case .int32: return PROTOBUF_C_TYPE_INT32
            case .sint32: return PROTOBUF_C_TYPE_SINT32
            case .sfixed32: return PROTOBUF_C_TYPE_SFIXED32
            case .int64: return PROTOBUF_C_TYPE_INT64
            case .sint64: return PROTOBUF_C_TYPE_SINT64
            case .sfixed64: return PROTOBUF_C_TYPE_SFIXED64
            case .uint32: return PROTOBUF_C_TYPE_UINT32
            case .fixed32: return PROTOBUF_C_TYPE_FIXED32
            case .uint64: return PROTOBUF_C_TYPE_UINT64
            case .fixed64: return PROTOBUF_C_TYPE_FIXED64
            case .float: return PROTOBUF_C_TYPE_FLOAT
            case .double: return PROTOBUF_C_TYPE_DOUBLE
            case .bool: return PROTOBUF_C_TYPE_BOOL
            case .enumeration: return PROTOBUF_C_TYPE_ENUM
            case .string: return PROTOBUF_C_TYPE_STRING
            case .bytes: return PROTOBUF_C_TYPE_BYTES
            case .message: return PROTOBUF_C_TYPE_MESSAGE
            }
        }

        /// Size (and alignment) of one value in a protobuf-c message struct.
        var cSize: Int {
            switch self {
            case .int32, .sint32, .sfixed32, .uint32, .fixed32, .float, .bool, .enumeration: return 4
            case .int64, .sint64, .sfixed64, .uint64, .fixed64, .double, .string, .message: return 8
            case .bytes: return 16
            }
        }

        var cAlignment: Int { self == .bytes ? 8 : cSize }

        /// Whether repeated values of this type may be packed.
        var isPackable: Bool { self != .string && self != .bytes && self != .message }
    }
}
