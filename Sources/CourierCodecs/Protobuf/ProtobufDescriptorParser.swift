// A small reader for `google.protobuf.FileDescriptorSet` (descriptor.proto), enough to build protobuf-c
// descriptors at run time: files, packages, messages (nested), enums, fields, oneofs, map entries, options.

/// One field as descriptor.proto describes it.
struct ParsedField {
    var name = ""
    var number: Int32 = 0
    var label: Int32 = 1  // 1 optional, 2 required, 3 repeated
    var type: Int32 = 0  // descriptor.proto FieldDescriptorProto.Type
    var typeName = ""
    var defaultValue: String?
    var oneofIndex: Int?
    var jsonName: String?
    var proto3Optional = false
    var packed: Bool?
}

/// One message type, with its fully qualified name (no leading dot).
struct ParsedMessage {
    var fullName = ""
    var package = ""
    var fields: [ParsedField] = []
    var oneofNames: [String] = []
    var isMapEntry = false
    var syntax = "proto2"
}

/// One enum type.
struct ParsedEnum {
    var fullName = ""
    var package = ""
    var syntax = "proto2"
    var values: [(name: String, number: Int32)] = []
}

/// Everything a descriptor set declares, flattened.
struct ParsedDescriptorSet {
    var messages: [ParsedMessage] = []
    var enums: [ParsedEnum] = []
}

enum DescriptorParser {
    static func parse(_ bytes: [UInt8]) throws(WireError) -> ParsedDescriptorSet {
        var set = ParsedDescriptorSet()
        try bytes.withUnsafeBufferPointer { (buffer) throws(WireError) in
            var reader = WireReader(buffer)
            while !reader.isAtEnd {
                let (number, wireType) = try reader.readKey()
                if number == 1, wireType == .lengthDelimited {
                    let range = try reader.readLengthDelimited()
                    try parseFile(buffer, range, into: &set)
                } else {
                    try reader.skip(wireType)
                }
            }
        }
        return set
    }

    private static func string(_ buffer: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) throws(WireError) -> String {
        guard let s = String(validating: buffer[range], as: UTF8.self) else {
            throw WireError(message: "invalid UTF-8 in a descriptor name", offset: range.lowerBound)
        }
        return s
    }

    private static func parseFile(
        _ buffer: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, into set: inout ParsedDescriptorSet
    ) throws(WireError) {
        var package = ""
        var syntax = "proto2"
        var messageRanges: [Range<Int>] = []
        var enumRanges: [Range<Int>] = []
        var reader = WireReader(buffer, range: range)
        while !reader.isAtEnd {
            let (number, wireType) = try reader.readKey()
            guard wireType == .lengthDelimited else {
                try reader.skip(wireType)
                continue
            }
            let r = try reader.readLengthDelimited()
            switch number {
            case 2: package = try string(buffer, r)
            case 4: messageRanges.append(r)
            case 5: enumRanges.append(r)
            case 12: syntax = try string(buffer, r)
            default: break
            }
        }
        if syntax.isEmpty { syntax = "proto2" }
        for r in enumRanges {
            var parsed = try parseEnum(buffer, r, scope: package, package: package)
            parsed.syntax = syntax
            set.enums.append(parsed)
        }
        for r in messageRanges {
            try parseMessage(buffer, r, scope: package, package: package, syntax: syntax, into: &set)
        }
    }

    private static func qualify(_ scope: String, _ name: String) -> String {
        scope.isEmpty ? name : scope + "." + name
    }

    private static func parseEnum(
        _ buffer: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, scope: String, package: String
    ) throws(WireError) -> ParsedEnum {
        var parsed = ParsedEnum()
        parsed.package = package
        var reader = WireReader(buffer, range: range)
        while !reader.isAtEnd {
            let (number, wireType) = try reader.readKey()
            guard wireType == .lengthDelimited else {
                try reader.skip(wireType)
                continue
            }
            let r = try reader.readLengthDelimited()
            switch number {
            case 1: parsed.fullName = qualify(scope, try string(buffer, r))
            case 2:
                var valueName = ""
                var valueNumber: Int32 = 0
                var inner = WireReader(buffer, range: r)
                while !inner.isAtEnd {
                    let (n, w) = try inner.readKey()
                    if n == 1, w == .lengthDelimited {
                        valueName = try string(buffer, try inner.readLengthDelimited())
                    } else if n == 2, w == .varint {
                        valueNumber = Int32(truncatingIfNeeded: try inner.readVarint())
                    } else {
                        try inner.skip(w)
                    }
                }
                parsed.values.append((valueName, valueNumber))
            default: break
            }
        }
        return parsed
    }

    private static func parseMessage(
        _ buffer: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, scope: String, package: String, syntax: String,
        into set: inout ParsedDescriptorSet
    ) throws(WireError) {
        var message = ParsedMessage()
        message.package = package
        message.syntax = syntax
        var nestedRanges: [Range<Int>] = []
        var enumRanges: [Range<Int>] = []
        var reader = WireReader(buffer, range: range)
        while !reader.isAtEnd {
            let (number, wireType) = try reader.readKey()
            guard wireType == .lengthDelimited else {
                try reader.skip(wireType)
                continue
            }
            let r = try reader.readLengthDelimited()
            switch number {
            case 1: message.fullName = qualify(scope, try string(buffer, r))
            case 2: message.fields.append(try parseField(buffer, r))
            case 3: nestedRanges.append(r)
            case 4: enumRanges.append(r)
            case 7:
                var inner = WireReader(buffer, range: r)
                while !inner.isAtEnd {
                    let (n, w) = try inner.readKey()
                    if n == 7, w == .varint {
                        message.isMapEntry = try inner.readVarint() != 0
                    } else {
                        try inner.skip(w)
                    }
                }
            case 8:
                var oneofName = ""
                var inner = WireReader(buffer, range: r)
                while !inner.isAtEnd {
                    let (n, w) = try inner.readKey()
                    if n == 1, w == .lengthDelimited {
                        oneofName = try string(buffer, try inner.readLengthDelimited())
                    } else {
                        try inner.skip(w)
                    }
                }
                message.oneofNames.append(oneofName)
            default: break
            }
        }
        for r in enumRanges {
            var parsed = try parseEnum(buffer, r, scope: message.fullName, package: package)
            parsed.syntax = syntax
            set.enums.append(parsed)
        }
        set.messages.append(message)
        for r in nestedRanges {
            try parseMessage(buffer, r, scope: message.fullName, package: package, syntax: syntax, into: &set)
        }
    }

    private static func parseField(_ buffer: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) throws(WireError)
        -> ParsedField
    {
        var field = ParsedField()
        var reader = WireReader(buffer, range: range)
        while !reader.isAtEnd {
            let (number, wireType) = try reader.readKey()
            switch (number, wireType) {
            case (1, .lengthDelimited): field.name = try string(buffer, try reader.readLengthDelimited())
            case (3, .varint): field.number = Int32(truncatingIfNeeded: try reader.readVarint())
            case (4, .varint): field.label = Int32(truncatingIfNeeded: try reader.readVarint())
            case (5, .varint): field.type = Int32(truncatingIfNeeded: try reader.readVarint())
            case (6, .lengthDelimited): field.typeName = try string(buffer, try reader.readLengthDelimited())
            case (7, .lengthDelimited): field.defaultValue = try string(buffer, try reader.readLengthDelimited())
            case (9, .varint): field.oneofIndex = Int(truncatingIfNeeded: try reader.readVarint())
            case (10, .lengthDelimited): field.jsonName = try string(buffer, try reader.readLengthDelimited())
            case (17, .varint): field.proto3Optional = try reader.readVarint() != 0
            case (8, .lengthDelimited):
                var inner = WireReader(buffer, range: try reader.readLengthDelimited())
                while !inner.isAtEnd {
                    let (n, w) = try inner.readKey()
                    if n == 2, w == .varint {
                        field.packed = try inner.readVarint() != 0
                    } else {
                        try inner.skip(w)
                    }
                }
            default: try reader.skip(wireType)
            }
        }
        return field
    }
}
