#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CProtobufC
import Synchronization

/// How a field is stored in the protobuf-c message struct.
enum FieldStorage {
    /// proto3 singular scalar/string/bytes without presence (`PROTOBUF_C_LABEL_NONE`).
    case implicit
    /// A scalar or bytes with a `protobuf_c_boolean has_x` at the quantifier offset (`LABEL_OPTIONAL`).
    case hasFlag
    /// A string or message pointer whose NULL (or default) means absent (`LABEL_OPTIONAL`, no quantifier).
    case pointer
    /// A proto2 `required` field (`LABEL_REQUIRED`).
    case required
    /// `size_t n_x` at the quantifier offset and an array pointer at the offset (`LABEL_REPEATED`).
    case repeated
    /// A oneof member: `uint32_t x_case` at the quantifier offset, the value in a union at the offset.
    case oneof
}

/// Everything the codec needs about one field, precomputed so the C-struct walk does no lookups.
struct FieldLayout {
    var name: String
    var jsonName: String
    var number: UInt32
    var type: ProtobufSchema.FieldType
    var storage: FieldStorage
    var offset: Int
    var quantifierOffset: Int
    var messageIndex: Int  // for .message fields, else -1
    var enumIndex: Int  // for .enumeration fields, else -1
    var isMap: Bool
    var packed: Bool
    var oneofIndex: Int  // index into MessageLayout.oneofNames, else -1
    var typeName: String?
    var cDefault: UnsafeRawPointer?
    var defaultValue: Value?
}

/// The part of a ``FieldLayout`` the C-struct walks touch, as a trivial struct (copying it is a memcpy: no
/// reference counting in the hot loops). `owner`/`index` lead back to the full layout for messages.
struct HotField {
    var number: UInt32
    var type: ProtobufSchema.FieldType
    var storage: FieldStorage
    var isMap: Bool
    var offset: Int
    var quantifierOffset: Int
    var messageIndex: Int
    var enumIndex: Int
    var cDefault: UnsafeRawPointer?
    var owner: Int
    var index: Int
}

/// One message type: its C descriptor and its field layouts in field-number order.
final class MessageLayout {
    let fullName: String
    let descriptor: UnsafeMutablePointer<ProtobufCMessageDescriptor>
    // The layout vars are written only while the runtime is built, then only read: no run-time exclusivity checks.
    @exclusivity(unchecked) var fields: [FieldLayout] = []
    /// `fields` in walk form, same order.
    @exclusivity(unchecked) var hot: [HotField] = [] {
        didSet {
            hotFields.deallocate()
            let copy = UnsafeMutableBufferPointer<HotField>.allocate(capacity: hot.count)
            _ = copy.initialize(from: hot)
            hotFields = UnsafeBufferPointer(copy)
        }
    }
    /// `hot` in memory the layout owns: the one-pass reader's loop reads it without retaining an array.
    @exclusivity(unchecked) private(set) var hotFields = UnsafeBufferPointer<HotField>(start: nil, count: 0)
    /// The fields' JSON names, same order.
    @exclusivity(unchecked) var jsonNames: [String] = []
    @exclusivity(unchecked) var fieldsByName: [String: Int] = [:]
    /// Field index by JSON name (the first field of a name), for the typed decoder's keyed lookups.
    @exclusivity(unchecked) var jsonIndex: [String: Int] = [:]
    /// Whether two fields share a JSON name (the typed decoder then leaves the type to the pivot).
    @exclusivity(unchecked) var jsonNamesCollide = false
    /// Whether a JSON name holds `_` (`convertFromSnakeCase` would rename it; left to the pivot).
    @exclusivity(unchecked) var jsonNamesHaveUnderscores = false
    @exclusivity(unchecked) var oneofNames: [String] = []
    @exclusivity(unchecked) var isMapEntry = false
    @exclusivity(unchecked) var sizeofMessage = 0
    @exclusivity(unchecked) var hasRequiredFields = false
    /// Longest chain of nested message fields below this type (Int.max when the type is recursive).
    @exclusivity(unchecked) var nesting = 0

    init(fullName: String, descriptor: UnsafeMutablePointer<ProtobufCMessageDescriptor>) {
        self.fullName = fullName
        self.descriptor = descriptor
    }

    deinit {
        hotFields.deallocate()
    }

    /// The field numbered `number` (binary search over the number-ordered fields).
    func field(number: UInt32) -> Int? {
        var low = 0
        var high = fields.count - 1
        while low <= high {
            let mid = (low + high) / 2
            let n = fields[mid].number
            if n == number { return mid }
            if n < number { low = mid + 1 } else { high = mid - 1 }
        }
        return nil
    }
}

/// One enum type: names by number and numbers by name.
final class EnumLayout {
    let fullName: String
    let values: [(name: String, number: Int32)]
    let nameByNumber: [Int32: Value]
    let numberByName: [String: Int32]
    let descriptor: UnsafeMutablePointer<ProtobufCEnumDescriptor>
    /// Declared in a proto2 file: numbers it does not list are unknown to other implementations.
    let isClosed: Bool

    init(
        fullName: String, values: [(name: String, number: Int32)], isClosed: Bool,
        descriptor: UnsafeMutablePointer<ProtobufCEnumDescriptor>
    ) {
        self.fullName = fullName
        self.isClosed = isClosed
        self.values = values
        self.descriptor = descriptor
        var byNumber: [Int32: Value] = [:]
        var byName: [String: Int32] = [:]
        for (name, number) in values {
            if byNumber[number] == nil { byNumber[number] = .string(name) }
            byName[name] = number
        }
        nameByNumber = byNumber
        numberByName = byName
    }
}

/// Owns the C memory of the protobuf-c descriptors built from a descriptor set, and the Swift-side layouts.
/// Immutable once built (hence `@unchecked Sendable`): the C descriptors are only read, by any thread.
final class ProtobufRuntime: @unchecked Sendable {
    // Written only while the runtime is built, then only read: no run-time exclusivity checks.
    @exclusivity(unchecked) private(set) var messages: [MessageLayout] = []
    /// `messages` as unretained references, in memory of the runtime's own: the one-pass reader reaches a
    /// nested message's layout without retaining it (``messages`` keeps every layout alive).
    @exclusivity(unchecked) private(set) var messageRefs = UnsafeMutableBufferPointer<Unmanaged<MessageLayout>>(
        start: nil, count: 0)
    @exclusivity(unchecked) private(set) var enums: [EnumLayout] = []
    @exclusivity(unchecked) private(set) var messageIndex: [String: Int] = [:]
    @exclusivity(unchecked) private(set) var enumIndex: [String: Int] = [:]
    private var allocations: [UnsafeMutableRawPointer] = []
    /// The message type ``messageIndex(named:)`` found last (any thread's: a hint, checked before use).
    private let lastMessage = Atomic<Int>(0)
    /// The ``ProtobufModel`` plans compiled over this schema.
    let modelPlans = ProtobufModelPlans()

    deinit {
        for pointer in allocations { free(pointer) }
        messageRefs.deallocate()
    }

    /// The index of the message type named `name` (a full name without the leading dot). The type found last
    /// is tried first (a codec mostly reads and writes one type per call site): one compare of the names
    /// instead of hashing the name for every call.
    func messageIndex(named name: String) -> Int? {
        let last = lastMessage.load(ordering: .relaxed)
        if last < messages.count, messages[last].fullName == name { return last }
        guard let index = messageIndex[name] else { return nil }
        lastMessage.store(index, ordering: .relaxed)
        return index
    }

    // MARK: C memory

    private func allocate(_ size: Int) -> UnsafeMutableRawPointer {
        let pointer = calloc(1, max(size, 1))!
        allocations.append(pointer)
        return pointer
    }

    private func cString(_ string: String) -> UnsafePointer<CChar> {
        let pointer = strdup(string)!
        allocations.append(UnsafeMutableRawPointer(pointer))
        return UnsafePointer(pointer)
    }

    private func allocate<T>(_ type: T.Type, count: Int) -> UnsafeMutablePointer<T> {
        allocate(MemoryLayout<T>.stride * max(count, 1)).bindMemory(to: T.self, capacity: max(count, 1))
    }

    // MARK: building

    init(_ parsed: ParsedDescriptorSet) throws {
        // Later duplicates of a name (the same file included twice) are ignored.
        var enumList: [ParsedEnum] = []
        for e in parsed.enums where enumIndex[e.fullName] == nil {
            enumIndex[e.fullName] = enumList.count
            enumList.append(e)
        }
        var messageList: [ParsedMessage] = []
        for m in parsed.messages where messageIndex[m.fullName] == nil {
            messageIndex[m.fullName] = messageList.count
            messageList.append(m)
        }
        for e in enumList { enums.append(buildEnum(e)) }
        for m in messageList {
            let descriptor = allocate(ProtobufCMessageDescriptor.self, count: 1)
            let layout = MessageLayout(fullName: m.fullName, descriptor: descriptor)
            layout.isMapEntry = m.isMapEntry
            messages.append(layout)
        }
        messageRefs = .allocate(capacity: messages.count)
        _ = messageRefs.initialize(from: messages.lazy.map { Unmanaged.passUnretained($0) })
        for (i, m) in messageList.enumerated() { try buildMessage(m, into: messages[i], index: i) }
        computeNesting()
    }

    private func buildEnum(_ parsed: ParsedEnum) -> EnumLayout {
        // protobuf-c wants unique values sorted by number, names sorted by strcmp, and ranges of consecutive
        // numbers with a sentinel.
        var unique: [(name: String, number: Int32)] = []
        var seen = Set<Int32>()
        for value in parsed.values where seen.insert(value.number).inserted { unique.append(value) }
        unique.sort { $0.number < $1.number }
        let values = allocate(ProtobufCEnumValue.self, count: unique.count)
        for (i, value) in unique.enumerated() {
            let name = cString(value.name)
            values[i] = ProtobufCEnumValue(name: name, c_name: name, value: Int32(value.number))
        }
        let byName = unique.indices.sorted { unique[$0].name.utf8.lexicographicallyPrecedes(unique[$1].name.utf8) }
        let indexByName = allocate(ProtobufCEnumValueIndex.self, count: byName.count)
        for (i, index) in byName.enumerated() {
            indexByName[i] = ProtobufCEnumValueIndex(name: values[index].name, index: UInt32(index))
        }
        let ranges = makeRanges(unique.map(\.number))
        let rangePointer = allocate(ProtobufCIntRange.self, count: ranges.count)
        for (i, r) in ranges.enumerated() { rangePointer[i] = r }
        let descriptor = allocate(ProtobufCEnumDescriptor.self, count: 1)
        let shortName = String(parsed.fullName.split(separator: ".").last ?? Substring(parsed.fullName))
        descriptor.pointee = ProtobufCEnumDescriptor(
            magic: UInt32(PROTOBUF_C__ENUM_DESCRIPTOR_MAGIC), name: cString(parsed.fullName),
            short_name: cString(shortName), c_name: cString(parsed.fullName.replacingDots()),
            package_name: cString(parsed.package), n_values: UInt32(unique.count), values: values,
            n_value_names: UInt32(byName.count), values_by_name: indexByName,
            n_value_ranges: UInt32(ranges.count - 1), value_ranges: rangePointer,
            reserved1: nil, reserved2: nil, reserved3: nil, reserved4: nil)
        return EnumLayout(
            fullName: parsed.fullName, values: parsed.values, isClosed: parsed.syntax != "proto3", descriptor: descriptor)
    }

    /// Ranges of consecutive numbers (`start_value`, index of the first) plus the `{0, count}` sentinel that
    /// protobuf-c's `int_range_lookup` reads past the last range.
    private func makeRanges(_ sortedNumbers: [Int32]) -> [ProtobufCIntRange] {
        var ranges: [ProtobufCIntRange] = []
        for (i, number) in sortedNumbers.enumerated() {
            if i == 0 || sortedNumbers[i - 1] + 1 != number {
                ranges.append(ProtobufCIntRange(start_value: number, orig_index: UInt32(i)))
            }
        }
        ranges.append(ProtobufCIntRange(start_value: 0, orig_index: UInt32(sortedNumbers.count)))
        return ranges
    }

    private func resolve(_ typeName: String, scope: String, in table: [String: Int]) -> (String, Int)? {
        if typeName.hasPrefix(".") {
            let name = String(typeName.dropFirst())
            return table[name].map { (name, $0) }
        }
        var scopeParts = scope.split(separator: ".").map(String.init)
        while true {
            let candidate = (scopeParts + [typeName]).joined(separator: ".")
            if let index = table[candidate] { return (candidate, index) }
            if scopeParts.isEmpty { return nil }
            scopeParts.removeLast()
        }
    }

    private func buildMessage(_ parsed: ParsedMessage, into layout: MessageLayout, index owner: Int) throws {
        let proto3 = parsed.syntax == "proto3"
        // Oneofs that only wrap a proto3 `optional` field are synthetic: such fields are plain optionals.
        var realOneof = [Bool](repeating: false, count: parsed.oneofNames.count)
        for field in parsed.fields where !field.proto3Optional {
            if let index = field.oneofIndex, index >= 0, index < realOneof.count { realOneof[index] = true }
        }
        var oneofRemap: [Int: Int] = [:]
        for (i, isReal) in realOneof.enumerated() where isReal {
            oneofRemap[i] = layout.oneofNames.count
            layout.oneofNames.append(parsed.oneofNames[i])
        }

        var fields: [FieldLayout] = []
        for field in parsed.fields {
            guard let type = ProtobufSchema.FieldType(descriptorType: field.type) else { continue }  // groups
            var f = FieldLayout(
                name: field.name, jsonName: field.jsonName ?? Self.lowerCamel(field.name),
                number: UInt32(bitPattern: field.number), type: type, storage: .implicit, offset: 0,
                quantifierOffset: 0, messageIndex: -1, enumIndex: -1, isMap: false, packed: false, oneofIndex: -1,
                typeName: nil, cDefault: nil, defaultValue: nil)
            if type == .message {
                guard let (name, index) = resolve(field.typeName, scope: layout.fullName, in: messageIndex) else {
                    throw CourierError(
                        .invalidConfiguration,
                        detail: "\(layout.fullName).\(field.name) refers to unknown message type \(field.typeName)")
                }
                f.messageIndex = index
                f.typeName = name
            } else if type == .enumeration {
                guard let (name, index) = resolve(field.typeName, scope: layout.fullName, in: enumIndex) else {
                    throw CourierError(
                        .invalidConfiguration,
                        detail: "\(layout.fullName).\(field.name) refers to unknown enum type \(field.typeName)")
                }
                f.enumIndex = index
                f.typeName = name
            }
            if field.label == 3 {
                f.storage = .repeated
                f.isMap = type == .message && messages[f.messageIndex].isMapEntry
                f.packed = type.isPackable && (field.packed ?? proto3)
            } else if let index = field.oneofIndex, let real = oneofRemap[index], !field.proto3Optional {
                f.storage = .oneof
                f.oneofIndex = real
            } else if field.label == 2 {
                f.storage = .required
            } else if type == .message || type == .string {
                f.storage = (proto3 && !field.proto3Optional && type == .string) ? .implicit : .pointer
            } else if proto3 && !field.proto3Optional {
                f.storage = .implicit
            } else {
                f.storage = .hasFlag
            }
            if let text = field.defaultValue, !proto3 {
                try setDefault(text, of: &f, in: layout.fullName)
            }
            fields.append(f)
        }

        // Layout, in declaration order, with natural C alignment. Oneof members share one union.
        var offset = 24  // sizeof(ProtobufCMessage) on 64-bit: descriptor, n_unknown_fields (+pad), unknown_fields
        func place(size: Int, alignment: Int) -> Int {
            offset = (offset + alignment - 1) / alignment * alignment
            defer { offset += size }
            return offset
        }
        var oneofPlacement: [Int: (caseOffset: Int, unionOffset: Int)] = [:]
        for i in fields.indices {
            let type = fields[i].type
            switch fields[i].storage {
            case .repeated:
                fields[i].quantifierOffset = place(size: 8, alignment: 8)
                fields[i].offset = place(size: 8, alignment: 8)
            case .hasFlag:
                fields[i].quantifierOffset = place(size: 4, alignment: 4)
                fields[i].offset = place(size: type.cSize, alignment: type.cAlignment)
            case .oneof:
                let group = fields[i].oneofIndex
                if oneofPlacement[group] == nil {
                    let members = fields.filter { $0.storage == .oneof && $0.oneofIndex == group }
                    let size = members.map(\.type.cSize).max() ?? 8
                    let alignment = members.map(\.type.cAlignment).max() ?? 8
                    let caseOffset = place(size: 4, alignment: 4)
                    oneofPlacement[group] = (caseOffset, place(size: size, alignment: alignment))
                }
                fields[i].quantifierOffset = oneofPlacement[group]!.caseOffset
                fields[i].offset = oneofPlacement[group]!.unionOffset
            case .implicit, .pointer, .required:
                fields[i].offset = place(size: type.cSize, alignment: type.cAlignment)
            }
        }
        layout.sizeofMessage = (offset + 7) / 8 * 8
        fields.sort { $0.number < $1.number }
        layout.hasRequiredFields = fields.contains { $0.storage == .required }
        for (i, f) in fields.enumerated() {
            layout.fieldsByName[f.jsonName] = i
            if layout.fieldsByName[f.name] == nil { layout.fieldsByName[f.name] = i }
        }
        layout.fields = fields
        layout.jsonNames = fields.map(\.jsonName)
        for (i, f) in fields.enumerated() {
            if layout.jsonIndex[f.jsonName] == nil {
                layout.jsonIndex[f.jsonName] = i
            } else {
                layout.jsonNamesCollide = true
            }
            if f.jsonName.contains("_") { layout.jsonNamesHaveUnderscores = true }
        }
        layout.hot = fields.enumerated().map { i, f in
            HotField(
                number: f.number, type: f.type, storage: f.storage, isMap: f.isMap, offset: f.offset,
                quantifierOffset: f.quantifierOffset, messageIndex: f.messageIndex, enumIndex: f.enumIndex,
                cDefault: f.cDefault, owner: owner, index: i)
        }

        // The C descriptors.
        let cFields = allocate(ProtobufCFieldDescriptor.self, count: fields.count)
        for (i, f) in fields.enumerated() {
            let label: ProtobufCLabel
            var flags: UInt32 = 0
            switch f.storage {
            case .implicit: label = PROTOBUF_C_LABEL_NONE
            case .hasFlag, .pointer: label = PROTOBUF_C_LABEL_OPTIONAL
            case .required: label = PROTOBUF_C_LABEL_REQUIRED
            case .repeated:
                label = PROTOBUF_C_LABEL_REPEATED
                if f.packed { flags |= UInt32(PROTOBUF_C_FIELD_FLAG_PACKED.rawValue) }
            case .oneof:
                label = proto3 ? PROTOBUF_C_LABEL_NONE : PROTOBUF_C_LABEL_OPTIONAL
                flags |= UInt32(PROTOBUF_C_FIELD_FLAG_ONEOF.rawValue)
            }
            let subDescriptor: UnsafeRawPointer? =
                f.messageIndex >= 0
                ? UnsafeRawPointer(messages[f.messageIndex].descriptor)
                : f.enumIndex >= 0 ? UnsafeRawPointer(enums[f.enumIndex].descriptor) : nil
            cFields[i] = ProtobufCFieldDescriptor(
                name: cString(f.name), id: f.number, label: label, type: f.type.cType,
                quantifier_offset: UInt32(f.quantifierOffset), offset: UInt32(f.offset),
                descriptor: subDescriptor, default_value: f.cDefault, flags: flags, reserved_flags: 0,
                reserved2: nil, reserved3: nil)
        }
        let byName = fields.indices.sorted { fields[$0].name.utf8.lexicographicallyPrecedes(fields[$1].name.utf8) }
        let sortedByName = allocate(UInt32.self, count: fields.count)
        for (i, index) in byName.enumerated() { sortedByName[i] = UInt32(index) }
        let ranges = makeRanges(fields.map { Int32(bitPattern: $0.number) })
        let rangePointer = allocate(ProtobufCIntRange.self, count: ranges.count)
        for (i, r) in ranges.enumerated() { rangePointer[i] = r }
        let shortName = String(layout.fullName.split(separator: ".").last ?? Substring(layout.fullName))
        layout.descriptor.pointee = ProtobufCMessageDescriptor(
            magic: UInt32(PROTOBUF_C__MESSAGE_DESCRIPTOR_MAGIC), name: cString(layout.fullName),
            short_name: cString(shortName), c_name: cString(layout.fullName.replacingDots()),
            package_name: cString(parsed.package), sizeof_message: layout.sizeofMessage,
            n_fields: UInt32(fields.count), fields: cFields, fields_sorted_by_name: sortedByName,
            n_field_ranges: UInt32(ranges.count - 1), field_ranges: rangePointer, message_init: nil,
            reserved1: nil, reserved2: nil, reserved3: nil)
    }

    /// proto3 JSON name of a field without an explicit `json_name`: `author_id` → `authorId`.
    static func lowerCamel(_ name: String) -> String {
        var out = ""
        var upperNext = false
        for ch in name {
            if ch == "_" {
                upperNext = true
            } else if upperNext {
                out += ch.uppercased()
                upperNext = false
            } else {
                out.append(ch)
            }
        }
        return out
    }

    /// Parses a proto2 `[default = ...]` (descriptor text form) into C memory and a Value.
    private func setDefault(_ text: String, of field: inout FieldLayout, in message: String) throws {
        func bad() -> CourierError {
            CourierError(
                .invalidConfiguration, detail: "\(message).\(field.name) has an invalid default value \"\(text)\"")
        }
        func store<T>(_ value: T) {
            let pointer = allocate(T.self, count: 1)
            pointer.initialize(to: value)
            field.cDefault = UnsafeRawPointer(pointer)
        }
        switch field.type {
        case .int32, .sint32, .sfixed32:
            guard let v = Int32(text) else { throw bad() }
            store(v)
            field.defaultValue = .int(Int64(v))
        case .uint32, .fixed32:
            guard let v = UInt32(text) else { throw bad() }
            store(v)
            field.defaultValue = .int(Int64(v))
        case .int64, .sint64, .sfixed64:
            guard let v = Int64(text) else { throw bad() }
            store(v)
            field.defaultValue = .int(v)
        case .uint64, .fixed64:
            guard let v = UInt64(text) else { throw bad() }
            store(v)
            field.defaultValue = Value(v)
        case .float:
            guard let v = Self.parseFloatingDefault(text) else { throw bad() }
            store(Float(v))
            field.defaultValue = .double(Double(Float(v)))
        case .double:
            guard let v = Self.parseFloatingDefault(text) else { throw bad() }
            store(v)
            field.defaultValue = .double(v)
        case .bool:
            guard text == "true" || text == "false" else { throw bad() }
            store(Int32(text == "true" ? 1 : 0))
            field.defaultValue = .bool(text == "true")
        case .enumeration:
            guard let number = enums[field.enumIndex].numberByName[text] else { throw bad() }
            store(number)
            field.defaultValue = .string(text)
        case .string:
            field.cDefault = UnsafeRawPointer(cString(text))
            field.defaultValue = .string(text)
        case .bytes:
            guard let bytes = Self.unescapeBytes(text) else { throw bad() }
            let data = allocate(bytes.count)
            bytes.withUnsafeBytes { data.copyMemory(from: $0.baseAddress!, byteCount: bytes.count) }
            store(ProtobufCBinaryData(len: bytes.count, data: data.assumingMemoryBound(to: UInt8.self)))
            field.defaultValue = .bytes(bytes)
        case .message:
            throw bad()
        }
    }

    static func parseFloatingDefault(_ text: String) -> Double? {
        switch text {
        case "inf": return .infinity
        case "-inf": return -.infinity
        case "nan": return .nan
        default: return Double(text)
        }
    }

    /// C-unescapes a bytes default (`\n`, `\\`, `\"`, `\ooo`, `\xHH`).
    static func unescapeBytes(_ text: String) -> [UInt8]? {
        let input = Array(text.utf8)
        var out: [UInt8] = []
        var i = 0
        func isOctal(_ b: UInt8) -> Bool { b >= 0x30 && b <= 0x37 }
        func hex(_ b: UInt8) -> UInt8? {
            switch b {
            case 0x30...0x39: return b - 0x30
            case 0x61...0x66: return b - 0x61 + 10
            case 0x41...0x46: return b - 0x41 + 10
            default: return nil
            }
        }
        while i < input.count {
            let b = input[i]
            i += 1
            guard b == 0x5c else {
                out.append(b)
                continue
            }
            guard i < input.count else { return nil }
            let e = input[i]
            i += 1
            switch e {
            case UInt8(ascii: "n"): out.append(0x0a)
            case UInt8(ascii: "r"): out.append(0x0d)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "a"): out.append(0x07)
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0c)
            case UInt8(ascii: "v"): out.append(0x0b)
            case UInt8(ascii: "x"):
                var v: UInt32 = 0
                var digits = 0
                while i < input.count, digits < 2, let h = hex(input[i]) {
                    v = v * 16 + UInt32(h)
                    i += 1
                    digits += 1
                }
                guard digits > 0 else { return nil }
                out.append(UInt8(v))
            case _ where isOctal(e):
                var v = UInt32(e - 0x30)
                var digits = 1
                while i < input.count, digits < 3, isOctal(input[i]) {
                    v = v * 8 + UInt32(input[i] - 0x30)
                    i += 1
                    digits += 1
                }
                guard v <= 255 else { return nil }
                out.append(UInt8(v))
            default: out.append(e)
            }
        }
        return out
    }

    /// Nesting depth of message fields below each type; recursive types get Int.max.
    private func computeNesting() {
        var state = [UInt8](repeating: 0, count: messages.count)  // 0 new, 1 visiting, 2 done
        var depth = [Int](repeating: 0, count: messages.count)
        func visit(_ i: Int) -> Int {
            if state[i] == 2 { return depth[i] }
            if state[i] == 1 { return Int.max }
            state[i] = 1
            var best = 0
            for f in messages[i].fields where f.messageIndex >= 0 {
                let below = visit(f.messageIndex)
                best = below == Int.max ? Int.max : max(best, below + 1)
                if best == Int.max { break }
            }
            state[i] = 2
            depth[i] = best
            return best
        }
        for i in messages.indices { messages[i].nesting = visit(i) }
    }

    /// The `.proto` name of a field (for messages; off the hot path).
    func name(_ f: HotField) -> String { messages[f.owner].fields[f.index].name }

    // MARK: public view

    func publicMessage(_ index: Int) -> ProtobufSchema.MessageType {
        let layout = messages[index]
        let fields = layout.fields.map { f -> ProtobufSchema.Field in
            let cardinality: ProtobufSchema.Cardinality
            switch f.storage {
            case .implicit: cardinality = .implicit
            case .hasFlag, .pointer, .oneof: cardinality = .optional
            case .required: cardinality = .required
            case .repeated: cardinality = f.isMap ? .map : .repeated
            }
            let values = f.enumIndex >= 0
                ? enums[f.enumIndex].values.map { ProtobufSchema.EnumValue(name: $0.name, number: $0.number) } : []
            return ProtobufSchema.Field(
                name: f.name, jsonName: f.jsonName, number: Int(f.number), type: f.type, cardinality: cardinality,
                typeName: f.typeName, oneof: f.oneofIndex >= 0 ? layout.oneofNames[f.oneofIndex] : nil,
                enumValues: values, isClosedEnum: f.enumIndex >= 0 && enums[f.enumIndex].isClosed,
                defaultValue: f.defaultValue)
        }
        return ProtobufSchema.MessageType(
            name: layout.fullName, fields: fields, oneofs: layout.oneofNames, isMapEntry: layout.isMapEntry)
    }
}

extension String {
    fileprivate func replacingDots() -> String {
        String(map { $0 == "." ? "_" : $0 })
    }
}
