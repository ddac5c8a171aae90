extension Value {
    /// An object: members with unique names that keep the order in which they were added, so that
    /// `encode(decode(x))` reproduces the input's order.
    ///
    /// Lookup is a linear scan for small objects and a hash lookup once an object grows past 16
    /// members. Equality ignores order (two objects are equal when they have the same names with equal
    /// values).
    ///
    /// ```swift
    /// var object = Value.Object()
    /// object["id"] = 7
    /// object["name"] = "Ada"
    /// object.keys            // ["id", "name"]
    /// Value.object(object)   // {"id":7,"name":"Ada"}
    /// ```
    public struct Object: Sendable, Sequence {
        /// Member names, in order.
        @inlinable
        public var keys: [String] {
            switch names {
            case .plain(let keys): return keys
            case .indexed(let table): return table.keys
            }
        }
        /// Member values, in the order of ``keys``.
        public private(set) var values: [Value]
        /// The names, with a hash index once there are more than ``indexThreshold``. One word, so that an
        /// object takes two words and a `Value` three (a decoded tree is a quarter smaller than with the index
        /// stored beside the names).
        @usableFromInline var names: Names

        private static let indexThreshold = 16

        /// The storage of `keys`: indexed when there are more than ``indexThreshold``.
        private static func names(_ keys: [String]) -> Names {
            keys.count > indexThreshold ? .indexed(IndexedNames(keys)) : .plain(keys)
        }

        /// An empty object.
        public init() {
            names = .plain([])
            values = []
        }

        /// An empty object with room for `minimumCapacity` members.
        public init(minimumCapacity: Int) {
            var keys: [String] = []
            keys.reserveCapacity(minimumCapacity)
            names = .plain(keys)
            values = []
            values.reserveCapacity(minimumCapacity)
        }

        /// An object from member names the caller guarantees to be unique and their values, in order
        /// (for codecs that collect members first and check duplicates themselves).
        init(uncheckedUniqueKeys keys: [String], values: [Value]) {
            self.init(uniqueKeys: keys, values: values)
        }

        /// An object from ordered pairs; a repeated name keeps its first position and its last value.
        public init(_ pairs: some Sequence<(String, Value)>) {
            self.init()
            for (k, v) in pairs { self[k] = v }
        }

        /// An object from parallel arrays of member names and values. The caller guarantees that the
        /// names are unique (checked in debug builds) and that both arrays have the same length. Codecs
        /// use it to share one `keys` array among the many objects of a list that have the same layout.
        public init(uniqueKeys keys: [String], values: [Value]) {
            precondition(keys.count == values.count, "Value.Object(uniqueKeys:values:) needs one value per key")
            assert(Set(keys).count == keys.count, "duplicate key given to Value.Object(uniqueKeys:values:)")
            names = Self.names(keys)
            self.values = values
        }

        /// Calls `body` with the member names and values in place, neither copied nor retained one by one (for
        /// the codecs' loops over the members of many objects).
        @inlinable
        package func withMembers<R, E: Error>(
            _ body: (UnsafeBufferPointer<String>, UnsafeBufferPointer<Value>) throws(E) -> R
        ) throws(E) -> R {
            switch names {
            case .plain(let keys):
                return try keys.withUnsafeBufferPointer { (k) throws(E) -> R in
                    try values.withUnsafeBufferPointer { (v) throws(E) -> R in try body(k, v) }
                }
            case .indexed(let table):
                return try table.keys.withUnsafeBufferPointer { (k) throws(E) -> R in
                    try values.withUnsafeBufferPointer { (v) throws(E) -> R in try body(k, v) }
                }
            }
        }

        /// The number of members.
        public var count: Int { values.count }

        /// Whether the object has no members.
        public var isEmpty: Bool { values.isEmpty }

        /// The position of the member named `key`.
        public func position(of key: String) -> Int? {
            switch names {
            case .plain(let keys):
                for i in keys.indices where keys[i] == key { return i }
                return nil
            case .indexed(let table):
                return table.index[key]
            }
        }

        /// Whether a member named `key` exists.
        public func contains(_ key: String) -> Bool { position(of: key) != nil }

        /// The value of the member named `key`; setting `nil` removes the member, setting a value
        /// replaces it in place or appends it.
        public subscript(key: String) -> Value? {
            get {
                guard let i = position(of: key) else { return nil }
                return values[i]
            }
            set {
                if let newValue {
                    updateValue(newValue, forKey: key)
                } else {
                    removeValue(forKey: key)
                }
            }
        }

        /// Replaces the value of `key` in place, or appends a new member; returns the old value.
        @discardableResult
        public mutating func updateValue(_ value: Value, forKey key: String) -> Value? {
            if let i = position(of: key) {
                let old = values[i]
                values[i] = value
                return old
            }
            append(key, value)
            return nil
        }

        /// Appends a member. The caller guarantees `key` is not present yet (codecs check duplicates
        /// with ``position(of:)`` according to their policy); use ``updateValue(_:forKey:)`` otherwise.
        public mutating func append(_ key: String, _ value: Value) {
            assert(position(of: key) == nil, "duplicate key \(key) appended to Value.Object")
            values.append(value)
            switch names {
            case .plain(var keys):
                names = .plain([])  // keeps `keys` uniquely referenced, so the append below is in place
                keys.append(key)
                names = Self.names(keys)
            case .indexed(var table):
                names = .plain([])
                if !isKnownUniquelyReferenced(&table) { table = IndexedNames(table.keys) }
                table.index[key] = table.keys.count
                table.keys.append(key)
                names = .indexed(table)
            }
        }

        /// Removes the member named `key`; returns its value.
        @discardableResult
        public mutating func removeValue(forKey key: String) -> Value? {
            guard let i = position(of: key) else { return nil }
            var keys = self.keys
            names = .plain([])
            keys.remove(at: i)
            names = Self.names(keys)
            return values.remove(at: i)
        }

        /// The members sorted by name (for canonical output).
        public func sortedByKey() -> Object {
            var sorted = Object(minimumCapacity: count)
            for i in keys.indices.sorted(by: { keys[$0] < keys[$1] }) { sorted.append(keys[i], values[i]) }
            return sorted
        }

        /// Iterates the members in order.
        public func makeIterator() -> some IteratorProtocol<(key: String, value: Value)> {
            var i = 0
            let keys = keys
            let values = values
            return AnyIterator {
                guard i < keys.count else { return nil }
                defer { i += 1 }
                return (keys[i], values[i])
            }
        }
    }
}

extension Value {
    /// Whether this object has a member named `key`; nil when this is not an object (``Object/contains(_:)``
    /// without copying the object out of the value first).
    @inlinable
    package func objectContains(_ key: String) -> Bool? {
        switch self {
        case .object(let object): return object.contains(key)
        default: return nil
        }
    }

    /// Calls `body` with the member names and values of this object in place, or returns nil when this is not
    /// an object (``Object/withMembers(_:)`` without copying the object out of the value first).
    @inlinable
    package func withObjectMembers<R, E: Error>(
        _ body: (UnsafeBufferPointer<String>, UnsafeBufferPointer<Value>) throws(E) -> R
    ) throws(E) -> R? {
        switch self {
        case .object(let object): return try object.withMembers(body)
        default: return nil
        }
    }
}

extension Value.Object {
    /// An object's member names: plain, or with a hash index for large objects.
    @usableFromInline
    enum Names: Sendable {
        case plain([String])
        case indexed(IndexedNames)
    }

    /// Member names with their positions by name, shared copy-on-write by the objects that have these names.
    @usableFromInline
    final class IndexedNames: @unchecked Sendable {
        // Mutated only while uniquely referenced (see `append`): never shared while it changes.
        @usableFromInline var keys: [String]
        var index: [String: Int]

        init(_ keys: [String]) {
            self.keys = keys
            var built = [String: Int](minimumCapacity: keys.count * 2)
            for (i, k) in keys.enumerated() { built[k] = i }
            index = built
        }
    }
}

extension Value.Object: ExpressibleByDictionaryLiteral {
    public init(dictionaryLiteral elements: (String, Value)...) {
        self.init(elements)
    }
}

extension Value.Object: Hashable {
    public static func == (lhs: Value.Object, rhs: Value.Object) -> Bool {
        guard lhs.count == rhs.count else { return false }
        for i in lhs.keys.indices {
            guard let other = rhs[lhs.keys[i]], other == lhs.values[i] else { return false }
        }
        return true
    }

    public func hash(into hasher: inout Hasher) {
        // Order-independent: combine the members' hashes commutatively.
        var combined = 0
        for i in keys.indices {
            var h = Hasher()
            h.combine(keys[i])
            h.combine(values[i])
            combined ^= h.finalize()
        }
        hasher.combine(count)
        hasher.combine(combined)
    }
}
