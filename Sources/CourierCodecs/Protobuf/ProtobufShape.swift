extension ProtobufSchema {
    /// The `ValueShape` of a message (keyed by the fields' JSON names), for formats that need one to decode
    /// the same data — so XML converts to protobuf with one-element lists and numbers intact.
    ///
    /// ```swift
    /// var hints = CodingHints()
    /// hints.shape = schema.shape(of: "demo.UserListResponse")
    /// let value = try XMLCodec().decode(xml, hints: hints)
    /// ```
    ///
    /// A recursive message is unrolled 32 levels deep. Each (message, level) is built once and shared, so a
    /// message that refers to itself through several fields costs time linear in messages × levels, not
    /// exponential in the levels.
    public func shape(of messageName: String) -> ValueShape? {
        var built: [ShapeKey: ValueShape?] = [:]
        return shape(of: messageName, depth: 0, built: &built)
    }

    /// A message at one level of unrolling.
    private struct ShapeKey: Hashable {
        var name: String
        var depth: Int
    }

    private func shape(of messageName: String, depth: Int, built: inout [ShapeKey: ValueShape?]) -> ValueShape? {
        let name = messageName.hasPrefix(".") ? String(messageName.dropFirst()) : messageName
        let key = ShapeKey(name: name, depth: depth)
        if let known = built[key] { return known }
        guard depth < 32, let message = messageType(named: name) else {
            built[key] = .some(nil)
            return nil
        }
        var members: [String: ValueShape] = [:]
        for field in message.fields {
            let element = fieldShape(field, depth: depth, built: &built)
            switch field.cardinality {
            case .repeated: members[field.jsonName] = .array(element)
            case .map:
                let entry = field.typeName.flatMap { messageType(named: $0.hasPrefix(".") ? String($0.dropFirst()) : $0) }
                let valueField = entry?.fields.first { $0.number == 2 }
                members[field.jsonName] = .map(valueField.map { fieldShape($0, depth: depth, built: &built) } ?? .any)
            case .optional: members[field.jsonName] = .optional(element)
            case .implicit, .required: members[field.jsonName] = element
            }
        }
        built[key] = .some(.object(members))
        return .object(members)
    }

    private func fieldShape(_ field: Field, depth: Int, built: inout [ShapeKey: ValueShape?]) -> ValueShape {
        switch field.type {
        case .double, .float: return .number
        case .int64, .uint64, .int32, .fixed64, .fixed32, .uint32, .sfixed32, .sfixed64, .sint32, .sint64: return .integer
        case .bool: return .bool
        case .string, .enumeration: return .string
        case .bytes: return .bytes
        case .message:
            guard let typeName = field.typeName else { return .any }
            return shape(of: typeName, depth: depth + 1, built: &built) ?? .any
        }
    }
}
