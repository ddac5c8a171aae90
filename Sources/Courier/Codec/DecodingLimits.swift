/// How much a decoder may read and build from one body. Every decoder Courier ships (JSON, XML,
/// protobuf with a schema, the schema-less `ProtobufRawDecoder` in `CourierCodecs`, and the typed
/// `Codable` paths, which decode the bounded ``Value``) checks these limits *while* it reads, so hostile
/// input fails early, in time and memory proportional to the bytes read so far.
///
/// A body over ``maximumDepth`` fails with ``CourierError/Code/depthLimitExceeded``; one over any other
/// limit fails with ``CourierError/Code/sizeLimitExceeded``. The error's detail names the limit and says
/// where (coding path, byte offset, or line and column).
///
/// | limit | default | bounds |
/// | --- | --- | --- |
/// | ``maximumInputSize`` | 64 MiB | bytes of one body |
/// | ``maximumDepth`` | 512 (protobuf codec: 100), also the most it can be | nesting of arrays, objects, elements, messages |
/// | ``maximumContainerCount`` | 1,000,000 | elements of one array, members of one object, children and attributes of one XML element, fields (repeated elements included) of one protobuf message |
/// | ``maximumTotalValues`` | 5,000,000 | values in the whole body (every scalar, array, object, element, attribute, message) |
/// | ``maximumStringLength`` | 16 MiB | bytes of one string, bytes value, name or XML text |
/// | ``maximumNumberLength`` | 10,000 | characters of one number in JSON |
/// | ``maximumAttributesPerElement`` | 1,000 | attributes and namespace declarations of one XML element |
/// | ``maximumNamespacesInScope`` | 256 | XML namespace declarations visible at once (on the open elements) |
/// | ``maximumDistinctNames`` | 50,000 | distinct names one XML document uses (elements, attributes, namespaces, processing-instruction targets, declarations) |
///
/// Set them once for every codec of a client, per codec, or per call (the most specific wins: hints,
/// then the codec set, then the codec's own options):
///
/// ```swift
/// var limits = DecodingLimits()
/// limits.maximumContainerCount = 5_000_000
/// var codecs = CodecSet.standard
/// codecs.decodingLimits = limits                      // every codec in the set
///
/// var options = JSONCodec.Options()
/// options.limits.maximumDepth = 64                    // one codec
///
/// var hints = CodingHints()
/// hints.limits = limits                               // one call
/// ```
public struct DecodingLimits: Hashable, Sendable {
    /// The largest body accepted, in bytes; checked before parsing starts. Default 64 MiB (the default
    /// maximum response size of a client).
    public var maximumInputSize = 64 << 20
    /// The deepest nesting of containers (arrays and objects, XML elements, protobuf messages and groups).
    /// Default 512; ``defaultProtobufDepth`` for the protobuf codec, because protobuf-c recurses once per
    /// level. libxml2 never reads past 256 elements (Courier does not set `XML_PARSE_HUGE`). At most
    /// ``depthCeiling``: a larger value is taken as the ceiling.
    public var maximumDepth: Int {
        get { depth }
        set { depth = Swift.min(newValue, Self.depthCeiling) }
    }
    private var depth = 512

    /// The highest ``maximumDepth``: 512 levels. Writing a value, comparing two, and decoding one into a
    /// model recurse once per level, and a task of the concurrency pool may have a stack of 512 KiB, which a
    /// debug build fills at some 750 levels of JSON writing: deeper limits would trade an error for a crash.
    public static let depthCeiling = 512
    /// The most elements or members one container may hold: array elements, object members, child
    /// elements plus attributes of one XML element, field occurrences (each repeated element counted) of
    /// one protobuf message. Default 1,000,000.
    public var maximumContainerCount = 1_000_000
    /// The most values one body may produce in all: every scalar, array, object, XML element and
    /// attribute, protobuf message and field (a protobuf message counts its declared fields too, since
    /// decoding emits their defaults). Bounds the memory of the decoded ``Value``. Default 5,000,000.
    public var maximumTotalValues = 5_000_000
    /// The longest string, bytes value, member or attribute name and XML text of one element, in bytes
    /// (of the encoded input). Default 16 MiB.
    public var maximumStringLength = 16 << 20
    /// The longest number literal in JSON, in characters (digits, sign, point and exponent). Default
    /// 10,000: far beyond any exact decimal, well below the cost of converting a megabyte of digits.
    public var maximumNumberLength = 10_000
    /// The most attributes (namespace declarations included) of one XML element, checked before libxml2
    /// reads the start tag (its duplicate check is quadratic in the count). Default 1,000.
    public var maximumAttributesPerElement = 1_000
    /// The most XML namespace declarations in scope at once (declared on an element and its open
    /// ancestors), checked before libxml2 reads a start tag: libxml2 resolves every prefix, and checks
    /// every new declaration, by scanning all declarations in scope. Default 256.
    public var maximumNamespacesInScope = 256
    /// The most distinct names one XML document may use: element and attribute names, namespace prefixes and
    /// URIs, processing-instruction targets and the names its document type declares, each counted once.
    /// libxml2 (2.9) keeps every name it reads in a dictionary whose table stops growing at 16,384 chains; past
    /// some 50,000 names each lookup walks a longer chain, and a document of distinct names turns quadratic (a
    /// million distinct empty elements, 10 MB, took 17 s). The count is of names this document adds to the
    /// dictionary: on a kept parser (Courier keeps a few, each holding at most 4,096 names) names an earlier
    /// document left there are not counted again, so a document can read up to that many names past the limit
    /// before it stops. Default 50,000.
    public var maximumDistinctNames = 50_000

    /// The protobuf codec's default ``maximumDepth``: 100.
    public static let defaultProtobufDepth = 100

    /// The defaults in the table above.
    public init() {}

    /// The failure for a limit other than depth: ``CourierError/Code/sizeLimitExceeded`` whose detail
    /// names the limit, its value and `place` ("at offset 12", "at data.users[3]").
    public static func sizeFailure(
        _ limit: String, _ value: Int, what: String, at place: String, context: CourierError.Context = .init()
    ) -> CourierError {
        CourierError(
            .sizeLimitExceeded, detail: "\(what) \(place): over the limit \(limit) = \(value)", context: context)
    }

    /// The failure for ``maximumDepth``: ``CourierError/Code/depthLimitExceeded`` whose detail names the
    /// limit, its value and `place`.
    public static func depthFailure(
        _ value: Int, what: String, at place: String, context: CourierError.Context = .init()
    ) -> CourierError {
        CourierError(
            .depthLimitExceeded, detail: "\(what) \(place): over the limit maximumDepth = \(value)", context: context)
    }
}
