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

/// The growing byte buffer the direct protobuf writers write into: raw `malloc` memory without an array's
/// uniqueness and bounds checks on every byte, handed over to the resulting `Data` without a copy.
///
/// A class, so that the writer structs that hold it share it; one encode uses it from one thread.
final class ProtobufWireOutput {
    @exclusivity(unchecked) private(set) var base: UnsafeMutablePointer<UInt8>
    /// The bytes written so far.
    @exclusivity(unchecked) private(set) var count = 0
    @exclusivity(unchecked) private var capacity: Int

    init(capacity: Int) {
        self.capacity = max(capacity, 16)
        base = Self.allocate(self.capacity)
    }

    deinit { free(base) }

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
        var newCapacity = capacity * 2
        while newCapacity - count < extra { newCapacity *= 2 }
        guard let raw = realloc(base, newCapacity) else { fatalError("out of memory writing protobuf bytes") }
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

    /// The bytes written, as `Data`; the buffer's memory goes to it, so the buffer must not be used after.
    func takeData() -> Data {
        // Give back a large unused tail (shrinking in place is cheap) rather than keep it with the bytes.
        if capacity - count > capacity / 4, let raw = realloc(base, max(count, 1)) {
            base = raw.assumingMemoryBound(to: UInt8.self)
        }
        let data = Data(bytesNoCopy: base, count: count, deallocator: .free)
        base = Self.allocate(16)
        capacity = 16
        count = 0
        return data
    }

    /// The bytes written, as an array.
    var bytes: [UInt8] { Array(UnsafeBufferPointer(start: base, count: count)) }
}
