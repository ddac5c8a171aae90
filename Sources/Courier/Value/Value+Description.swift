extension Value: CustomStringConvertible, CustomDebugStringConvertible {
    /// The value as compact JSON text, members in their order: `{"id":7,"name":"Ada","tags":["admin"]}`.
    /// Bytes print as base64 strings; what JSON cannot hold prints anyway (`NaN`, `Infinity`), so printing
    /// never fails; containers nested more than 128 deep print as `[…]` and `{…}`. Use ``JSONCodec`` for the wire, where those refuse to encode.
    ///
    /// ```swift
    /// let user: Value = ["id": 7, "name": "Ada"]
    /// print(user)                  // {"id":7,"name":"Ada"}
    /// print("got \(user["id"]!)")  // got 7
    /// ```
    public var description: String { JSONWriter.display(self) }

    /// The value with its cases named, for debugging what a codec produced: `object({"id": int(7),
    /// "avatar": bytes(3), "score": number("1e400")})`. Strings are quoted and escaped as Swift would;
    /// containers nested more than 128 deep print as `array(…)` and `object(…)`.
    public var debugDescription: String {
        var text = ""
        describeStructure(into: &text, depth: 0)
        return text
    }

    private func describeStructure(into text: inout String, depth: Int) {
        if depth >= JSONWriter.displayDepth {
            switch self {
            case .array:
                text += "array(…)"
                return
            case .object:
                text += "object(…)"
                return
            default: break
            }
        }
        switch self {
        case .null: text += "null"
        case .bool(let b): text += "bool(\(b))"
        case .int(let i): text += "int(\(i))"
        case .uint(let u): text += "uint(\(u))"
        case .double(let d): text += "double(\(d))"
        case .number(let n): text += "number(\(n.debugDescription))"
        case .string(let s): text += "string(\(s.debugDescription))"
        case .bytes(let b): text += "bytes(\(b.count))"
        case .array(let items):
            text += "array(["
            for (i, item) in items.enumerated() {
                if i > 0 { text += ", " }
                item.describeStructure(into: &text, depth: depth + 1)
            }
            text += "])"
        case .object(let object):
            text += "object({"
            for (i, key) in object.keys.enumerated() {
                if i > 0 { text += ", " }
                text += key.debugDescription + ": "
                object.values[i].describeStructure(into: &text, depth: depth + 1)
            }
            text += "})"
        }
    }
}
