#if Cache
import CourierCache
import Foundation
import HTTPTypes
import GRDB
import CourierTestSupport
import Testing

func makeEntry(_ key: String, module: String = "m", bytes: Int = 100, fill: UInt8 = 0x61) -> CacheEntry {
    CacheEntry(
        key: CacheKey(rawValue: key), module: module, status: 200,
        headerFields: [.contentType: "application/json", .eTag: "\"\(key)\""], body: Data(repeating: fill, count: bytes),
        format: .json, metadata: CacheMetadata(createdAt: Date(timeIntervalSince1970: 1_000), ttl: 60, eTag: "\"\(key)\""))
}

@Suite struct MemoryCacheStoreTests {
    @Test func evictsLeastRecentlyUsedWhenOverCost() async {
        let cost = makeEntry("a").cost
        let store = MemoryCacheStore(costLimit: cost * 3)
        store.store(makeEntry("a"))
        store.store(makeEntry("b"))
        store.store(makeEntry("c"))
        _ = await store.entry(for: CacheKey(rawValue: "a"))      // a is now the most recently used
        store.store(makeEntry("d"))                               // evicts b, the least recently used
        #expect(await store.entry(for: CacheKey(rawValue: "b")) == nil)
        #expect(await store.entry(for: CacheKey(rawValue: "a")) != nil)
        #expect(store.keys.map(\.rawValue) == ["a", "d", "c"])
        #expect(store.totalCost == cost * 3)
    }

    @Test func replacingAnEntryKeepsCostExactAndTooLargeIsNotKept() async {
        let store = MemoryCacheStore(costLimit: 2_000)
        store.store(makeEntry("a", bytes: 100))
        store.store(makeEntry("a", bytes: 300))
        #expect(store.totalCost == makeEntry("a", bytes: 300).cost)
        store.store(makeEntry("huge", bytes: 5_000))
        #expect(await store.entry(for: CacheKey(rawValue: "huge")) == nil)
        #expect(await store.entry(for: CacheKey(rawValue: "a"))?.body.count == 300)
    }

    @Test func removesByModule() async {
        let store = MemoryCacheStore()
        store.store(makeEntry("a", module: "x"))
        store.store(makeEntry("b", module: "y"))
        await store.removeAll(module: "x")
        #expect(await store.entry(for: CacheKey(rawValue: "a")) == nil)
        #expect(await store.entry(for: CacheKey(rawValue: "b")) != nil)
        await store.removeAll()
        #expect(store.totalCost == 0)
    }
}

@Suite struct SQLiteCacheStoreTests {
    @Test func storesReadsAndSurvivesReopening() async throws {
        let path = Fixture.tempPath()
        do {
            let store = try SQLiteCacheStore(path: path)
            let entry = makeEntry("k1", bytes: 1_000)
            store.store(entry)
            // Read-your-write before the write has landed.
            #expect(await store.entry(for: entry.key) == entry)
            await store.close()
        }
        let reopened = try SQLiteCacheStore(path: path)
        let entry = try #require(await reopened.entry(for: CacheKey(rawValue: "k1")))
        #expect(entry == makeEntry("k1", bytes: 1_000))
        #expect(entry.headerFields[.eTag] == "\"k1\"")
        #expect(reopened.rebuildCount == 0)
    }

    /// Another connection holds the database's write lock for a second: storing returns at once anyway,
    /// the entries are readable at once, and they land on disk when the lock is released.
    @Test func writesNeverBlockTheCallerEvenWhileTheFileIsLocked() async throws {
        let path = Fixture.tempPath()
        // The writes wait for the lock as long as its holder may hold it (below), not the default 10 s.
        let store = try SQLiteCacheStore(path: path, busyTimeout: .seconds(900))
        var configuration = Configuration()
        configuration.busyMode = .timeout(30)
        let other = try DatabaseQueue(path: path, configuration: configuration)
        // 0: not yet locked, 1: holding the write lock, 2: released, -1: could not lock.
        let lock = Locked(0)
        let release = Locked(false)
        let holder = Thread {
            do {
                try other.inDatabase { db in
                    try db.execute(sql: "BEGIN EXCLUSIVE")
                    lock.withLock { $0 = 1 }
                    // Held until the test says so, or 15 minutes, so that a blocked caller fails instead of
                    // hanging. Generous: under ThreadSanitizer, beside other suites on two cores, the test's own
                    // task can wait minutes for a cooperative thread before it sees the lock taken.
                    let deadline = Date().addingTimeInterval(900)
                    while !release.withLock({ $0 }), Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
                    try db.execute(sql: "COMMIT")
                    lock.withLock { $0 = 2 }
                }
            } catch {
                lock.withLock { $0 = -1 }
            }
        }
        holder.start()
        // No time limit that a slow machine (or ThreadSanitizer) could miss: wait for the lock itself.
        while lock.withLock({ $0 }) == 0 { try await Task.sleep(for: .milliseconds(5)) }
        try #require(lock.withLock { $0 } == 1, "the other connection could not take the write lock")
        for i in 0..<20 { store.store(makeEntry("locked-\(i)", bytes: 2_000)) }
        // Every store returned while the other connection still held the lock: none waited for it.
        #expect(lock.withLock { $0 } == 1)
        // Readable at once, from the queue of pending writes.
        #expect(await store.entry(for: CacheKey(rawValue: "locked-7")) == makeEntry("locked-7", bytes: 2_000))
        #expect(lock.withLock { $0 } == 1)
        release.withLock { $0 = true }
        #expect(await store.statistics().count == 20)
        await store.close()
        let reopened = try SQLiteCacheStore(path: path)
        #expect(await reopened.entry(for: CacheKey(rawValue: "locked-19")) == makeEntry("locked-19", bytes: 2_000))
        #expect(reopened.rebuildCount == 0)
    }

    @Test func removesByKeyModuleAndAll() async throws {
        let store = try SQLiteCacheStore(path: Fixture.tempPath())
        store.store(makeEntry("a", module: "x"))
        store.store(makeEntry("b", module: "x"))
        store.store(makeEntry("c", module: "y"))
        await store.remove(CacheKey(rawValue: "a"))
        #expect(await store.entry(for: CacheKey(rawValue: "a")) == nil)
        await store.removeAll(module: "x")
        #expect(await store.entry(for: CacheKey(rawValue: "b")) == nil)
        #expect(await store.entry(for: CacheKey(rawValue: "c")) != nil)
        await store.removeAll()
        #expect(await store.statistics().count == 0)
    }

    @Test func evictsLeastRecentlyUsedOverTheSizeLimit() async throws {
        let store = try SQLiteCacheStore(path: Fixture.tempPath(), sizeLimit: 3_500)
        for name in ["a", "b", "c"] { store.store(makeEntry(name, bytes: 800)) }
        await store.flush()
        _ = await store.entry(for: CacheKey(rawValue: "a"))
        store.store(makeEntry("d", bytes: 800))
        await store.flush()
        let statistics = await store.statistics()
        #expect(statistics.size <= 3_500)
        #expect(await store.entry(for: CacheKey(rawValue: "b")) == nil)
        #expect(await store.entry(for: CacheKey(rawValue: "a")) != nil)
        #expect(await store.entry(for: CacheKey(rawValue: "d")) != nil)
    }

    /// A negative size limit keeps nothing, and numbers a damaged file holds (an access clock at `Int64.max`,
    /// negative sizes) neither overflow nor stop the store.
    @Test func absurdLimitsAndNumbersInTheFileAreHarmless() async throws {
        let empty = try SQLiteCacheStore(path: Fixture.tempPath(), sizeLimit: .min)
        #expect(empty.sizeLimit == 0)
        empty.store(makeEntry("a", bytes: 10))
        await empty.flush()
        #expect(await empty.statistics().count == 0)

        // SQLite takes the busy timeout in milliseconds as an Int32: longer ones stop there, negative ones at 0.
        let patient = try SQLiteCacheStore(path: Fixture.tempPath(), busyTimeout: .seconds(Int64.max))
        #expect(patient.busyTimeout == .milliseconds(Int32.max))
        patient.store(makeEntry("p", bytes: 10))
        await patient.flush()
        #expect(await patient.statistics().count == 1)
        #expect(try SQLiteCacheStore(path: Fixture.tempPath(), busyTimeout: .seconds(-5)).busyTimeout == .zero)

        let path = Fixture.tempPath()
        do {
            let store = try SQLiteCacheStore(path: path, sizeLimit: 3_500)
            for name in ["a", "b", "c"] { store.store(makeEntry(name, bytes: 800)) }
            await store.close()
        }
        let writer = try DatabaseQueue(path: path)
        try await writer.write { db in
            try db.execute(sql: "UPDATE entries SET accessed = 9223372036854775807 WHERE key = 'a'")
            try db.execute(sql: "UPDATE entries SET size = -9223372036854775807 WHERE key = 'b'")
        }
        try writer.close()
        let reopened = try SQLiteCacheStore(path: path, sizeLimit: 3_500)
        #expect(await reopened.entry(for: CacheKey(rawValue: "c")) != nil)
        for name in ["d", "e", "f"] { reopened.store(makeEntry(name, bytes: 800)) }
        await reopened.flush()
        #expect(await reopened.entry(for: CacheKey(rawValue: "f")) != nil)
    }

    @Test(arguments: ["garbage", "truncated", "empty-header"])
    func damagedFileIsRebuilt(damage: String) async throws {
        let path = Fixture.tempPath()
        do {
            let store = try SQLiteCacheStore(path: path)
            for i in 0..<200 { store.store(makeEntry("k\(i)", bytes: 2_000, fill: UInt8(i % 200))) }
            await store.close()
        }
        // Make sure the WAL is folded in, so the damage hits the main file.
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path))
        let size = try handle.seekToEnd()
        #expect(size > 100_000)
        switch damage {
        case "garbage":
            try handle.seek(toOffset: 0)
            try handle.write(contentsOf: Data((0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }))
        case "truncated":
            try handle.truncate(atOffset: size / 3)
        default:
            try handle.seek(toOffset: 0)
            try handle.write(contentsOf: Data(repeating: 0, count: 100))
        }
        try handle.close()
        for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }

        let store = try SQLiteCacheStore(path: path)
        #expect(store.rebuildCount == 1)
        #expect(await store.entry(for: CacheKey(rawValue: "k1")) == nil)
        store.store(makeEntry("fresh"))
        await store.flush()
        #expect(await store.entry(for: CacheKey(rawValue: "fresh")) != nil)
        await store.close()
        let reopened = try SQLiteCacheStore(path: path)
        #expect(reopened.rebuildCount == 0)
        #expect(await reopened.entry(for: CacheKey(rawValue: "fresh")) != nil)
    }

    @Test func damageWhileOpenIsDetectedByAFailingQueryAndRebuilt() async throws {
        let path = Fixture.tempPath()
        let store = try SQLiteCacheStore(path: path)
        for i in 0..<50 { store.store(makeEntry("k\(i)", bytes: 4_000)) }
        await store.flush()
        // Another writer scribbles over the main file and the write-ahead log in place, as a failing disk might.
        for file in [path, path + "-wal"] {
            let size = try FileManager.default.attributesOfItem(atPath: file)[.size] as? Int ?? 0
            let handle = try FileHandle(forUpdating: URL(fileURLWithPath: file))
            try handle.write(contentsOf: Data((0..<max(size, 4096)).map { UInt8(truncatingIfNeeded: $0 &* 97 &+ 3) }))
            try handle.close()
        }

        var misses = 0
        for i in 0..<50 where await store.entry(for: CacheKey(rawValue: "k\(i)")) == nil { misses += 1 }
        #expect(misses > 0)
        #expect(store.rebuildCount == 1)
        store.store(makeEntry("after"))
        await store.flush()
        #expect(await store.entry(for: CacheKey(rawValue: "after")) != nil)
        await store.close()
        let reopened = try SQLiteCacheStore(path: path)
        #expect(reopened.rebuildCount == 0)
        #expect(await reopened.entry(for: CacheKey(rawValue: "after")) != nil)
    }

    @Test func garbageFileInPlaceOfTheDatabaseIsReplaced() async throws {
        let path = Fixture.tempPath()
        try Data("this is not a database, just some text written where the cache belongs\n".utf8)
            .write(to: URL(fileURLWithPath: path))
        let store = try SQLiteCacheStore(path: path)
        #expect(store.rebuildCount == 1)
        store.store(makeEntry("a"))
        await store.flush()
        #expect(await store.entry(for: CacheKey(rawValue: "a")) != nil)
    }

    @Test func cacheInterceptorOverSQLite() async throws {
        let server = FakeServer()
        server["/a"] = .init(body: #"{"n":1}"#, eTag: "\"1\"")
        let path = Fixture.tempPath()
        let endpoint = Fixture.endpoint("/a", policy: .normal(ttl: .seconds(600)))
        do {
            let store = try SQLiteCacheStore(path: path)
            let client = CourierClient(transport: server.transport,
                                configuration: .init(interceptors: [CacheInterceptor(store: store)]))
            #expect(try await client.send(endpoint).metadata.source == .network)
            #expect(try await client.send(endpoint).metadata.source == .cache)
            await store.close()
        }
        // A new process: the entry is on disk.
        let client = CourierClient(transport: server.transport,
                            configuration: .init(interceptors: [CacheInterceptor(store: try SQLiteCacheStore(path: path))]))
        let reply = try await client.send(endpoint)
        #expect(reply.metadata.source == .cache)
        #expect(reply.value["n"]?.int64Value == 1)
        #expect(server.hits("/a") == 1)
    }
}
#endif
