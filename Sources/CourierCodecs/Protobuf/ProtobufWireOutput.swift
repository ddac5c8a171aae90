#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// The growing byte buffer the direct protobuf writers write into: raw `malloc` memory without an array's
/// uniqueness and bounds checks on every byte, handed over to the resulting `Data` without a copy.
///
/// A class, so that the writer structs that hold it share it; one encode uses it from one thread.
///
/// Its first allocation is the size of the last message written (``sizeHint``, up to 64 KiB), so that a
/// message like the previous one is written without growing the buffer or shrinking it at the end.
final class ProtobufWireOutput {
    /// The last message's size in bytes (any thread's: a hint only).
    private static let sizeHint = Atomic<Int>(0)
    /// The largest first allocation the hint asks for (larger buffers grow; malloc serves this without mmap).
    private static let maximumHint = 64 << 10

    @exclusivity(unchecked) private(set) var base: UnsafeMutablePointer<UInt8>
    /// The bytes written so far.
    @exclusivity(unchecked) private(set) var count = 0
    /// The bytes allocated at `base`; 0 once ``takeData()`` handed them over (`base` is then not ours).
    @exclusivity(unchecked) private var capacity: Int

    init(capacity: Int) {
        let hint = Self.sizeHint.load(ordering: .relaxed)
        // A little over the hint: the writers reserve a varint's 10 bytes before each write.
        self.capacity = max(capacity, 16, min(hint, Self.maximumHint) + 32)
        base = Self.allocate(self.capacity)
    }

    deinit { if capacity > 0 { free(base) } }

    private static func allocate(_ capacity: Int) -> UnsafeMutablePointer<UInt8> {
        guard let raw = malloc(capacity) else { fatalError("out of memory writing protobuf bytes") }
        return raw.assumingMemoryBound(to: UInt8.self)
    }

    /// Makes room for `extra` more bytes.
    @inline(__always)
    func reserve(_ extra: Int) {
        if capacity - count < extra { grow(extra) }
    }

    @inline(never)
    private func grow(_ extra: Int) {
        var newCapacity = max(capacity * 2, 16)
        while newCapacity - count < extra { newCapacity *= 2 }
        guard let raw = capacity == 0 ? malloc(newCapacity) : realloc(base, newCapacity) else {
            fatalError("out of memory writing protobuf bytes")
        }
        base = raw.assumingMemoryBound(to: UInt8.self)
        capacity = newCapacity
    }

    @inline(__always)
    func append(_ byte: UInt8) {
        reserve(1)
        base[count] = byte
        count += 1
    }

    @inline(__always)
    func append(_ bytes: UnsafeRawBufferPointer) {
        guard let source = bytes.baseAddress, bytes.count > 0 else { return }
        reserve(bytes.count)
        UnsafeMutableRawPointer(base + count).copyMemory(from: source, byteCount: bytes.count)
        count += bytes.count
    }

    @inline(__always)
    func append(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { append($0) }
    }

    /// Appends a varint.
    @inline(__always)
    func varint(_ value: UInt64) {
        reserve(10)
        var v = value
        var at = count
        while v >= 0x80 {
            base[at] = UInt8(truncatingIfNeeded: v) | 0x80
            v >>= 7
            at += 1
        }
        base[at] = UInt8(truncatingIfNeeded: v)
        count = at + 1
    }

    /// Appends a little-endian fixed-width value.
    @inline(__always)
    func fixed<T: FixedWidthInteger>(_ value: T) {
        reserve(MemoryLayout<T>.size)
        UnsafeMutableRawPointer(base + count).storeBytes(of: value.littleEndian, as: T.self)
        count += MemoryLayout<T>.size
    }

    /// Drops everything from `position` on.
    @inline(__always)
    func truncate(to position: Int) {
        count = position
    }

    /// Writes the length of what follows `position` into the one byte reserved there, widening the prefix
    /// (moving what follows) when the length needs more than one byte.
    @inline(__always)
    func patchLength(at position: Int) {
        let length = count - position - 1
        if length < 0x80 {
            base[position] = UInt8(length)
            return
        }
        widenLength(at: position, length)
    }

    @inline(never)
    private func widenLength(at position: Int, _ length: Int) {
        var size = 1
        while UInt64(length) >> (7 * size) != 0 { size += 1 }
        reserve(size - 1)
        memmove(base + position + size, base + position + 1, length)
        var v = UInt64(length)
        for i in 0..<size {
            base[position + i] = UInt8(truncatingIfNeeded: v) | (i < size - 1 ? 0x80 : 0)
            v >>= 7
        }
        count += size - 1
    }

    /// Rewrites the bytes from `start` on as the given regions of them (offsets from the buffer's start),
    /// in the given order: the regions must lie after `start` and not overlap.
    func reorder(from start: Int, _ regions: [(start: Int, end: Int)]) {
        let length = count - start
        let copy = UnsafeMutablePointer<UInt8>.allocate(capacity: max(length, 1))
        defer { copy.deallocate() }
        copy.update(from: base + start, count: length)
        count = start
        for region in regions {
            append(UnsafeRawBufferPointer(start: copy + (region.start - start), count: region.end - region.start))
        }
    }

    /// The bytes written, as `Data`; the buffer's memory goes to it (the buffer starts empty again).
    func takeData() -> Data {
        Self.sizeHint.store(count, ordering: .relaxed)
        if capacity == 0 { return Data() }
        // Give back a large unused tail (shrinking in place is cheap) rather than keep it with the bytes.
        if capacity - count > max(capacity / 4, 256), let raw = realloc(base, max(count, 1)) {
            base = raw.assumingMemoryBound(to: UInt8.self)
        }
        let data = Data(bytesNoCopy: base, count: count, deallocator: .free)
        capacity = 0
        count = 0
        return data
    }

    /// The bytes written, as an array.
    var bytes: [UInt8] { Array(UnsafeBufferPointer(start: base, count: count)) }
}
