#if Cache

/// Where a ``CacheInterceptor`` keeps entries. Implementations are safe to share; ``store(_:)`` returns at
/// once (the write may finish later, but a following read sees it).
///
/// ```swift
/// let memory: any CacheStore = MemoryCacheStore(costLimit: 16 << 20)
/// let disk: any CacheStore = try SQLiteCacheStore(path: cachesDirectory + "/courier.sqlite")
/// ```
public protocol CacheStore: Sendable {
    /// The entry for `key`, if any.
    func entry(for key: CacheKey) async -> CacheEntry?
    /// Stores `entry`, replacing any entry with its key. Never blocks the caller.
    func store(_ entry: CacheEntry)
    /// Removes the entry for `key`.
    func remove(_ key: CacheKey) async
    /// Removes every entry stored by the module named `module`.
    func removeAll(module: String) async
    /// Removes every entry.
    func removeAll() async
    /// Removes every entry whose key text starts with `keyPrefix`.
    func removeAll(keyPrefix: String) async
}

/// An in-memory ``CacheStore`` limited by total cost (about the bytes held), evicting the least recently
/// used entries first.
///
/// ```swift
/// let store = MemoryCacheStore(costLimit: 4 << 20)
/// let cache = CacheInterceptor(store: store)
/// ```
public final class MemoryCacheStore: CacheStore {
    private let state: Locked<LRU>

    /// A store holding at most `costLimit` (see ``CacheEntry/cost``); an entry larger than the limit is
    /// not kept.
    public init(costLimit: Int = 16 << 20) {
        state = Locked(LRU(limit: costLimit))
    }

    public func entry(for key: CacheKey) async -> CacheEntry? { state.withLock { $0.get(key) } }

    public func store(_ entry: CacheEntry) { state.withLock { $0.put(entry) } }

    public func remove(_ key: CacheKey) async { state.withLock { $0.remove(key) } }

    public func removeAll(module: String) async {
        state.withLock { lru in
            for key in lru.keys(module: module) { lru.remove(key) }
        }
    }

    public func removeAll() async { state.withLock { $0 = LRU(limit: $0.limit) } }

    public func removeAll(keyPrefix: String) async {
        state.withLock { lru in
            for key in lru.orderedKeys() where key.rawValue.hasPrefix(keyPrefix) { lru.remove(key) }
        }
    }

    /// The total cost held now.
    public var totalCost: Int { state.withLock { $0.total } }

    /// The keys held now, most recently used first.
    public var keys: [CacheKey] { state.withLock { $0.orderedKeys() } }
}

/// A least-recently-used map with O(1) get, put and eviction: a dictionary of slots linked in use order.
struct LRU {
    private struct Slot {
        var entry: CacheEntry
        var cost: Int
        var newer: Int?
        var older: Int?
    }

    let limit: Int
    private(set) var total = 0
    private var slots: [Slot?] = []
    private var free: [Int] = []
    private var index: [CacheKey: Int] = [:]
    private var newest: Int?
    private var oldest: Int?

    init(limit: Int) { self.limit = limit }

    mutating func get(_ key: CacheKey) -> CacheEntry? {
        guard let i = index[key], let slot = slots[i] else { return nil }
        unlink(i)
        pushNewest(i)
        return slot.entry
    }

    mutating func put(_ entry: CacheEntry) {
        remove(entry.key)
        let cost = entry.cost
        guard cost <= limit else { return }
        let slot = Slot(entry: entry, cost: cost, newer: nil, older: nil)
        let i: Int
        if let reused = free.popLast() {
            i = reused
            slots[i] = slot
        } else {
            i = slots.count
            slots.append(slot)
        }
        index[entry.key] = i
        total += cost
        pushNewest(i)
        while total > limit, let victim = oldest, let slot = slots[victim] {
            remove(slot.entry.key)
        }
    }

    mutating func remove(_ key: CacheKey) {
        guard let i = index.removeValue(forKey: key), let slot = slots[i] else { return }
        unlink(i)
        total -= slot.cost
        slots[i] = nil
        free.append(i)
    }

    func keys(module: String) -> [CacheKey] {
        index.compactMap { key, i in slots[i]?.entry.module == module ? key : nil }
    }

    func orderedKeys() -> [CacheKey] {
        var keys: [CacheKey] = []
        var cursor = newest
        while let i = cursor, let slot = slots[i] {
            keys.append(slot.entry.key)
            cursor = slot.older
        }
        return keys
    }

    private mutating func unlink(_ i: Int) {
        guard let slot = slots[i] else { return }
        if let newer = slot.newer { slots[newer]?.older = slot.older } else { newest = slot.older }
        if let older = slot.older { slots[older]?.newer = slot.newer } else { oldest = slot.newer }
        slots[i]?.newer = nil
        slots[i]?.older = nil
    }

    private mutating func pushNewest(_ i: Int) {
        slots[i]?.older = newest
        slots[i]?.newer = nil
        if let current = newest { slots[current]?.newer = i }
        newest = i
        if oldest == nil { oldest = i }
    }
}
#endif
