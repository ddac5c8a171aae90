#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// How parameters become text: a ``Value`` object → an ordered list of name/value pairs
/// (``QueryItem``s) → percent-encoded `name=value&…` text. The one renderer of parameters in Courier:
/// the codec stage writes a GET/HEAD/DELETE payload into the query with it, ``FormCodec`` writes form
/// bodies with it, and the security stages (common parameters, parameter signing) and the cache key read
/// the pairs it produces, so what is signed and cached is what is sent.
///
/// **Scalars** (one canonical text each):
///
/// | value | text |
/// | --- | --- |
/// | integer | decimal digits, `-` for negatives: `42`, `-7` |
/// | double | ECMAScript `Number.prototype.toString` of the shortest round-trip digits: `2.0` → `2`, `0.1` → `0.1`, `1e21` → `1e+21`, `1.5e-7` → `1.5e-7`, `-0.0` → `0`; NaN and infinities are an encoding error |
/// | big number (lexical) | as given: `12345678901234567890123` |
/// | boolean | `true` / `false` |
/// | string | as is (UTF-8) |
/// | bytes | standard Base64 with padding |
/// | null | per ``nulls``: left out (default), `name=` or bare `name` |
///
/// **Containers**, per ``arrays`` and ``objects`` (defaults are what PHP, Rails and Node's `qs` parse):
///
/// | style | `["tags": ["x", "y"]]` | `["filter": ["a": 1]]` |
/// | --- | --- | --- |
/// | ``ArrayStyle/brackets`` (default) / ``ObjectStyle/brackets`` (default) | `tags[]=x&tags[]=y` | `filter[a]=1` |
/// | ``ArrayStyle/indexed`` / ``ObjectStyle/dotted`` | `tags[0]=x&tags[1]=y` | `filter.a=1` |
/// | ``ArrayStyle/repeated`` / ``ObjectStyle/json`` | `tags=x&tags=y` | `filter={"a":1}` |
/// | ``ArrayStyle/commaSeparated`` | `tags=x,y` | |
/// | ``ArrayStyle/fail`` / ``ObjectStyle/fail`` | ``CourierError/Code/encodingFailed`` naming the parameter | same |
///
/// With ``ArrayStyle/brackets`` an element that is itself an array or object is written with its index
/// (`items[0][id]=7`), because `items[][id]=7&items[][name]=x` is ambiguous. ``ArrayStyle/repeated`` and
/// ``ArrayStyle/commaSeparated`` cannot carry such elements and fail naming the parameter. Empty arrays
/// and objects produce no pair (as `qs` does). Nothing else is ever left out: a value that cannot be
/// written fails with ``CourierError/Code/encodingFailed`` and the parameter's path. Nesting deeper than
/// ``maximumDepth`` fails too.
///
/// **Percent-encoding.** Names and values are UTF-8, and every byte outside the RFC 3986 unreserved set
/// (`A-Z a-z 0-9 - . _ ~`) is written `%XX` (upper-case hex): a space is `%20`, `+` is `%2B`, brackets are
/// `%5B`/`%5D`. Queries and form bodies use the same text; every `application/x-www-form-urlencoded` parser
/// reads `%20` as a space, so `+` is never written for a space (and a literal `+` can never be mistaken
/// for one).
///
/// ```swift
/// let encoding = ParameterEncoding()
/// try encoding.render(["q": "café au lait", "price": 2.0, "tags": ["a", "b"], "filter": ["min": 1]])
/// // q=caf%C3%A9%20au%20lait&price=2&tags%5B%5D=a&tags%5B%5D=b&filter%5Bmin%5D=1
///
/// var endpoint = Endpoint(name: "search", module: api, path: "/search", body: ["ids": [1, 2]])
/// endpoint.parameterEncoding = ParameterEncoding(arrays: .repeated)     // ids=1&ids=2
/// ```
public struct ParameterEncoding: Sendable, Hashable {
    /// How an array parameter is written. An open set of conventions.
    public struct ArrayStyle: Sendable, Hashable, CustomStringConvertible {
        fileprivate enum Kind: Sendable, Hashable { case brackets, indexed, repeated, commaSeparated, fail }
        fileprivate let kind: Kind

        /// `tags[]=x&tags[]=y` (PHP, Rails, axios); nested containers get their index: `items[0][id]=7`.
        public static let brackets = ArrayStyle(kind: .brackets)
        /// `tags[0]=x&tags[1]=y` (`qs`'s default, PHP).
        public static let indexed = ArrayStyle(kind: .indexed)
        /// `tags=x&tags=y` (Go, Java servlets, Python); arrays of containers fail.
        public static let repeated = ArrayStyle(kind: .repeated)
        /// `tags=x,y` (`qs`'s `comma`); a null element is an empty text, containers fail.
        public static let commaSeparated = ArrayStyle(kind: .commaSeparated)
        /// Any array parameter is an encoding error naming it.
        public static let fail = ArrayStyle(kind: .fail)

        public var description: String {
            switch kind {
            case .brackets: return "brackets"
            case .indexed: return "indexed"
            case .repeated: return "repeated"
            case .commaSeparated: return "commaSeparated"
            case .fail: return "fail"
            }
        }
    }

    /// How an object parameter is written. An open set of conventions.
    public struct ObjectStyle: Sendable, Hashable, CustomStringConvertible {
        fileprivate enum Kind: Sendable, Hashable { case brackets, dotted, json, fail }
        fileprivate let kind: Kind

        /// `filter[a]=1` (PHP, Rails, `qs`).
        public static let brackets = ObjectStyle(kind: .brackets)
        /// `filter.a=1` (Spring, `qs` with `allowDots`).
        public static let dotted = ObjectStyle(kind: .dotted)
        /// `filter={"a":1}`: compact JSON text, members in order.
        public static let json = ObjectStyle(kind: .json)
        /// Any object parameter is an encoding error naming it.
        public static let fail = ObjectStyle(kind: .fail)

        public var description: String {
            switch kind {
            case .brackets: return "brackets"
            case .dotted: return "dotted"
            case .json: return "json"
            case .fail: return "fail"
            }
        }
    }

    /// How a null parameter is written. An open set of conventions.
    public struct NullStyle: Sendable, Hashable, CustomStringConvertible {
        fileprivate enum Kind: Sendable, Hashable { case omit, empty, bare }
        fileprivate let kind: Kind

        /// No pair at all (the default; `CommonParameters`-style "unset").
        public static let omit = NullStyle(kind: .omit)
        /// `name=` (`qs`'s default).
        public static let empty = NullStyle(kind: .empty)
        /// `name` without `=` (`qs`'s `strictNullHandling`).
        public static let bare = NullStyle(kind: .bare)

        public var description: String {
            switch kind {
            case .omit: return "omit"
            case .empty: return "empty"
            case .bare: return "bare"
            }
        }
    }

    /// How arrays are written. Default ``ArrayStyle/brackets``.
    public var arrays: ArrayStyle
    /// How objects are written. Default ``ObjectStyle/brackets``.
    public var objects: ObjectStyle
    /// How nulls are written. Default ``NullStyle/omit``.
    public var nulls: NullStyle
    /// The deepest nesting of arrays and objects below a top-level parameter (a parameter `a` holding
    /// `["b": ["c": 1]]` has depth 2). Deeper values fail with ``CourierError/Code/encodingFailed``.
    /// Default 32.
    public var maximumDepth: Int

    /// The defaults: brackets for arrays and objects, nulls left out, depth 32.
    public init() {
        arrays = .brackets
        objects = .brackets
        nulls = .omit
        maximumDepth = 32
    }

    /// An encoding with the given conventions (the others at their defaults).
    public init(arrays: ArrayStyle = .brackets, objects: ObjectStyle = .brackets, nulls: NullStyle = .omit) {
        self.init()
        self.arrays = arrays
        self.objects = objects
        self.nulls = nulls
    }

    /// The defaults (``init()``).
    public static var standard: ParameterEncoding { ParameterEncoding() }

    // MARK: Pairs

    /// The name/value pairs of an object's members, in member order (not yet percent-encoded; a `nil`
    /// value is a bare name).
    ///
    /// - Throws: ``CourierError`` with ``CourierError/Code/encodingFailed`` and the parameter's coding path
    ///   when a value cannot be written under these conventions.
    public func pairs(_ parameters: Value.Object) throws -> [QueryItem] {
        var out: [QueryItem] = []
        out.reserveCapacity(parameters.count)
        for (name, value) in parameters {
            try append(name, value, path: [.key(name)], depth: 0, to: &out)
        }
        return out
    }

    /// The pairs of one parameter `name` holding `value` (none for an omitted null or an empty container).
    public func pairs(name: String, value: Value) throws -> [QueryItem] {
        var out: [QueryItem] = []
        try append(name, value, path: [.key(name)], depth: 0, to: &out)
        return out
    }

    /// The percent-encoded text of an object's members: `a=1&b=x%20y`. The same text serves as a URL
    /// query (after `?`) and as an `application/x-www-form-urlencoded` body.
    public func render(_ parameters: Value.Object) throws -> String {
        Self.render(try pairs(parameters))
    }

    /// The percent-encoded text of `pairs`, in their order: `name=value` joined with `&` (a `nil` value is
    /// the bare name).
    public static func render(_ pairs: [QueryItem]) -> String {
        var out = ""
        for (i, pair) in pairs.enumerated() {
            if i > 0 { out += "&" }
            out += QueryItem.percentEncode(pair.name)
            if let value = pair.value { out += "=" + QueryItem.percentEncode(value) }
        }
        return out
    }

    /// Reads `name=value&…` text back into pairs, percent-decoding names and values; with `plusAsSpace`
    /// (form bodies, per the WHATWG URL standard) a `+` is a space, otherwise it stays a plus. Empty
    /// segments (`a=1&&b=2`) are skipped; a segment without `=` is a bare name.
    public static func parse(_ text: some StringProtocol, plusAsSpace: Bool = false) -> [QueryItem] {
        text.split(separator: "&", omittingEmptySubsequences: true).map { segment in
            var segment = String(segment)
            if plusAsSpace { segment = segment.replacingPlusWithSpace() }
            guard let equals = segment.firstIndex(of: "=") else {
                return QueryItem(QueryItem.percentDecode(segment), nil)
            }
            return QueryItem(QueryItem.percentDecode(String(segment[..<equals])),
                             QueryItem.percentDecode(String(segment[segment.index(after: equals)...])))
        }
    }

    // MARK: Scalars

    /// The canonical text of a scalar (see the table above); nil for null, arrays, objects, and NaN or
    /// infinite doubles.
    public static func scalarText(_ value: Value) -> String? {
        switch value {
        case .null, .array, .object: return nil
        case .bool(let b): return b ? "true" : "false"
        case .int(let i): return String(i)
        case .uint(let u): return String(u)
        case .double(let d): return d.isFinite ? numberText(d) : nil
        case .number(let s), .string(let s): return s
        case .bytes(let b): return Data(b).base64EncodedString()
        }
    }

    /// ECMAScript `Number::toString` over Swift's shortest round-trip digits: integral values up to 1e21
    /// as plain digits (`2`), then a decimal point (`0.1`), exponents beyond (`1e+21`, `1.5e-7`); `-0.0` is
    /// `0`. `d` must be finite.
    public static func numberText(_ d: Double) -> String {
        precondition(d.isFinite, "numberText needs a finite double")
        if d == 0 { return "0" }
        var mantissa = d.magnitude.description
        var exponent = 0
        if let e = mantissa.firstIndex(where: { $0 == "e" || $0 == "E" }) {
            exponent = Int(mantissa[mantissa.index(after: e)...]) ?? 0
            mantissa = String(mantissa[..<e])
        }
        let parts = mantissa.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        let integer = parts[0]
        var digits = Substring(integer + (parts.count > 1 ? parts[1] : ""))
        var point = integer.count + exponent   // value = 0.digits × 10^point
        while digits.first == "0" {
            digits = digits.dropFirst()
            point -= 1
        }
        while digits.last == "0" { digits = digits.dropLast() }
        let count = digits.count
        var out = d < 0 ? "-" : ""
        if count <= point, point <= 21 {
            out += digits + String(repeating: "0", count: point - count)
        } else if 0 < point, point <= 21 {
            out += digits.prefix(point) + "." + digits.dropFirst(point)
        } else if -6 < point, point <= 0 {
            out += "0." + String(repeating: "0", count: -point) + digits
        } else {
            let power = point - 1
            out += digits.prefix(1) + (count > 1 ? "." + digits.dropFirst() : "")
            out += "e" + (power >= 0 ? "+" : "-") + String(power.magnitude)
        }
        return out
    }

    // MARK: Flattening

    private func append(
        _ name: String, _ value: Value, path: [PathComponent], depth: Int, to out: inout [QueryItem]
    ) throws {
        switch value {
        case .null:
            switch nulls.kind {
            case .omit: return
            case .empty: out.append(QueryItem(name, ""))
            case .bare: out.append(QueryItem(name, nil))
            }
        case .array(let elements):
            guard !elements.isEmpty else { return }
            try checkDepth(depth, name, path)
            switch arrays.kind {
            case .fail:
                throw failure("the parameter '\(name)' is an array, and this ParameterEncoding's arrays style is .fail",
                              path)
            case .brackets, .indexed:
                for (i, element) in elements.enumerated() {
                    let indexed = arrays.kind == .indexed || element.isContainer
                    try append(name + (indexed ? "[\(i)]" : "[]"), element, path: path + [.index(i)],
                               depth: depth + 1, to: &out)
                }
            case .repeated:
                for (i, element) in elements.enumerated() {
                    guard !element.isContainer else {
                        throw failure("the parameter '\(name)' holds an \(element.kindName) at index \(i), which the "
                                      + ".repeated arrays style cannot write (use .brackets or .indexed)", path + [.index(i)])
                    }
                    try append(name, element, path: path + [.index(i)], depth: depth + 1, to: &out)
                }
            case .commaSeparated:
                var texts: [String] = []
                for (i, element) in elements.enumerated() {
                    if element.isNull {
                        texts.append("")
                        continue
                    }
                    guard !element.isContainer else {
                        throw failure("the parameter '\(name)' holds an \(element.kindName) at index \(i), which the "
                                      + ".commaSeparated arrays style cannot write (use .brackets or .indexed)",
                                      path + [.index(i)])
                    }
                    texts.append(try scalar(element, name, path + [.index(i)]))
                }
                out.append(QueryItem(name, texts.joined(separator: ",")))
            }
        case .object(let members):
            guard !members.isEmpty else { return }
            try checkDepth(depth, name, path)
            switch objects.kind {
            case .fail:
                throw failure("the parameter '\(name)' is an object, and this ParameterEncoding's objects style is .fail",
                              path)
            case .json:
                let data: Data
                do {
                    data = try JSONCodec().encode(value, hints: CodingHints())
                } catch {
                    throw failure("the parameter '\(name)' cannot be written as JSON: \(error)", path)
                }
                out.append(QueryItem(name, String(decoding: data, as: UTF8.self)))
            case .brackets, .dotted:
                for (key, member) in members {
                    let child = objects.kind == .dotted ? name + "." + key : name + "[" + key + "]"
                    try append(child, member, path: path + [.key(key)], depth: depth + 1, to: &out)
                }
            }
        default:
            out.append(QueryItem(name, try scalar(value, name, path)))
        }
    }

    private func scalar(_ value: Value, _ name: String, _ path: [PathComponent]) throws -> String {
        guard let text = Self.scalarText(value) else {
            throw failure("the parameter '\(name)' is the number \(value.doubleValue ?? .nan), which has no text form "
                          + "(NaN and infinities cannot be sent)", path)
        }
        return text
    }

    private func checkDepth(_ depth: Int, _ name: String, _ path: [PathComponent]) throws {
        guard depth < maximumDepth else {
            throw failure("the parameter '\(name)' nests deeper than maximumDepth (\(maximumDepth))", path)
        }
    }

    private func failure(_ detail: String, _ path: [PathComponent]) -> CourierError {
        CourierError(.encodingFailed, detail: detail, context: .init(codingPath: path))
    }
}

extension Value {
    fileprivate var isContainer: Bool {
        switch self {
        case .array, .object: return true
        default: return false
        }
    }
}

extension String {
    fileprivate func replacingPlusWithSpace() -> String {
        guard utf8.contains(UInt8(ascii: "+")) else { return self }
        return String(decoding: utf8.map { $0 == UInt8(ascii: "+") ? UInt8(ascii: " ") : $0 }, as: UTF8.self)
    }
}

// MARK: - Where the encoding is chosen

/// The option key behind ``Endpoint/parameterEncoding`` and ``APIModule/parameterEncoding``.
enum ParameterEncodingOption: OptionKey {
    static let defaultValue: ParameterEncoding? = nil
}

extension Endpoint {
    /// The conventions for this endpoint's parameters (query and form body); nil (the default) takes the
    /// module's, else ``ParameterEncoding/standard`` for queries and the ``FormCodec``'s own for form bodies.
    ///
    /// ```swift
    /// endpoint.parameterEncoding = ParameterEncoding(arrays: .repeated, objects: .fail)
    /// ```
    public var parameterEncoding: ParameterEncoding? {
        get { options[ParameterEncodingOption.self] }
        set { options[ParameterEncodingOption.self] = newValue }
    }
}

extension APIModule {
    /// The conventions for the parameters of every endpoint of the module that sets none itself (nil: the
    /// defaults, see ``Endpoint/parameterEncoding``).
    ///
    /// ```swift
    /// users.parameterEncoding = ParameterEncoding(arrays: .indexed)
    /// ```
    public var parameterEncoding: ParameterEncoding? {
        get { options[ParameterEncodingOption.self] }
        set { options[ParameterEncodingOption.self] = newValue }
    }
}

extension InterceptorContext {
    /// The parameter conventions of this call: the endpoint's, else the module's, else
    /// ``ParameterEncoding/standard``. Interceptors that add parameters to the query render them with it.
    public var parameterEncoding: ParameterEncoding {
        explicitParameterEncoding ?? .standard
    }

    /// The endpoint's or the module's encoding when one of them set it.
    var explicitParameterEncoding: ParameterEncoding? {
        endpoint.parameterEncoding ?? module.parameterEncoding
    }

    /// Encodes `payload` into body bytes exactly as the codec stage does: with the client's codec for
    /// `format`, except that a form body from the built-in ``FormCodec`` uses the endpoint's or module's
    /// ``ParameterEncoding`` when one is set. For interceptors that must see the final body bytes before the
    /// codec stage (`ParameterSigning` signs a form body as it will be sent).
    ///
    /// - Throws: ``CourierError`` (``CourierError/Code/encodingFailed`` and its kin), as the codec stage
    ///   would.
    public func encodeBody(_ payload: Value, format: ContentFormat, hints: CodingHints) throws -> Data {
        do {
            if format == .form, let explicit = explicitParameterEncoding, var form = codecs.codec(for: .form) as? FormCodec {
                form.encoding = explicit
                return try form.encode(payload, hints: hints)
            }
            return try codecs.encode(payload, format: format, hints: hints)
        } catch {
            throw CourierError.wrap(error, as: .encodingFailed)
        }
    }

    /// Appends `payload`'s members to `path`'s query, rendered with ``parameterEncoding`` and
    /// percent-encoded, keeping the existing query text as it is. For a GET, HEAD or DELETE payload the
    /// codec stage does this; `ParameterSigning` does it first so that it signs the final query.
    public func appendingQuery(_ payload: Value.Object, to path: String?) throws -> String {
        let path = path ?? "/"
        let text = try parameterEncoding.render(payload)
        guard !text.isEmpty else { return path }
        return RequestTarget(path).appendingQuery(text).text
    }
}
