#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CProtobufC

/// The bump allocator behind one decode or encode: protobuf-c allocates the unpacked message tree from it and
/// the encoder builds the C structs in it; everything is released at once when the arena goes away.
///
/// Every block carries an 8-byte header with its requested size. The decoder reads it to get the exact length
/// of strings (protobuf-c allocates `length + 1` bytes for each and NUL-terminates it), so strings that contain
/// NUL characters survive.
struct ArenaState {
    var cursor: UnsafeMutableRawPointer?
    var limit: UnsafeMutableRawPointer?
    /// The most recent chunk; each chunk's first word points to the previous one.
    var chunks: UnsafeMutableRawPointer?
    var nextChunkSize: Int
    var failed: Bool
}

private let chunkHeader = 16

@inline(__always)
func arenaAllocate(_ state: UnsafeMutablePointer<ArenaState>, _ size: Int) -> UnsafeMutableRawPointer? {
    let needed = 8 + ((size + 7) & ~7)
    if let cursor = state.pointee.cursor, let limit = state.pointee.limit, limit - cursor >= needed {
        cursor.storeBytes(of: size, as: Int.self)
        state.pointee.cursor = cursor + needed
        return cursor + 8
    }
    // A new chunk: big requests get one of their own, small ones start a fresh, larger chunk.
    let chunkSize = max(state.pointee.nextChunkSize, needed + chunkHeader)
    guard size >= 0, size < Int(Int32.max), let chunk = malloc(chunkSize) else {
        state.pointee.failed = true
        return nil
    }
    chunk.storeBytes(of: state.pointee.chunks, as: UnsafeMutableRawPointer?.self)
    state.pointee.chunks = chunk
    let start = chunk + chunkHeader
    start.storeBytes(of: size, as: Int.self)
    if chunkSize - chunkHeader - needed >= 256 || state.pointee.cursor == nil {
        state.pointee.cursor = start + needed
        state.pointee.limit = chunk + chunkSize
        state.pointee.nextChunkSize = min(state.pointee.nextChunkSize * 2, 64 << 20)
    }
    return start + 8
}

private let arenaAlloc: @convention(c) (UnsafeMutableRawPointer?, Int) -> UnsafeMutableRawPointer? = {
    data, size in
    arenaAllocate(data!.assumingMemoryBound(to: ArenaState.self), size)
}

private let arenaFree: @convention(c) (UnsafeMutableRawPointer?, UnsafeMutableRawPointer?) -> Void = { _, _ in }

final class Arena {
    let state: UnsafeMutablePointer<ArenaState>
    var allocator: ProtobufCAllocator

    init(initialSize: Int) {
        state = .allocate(capacity: 1)
        state.initialize(
            to: ArenaState(
                cursor: nil, limit: nil, chunks: nil, nextChunkSize: max(4096, min(initialSize, 64 << 20)),
                failed: false))
        allocator = ProtobufCAllocator(alloc: arenaAlloc, free: arenaFree, allocator_data: UnsafeMutableRawPointer(state))
    }

    deinit {
        var chunk = state.pointee.chunks
        while let current = chunk {
            chunk = current.load(as: UnsafeMutableRawPointer?.self)
            free(current)
        }
        state.deinitialize(count: 1)
        state.deallocate()
    }

    /// Zeroed memory of `size` bytes, 8-aligned.
    @inline(__always)
    func allocateZeroed(_ size: Int) -> UnsafeMutableRawPointer? {
        guard let p = arenaAllocate(state, size) else { return nil }
        p.initializeMemory(as: UInt8.self, repeating: 0, count: size)
        return p
    }

    /// Uninitialised memory of `size` bytes, 8-aligned.
    @inline(__always)
    func allocate(_ size: Int) -> UnsafeMutableRawPointer? {
        arenaAllocate(state, size)
    }

    /// The requested size of a block this arena handed out.
    @inline(__always)
    static func blockSize(_ pointer: UnsafeRawPointer) -> Int {
        (pointer - 8).load(as: Int.self)
    }
}
