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
        public private(set) var keys: [String]
        /// Member values, in the order of ``keys``.
        public private(set) var values: [Value]
        private var index: [String: Int]?

        private static let indexThreshold = 16

        /// An empty object.
        public init() {
            keys = []
            values = []
        }

        /// An empty object with room for `minimumCapacity` members.
        public init(minimumCapacity: Int) {
            keys = []
            values = []
            keys.reserveCapacity(minimumCapacity)
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
            self.keys = keys
            self.values = values
            if keys.count > Self.indexThreshold {
                var built = [String: Int](minimumCapacity: keys.count * 2)
                for (i, k) in keys.enumerated() { built[k] = i }
                index = built
            }
        }

        /// The number of members.
        public var count: Int { keys.count }

        /// Whether the object has no members.
        public var isEmpty: Bool { keys.isEmpty }

        /// The position of the member named `key`.
        public func position(of key: String) -> Int? {
            if let index { return index[key] }
            for i in keys.indices where keys[i] == key { return i }
            return nil
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
            keys.append(key)
            values.append(value)
            if index != nil {
                index![key] = keys.count - 1
            } else if keys.count > Self.indexThreshold {
                var built = [String: Int](minimumCapacity: keys.count * 2)
                for (i, k) in keys.enumerated() { built[k] = i }
                index = built
            }
        }

        /// Removes the member named `key`; returns its value.
        @discardableResult
        public mutating func removeValue(forKey key: String) -> Value? {
            guard let i = position(of: key) else { return nil }
            keys.remove(at: i)
            let old = values.remove(at: i)
            if index != nil {
                var built = [String: Int](minimumCapacity: keys.count * 2)
                for (j, k) in keys.enumerated() { built[k] = j }
                index = keys.count > Self.indexThreshold ? built : nil
            }
            return old
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
