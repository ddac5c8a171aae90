#if Cache
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import GRDB
public import Logging

/// A ``CacheStore`` in an SQLite file (GRDB, WAL mode) with a size limit: when the bodies and heads stored
/// pass it, the least recently used entries are evicted.
///
/// Writes never block the caller: ``store(_:)`` queues the write on the database's writer and returns; until
/// it is written, reads answer it from memory. A corrupt or truncated file is detected — at open (it fails
/// to open, or `PRAGMA quick_check` reports damage) or when a query fails with a corruption error — and is
/// deleted and rebuilt empty; the store never crashes on it.
///
/// ```swift
/// let store = try SQLiteCacheStore(path: cachesDirectory + "/courier-cache.sqlite", sizeLimit: 32 << 20)
/// let cache = CacheInterceptor(store: store)
/// ```
public final class SQLiteCacheStore: CacheStore {
    /// The database file.
    public let path: String
    /// The most bytes (bodies and heads) kept before eviction (0 when a negative limit was given: nothing is
    /// kept).
    public let sizeLimit: Int
    /// How long a queued write waits for another connection's write lock (an app extension, a second store on
    /// the same file) before it is given up, and logged; the caller never waits for it. At most `Int32.max`
    /// milliseconds (about 24.8 days), SQLite's limit.
    public let busyTimeout: Duration

    private struct Pending {
        var generation: UInt64
        var entry: CacheEntry?
    }

    private struct State {
        var pool: DatabasePool
        var poolID = 0
        var pending: [CacheKey: Pending] = [:]
        var generation: UInt64 = 0
        var tick: Int64 = 0
        var rebuilds = 0
    }

    private let state: Locked<State>
    private let logger: Logger

    /// Opens (or creates) the store at `path`. A damaged file is deleted and rebuilt; this throws only when
    /// no database can be created there at all (an unwritable directory). `busyTimeout` is how long a write
    /// waits for another connection's lock (negative: not at all).
    public init(
        path: String, sizeLimit: Int = 64 << 20, busyTimeout: Duration = .seconds(10),
        logger: Logger = Logger(label: "courier.cache", factory: { _ in SwiftLogNoOpLogHandler() })
    ) throws {
        self.path = path
        self.sizeLimit = max(0, sizeLimit)
        self.busyTimeout = min(max(busyTimeout, .zero), .milliseconds(Int32.max))
        self.logger = logger
        var rebuilt = false
        let pool: DatabasePool
        do {
            pool = try Self.open(path, busyTimeout: self.busyTimeout)
        } catch {
            logger.warning("cache database unusable, rebuilding", metadata: ["path": "\(path)", "error": "\(error)"])
            Self.deleteFiles(path)
            do {
                pool = try Self.open(path, busyTimeout: self.busyTimeout)
            } catch {
                throw CourierError(.invalidConfiguration, detail: "cannot create a cache database at \(path)",
                                   underlying: error)
            }
            rebuilt = true
        }
        var initial = State(pool: pool)
        // A damaged file may hold any number: the clock starts within [0, 2^62], far from overflowing.
        let latest = (try? pool.read { db in try Int64.fetchOne(db, sql: "SELECT MAX(accessed) FROM entries") }) ?? 0
        initial.tick = min(max(latest, 0), 1 << 62)
        if rebuilt { initial.rebuilds = 1 }
        state = Locked(initial)
    }

    /// How many times the file was found damaged and rebuilt since this store was opened.
    public var rebuildCount: Int { state.withLock { $0.rebuilds } }

    public func entry(for key: CacheKey) async -> CacheEntry? {
        let (pending, pool, poolID, tick) = state.withLock { state -> (Pending?, DatabasePool, Int, Int64) in
            state.tick += 1
            return (state.pending[key], state.pool, state.poolID, state.tick)
        }
        if let pending { return pending.entry }
        let raw = key.rawValue
        do {
            let found = try await pool.read { db -> (module: String, head: Data, body: Data)? in
                let row = try Row.fetchOne(
                    db, sql: "SELECT module, head, body FROM entries WHERE key = ?", arguments: [raw])
                return row.map { ($0["module"], $0["head"], $0["body"]) }
            }
            guard let (module, headData, body) = found else { return nil }
            guard let head = try? JSONDecoder().decode(StoredHead.self, from: headData) else {
                // An unreadable head: drop the entry rather than fail every later read.
                await remove(key)
                return nil
            }
            pool.asyncWrite({ db in
                try db.execute(sql: "UPDATE entries SET accessed = ? WHERE key = ?", arguments: [tick, raw])
            }, completion: { [weak self] _, result in
                if case .failure(let error) = result { self?.recover(from: error, poolID: poolID) }
            })
            return head.entry(key: key, module: module, body: body)
        } catch {
            recover(from: error, poolID: poolID)
            return nil
        }
    }

    public func store(_ entry: CacheEntry) {
        guard let head = try? JSONEncoder().encode(StoredHead(entry)) else { return }
        let (pool, poolID, generation, tick) = state.withLock { state -> (DatabasePool, Int, UInt64, Int64) in
            state.generation += 1
            state.tick += 1
            state.pending[entry.key] = Pending(generation: state.generation, entry: entry)
            return (state.pool, state.poolID, state.generation, state.tick)
        }
        write(entry, head: head, pool: pool, poolID: poolID, generation: generation, tick: tick)
    }

    private func write(
        _ entry: CacheEntry, head: Data, pool: DatabasePool, poolID: Int, generation: UInt64, tick: Int64
    ) {
        let limit = sizeLimit
        let key = entry.key
        pool.asyncWrite({ db in
            try db.execute(
                sql: """
                    INSERT OR REPLACE INTO entries (key, module, size, accessed, head, body)
                    VALUES (?, ?, ?, ?, ?, ?)
                    """,
                arguments: [key.rawValue, entry.module, head.count + entry.body.count, tick, head, entry.body])
            try Self.evict(db, limit: limit)
        }, completion: { [weak self] _, result in
            guard let self else { return }
            self.state.withLock { state in
                if state.pending[key]?.generation == generation { state.pending[key] = nil }
            }
            if case .failure(let error) = result { self.recover(from: error, poolID: poolID) }
        })
    }

    public func remove(_ key: CacheKey) async {
        let (pool, poolID, generation) = state.withLock { state -> (DatabasePool, Int, UInt64) in
            state.generation += 1
            state.pending[key] = Pending(generation: state.generation, entry: nil)
            return (state.pool, state.poolID, state.generation)
        }
        do {
            try await pool.write { db in
                try db.execute(sql: "DELETE FROM entries WHERE key = ?", arguments: [key.rawValue])
            }
        } catch {
            recover(from: error, poolID: poolID)
        }
        state.withLock { state in
            if state.pending[key]?.generation == generation { state.pending[key] = nil }
        }
    }

    public func removeAll(module: String) async {
        await removeMatching(sql: "DELETE FROM entries WHERE module = ?", arguments: [module]) { $0.module == module }
    }

    public func removeAll() async {
        await removeMatching(sql: "DELETE FROM entries", arguments: []) { _ in true }
    }

    public func removeAll(keyPrefix: String) async {
        await removeMatching(sql: "DELETE FROM entries WHERE instr(key, ?) = 1", arguments: [keyPrefix]) {
            $0.key.rawValue.hasPrefix(keyPrefix)
        }
    }

    private func removeMatching(
        sql: String, arguments: StatementArguments, _ matches: @escaping (CacheEntry) -> Bool
    ) async {
        let (pool, poolID, generation) = state.withLock { ($0.pool, $0.poolID, $0.generation) }
        do {
            try await pool.write { db in try db.execute(sql: sql, arguments: arguments) }
        } catch {
            recover(from: error, poolID: poolID)
        }
        state.withLock { state in
            state.pending = state.pending.filter { _, pending in
                guard let entry = pending.entry else { return pending.generation > generation }
                return pending.generation > generation || !matches(entry)
            }
        }
    }

    /// Waits until every write queued so far is on disk.
    public func flush() async {
        let (pool, poolID) = state.withLock { ($0.pool, $0.poolID) }
        do {
            try await pool.write { _ in }
        } catch {
            recover(from: error, poolID: poolID)
        }
    }

    /// Writes what is queued and closes the file; afterwards the store answers nothing and stores nothing.
    /// Close a store before another process (or another store object) replaces or deletes its file.
    public func close() async {
        await flush()
        let pool = state.withLock { $0.pool }
        do {
            try pool.close()
        } catch {
            logger.warning("cache database did not close cleanly", metadata: ["error": "\(error)"])
        }
    }

    /// The number of entries and the bytes they take on disk (after queued writes land).
    public func statistics() async -> (count: Int, size: Int) {
        await flush()
        let pool = state.withLock { $0.pool }
        let found = try? await pool.read { db -> (Int, Int)? in
            let row = try Row.fetchOne(db, sql: "SELECT COUNT(*) AS n, COALESCE(SUM(size), 0) AS s FROM entries")
            return row.map { ($0["n"], $0["s"]) }
        }
        return (found?.0 ?? 0, found?.1 ?? 0)
    }

    // MARK: - Opening, eviction, recovery

    static func open(_ path: String, busyTimeout: Duration) throws -> DatabasePool {
        var configuration = Configuration()
        configuration.label = "courier.cache"
        // Another connection (an app extension, a second store object) may hold the write lock for a while:
        // queued writes wait for it in the background instead of failing (the caller never waits).
        let (seconds, attoseconds) = busyTimeout.components
        configuration.busyMode = .timeout(Double(seconds) + Double(attoseconds) / 1e18)
        let pool = try DatabasePool(path: path, configuration: configuration)
        do {
            let check = try pool.read { db in try String.fetchOne(db, sql: "PRAGMA quick_check") }
            guard check == "ok" else {
                throw DatabaseError(resultCode: .SQLITE_CORRUPT, message: "quick_check: \(check ?? "no answer")")
            }
            try pool.write { db in
                try db.execute(
                    sql: """
                        CREATE TABLE IF NOT EXISTS entries (
                            key TEXT PRIMARY KEY NOT NULL,
                            module TEXT NOT NULL,
                            size INTEGER NOT NULL,
                            accessed INTEGER NOT NULL,
                            head BLOB NOT NULL,
                            body BLOB NOT NULL
                        );
                        CREATE INDEX IF NOT EXISTS entries_module ON entries(module);
                        CREATE INDEX IF NOT EXISTS entries_accessed ON entries(accessed);
                        """)
            }
            // Read every row once: a truncated file often passes the header checks and fails only here.
            _ = try pool.read { db in
                try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM entries WHERE length(head) >= 0 AND length(body) >= 0")
            }
        } catch {
            try? pool.close()
            throw error
        }
        return pool
    }

    static func evict(_ db: Database, limit: Int) throws {
        let total = try Int.fetchOne(db, sql: "SELECT COALESCE(SUM(size), 0) FROM entries") ?? 0
        guard total > limit else { return }
        var excess = total - limit
        var victims: [String] = []
        let rows = try Row.fetchCursor(db, sql: "SELECT key, size FROM entries ORDER BY accessed ASC")
        while excess > 0, let row = try rows.next() {
            victims.append(row["key"])
            // A damaged row's size may be negative: it frees nothing (and cannot overflow `excess`).
            excess -= max(0, row["size"] as Int)
        }
        for key in victims {
            try db.execute(sql: "DELETE FROM entries WHERE key = ?", arguments: [key])
        }
    }

    static func isDamage(_ error: any Error) -> Bool {
        guard let error = error as? DatabaseError else { return false }
        return [.SQLITE_CORRUPT, .SQLITE_NOTADB, .SQLITE_IOERR, .SQLITE_FORMAT].contains(error.resultCode)
    }

    static func deleteFiles(_ path: String) {
        for suffix in ["", "-wal", "-shm", "-journal"] {
            try? FileManager.default.removeItem(atPath: path + suffix)
        }
    }

    /// Rebuilds the file after a query failed with a corruption error (once per damaged pool). Entries not
    /// yet written are queued again on the new file.
    private func recover(from error: any Error, poolID: Int) {
        guard Self.isDamage(error) else {
            logger.warning("cache database error", metadata: ["error": "\(error)"])
            return
        }
        let requeue: [(CacheEntry, DatabasePool, Int, UInt64, Int64)]? = state.withLock { state in
            guard state.poolID == poolID else { return nil }
            logger.warning("cache database damaged, rebuilding", metadata: ["path": "\(path)", "error": "\(error)"])
            try? state.pool.close()
            Self.deleteFiles(path)
            guard let fresh = try? Self.open(path, busyTimeout: busyTimeout) else {
                logger.error("cache database could not be rebuilt", metadata: ["path": "\(path)"])
                return nil
            }
            state.pool = fresh
            state.poolID += 1
            state.rebuilds += 1
            return state.pending.compactMap { _, pending in
                pending.entry.map { ($0, fresh, state.poolID, pending.generation, state.tick) }
            }
        }
        for (entry, pool, id, generation, tick) in requeue ?? [] {
            guard let head = try? JSONEncoder().encode(StoredHead(entry)) else { continue }
            write(entry, head: head, pool: pool, poolID: id, generation: generation, tick: tick)
        }
    }
}
#endif
