import Synchronization

/// How one ``ProtobufModel`` type maps onto one message type: compiled once per pair (``ProtobufModelPlans``),
/// then only read. Whether the pair can be read (``decodable``) and written (``encodable``) directly is decided
/// here, member by member, so that the reads and writes need no checks of their own beyond the input's.
final class ProtobufModelPlan: @unchecked Sendable {  // immutable once its compilation published it
    let layout: MessageLayout
    /// The model type.
    let type: ObjectIdentifier
    /// The message's fields (``MessageLayout/hot``), in storage that needs no reference counting to read.
    let fields: UnsafeMutableBufferPointer<HotField>
    /// The oneof group of each field, or -1.
    let oneofGroups: UnsafeMutableBufferPointer<Int>
    /// The slot that reads each field (the member whose key is the field's JSON name), or -1.
    let slotOfField: UnsafeMutableBufferPointer<Int>
    /// Per slot: what `Codable` sees when its field is absent.
    var absences: [ProtobufAbsence] = []
    /// Per slot: the plan of its nested message type, if it holds messages.
    var children: [ProtobufModelPlan?] = []
    /// The members to write, in field order: the field each writes (-1 when it names none, first), its slot, and
    /// whether the field is packed.
    var writes: [(field: Int, slot: Int, packed: Bool)] = []
    /// Whether every member reads (and every nested plan reads) directly.
    var decodable = true
    /// Whether every member writes (and every nested plan writes) directly.
    var encodable = true

    init(layout: MessageLayout, type: ObjectIdentifier) {
        self.layout = layout
        self.type = type
        let hot = layout.hot
        fields = .allocate(capacity: max(hot.count, 1))
        _ = fields.initialize(from: hot)
        oneofGroups = .allocate(capacity: max(hot.count, 1))
        _ = oneofGroups.initialize(from: layout.fields.map(\.oneofIndex))
        slotOfField = .allocate(capacity: max(hot.count, 1))
        slotOfField.initialize(repeating: -1)
    }

    deinit {
        fields.deallocate()
        oneofGroups.deallocate()
        slotOfField.deallocate()
    }

    var fieldCount: Int { layout.hot.count }
}

/// The plans of one schema's runtime, by (message type, model type).
final class ProtobufModelPlans: Sendable {
    private struct Key: Hashable {
        var layout: ObjectIdentifier
        var type: ObjectIdentifier
    }

    private let plans = Mutex<[Key: ProtobufModelPlan]>([:])

    /// The plan of `type` as message `layout` (compiled on first use, with the plans of its nested messages).
    func plan(_ layout: MessageLayout, _ type: any ProtobufModel.Type, runtime: ProtobufRuntime) -> ProtobufModelPlan {
        let key = Key(layout: ObjectIdentifier(layout), type: ObjectIdentifier(type))
        if let plan = plans.withLock({ $0[key] }) { return plan }
        var compiled: [Key: ProtobufModelPlan] = [:]
        let plan = compile(layout, type, runtime: runtime, into: &compiled)
        Self.propagate(Array(compiled.values))
        return plans.withLock { cache in
            // Another thread may have compiled the same pair meanwhile: keep the first.
            if let existing = cache[key] { return existing }
            cache.merge(compiled) { first, _ in first }
            return cache[key] ?? plan
        }
    }

    private func compile(
        _ layout: MessageLayout, _ type: any ProtobufModel.Type, runtime: ProtobufRuntime,
        into compiled: inout [Key: ProtobufModelPlan]
    ) -> ProtobufModelPlan {
        let key = Key(layout: ObjectIdentifier(layout), type: ObjectIdentifier(type))
        if let plan = compiled[key] { return plan }
        let plan = ProtobufModelPlan(layout: layout, type: ObjectIdentifier(type))
        compiled[key] = plan
        let members = type.protobufMembers
        plan.absences = Array(repeating: ProtobufAbsence(kind: .omitted), count: members.count)
        plan.children = Array(repeating: nil, count: members.count)
        // Unusual messages are left to `Codable` whole.
        if layout.hasRequiredFields || layout.jsonNamesCollide || layout.isMapEntry || layout.hot.count > 64 {
            plan.decodable = false
            plan.encodable = false
            return plan
        }
        var keys = Set<String>()
        var written = Set<Int>()
        for (slot, member) in members.enumerated() {
            guard keys.insert(member.key).inserted, member.key != ProtobufCodec.unknownFieldsKey else {
                plan.decodable = false
                plan.encodable = false
                continue
            }
            // Reading: `Codable` sees the members under their JSON names.
            if let i = layout.jsonIndex[member.key] {
                let f = layout.hot[i]
                plan.slotOfField[i] = slot
                plan.absences[slot] = ProtobufAbsence(
                    kind: f.storage == .repeated ? .empty : f.storage == .implicit && f.type != .message ? .zero : .omitted)
                if !Self.reads(member.shape, f) { plan.decodable = false }
            } else if case .unsupported = member.shape {
                plan.decodable = false
            }
            // Writing: the pivot's writer finds fields by JSON or `.proto` name.
            if let i = layout.fieldsByName[member.key] {
                let f = layout.hot[i]
                if !written.insert(i).inserted || !Self.writes(member.shape, f) { plan.encodable = false }
                plan.writes.append((i, slot, layout.fields[i].packed))
            } else {
                // Written only when nil (left out) or ignored; anything else is the pivot's error.
                plan.writes.append((-1, slot, false))
                if case .unsupported = member.shape { plan.encodable = false }
            }
            if let model = Self.model(in: member.shape), let i = layout.jsonIndex[member.key] ?? layout.fieldsByName[member.key],
                layout.hot[i].type == .message
            {
                plan.children[slot] = compile(
                    runtime.messages[layout.hot[i].messageIndex], model, runtime: runtime, into: &compiled)
            }
        }
        plan.writes.sort { $0.field < $1.field }
        return plan
    }

    /// Marks plans whose nested plans cannot read (write) as unable to read (write), until nothing changes.
    private static func propagate(_ plans: [ProtobufModelPlan]) {
        var changed = true
        while changed {
            changed = false
            for plan in plans {
                for child in plan.children {
                    guard let child else { continue }
                    if plan.decodable && !child.decodable {
                        plan.decodable = false
                        changed = true
                    }
                    if plan.encodable && !child.encodable {
                        plan.encodable = false
                        changed = true
                    }
                }
            }
        }
    }

    /// The model type a message member holds (itself, in an optional or in an array).
    private static func model(in shape: ProtobufFieldShape) -> (any ProtobufModel.Type)? {
        switch shape {
        case .message(let type): return type
        case .optional(let inner), .repeated(let inner): return model(in: inner)
        default: return nil
        }
    }

    /// Whether a member of `shape` reads field `f` exactly as `ValueDecoder` reads the field's `Value`.
    static func reads(_ shape: ProtobufFieldShape, _ f: HotField) -> Bool {
        if f.isMap { return false }
        switch shape {
        case .optional(let inner):
            if case .optional = inner { return false }
            return reads(inner, f)
        case .repeated(let element):
            guard f.storage == .repeated else { return false }
            return readsOne(element, f.type)
        default:
            return f.storage != .repeated && readsOne(shape, f.type)
        }
    }

    /// Whether one value of `type` decodes to a `shape` exactly (every value of the field fits the type).
    private static func readsOne(_ shape: ProtobufFieldShape, _ type: ProtobufSchema.FieldType) -> Bool {
        switch shape {
        case .int32: return [.int32, .sint32, .sfixed32].contains(type)
        case .int64: return [.int32, .sint32, .sfixed32, .int64, .sint64, .sfixed64, .uint32, .fixed32].contains(type)
        case .uint32: return [.uint32, .fixed32].contains(type)
        case .uint64: return [.uint32, .fixed32, .uint64, .fixed64].contains(type)
        case .float: return type == .float
        case .double: return type == .double || type == .float
        case .bool: return type == .bool
        case .string: return type == .string
        case .message: return type == .message
        case .optional, .repeated, .unsupported: return false
        }
    }

    /// Whether a member of `shape` writes field `f` with the bytes the pivot's writer gives its `Value`.
    static func writes(_ shape: ProtobufFieldShape, _ f: HotField) -> Bool {
        if f.isMap { return false }
        switch shape {
        case .optional(let inner):
            if case .optional = inner { return false }
            return writes(inner, f)
        case .repeated(let element):
            guard f.storage == .repeated else { return false }
            return writesOne(element, f.type)
        default:
            return f.storage != .repeated && writesOne(shape, f.type)
        }
    }

    /// Whether values of `shape` write to fields of `type` (integers out of the field's range stop the write, and
    /// the pivot then gives its range error).
    private static func writesOne(_ shape: ProtobufFieldShape, _ type: ProtobufSchema.FieldType) -> Bool {
        switch shape {
        case .int32, .int64, .uint32, .uint64:
            return [.int32, .sint32, .sfixed32, .uint32, .fixed32, .int64, .sint64, .sfixed64, .uint64, .fixed64]
                .contains(type)
        case .float, .double: return type == .float || type == .double
        case .bool: return type == .bool
        case .string: return type == .string
        case .message: return type == .message
        case .optional, .repeated, .unsupported: return false
        }
    }
}
