#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// The XML codec, built on libxml2: reads a document into a `Value` with a streaming SAX2 parse (no DOM)
/// and writes a `Value` back as XML.
///
/// ## Mapping
///
/// The root element's *content* is the value; its name is not part of it (read it with
/// ``decodeDocument(_:hints:)``; when encoding it comes from `CodingHints.rootName`, else
/// ``Options/rootName``).
///
/// | XML | Value |
/// | --- | --- |
/// | `<a>text</a>` (only text) | `.string("text")` |
/// | `<a/>`, `<a></a>` | `.string("")` |
/// | `<a xsi:nil="true"/>` | `.null` (other attributes and content are ignored) |
/// | `<a><b>1</b><c>2</c></a>` | `{"b": "1", "c": "2"}` (members in document order) |
/// | `<a><b>1</b><b>2</b></a>` (repeated siblings) | `{"b": ["1", "2"]}` |
/// | `<a id="7">x</a>` | `{"@id": "7", "#text": "x"}` |
/// | `<a id="7"><b/></a>` | `{"@id": "7", "b": ""}`, plus `"#text"` for non-blank text (trimmed) |
/// | `<s:a xmlns:s="urn:x"/>` (namespaces) | key `s:a`; `{"@xmlns:s": "urn:x"}`; default namespace `@xmlns` |
/// | `<![CDATA[x]]>` | text, as if escaped |
/// | comments, processing instructions, blank text between child elements | dropped |
///
/// Without a shape every leaf is a string. With `CodingHints.shape` (a `ValueShape`) decoding is
/// schema-guided:
///
/// | shape | XML | Value |
/// | --- | --- | --- |
/// | `.integer` | `<n>42</n>` | `.int(42)` (`.uint`, or an exact `.number` beyond 64 bits) |
/// | `.number` | `<n>0.5</n>` | `.double(0.5)`, exact `.number` above 15 significant digits; `INF`, `NaN` |
/// | `.bool` | `<b>true</b>` | `.bool(true)`; also `false`, `1`, `0` |
/// | `.bytes` | `<b>AAE=</b>` | `.bytes([0, 1])` (base64) |
/// | `.array(x)` | one `<t>a</t>` | `["a"]` (an array of one) |
/// | `.array(x)` | `<tags><tag>a</tag><tag>b</tag></tags>` | `["a", "b"]` (the *wrapper* form: all children share one name that is not a member of `x`) |
/// | `.array(x)` | `<tags/>`, `<tags></tags>` | `[]` |
/// | `.array(x)` (a member of an object shape) | no `<tags>` element at all (zero siblings) | `[]` |
/// | `.optional(x)` | as `x`; empty text of a number or boolean | `.null` |
/// | `.object`, `.map` | `<a/>` | `{}` |
///
/// Text that does not read as the shape's scalar is a `CourierError.Code.typeMismatch` error whose
/// context holds the coding path (`data.users[3].age`) and the line and column.
///
/// Encoding reverses the table: an array member becomes repeated elements (or, with
/// ``Options/arrayItemName``, one wrapper element holding item elements), numbers are written in
/// canonical text, booleans as `true`/`false`, bytes as base64, `.null` as an empty element with
/// `xsi:nil="true"` (declaring the `xsi` namespace on that element). Text and attribute values are
/// escaped; a control character XML 1.0 cannot carry, a key that is not an XML name or a prefix no
/// `@xmlns:prefix` member declares is an `CourierError.Code.encodingFailed` error with the path.
///
/// `decode(encode(v)) == v` holds for values made of non-empty objects, non-empty arrays and strings,
/// except for these cases that XML cannot tell apart without a shape:
/// - an array of one element decodes as the element (`.array(x)` in the shape restores it), and an
///   empty array member is not written at all (`.array(x)` in the shape restores it as `[]`);
/// - an empty object decodes as `""` (`.object` in the shape restores it);
/// - an object whose only member is `#text` decodes as its text;
/// - numbers, booleans and bytes decode as strings unless the shape names them;
/// - an array directly inside an array, or at the root, is wrapped in `item` elements and reads back as
///   `{"item": [...]}` unless the shape says `.array(.array(...))`;
/// - with ``Options/arrayItemName``, arrays need an `.array` shape to read back;
/// - text next to child elements (mixed content) is joined and trimmed.
///
/// ## Safety
///
/// The parser never touches the network (`XML_PARSE_NONET`), never substitutes entities
/// (no `XML_PARSE_NOENT`), never loads a DTD, and keeps libxml2's size limits (no `XML_PARSE_HUGE`).
/// A document that declares any entity (so no "billion laughs"), or whose document type refers to an
/// external DTD, is refused with `CourierError.Code.unsafeInput` as soon as the declaration is read.
/// Nesting deeper than ``Options/maximumDepth`` is `CourierError.Code.depthLimitExceeded`, input
/// larger than ``Options/maximumInputSize`` or beyond any other of ``Options/limits`` (attributes per
/// element, children per element, nodes in all, text length) is `CourierError.Code.sizeLimitExceeded`,
/// found while reading, and bytes that
/// are not UTF-8 are `CourierError.Code.invalidUTF8`. Syntax errors are
/// `CourierError.Code.malformedInput` with libxml2's message, line and column. libxml2 reports its
/// errors to Courier only; nothing is printed.
///
/// ```swift
/// let codec = XMLCodec()
/// var hints = CodingHints()
/// hints.shape = .object(["id": .integer, "tags": .array(.string)])
/// let value = try codec.decode(Data("<user><id>7</id><tags><tag>a</tag></tags></user>".utf8), hints: hints)
/// // value == ["id": 7, "tags": ["a"]]
///
/// var options = XMLCodec.Options()
/// options.arrayItemName = .dropTrailingS
/// hints.rootName = "user"
/// let xml = try XMLCodec(options: options).encode(value, hints: hints)
/// // <?xml version="1.0" encoding="UTF-8"?>
/// // <user><id>7</id><tags><tag>a</tag></tags></user>
/// ```
public struct XMLCodec: Codec {
    /// The codec's settings: limits for reading, layout for writing.
    ///
    /// ```swift
    /// var options = XMLCodec.Options()
    /// options.prettyPrinted = true
    /// options.maximumDepth = 64
    /// let codec = XMLCodec(options: options)
    /// ```
    public struct Options: Sendable {
        /// The root element's name when encoding, used when `CodingHints.rootName` is not set.
        /// Default `response`.
        public var rootName: String
        /// Whether encoding starts with `<?xml version="1.0" encoding="UTF-8"?>`. Default `true`.
        public var writesDeclaration: Bool
        /// Whether encoding indents nested elements by two spaces, one element per line. Default `false`.
        public var prettyPrinted: Bool
        /// The limits reading enforces while libxml2 parses: input size, nesting, attributes per element
        /// (checked before libxml2 reads a start tag), children and attributes per element, elements and
        /// attributes in all, text and attribute lengths. Default `DecodingLimits.init()`;
        /// `CodingHints.limits` or `CodecSet.decodingLimits` replace them for a call.
        public var limits: DecodingLimits
        /// The deepest element nesting accepted, when reading and writing. Default 512. libxml2 refuses
        /// documents deeper than 256 elements on its own (Courier never sets `XML_PARSE_HUGE`), so when
        /// reading, limits above 256 act as 256; both report `CourierError.Code.depthLimitExceeded`.
        /// The same setting as `limits.maximumDepth`.
        public var maximumDepth: Int {
            get { limits.maximumDepth }
            set { limits.maximumDepth = newValue }
        }
        /// The largest document accepted, in bytes. Default 64 MiB. The same setting as
        /// `limits.maximumInputSize`.
        ///
        /// There is no entity-expansion limit to set: any entity declaration is refused with
        /// `CourierError.Code.unsafeInput` before it can be used, so no document expands beyond its
        /// own text (the limit is zero).
        public var maximumInputSize: Int {
            get { limits.maximumInputSize }
            set { limits.maximumInputSize = newValue }
        }
        /// The member-name prefix that marks an attribute: `@`, so `<a id="7"/>` reads as
        /// `{"@id": "7"}`. Fixed by the mapping; exposed for code that builds values by hand.
        public var attributePrefix: String { "@" }
        /// The member that holds an element's text when it also has attributes or children: `#text`.
        /// Fixed by the mapping; exposed for code that builds values by hand.
        public var textKey: String { "#text" }
        /// How array members are written: `nil` (default) writes repeated elements
        /// (`<tag>a</tag><tag>b</tag>`); a naming writes one wrapper element holding items
        /// (`<tags><tag>a</tag><tag>b</tag></tags>` with ``ArrayItemName/dropTrailingS``). Wrapped arrays
        /// read back as arrays when the shape says `.array` there.
        public var arrayItemName: ArrayItemName?

        /// The defaults.
        public init() {
            rootName = "response"
            writesDeclaration = true
            prettyPrinted = false
            limits = DecodingLimits()
            arrayItemName = nil
        }
    }

    /// How the items of a wrapped array are named when encoding.
    ///
    /// ```swift
    /// options.arrayItemName = .dropTrailingS     // <users><user>…</user></users>
    /// options.arrayItemName = "item"             // <users><item>…</item></users>
    /// ```
    public struct ArrayItemName: Sendable, Hashable, ExpressibleByStringLiteral {
        private enum Rule: Sendable, Hashable {
            case fixed(String)
            case dropTrailingS
        }

        private let rule: Rule

        /// Every item is named `name`.
        public static func named(_ name: String) -> ArrayItemName { ArrayItemName(rule: .fixed(name)) }

        /// The item name is the array's name without a trailing `s` (`tags` → `tag`, `users` → `user`);
        /// names that do not end in `s` (or are just `s`) use `item`.
        public static let dropTrailingS = ArrayItemName(rule: .dropTrailingS)

        private init(rule: Rule) { self.rule = rule }

        /// Every item is named by the literal.
        public init(stringLiteral value: String) { rule = .fixed(value) }

        /// The item name for an array named `arrayName`.
        public func itemName(for arrayName: String) -> String {
            switch rule {
            case .fixed(let name): return name
            case .dropTrailingS:
                guard arrayName.count > 1, arrayName.last == "s" else { return "item" }
                return String(arrayName.dropLast())
            }
        }
    }

    /// How arrays are written, for one endpoint or one encode (``Courier/CodingHints/xmlArrayLayout``),
    /// replacing the codec's ``Options/arrayItemName``.
    ///
    /// ```swift
    /// endpoint.requestHints.xmlArrayLayout = .repeated                  // <tag>a</tag><tag>b</tag>
    /// endpoint.requestHints.xmlArrayLayout = .wrapped(.dropTrailingS)   // <tags><tag>a</tag><tag>b</tag></tags>
    /// endpoint.requestHints.xmlArrayLayout = .wrapped("item")           // <tags><item>a</item>…</tags>
    /// ```
    public struct ArrayLayout: Sendable, Hashable {
        /// The item naming of a wrapped layout; `nil` for repeated elements.
        public let itemName: ArrayItemName?

        /// Repeated elements named as the array (`<tag>a</tag><tag>b</tag>`): the codec's default.
        public static let repeated = ArrayLayout(itemName: nil)

        /// One element named as the array, holding items named by `itemName`.
        public static func wrapped(_ itemName: ArrayItemName) -> ArrayLayout { ArrayLayout(itemName: itemName) }

        private init(itemName: ArrayItemName?) { self.itemName = itemName }
    }

    /// The settings.
    public var options: Options

    /// A codec with default options.
    public init() { options = Options() }

    /// A codec with `options`.
    public init(options: Options) { self.options = options }

    /// `ContentFormat.xml`.
    public var format: ContentFormat { .xml }

    /// Decodes a document into its root element's content, guided by `hints.shape` when set.
    public func decode(_ data: Data, hints: CodingHints) throws -> Value {
        try XMLReader.read(data, shape: hints.shape, limits: hints.limits ?? options.limits).value
    }

    /// Decodes a document into its root element's name and content.
    ///
    /// ```swift
    /// let (root, value) = try XMLCodec().decodeDocument(Data("<user><id>7</id></user>".utf8))
    /// // root == "user", value == ["id": "7"]
    /// ```
    public func decodeDocument(_ data: Data, hints: CodingHints = CodingHints()) throws -> (rootName: String, value: Value) {
        try XMLReader.read(data, shape: hints.shape, limits: hints.limits ?? options.limits)
    }

    /// Encodes `value` as the content of a root element named `hints.rootName` (else
    /// ``Options/rootName``), in UTF-8, laying arrays out as `hints.xmlArrayLayout` says (else
    /// ``Options/arrayItemName``).
    public func encode(_ value: Value, hints: CodingHints) throws -> Data {
        var options = self.options
        if let layout = hints.xmlArrayLayout { options.arrayItemName = layout.itemName }
        var writer = XMLWriter(options: options)
        do {
            return Data(try writer.document(value, rootName: hints.rootName ?? options.rootName))
        } catch {
            let path = PathComponent.render(error.path)
            throw CourierError(
                .encodingFailed, detail: path.isEmpty ? error.detail : "\(path): \(error.detail)",
                context: .init(codingPath: error.path))
        }
    }
}
