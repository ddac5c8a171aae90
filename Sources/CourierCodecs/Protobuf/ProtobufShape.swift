extension ProtobufSchema {
    /// The ``ValueShape`` of a message (keyed by the fields' JSON names), for formats that need one to decode
    /// the same data — so XML converts to protobuf with one-element lists and numbers intact.
    ///
    /// ```swift
    /// var hints = CodingHints()
    /// hints.shape = schema.shape(of: "demo.UserListResponse")
    /// let value = try XMLCodec().decode(xml, hints: hints)
    /// ```
    public func shape(of messageName: String) -> ValueShape? {
        shape(of: messageName, depth: 0)
    }

    private func shape(of messageName: String, depth: Int) -> ValueShape? {
        let name = messageName.hasPrefix(".") ? String(messageName.dropFirst()) : messageName
        guard depth < 32, let message = messageType(named: name) else { return nil }
        var members: [String: ValueShape] = [:]
        for field in message.fields {
            let element = fieldShape(field, depth: depth)
            switch field.cardinality {
            case .repeated: members[field.jsonName] = .array(element)
            case .map:
                let entry = field.typeName.flatMap { messageType(named: $0.hasPrefix(".") ? String($0.dropFirst()) : $0) }
                let valueField = entry?.fields.first { $0.number == 2 }
                members[field.jsonName] = .map(valueField.map { fieldShape($0, depth: depth) } ?? .any)
            case .optional: members[field.jsonName] = .optional(element)
            case .implicit, .required: members[field.jsonName] = element
            }
        }
        return .object(members)
    }

    private func fieldShape(_ field: Field, depth: Int) -> ValueShape {
        switch field.type {
        case .double, .float: return .number
        case .int64, .uint64, .int32, .fixed64, .fixed32, .uint32, .sfixed32, .sfixed64, .sint32, .sint64: return .integer
        case .bool: return .bool
        case .string, .enumeration: return .string
        case .bytes: return .bytes
        case .message: return field.typeName.flatMap { shape(of: $0, depth: depth + 1) } ?? .any
        }
    }
}
