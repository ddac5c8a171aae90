#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// A JSON Schema draft: the dialect a schema is read in. A schema selects it with `$schema`; a schema
/// without one uses ``SchemaRegistry/Options/defaultDraft``.
///
/// New cases may be added in later versions: a `switch` over it should have a `default` branch.
///
/// ```swift
/// var options = SchemaRegistry.Options()
/// options.defaultDraft = .draft7          // for schemas that carry no "$schema"
/// var registry = SchemaRegistry(options: options)
/// ```
public enum SchemaDraft: String, Sendable, Hashable, CaseIterable {
    // swift-format-ignore: AlwaysUseLowerCamelCase
    /// Draft 2020-12 (`https://json-schema.org/draft/2020-12/schema`), the default.
    case draft2020_12 = "https://json-schema.org/draft/2020-12/schema"
    /// Draft-07 (`http://json-schema.org/draft-07/schema#`): `$ref` overrides its sibling keywords,
    /// array-form `items` with `additionalItems`, `dependencies`, `definitions`.
    case draft7 = "http://json-schema.org/draft-07/schema#"
}

/// The set of JSON Schemas that may reference each other, each known under its `$id` (or the URI it
/// was added under), plus the draft 2020-12 and draft-07 meta-schemas, which are built in. References
/// resolve only against this set: nothing is ever fetched from the network.
///
/// Compile a schema once and reuse the ``CompiledSchema``; the registry also caches compiled schemas,
/// so compiling the same URI with the same options again is a lookup.
///
/// ```swift
/// var registry = SchemaRegistry()
/// try registry.addDirectory(at: URL(fileURLWithPath: "Schemas"))       // every *.json, by $id
/// let schema = try registry.compile(id: "https://courier.example/schemas/userlist.schema.json")
/// let violations = schema.validate(response)                         // [] when valid
/// try schema.check(response)                                          // or throw .schemaViolation
/// ```
public struct SchemaRegistry: Sendable {
    /// How documents are read.
    ///
    /// ```swift
    /// var options = SchemaRegistry.Options()
    /// options.defaultDraft = .draft7
    /// let registry = SchemaRegistry(options: options)
    /// ```
    public struct Options: Sendable, Hashable {
        /// The draft of schemas that do not say with `$schema` (default draft 2020-12).
        public var defaultDraft: SchemaDraft = .draft2020_12
        /// The URI prefix given to schemas added without an `$id` or URI (each gets a numbered URI).
        public var anonymousBaseURI: String = "urn:courier:schema:"

        /// The defaults.
        public init() {}
    }

    /// Counters that show how often the registry did real work; compiled schemas are cached.
    ///
    /// ```swift
    /// _ = try registry.compile(id: uri)
    /// _ = try registry.compile(id: uri)
    /// registry.statistics.compilations    // 1
    /// registry.statistics.cacheHits       // 1
    /// ```
    public struct Statistics: Sendable, Hashable {
        /// Schemas compiled from source (cache misses of ``SchemaRegistry/compile(id:options:)``).
        public var compilations: Int = 0
        /// Calls to ``SchemaRegistry/compile(id:options:)`` answered from the cache.
        public var cacheHits: Int = 0
    }

    struct Document: Sendable {
        var root: Value
        var uri: String
    }

    /// The registry's options.
    public let options: Options
    private(set) var documents: [Document] = []
    private(set) var index = SchemaIndex()
    private var byURI: [String: Int] = [:]
    private var cache: CompileCache

    /// A registry holding only the built-in meta-schemas.
    public init(options: Options = Options()) {
        self.options = options
        self.cache = CompileCache(statistics: Statistics())
        let builtIn = Self.builtIn
        documents = builtIn.documents
        index = builtIn.index
        byURI = builtIn.byURI
    }

    /// The meta-schemas, parsed and indexed once per process.
    private static let builtIn: (documents: [Document], index: SchemaIndex, byURI: [String: Int]) = {
        var registry = SchemaRegistry(empty: ())
        for (uri, json) in MetaSchemas.documents {
            do {
                let root = try MetaSchemas.parse(json)
                try registry.insert(root, uri: uri, draft: SchemaIndex.knownDraft(uri) ?? .draft2020_12)
            } catch {
                preconditionFailure("built-in meta-schema \(uri) does not load: \(error)")
            }
        }
        return (registry.documents, registry.index, registry.byURI)
    }()

    private init(empty: ()) {
        options = Options()
        cache = CompileCache(statistics: Statistics())
    }

    /// The URIs of the documents in the registry (the `$id` of each, or the URI it was added under).
    public var documentURIs: [String] { documents.map(\.uri) }

    /// Whether a schema resource with this absolute URI is known (a document or an embedded `$id`).
    public func contains(_ uri: String) -> Bool {
        index.resources[URIReference(uri).withoutFragment.description] != nil
    }

    /// The counters of this registry's compile cache (shared by copies made since the last change).
    public var statistics: Statistics { cache.statistics }

    /// Adds a schema. It is known under `uri` when given (an absolute URI), and under its `$id`
    /// resolved against `uri`; without either it gets an anonymous URI, which is returned.
    ///
    /// Adding a different schema under a URI already in use throws `CourierError.Code.invalidSchema`;
    /// adding the same schema again does nothing.
    ///
    /// - Returns: the URI to pass to ``compile(id:options:)``.
    @discardableResult
    public mutating func add(_ schema: Value, uri: String? = nil) throws -> String {
        var base: String
        if let uri {
            let parsed = URIReference(uri)
            guard parsed.isAbsolute else {
                throw CourierError(.invalidSchema, detail: "\(uri) is not an absolute URI")
            }
            base = parsed.withoutFragment.description
        } else {
            base = options.anonymousBaseURI + String(documents.count + 1)
            if let id = schema["$id"]?.stringValue {
                let resolved = URIReference(base).resolving(id)
                if resolved.isAbsolute { base = resolved.withoutFragment.description }
            }
        }
        if let existing = byURI[base] {
            if documents[existing].root == schema { return base }
            throw CourierError(.invalidSchema, detail: "a different schema is already registered as \(base)")
        }
        let draft = Self.draftFromSchemaKeyword(schema) ?? options.defaultDraft
        try insert(schema, uri: base, draft: draft)
        cache = CompileCache(statistics: cache.statistics)
        return base
    }

    /// Adds a schema from JSON bytes (see ``add(_:uri:)``).
    /// Why a schema document did not parse, as the JSON decoder said it (malformed, nested too deeply, over a
    /// size limit), so the caller sees the real cause rather than only "not valid JSON".
    static func reason(_ error: any Error) -> String {
        guard let courier = error as? CourierError else { return "\(error)" }
        return "\(courier.message) [\(courier.code)]"
    }

    @discardableResult
    public mutating func add(json data: Data, uri: String? = nil) throws -> String {
        let value: Value
        do {
            value = try JSONCodec().decode(data, hints: CodingHints())
        } catch {
            throw CourierError(.invalidSchema, detail: "the schema could not be read as JSON: \(Self.reason(error))", underlying: error)
        }
        return try add(value, uri: uri)
    }

    /// Adds the JSON schema in the file at `url` (see ``add(_:uri:)``). It is known under `uri` when
    /// given, else under its `$id` when that is an absolute URI, else under its `file://` URL.
    @discardableResult
    public mutating func add(contentsOf url: URL, uri: String? = nil) throws -> String {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw CourierError(.schemaNotFound, detail: "cannot read \(url.path)", underlying: error)
        }
        let value: Value
        do {
            value = try JSONCodec().decode(data, hints: CodingHints())
        } catch {
            throw CourierError(.invalidSchema, detail: "\(url.path) could not be read as JSON: \(Self.reason(error))", underlying: error)
        }
        var name = uri ?? url.absoluteURL.absoluteString
        if uri == nil, let declared = value["$id"]?.stringValue, URIReference(declared).isAbsolute {
            name = URIReference(declared).withoutFragment.description
        }
        return try add(value, uri: name)
    }

    /// Adds every `*.json` file of a directory (not its subdirectories), in name order, each as
    /// ``add(contentsOf:uri:)`` does.
    ///
    /// - Returns: the URIs the files were added under.
    @discardableResult
    public mutating func addDirectory(at url: URL) throws -> [String] {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: url.path)
        } catch {
            throw CourierError(.schemaNotFound, detail: "cannot list \(url.path)", underlying: error)
        }
        var added: [String] = []
        var files: [String: String] = [:]
        for name in names.sorted() where name.hasSuffix(".json") {
            let uri = try add(contentsOf: url.appendingPathComponent(name))
            added.append(uri)
            files[uri] = name
        }
        // Everything the folder holds is loaded: now a `$ref` to nothing or a cycle is an error, not later.
        for uri in added {
            do {
                try verify([uri])
            } catch var error as CourierError {
                error.detail = [files[uri].map { "\(url.lastPathComponent)/\($0)" }, error.detail]
                    .compactMap { $0 }.joined(separator: ": ")
                throw error
            }
        }
        return added
    }

    /// Compiles the schemas added under `uris` (default: every schema added to this registry), so that a
    /// `$ref` to nothing, a reference cycle or an invalid pattern fails now, at load time, instead of on the
    /// first response that uses the schema. ``addDirectory(at:)`` does this for the folder it loads; call it
    /// after adding schemas one by one.
    ///
    /// ```swift
    /// var registry = SchemaRegistry()
    /// try registry.add(contentsOf: userSchema)
    /// try registry.add(contentsOf: listSchema)      // refers to the user schema
    /// try registry.verify()                         // throws unresolvedReference for a dangling $ref
    /// ```
    public func verify(_ uris: [String]? = nil, options: CompiledSchema.Options = .init()) throws {
        for uri in uris ?? documents.dropFirst(Self.builtIn.documents.count).map(\.uri) {
            _ = try compile(id: uri, options: options)
        }
    }

    /// Compiles the schema known under `id` (an absolute URI, optionally with a fragment such as
    /// `#/$defs/user` or `#anchor`): resolves every reference, compiles every regex, and checks for
    /// reference cycles that would never consume input. The result is cached in the registry.
    ///
    /// - Throws: `CourierError.Code.schemaNotFound` for an unknown `id`,
    ///   `CourierError.Code.unresolvedReference` for a `$ref` to nothing,
    ///   `CourierError.Code.invalidSchema` for a malformed schema, an invalid regex or a cycle.
    public func compile(id: String, options: CompiledSchema.Options = .init()) throws -> CompiledSchema {
        let key = CompileCache.Key(id: id, options: options)
        if let cached = cache.lookup(key) { return cached }
        var compiler = SchemaCompiler(registry: self, options: options)
        let program = try compiler.compile(root: id)
        let schema = CompiledSchema(program: program, options: options)
        cache.store(schema, for: key)
        return schema
    }

    // MARK: internals

    func document(_ number: Int) -> Document { documents[number] }

    private static func draftFromSchemaKeyword(_ schema: Value) -> SchemaDraft? {
        guard let uri = schema["$schema"]?.stringValue else { return nil }
        return SchemaIndex.knownDraft(uri)
    }

    private mutating func insert(_ root: Value, uri: String, draft: SchemaDraft) throws(CourierError) {
        let number = documents.count
        var newIndex = index
        let known = self
        try newIndex.add(document: number, root: root, uri: uri, defaultDraft: draft) { meta in
            known.draft(ofMetaSchema: meta)
        }
        documents.append(Document(root: root, uri: uri))
        byURI[uri] = number
        index = newIndex
    }

    /// The draft of a custom meta-schema already in the registry: the draft it is written in.
    func draft(ofMetaSchema uri: String) -> SchemaDraft? {
        if let known = SchemaIndex.knownDraft(uri) { return known }
        guard let location = index.resources[uri] else { return nil }
        return index.scopes[location]?.draft
    }
}

/// The registry's cache of compiled schemas; shared by copies of a registry until one of them changes.
final class CompileCache: Sendable {
    struct Key: Hashable {
        var id: String
        var options: CompiledSchema.Options
    }

    private struct State {
        var schemas: [Key: CompiledSchema] = [:]
        var statistics: SchemaRegistry.Statistics
    }

    private let state: Locked<State>

    init(statistics: SchemaRegistry.Statistics) {
        state = Locked(State(statistics: statistics))
    }

    var statistics: SchemaRegistry.Statistics { state.withLock { $0.statistics } }

    func lookup(_ key: Key) -> CompiledSchema? {
        state.withLock { state in
            guard let found = state.schemas[key] else { return nil }
            state.statistics.cacheHits += 1
            return found
        }
    }

    func store(_ schema: CompiledSchema, for key: Key) {
        state.withLock { state in
            state.schemas[key] = schema
            state.statistics.compilations += 1
        }
    }
}
