/// A schema-guided scan of protobuf bytes that finds why protobuf-c would reject them — and where (byte
/// offset, field path) — since protobuf-c only says "NULL". It also bounds nesting before protobuf-c (which
/// recurses once per nested message) sees a recursive message type.
struct ProtobufErrorLocator {
    let runtime: ProtobufRuntime
    let maxDepth: Int

    func firstError(in bytes: UnsafeBufferPointer<UInt8>, layout: MessageLayout) -> CourierError? {
        var path: [PathComponent] = []
        return scan(bytes, 0..<bytes.count, layout, depth: 1, path: &path)
    }

    private func failure(_ code: CourierError.Code, _ detail: String, _ offset: Int, _ path: [PathComponent])
        -> CourierError
    {
        CourierError(code, detail: detail, context: .init(codingPath: path, offset: offset))
    }

    private func scan(
        _ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, _ layout: MessageLayout, depth: Int,
        path: inout [PathComponent]
    ) -> CourierError? {
        if depth > maxDepth {
            return failure(
                .depthLimitExceeded, "messages nest deeper than \(maxDepth) levels", range.lowerBound, path)
        }
        var reader = WireReader(bytes, range: range)
        var seenRequired = Set<UInt32>()
        while !reader.isAtEnd {
            let keyOffset = reader.offset
            var inField = false
            do throws(WireError) {
                let (number, wireType) = try reader.readKey()
                guard let index = layout.field(number: number) else {
                    try reader.skip(wireType)
                    continue
                }
                let f = layout.fields[index]
                path.append(.key(f.jsonName))
                inField = true
                if f.storage == .required { seenRequired.insert(number) }
                if let error = try checkValue(bytes, &reader, wireType, f, keyOffset, depth: depth, path: &path) {
                    return error
                }
                path.removeLast()
                inField = false
            } catch {
                let failurePath = path
                if inField { path.removeLast() }
                return failure(.malformedInput, "\(error.message) in \(layout.fullName)", error.offset, failurePath)
            }
        }
        if layout.hasRequiredFields {
            for f in layout.fields where f.storage == .required && f.cDefault == nil && !seenRequired.contains(f.number) {
                return failure(
                    .missingValue, "required field \(f.name) of \(layout.fullName) is missing", range.upperBound, path)
            }
        }
        return nil
    }

    private func checkValue(
        _ bytes: UnsafeBufferPointer<UInt8>, _ reader: inout WireReader, _ wireType: WireType, _ f: FieldLayout,
        _ keyOffset: Int, depth: Int, path: inout [PathComponent]
    ) throws(WireError) -> CourierError? {
        let expected: WireType
        switch f.type {
        case .int32, .int64, .uint32, .uint64, .sint32, .sint64, .bool, .enumeration: expected = .varint
        case .fixed64, .sfixed64, .double: expected = .fixed64
        case .fixed32, .sfixed32, .float: expected = .fixed32
        case .string, .bytes, .message: expected = .lengthDelimited
        }
        if wireType == .lengthDelimited && expected != .lengthDelimited && f.storage == .repeated {
            let payload = try reader.readLengthDelimited()
            var packed = WireReader(bytes, range: payload)
            switch expected {
            case .fixed32, .fixed64:
                let size = expected == .fixed32 ? 4 : 8
                if payload.count % size != 0 {
                    throw WireError(
                        message: "packed field \(f.name) has \(payload.count) bytes, not a multiple of \(size)",
                        offset: payload.lowerBound)
                }
            default:
                while !packed.isAtEnd {
                    let at = packed.offset
                    let v = try packed.readVarint()
                    if f.type == .bool && v > 1 && packed.offset - at == 1 {
                        throw WireError(message: "packed boolean \(f.name) holds \(v)", offset: at)
                    }
                }
            }
            return nil
        }
        guard wireType == expected else {
            throw WireError(
                message: "field \(f.number) (\(f.name)) has wire type \(wireType.rawValue), expected \(expected.rawValue)",
                offset: keyOffset)
        }
        if f.type == .message {
            let payload = try reader.readLengthDelimited()
            return scan(bytes, payload, runtime.messages[f.messageIndex], depth: depth + 1, path: &path)
        }
        try reader.skip(wireType)
        return nil
    }
}
