#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Writes a ``Value`` as XML text, the reverse of ``XMLReader``'s mapping. Escapes text and attribute
/// values, refuses characters XML 1.0 cannot carry and keys that are not XML names.
struct XMLWriter {
    /// Why a value could not be written; `path` grows as the error unwinds.
    struct Failure: Error {
        var detail: String
        var path: [PathComponent]
    }

    let options: XMLCodec.Options
    var out: [UInt8] = []
    /// Namespace prefixes declared by the open elements (`@xmlns:p` members), innermost last.
    var prefixes: [Substring] = []

    init(options: XMLCodec.Options) {
        self.options = options
    }

    mutating func document(_ value: Value, rootName: String) throws(Failure) -> [UInt8] {
        out.reserveCapacity(1024)
        if options.writesDeclaration {
            append("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n")
        }
        try checkName(rootName, attribute: false)
        try element(rootName, value, depth: 0)
        if options.prettyPrinted { out.append(UInt8(ascii: "\n")) }
        return out
    }

    // MARK: Elements

    mutating func element(_ name: String, _ value: Value, depth: Int) throws(Failure) {
        guard depth < options.maximumDepth else {
            throw Failure(detail: "the value nests deeper than the limit of \(options.maximumDepth)", path: [])
        }
        if options.prettyPrinted && depth > 0 {
            out.append(UInt8(ascii: "\n"))
            indent(depth)
        }
        out.append(UInt8(ascii: "<"))
        append(name)
        switch value {
        case .null:
            append(" xsi:nil=\"true\" xmlns:xsi=\"")
            append(XMLMapping.xsiNamespace)
            append("\"/>")
            try checkPrefix(name)
        case .object(let object):
            try objectContent(name, object, depth: depth)
        case .array(let elements):
            // An array inside an array (or at the root) has no member name of its own: its elements
            // are wrapped in item elements.
            let itemName = options.arrayItemName?.itemName(for: name) ?? "item"
            try checkPrefix(name)
            if elements.isEmpty {
                append("/>")
                return
            }
            out.append(UInt8(ascii: ">"))
            for (i, item) in elements.enumerated() {
                do {
                    try element(itemName, item, depth: depth + 1)
                } catch {
                    throw error.prefixed(.index(i))
                }
            }
            closeTag(name, depth: depth, afterChildren: true)
        default:
            try checkPrefix(name)
            out.append(UInt8(ascii: ">"))
            try scalarText(value)
            closeTag(name, depth: depth, afterChildren: false)
        }
    }

    private mutating func objectContent(_ name: String, _ object: Value.Object, depth: Int) throws(Failure) {
        // Namespace declarations first so that prefixes in this element are in scope.
        let keys = object.keys
        let values = object.values
        let prefixMark = prefixes.count
        defer { if prefixes.count > prefixMark { prefixes.removeSubrange(prefixMark...) } }
        for key in keys where key.utf8.first == UInt8(ascii: "@") && key.hasPrefix("@xmlns:") {
            prefixes.append(key.dropFirst(7))
        }
        try checkPrefix(name)
        // Attributes.
        var text: Value?
        var hasChildren = false
        for i in keys.indices {
            let key = keys[i]
            let first = key.utf8.first
            if first == UInt8(ascii: "@") {
                let member = values[i]
                let attributeName = String(key.dropFirst())
                do {
                    try checkName(attributeName, attribute: true)
                    out.append(UInt8(ascii: " "))
                    append(attributeName)
                    append("=\"")
                    try attributeText(member)
                    out.append(UInt8(ascii: "\""))
                } catch {
                    throw error.prefixed(.key(key))
                }
            } else if first == UInt8(ascii: "#"), key == "#text" {
                text = values[i]
            } else {
                hasChildren = true
            }
        }
        if text == nil && !hasChildren {
            append("/>")
            return
        }
        out.append(UInt8(ascii: ">"))
        if let text {
            do {
                try scalarText(text)
            } catch {
                throw error.prefixed(.key("#text"))
            }
        }
        for i in keys.indices {
            let key = keys[i]
            let first = key.utf8.first
            if first == UInt8(ascii: "@") || (first == UInt8(ascii: "#") && key == "#text") { continue }
            let member = values[i]
            do {
                try checkName(key, attribute: false)
                if case .array(let elements) = member {
                    try arrayMember(key, elements, depth: depth + 1)
                } else {
                    try element(key, member, depth: depth + 1)
                }
            } catch {
                throw error.prefixed(.key(key))
            }
        }
        closeTag(name, depth: depth, afterChildren: hasChildren)
    }

    /// An array member: one wrapper holding item elements when ``XMLCodec/Options/arrayItemName`` is
    /// set, else repeated elements (an array inside the array is wrapped, its items named `item`).
    mutating func arrayMember(_ key: String, _ elements: [Value], depth: Int) throws(Failure) {
        if options.arrayItemName != nil {
            try element(key, .array(elements), depth: depth)
            return
        }
        for (i, item) in elements.enumerated() {
            do {
                try element(key, item, depth: depth)
            } catch {
                throw error.prefixed(.index(i))
            }
        }
    }

    mutating func closeTag(_ name: String, depth: Int, afterChildren: Bool) {
        if options.prettyPrinted && afterChildren {
            out.append(UInt8(ascii: "\n"))
            indent(depth)
        }
        append("</")
        append(name)
        out.append(UInt8(ascii: ">"))
    }

    mutating func indent(_ depth: Int) {
        for _ in 0..<depth {
            out.append(UInt8(ascii: " "))
            out.append(UInt8(ascii: " "))
        }
    }

    // MARK: Names

    func checkName(_ name: String, attribute: Bool) throws(Failure) {
        guard XMLMapping.isQualifiedName(name) else {
            throw Failure(detail: "\"\(name)\" is not a valid XML \(attribute ? "attribute" : "element") name", path: [])
        }
    }

    /// A prefixed element name needs its prefix declared by an enclosing `@xmlns:prefix` member.
    private func checkPrefix(_ name: String) throws(Failure) {
        guard let prefix = XMLMapping.prefix(of: name), prefix != "xml" else { return }
        guard prefixes.contains(prefix) else {
            throw Failure(
                detail: "the element name \"\(name)\" uses the prefix \(prefix), which no @xmlns:\(prefix) member declares",
                path: [])
        }
    }

    // MARK: Text

    mutating func scalarText(_ value: Value) throws(Failure) {
        switch value {
        case .string(let s): try escaped(s, attribute: false)
        default: append(try Self.scalarString(value))
        }
    }

    mutating func attributeText(_ value: Value) throws(Failure) {
        switch value {
        case .string(let s): try escaped(s, attribute: true)
        case .null: break
        default: try escaped(try Self.scalarString(value), attribute: true)
        }
    }

    private static func scalarString(_ value: Value) throws(Failure) -> String {
        switch value {
        case .null: return ""
        case .bool(let b): return b ? "true" : "false"
        case .int(let i): return String(i)
        case .uint(let u): return String(u)
        case .double(let d): return XMLMapping.text(of: d)
        case .number(let n): return n
        case .string(let s): return s
        case .bytes(let b): return Data(b).base64EncodedString()
        case .array, .object:
            throw Failure(detail: "an \(value.kindName) cannot be an attribute value or text", path: [])
        }
    }

    mutating func escaped(_ string: String, attribute: Bool) throws(Failure) {
        var string = string
        var failure: Failure?
        string.withUTF8 { bytes in
            // Fast path: nothing to escape or refuse.
            var clean = true
            for b in bytes {
                if b < 0x20 || b == UInt8(ascii: "&") || b == UInt8(ascii: "<") || b == UInt8(ascii: ">") || b == 0xEF
                    || (attribute && (b == UInt8(ascii: "\"") || b == UInt8(ascii: "'")))
                {
                    clean = false
                    break
                }
            }
            if clean {
                out.append(contentsOf: bytes)
                return
            }
            var i = 0
            while i < bytes.count {
                let b = bytes[i]
                switch b {
                case UInt8(ascii: "&"): append("&amp;")
                case UInt8(ascii: "<"): append("&lt;")
                case UInt8(ascii: ">"): append("&gt;")
                case UInt8(ascii: "\"") where attribute: append("&quot;")
                case UInt8(ascii: "'") where attribute: append("&apos;")
                case 0x0D: append("&#13;")
                case 0x09 where attribute: append("&#9;")
                case 0x0A where attribute: append("&#10;")
                case 0x09, 0x0A: out.append(b)
                case 0x00..<0x20:
                    failure = Failure(
                        detail: "the text holds the control character U+\(String(b, radix: 16, uppercase: true).leftPadded(4)), which XML 1.0 cannot carry",
                        path: [])
                    return
                case 0xEF where i + 2 < bytes.count && bytes[i + 1] == 0xBF && (bytes[i + 2] == 0xBE || bytes[i + 2] == 0xBF):
                    failure = Failure(
                        detail: "the text holds the non-character U+FFF\(bytes[i + 2] == 0xBE ? "E" : "F"), which XML 1.0 cannot carry",
                        path: [])
                    return
                default: out.append(b)
                }
                i += 1
            }
        }
        if let failure { throw failure }
    }

    mutating func append(_ s: String) {
        out.append(contentsOf: s.utf8)
    }
}

extension XMLWriter.Failure {
    func prefixed(_ component: PathComponent) -> XMLWriter.Failure {
        var copy = self
        copy.path.insert(component, at: 0)
        return copy
    }
}

extension String {
    fileprivate func leftPadded(_ width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
