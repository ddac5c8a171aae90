@testable import CourierCodecs
import Courier
import Foundation

// The schema-less raw decoder as it was before its two-pass rewrite (issue 14), kept verbatim as the oracle that
// ProtobufRawDifferentialTests compares the new one with: the same `Value`, text and error for every input
// (escaping and hex digits, which did not change, are the decoder's own).

struct ProtobufRawOracle {
    /// How deep nested messages are guessed. Default 64 (protoc's own limit is similar).
    var maxDepth = 64
    /// The limits decoding enforces while it reads: input size, fields per message
    /// (`DecodingLimits.maximumContainerCount`), values in all, string and bytes lengths, and the nesting
    /// of groups (`DecodingLimits.maximumDepth`; guessed nesting stops at ``maxDepth`` instead, without
    /// an error). Default `DecodingLimits.init()`.
    var limits = DecodingLimits()

    /// A decoder with the default depth and limits.
    init() {}

    /// Decodes `data` into an object keyed by field number. Throws `CourierError.Code.malformedInput`
    /// (with the byte offset) when the bytes are not a protobuf message, and
    /// `CourierError.Code.sizeLimitExceeded` or `CourierError.Code.depthLimitExceeded` (with the offset)
    /// beyond ``limits``. Linear in the number of fields (times the guessed nesting, at most ``maxDepth``).
    func decode(_ data: Data) throws -> Value {
        try checkSize(data)
        return try data.withUnsafeBytes { (raw: UnsafeRawBufferPointer) throws -> Value in
            let bytes = raw.bindMemory(to: UInt8.self)
            var budget = Budget(limits: limits, maxDepth: maxDepth)
            do throws(WireError) {
                return try Self.parseMessage(bytes, 0..<bytes.count, depth: 1, budget: &budget)
            } catch {
                throw Self.courierError(error)
            }
        }
    }

    /// Renders `data` in the text format of `protoc --decode_raw`.
    func text(_ data: Data) throws -> String {
        try checkSize(data)
        return try data.withUnsafeBytes { (raw: UnsafeRawBufferPointer) throws -> String in
            let bytes = raw.bindMemory(to: UInt8.self)
            var out = ""
            do throws(WireError) {
                // Validate first (protoc prints nothing for bytes it cannot parse).
                // The validating parse remembers which payloads read as messages, so that rendering
                // never guesses again (re-guessing at every level cost the square of the depth).
                var budget = Budget(limits: limits, maxDepth: maxDepth)
                budget.remembersMessages = true
                _ = try Self.parseMessage(bytes, 0..<bytes.count, depth: 1, budget: &budget)
                try Self.render(bytes, 0..<bytes.count, indent: 0, messages: budget.messages, into: &out)
            } catch {
                throw Self.courierError(error)
            }
            return out
        }
    }

    private func checkSize(_ data: Data) throws {
        guard data.count <= limits.maximumInputSize else {
            throw DecodingLimits.sizeFailure(
                "maximumInputSize", limits.maximumInputSize, what: "the protobuf message has \(data.count) bytes",
                at: "in all")
        }
    }

    private static func courierError(_ error: WireError) -> CourierError {
        let detail = error.code == .malformedInput
            ? "not a protobuf message: \(error.message) at offset \(error.offset)"
            : "\(error.message) at offset \(error.offset)"
        return CourierError(error.code, detail: detail, context: .init(offset: error.offset))
    }

    /// What one decode may still build: values in all (restored when a guessed nested message turns out
    /// not to be one), and the limits.
    struct Budget {
        let limits: DecodingLimits
        let maxDepth: Int
        var total = 0
        /// Whether ``messages`` is filled (for ``ProtobufRawOracle/text(_:)``).
        var remembersMessages = false
        /// Where the payloads that were read as nested messages start.
        var messages = Set<Int>()

        init(limits: DecodingLimits, maxDepth: Int) {
            self.limits = limits
            self.maxDepth = maxDepth
        }

        /// Counts one more value at `offset`.
        @inline(__always)
        mutating func count(at offset: Int) throws(WireError) {
            total += 1
            if total > limits.maximumTotalValues {
                throw WireError(
                    message: "the message holds more values than the limit maximumTotalValues = \(limits.maximumTotalValues)",
                    offset: offset, code: .sizeLimitExceeded)
            }
        }
    }

    // MARK: value

    /// The fields of one message, grouped by number in order of first appearance: one dictionary lookup
    /// and one amortised append per field, so a number repeated millions of times stays linear.
    private struct Fields {
        var order: [UInt32] = []
        var slots: [UInt32: Int] = [:]
        var values: [[Value]] = []

        mutating func add(_ number: UInt32, _ value: Value) {
            if let slot = slots[number] {
                values[slot].append(value)
            } else {
                slots[number] = values.count
                order.append(number)
                values.append([value])
            }
        }

        /// The object: a single value per number, or an array of the repeats.
        func object() -> Value {
            var object = Value.Object(minimumCapacity: order.count)
            for (slot, number) in order.enumerated() {
                let list = values[slot]
                object.append(String(number), list.count == 1 ? list[0] : .array(list))
            }
            return .object(object)
        }
    }

    private static func parseMessage(
        _ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, depth: Int, budget: inout Budget,
        endGroup: UInt32? = nil, consumed: UnsafeMutablePointer<Int>? = nil
    ) throws(WireError) -> Value {
        var fields = Fields()
        var reader = WireReader(bytes, range: range)
        var ended = false
        var count = 0
        try budget.count(at: range.lowerBound)
        while !reader.isAtEnd {
            let keyOffset = reader.offset
            let (number, wireType) = try reader.readKey(lenient: true)
            let value: Value
            switch wireType {
            case .varint: value = Value(try reader.readVarint())
            case .fixed64: value = Value(try reader.readFixed64())
            case .fixed32: value = .int(Int64(try reader.readFixed32()))
            case .lengthDelimited:
                let payload = try reader.readLengthDelimited()
                if payload.count > budget.limits.maximumStringLength {
                    throw WireError(
                        message: "a length-delimited value of \(payload.count) bytes is longer than the limit "
                            + "maximumStringLength = \(budget.limits.maximumStringLength)",
                        offset: keyOffset, code: .sizeLimitExceeded)
                }
                value = try lengthDelimitedValue(bytes, payload, depth: depth, budget: &budget)
            case .startGroup:
                // Groups recurse: they nest at most as deep as guesses do (`maxDepth`), and never past the limit.
                let groupDepth = min(budget.limits.maximumDepth, budget.maxDepth)
                guard depth < groupDepth else {
                    throw WireError(
                        message: "groups nest deeper than the limit maximumDepth = \(groupDepth)", offset: keyOffset,
                        code: .depthLimitExceeded)
                }
                var used = 0
                value = try parseMessage(
                    bytes, reader.offset..<reader.end, depth: depth + 1, budget: &budget, endGroup: number,
                    consumed: &used)
                reader.offset = used
            case .endGroup:
                guard endGroup == number else {
                    throw WireError(message: "unmatched end of group \(number)", offset: keyOffset)
                }
                consumed?.pointee = reader.offset
                ended = true
                value = .null
            }
            if ended { break }
            count += 1
            if count > budget.limits.maximumContainerCount {
                throw WireError(
                    message: "a message has more fields than the limit maximumContainerCount = "
                        + "\(budget.limits.maximumContainerCount)",
                    offset: keyOffset, code: .sizeLimitExceeded)
            }
            if wireType != .startGroup && wireType != .lengthDelimited { try budget.count(at: keyOffset) }
            fields.add(number, value)
        }
        if endGroup != nil && !ended {
            throw WireError(message: "group \(endGroup!) is not closed", offset: reader.offset)
        }
        return fields.object()
    }

    /// A length-delimited payload as a nested message when it parses as one, else a string or bytes. A
    /// guess that runs into a limit is an error, not a fallback: the limits bound what is built, whatever
    /// the guess.
    private static func lengthDelimitedValue(
        _ bytes: UnsafeBufferPointer<UInt8>, _ payload: Range<Int>, depth: Int, budget: inout Budget
    ) throws(WireError) -> Value {
        let before = budget.total
        if !payload.isEmpty, depth < budget.maxDepth {
            do throws(WireError) {
                let nested = try parseMessage(bytes, payload, depth: depth + 1, budget: &budget)
                if budget.remembersMessages { budget.messages.insert(payload.lowerBound) }
                return nested
            } catch where error.code != .malformedInput {
                throw error
            } catch {
                // Not a message: the guess's values are not built.
                budget.total = before
            }
        }
        try budget.count(at: payload.lowerBound)
        if let text = String(validating: bytes[payload], as: UTF8.self) { return .string(text) }
        return .bytes(Array(bytes[payload]))
    }

    // MARK: text

    /// Renders a message that ``parseMessage(_:_:depth:budget:endGroup:consumed:)`` validated; `messages`
    /// holds where the payloads it read as nested messages start. Linear in the bytes.
    private static func render(
        _ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, indent: Int, messages: Set<Int>,
        into out: inout String, endGroup: UInt32? = nil, consumed: UnsafeMutablePointer<Int>? = nil
    ) throws(WireError) {
        var reader = WireReader(bytes, range: range)
        let pad = String(repeating: " ", count: indent)
        while !reader.isAtEnd {
            let (number, wireType) = try reader.readKey(lenient: true)
            switch wireType {
            case .varint:
                out += "\(pad)\(number): \(try reader.readVarint())\n"
            case .fixed64:
                out += "\(pad)\(number): 0x\(ProtobufRawDecoder.hex(try reader.readFixed64(), digits: 16))\n"
            case .fixed32:
                out += "\(pad)\(number): 0x\(ProtobufRawDecoder.hex(UInt64(try reader.readFixed32()), digits: 8))\n"
            case .lengthDelimited:
                let payload = try reader.readLengthDelimited()
                if !payload.isEmpty, messages.contains(payload.lowerBound) {
                    out += "\(pad)\(number) {\n"
                    try render(bytes, payload, indent: indent + 2, messages: messages, into: &out)
                    out += "\(pad)}\n"
                } else {
                    out += "\(pad)\(number): \"\(ProtobufRawDecoder.escape(bytes[payload]))\"\n"
                }
            case .startGroup:
                out += "\(pad)\(number) {\n"
                var used = 0
                try render(
                    bytes, reader.offset..<reader.end, indent: indent + 2, messages: messages, into: &out,
                    endGroup: number, consumed: &used)
                reader.offset = used
                out += "\(pad)}\n"
            case .endGroup:
                consumed?.pointee = reader.offset
                return
            }
        }
    }
}
