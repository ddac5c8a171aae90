#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A request or response body that streams: an `AsyncSequence` of `Data` chunks, with its ``length`` when
/// known and whether it can be read again (``isReplayable``).
///
/// - **Replayable** bodies — bytes in memory (``data(_:)``), a file (``file(_:chunkSize:)``) and
///   concatenations of those (``concatenation(_:)``, which ``MultipartForm`` uses) — can be iterated any
///   number of times, so a retry, an auth refresh or a signing digest can read them again. They are also
///   readable synchronously, which lets `FoundationTransport` hand them to libcurl without buffering.
/// - **One-shot** bodies wrap any other async sequence (``init(_:length:)``); a second iteration fails with
///   ``CourierError/Code/interceptorContract``, and a request carrying one is never replayed.
///
/// Reading a file checks, chunk by chunk, that the file is still the one opened and still as long as it
/// was: a file that is truncated, replaced or deleted while it is read fails the call with
/// ``CourierError/Code/bodySourceChanged`` instead of sending a body that disagrees with its
/// `Content-Length`.
///
/// ```swift
/// let body = try BodyStream.file(URL(fileURLWithPath: "/tmp/video.mp4"))
/// print(body.length ?? -1, body.isReplayable)          // 73400320 true
/// for try await chunk in body { hasher.update(data: chunk) }
///
/// let small = try await BodyStream.data(Data("hi".utf8)).collect(upTo: 1 << 20)
/// ```
public struct BodyStream: AsyncSequence, Sendable, CustomStringConvertible {
    public typealias Element = Data

    /// The number of bytes the body holds, when known (it is sent as `Content-Length`).
    public let length: Int64?
    /// Whether the body can be iterated again (data, files and their concatenations can; an arbitrary
    /// stream cannot).
    public let isReplayable: Bool

    private let source: Source

    private indirect enum Source: Sendable {
        case data(Data)
        case file(URL, chunkSize: Int)
        case parts([BodyStream])
        case oneShot(OneShot)
        case observed(BodyStream, @Sendable (Int64) -> Void)
    }

    private init(source: Source, length: Int64?, isReplayable: Bool) {
        self.source = source
        self.length = length.flatMap { $0 >= 0 ? $0 : nil }
        self.isReplayable = isReplayable
    }

    /// A body of `data` (replayable).
    public static func data(_ data: Data) -> BodyStream {
        BodyStream(source: .data(data), length: Int64(data.count), isReplayable: true)
    }

    /// The file at `url`, read `chunkSize` bytes at a time (replayable). Its length is taken now; a missing
    /// or unreadable file fails with ``CourierError/Code/fileAccessFailed``.
    public static func file(_ url: URL, chunkSize: Int = 256 << 10) throws -> BodyStream {
        var info = stat()
        guard stat(url.path, &info) == 0 else {
            throw CourierError(.fileAccessFailed, detail: "cannot read \(url.path): \(String(cString: strerror(errno)))")
        }
        guard (info.st_mode & mode_t(S_IFMT)) == mode_t(S_IFREG) else {
            throw CourierError(.fileAccessFailed, detail: "\(url.path) is not a regular file")
        }
        return BodyStream(source: .file(url, chunkSize: Swift.max(1, chunkSize)), length: Int64(info.st_size), isReplayable: true)
    }

    /// `parts` one after the other. Replayable when every part is; its length is known when every part's is.
    public static func concatenation(_ parts: [BodyStream]) -> BodyStream {
        var total: Int64? = 0
        for part in parts {
            // Unknown when a part's is, or when the sum would pass `Int64.max`.
            if let length = part.length, let sum = total {
                let (next, overflow) = sum.addingReportingOverflow(length)
                total = overflow ? nil : next
            } else {
                total = nil
            }
        }
        return BodyStream(source: .parts(parts), length: total, isReplayable: parts.allSatisfy(\.isReplayable))
    }

    /// A one-shot body read from `sequence` (iterated once), declaring `length` bytes when known (a negative
    /// `length` is taken as unknown).
    public init<S: AsyncSequence & Sendable>(_ sequence: S, length: Int64? = nil) where S.Element == Data {
        self.init(source: .oneShot(OneShot(sequence)), length: length, isReplayable: false)
    }

    public var description: String {
        let size = length.map { "\($0) B" } ?? "unknown length"
        switch source {
        case .data: return "BodyStream(data, \(size))"
        case .file(let url, _): return "BodyStream(file \(url.lastPathComponent), \(size))"
        case .parts(let parts): return "BodyStream(\(parts.count) parts, \(size))"
        case .oneShot: return "BodyStream(one-shot, \(size))"
        case .observed(let inner, _): return inner.description
        }
    }

    // MARK: - Reading

    /// Reads the whole body into memory, failing with ``CourierError/Code/sizeLimitExceeded`` past `limit`
    /// bytes (for stages that need the bytes: codecs, encryption).
    public func collect(upTo limit: Int) async throws -> Data {
        if let length, length > Int64(limit) {
            throw CourierError(.sizeLimitExceeded, detail: "the body holds \(length) bytes; the limit is \(limit)")
        }
        var data = Data()
        // The declared length is the body's word, not a fact: room for at most 16 MiB of it is taken up front.
        if let length { data.reserveCapacity(Int(Swift.min(length, 1 << 24))) }
        for try await chunk in self {
            guard chunk.count <= limit - data.count else {
                throw CourierError(.sizeLimitExceeded, detail: "the body exceeds \(limit) bytes")
            }
            data.append(chunk)
        }
        return data
    }

    /// The iterator: chunks in order, `nil` at the end.
    public struct AsyncIterator: AsyncIteratorProtocol {
        private var next: () async throws -> Data?

        fileprivate init(_ next: @escaping () async throws -> Data?) { self.next = next }

        public mutating func next() async throws -> Data? {
            try Task.checkCancellation()
            return try await next()
        }
    }

    public func makeAsyncIterator() -> AsyncIterator {
        if let reader = makeBlockingReader() {
            return AsyncIterator { try reader.read() }
        }
        switch source {
        case .oneShot(let oneShot):
            let iterator = oneShot.take()
            return AsyncIterator { try await iterator.next() }
        case .parts(let parts):
            var index = 0
            var current: AsyncIterator?
            return AsyncIterator {
                while index < parts.count {
                    if current == nil { current = parts[index].makeAsyncIterator() }
                    if let chunk = try await current?.next() {
                        if chunk.isEmpty { continue }
                        return chunk
                    }
                    current = nil
                    index += 1
                }
                return nil
            }
        case .observed(let inner, let observe):
            var iterator = inner.makeAsyncIterator()
            var total: Int64 = 0
            return AsyncIterator {
                guard let chunk = try await iterator.next() else { return nil }
                total += Int64(chunk.count)
                observe(total)
                return chunk
            }
        case .data, .file:
            return AsyncIterator { nil }   // unreachable: replayable sources have a blocking reader
        }
    }

    /// A synchronous reader for a replayable body (nil for a one-shot body): each ``BlockingReader/read()``
    /// returns the next chunk or nil at the end. Used by transports that pull bytes from a thread of their
    /// own (libcurl's read callback); file reads are the only blocking they do.
    package func makeBlockingReader() -> BlockingReader? {
        switch source {
        case .data(let data): return DataReader(data)
        case .file(let url, let chunkSize): return FileReader(url: url, chunkSize: chunkSize, expected: length ?? 0)
        case .parts(let parts):
            var readers: [BlockingReader] = []
            for part in parts {
                guard let reader = part.makeBlockingReader() else { return nil }
                readers.append(reader)
            }
            return PartsReader(readers)
        case .oneShot: return nil
        case .observed(let inner, let observe):
            return inner.makeBlockingReader().map { ObservingReader($0, observe) }
        }
    }

    // MARK: - Observing

    /// This body, calling `observe` with the running byte count after each chunk is read (the transport
    /// reads chunks as it sends them, so this is upload progress).
    package func observed(_ observe: @escaping @Sendable (Int64) -> Void) -> BodyStream {
        BodyStream(source: .observed(self, observe), length: length, isReplayable: isReplayable)
    }
}

/// A synchronous source of chunks (see ``BodyStream/makeBlockingReader()``).
package class BlockingReader: @unchecked Sendable {
    /// The next chunk, or nil at the end.
    package func read() throws -> Data? { nil }
    /// Releases what the reader holds (files); reading after it returns nil.
    package func close() {}
    deinit { close() }
}

private final class DataReader: BlockingReader, @unchecked Sendable {
    private var data: Data?
    init(_ data: Data) { self.data = data.isEmpty ? nil : data }
    override func read() throws -> Data? {
        defer { data = nil }
        return data
    }
}

private final class PartsReader: BlockingReader, @unchecked Sendable {
    private var readers: ArraySlice<BlockingReader>
    init(_ readers: [BlockingReader]) { self.readers = readers[...] }
    override func read() throws -> Data? {
        while let reader = readers.first {
            if let chunk = try reader.read(), !chunk.isEmpty { return chunk }
            reader.close()
            readers.removeFirst()
        }
        return nil
    }
    override func close() {
        for reader in readers { reader.close() }
        readers = []
    }
}

/// Reads a file with `read(2)`, checking between chunks that the path still names the file opened and that
/// it has not shrunk below the length declared when the body was made.
private final class FileReader: BlockingReader, @unchecked Sendable {
    private let url: URL
    private let chunkSize: Int
    private let expected: Int64
    private var descriptor: Int32 = -1
    private var identity: (device: UInt64, inode: UInt64)?
    private var offset: Int64 = 0
    private var done = false

    init(url: URL, chunkSize: Int, expected: Int64) {
        self.url = url
        self.chunkSize = chunkSize
        self.expected = expected
    }

    override func read() throws -> Data? {
        if done { return nil }
        if descriptor < 0 {
            descriptor = open(url.path, O_RDONLY)
            guard descriptor >= 0 else {
                done = true
                throw changed("it can no longer be opened (\(String(cString: strerror(errno))))")
            }
            var info = stat()
            if fstat(descriptor, &info) == 0 { identity = (UInt64(info.st_dev), UInt64(info.st_ino)) }
        }
        try checkStillThere()
        let wanted = Int(Swift.min(Int64(chunkSize), Swift.max(0, expected - offset)))
        if wanted == 0 {
            close()
            return nil
        }
        var chunk = Data(count: wanted)
        let count = chunk.withUnsafeMutableBytes { buffer in
            systemRead(descriptor, buffer.baseAddress, wanted)
        }
        guard count > 0 else {
            close()
            throw changed(count < 0 ? String(cString: strerror(errno)) : "it ended at \(offset) of \(expected) bytes")
        }
        if count < wanted { chunk.removeLast(wanted - count) }
        offset += Int64(count)
        return chunk
    }

    private func checkStillThere() throws {
        var info = stat()
        guard stat(url.path, &info) == 0 else {
            close()
            throw changed("it was removed")
        }
        if let identity, identity.device != UInt64(info.st_dev) || identity.inode != UInt64(info.st_ino) {
            close()
            throw changed("it was replaced")
        }
        if Int64(info.st_size) < expected {
            close()
            throw changed("it shrank to \(info.st_size) of \(expected) bytes")
        }
    }

    private func changed(_ why: String) -> CourierError {
        CourierError(.bodySourceChanged, detail: "the upload's file \(url.lastPathComponent) changed while it was sent: \(why)")
    }

    override func close() {
        done = true
        if descriptor >= 0 {
            systemClose(descriptor)
            descriptor = -1
        }
    }
}

/// A one-shot sequence: the first iteration gets it, a later one fails.
private final class OneShot: Sendable {
    private let make: Locked<(@Sendable () -> OneShotIterator)?>

    init<S: AsyncSequence & Sendable>(_ sequence: S) where S.Element == Data {
        make = Locked({ OneShotIterator(sequence) })
    }

    func take() -> OneShotIterator {
        let maker = make.withLock { maker -> (@Sendable () -> OneShotIterator)? in
            defer { maker = nil }
            return maker
        }
        guard let maker else {
            return OneShotIterator {
                throw CourierError(.interceptorContract, detail: "a one-shot body stream was read twice")
            }
        }
        return maker()
    }
}

private final class OneShotIterator: @unchecked Sendable {
    // @unchecked: one iterator is used by one reader at a time (AsyncIteratorProtocol's contract).
    private let nextChunk: () async throws -> Data?

    init<S: AsyncSequence>(_ sequence: S) where S.Element == Data {
        var iterator = sequence.makeAsyncIterator()
        nextChunk = { try await iterator.next() }
    }

    init(_ next: @escaping () async throws -> Data?) { nextChunk = next }

    func next() async throws -> Data? { try await nextChunk() }
}

private final class ObservingReader: BlockingReader, @unchecked Sendable {
    private let inner: BlockingReader
    private let observe: @Sendable (Int64) -> Void
    private var total: Int64 = 0
    init(_ inner: BlockingReader, _ observe: @escaping @Sendable (Int64) -> Void) {
        self.inner = inner
        self.observe = observe
    }
    override func read() throws -> Data? {
        guard let chunk = try inner.read() else { return nil }
        total += Int64(chunk.count)
        observe(total)
        return chunk
    }
    override func close() { inner.close() }
}

private func systemRead(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
    read(descriptor, buffer, count)
}

private func systemClose(_ descriptor: Int32) {
    _ = close(descriptor)
}
