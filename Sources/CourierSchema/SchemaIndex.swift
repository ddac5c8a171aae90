/// A place in a registered document: the document's number and a JSON Pointer (escaped) from its root.
struct SchemaLocation: Hashable, Sendable {
    var document: Int
    var pointer: String

    func appending(_ token: String) -> SchemaLocation {
        SchemaLocation(document: document, pointer: pointer + "/" + JSONPointer.escape(token))
    }
}

/// What the walk learned about one schema location: its base URI and its draft.
struct SchemaScope: Sendable {
    /// The absolute base URI (no fragment), which is also the URI of the enclosing schema resource.
    var base: String
    var draft: SchemaDraft
    /// The `$schema` URI that selected the draft (the enclosing resource's or the document's).
    var metaSchema: String?
}

/// Everything the documents of a registry identify: resources by URI, anchors, dynamic anchors and
/// the scope of every schema location. Built when a document is added.
struct SchemaIndex: Sendable {
    var resources: [String: SchemaLocation] = [:]
    /// `base#name` for `$anchor`, `$dynamicAnchor` and draft-07 plain-name `$id`s.
    var anchors: [String: SchemaLocation] = [:]
    /// `base#name` for `$dynamicAnchor` only.
    var dynamicAnchors: [String: SchemaLocation] = [:]
    /// Dynamic anchors per resource URI.
    var dynamicAnchorsByResource: [String: [String: SchemaLocation]] = [:]
    var scopes: [SchemaLocation: SchemaScope] = [:]

    /// The draft a `$schema` URI names, when it is one of the known meta-schemas.
    static func knownDraft(_ metaSchema: String) -> SchemaDraft? {
        var uri = metaSchema
        if uri.hasSuffix("#") { uri.removeLast() }
        switch uri {
        case "https://json-schema.org/draft/2020-12/schema", "https://json-schema.org/draft/2019-09/schema":
            return .draft2020_12
        case "http://json-schema.org/draft-07/schema", "http://json-schema.org/draft-06/schema",
            "http://json-schema.org/draft-04/schema", "https://json-schema.org/draft-07/schema":
            return .draft7
        default:
            return nil
        }
    }

    /// Walks `root` (document number `document`, retrieved from `uri`) and records its identifiers.
    /// `draftOf` names the draft of a custom meta-schema URI (from documents already known).
    mutating func add(
        document: Int, root: Value, uri: String, defaultDraft: SchemaDraft,
        draftOf: (String) -> SchemaDraft?
    ) throws(CourierError) {
        let rootLocation = SchemaLocation(document: document, pointer: "")
        resources[uri] = rootLocation
        try walk(root, at: rootLocation, base: uri, draft: defaultDraft, metaSchema: nil, isRoot: true,
                 draftOf: draftOf, depth: 0)
    }

    private mutating func walk(
        _ value: Value, at location: SchemaLocation, base parentBase: String, draft parentDraft: SchemaDraft,
        metaSchema parentMeta: String?, isRoot: Bool, draftOf: (String) -> SchemaDraft?, depth: Int
    ) throws(CourierError) {
        guard depth < 512 else {
            throw CourierError(.invalidSchema, detail: "the schema is nested more than 512 levels deep")
        }
        guard case .object(let object) = value else {
            if case .bool = value {
                scopes[location] = SchemaScope(base: parentBase, draft: parentDraft, metaSchema: parentMeta)
            }
            return
        }
        var draft = parentDraft
        var meta = parentMeta
        var base = parentBase
        let idValue = object["$id"]?.stringValue
        if let schemaURI = object["$schema"]?.stringValue, isRoot || idValue != nil {
            meta = schemaURI
            guard let found = Self.knownDraft(schemaURI) ?? draftOf(URIReference(schemaURI).withoutFragment.description)
            else {
                throw CourierError(.invalidSchema, detail: "unknown meta-schema \(schemaURI)")
            }
            draft = found
        }
        let refBlocksID = draft == .draft7 && object["$ref"] != nil
        if let id = idValue, !refBlocksID {
            if draft == .draft7 && id.hasPrefix("#") {
                anchors[base + id] = location
            } else {
                let resolved = URIReference(base).resolving(id)
                let resourceURI = resolved.withoutFragment.description
                if let fragment = resolved.fragment, !fragment.isEmpty {
                    if draft == .draft2020_12 {
                        throw CourierError(
                            .invalidSchema, detail: "$id \(id) at \(location.pointer) must not have a fragment")
                    }
                    anchors[resourceURI + "#" + fragment] = location
                }
                base = resourceURI
                resources[resourceURI] = location
            }
        }
        if draft == .draft2020_12 {
            if let anchor = object["$anchor"]?.stringValue {
                anchors[base + "#" + anchor] = location
            }
            if let anchor = object["$dynamicAnchor"]?.stringValue {
                anchors[base + "#" + anchor] = location
                dynamicAnchors[base + "#" + anchor] = location
                dynamicAnchorsByResource[base, default: [:]][anchor] = location
            }
        }
        scopes[location] = SchemaScope(base: base, draft: draft, metaSchema: meta)

        func child(_ value: Value, _ at: SchemaLocation) throws(CourierError) {
            try walk(value, at: at, base: base, draft: draft, metaSchema: meta, isRoot: false,
                     draftOf: draftOf, depth: depth + 1)
        }
        for (key, member) in object {
            let at = location.appending(key)
            switch SubschemaKind.of(key, draft: draft) {
            case .single:
                try child(member, at)
            case .list:
                if case .array(let items) = member {
                    for (i, item) in items.enumerated() { try child(item, at.appending(String(i))) }
                } else if key == "items" {
                    try child(member, at)
                }
            case .map:
                if case .object(let map) = member {
                    for (name, item) in map where !(key == "dependencies" && item.arrayValue != nil) {
                        try child(item, at.appending(name))
                    }
                }
            case nil:
                break
            }
        }
    }
}

/// How a keyword holds subschemas.
enum SubschemaKind {
    case single, list, map

    static func of(_ keyword: String, draft: SchemaDraft) -> SubschemaKind? {
        switch keyword {
        case "additionalProperties", "propertyNames", "contains", "if", "then", "else", "not":
            return .single
        case "allOf", "anyOf", "oneOf":
            return .list
        case "properties", "patternProperties", "definitions", "dependencies":
            return .map
        default:
            break
        }
        switch draft {
        case .draft2020_12:
            switch keyword {
            case "items", "unevaluatedItems", "unevaluatedProperties", "contentSchema": return .single
            case "prefixItems": return .list
            case "$defs", "dependentSchemas": return .map
            default: return nil
            }
        case .draft7:
            switch keyword {
            case "additionalItems": return .single
            case "items": return .list  // an array of schemas or, handled by the walker, one schema
            default: return nil
            }
        }
    }
}
