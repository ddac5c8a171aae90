#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// The property any `Codec` must hold for arbitrary bytes, checked one input at a time: decoding either
/// fails with a `CourierError` (never another error, never a crash), or the decoded value encodes, the
/// encoding decodes to an equal value, and encoding that value again gives the same bytes. It is what
/// Courier's libFuzzer targets assert on every input, and what a test runs over a folder of saved inputs
/// (a fuzzer's corpus or the crashes it found), so the same oracle serves your own codecs.
///
/// ```swift
/// // In a libFuzzer target (`swiftc -sanitize=fuzzer`):
/// let oracle = FuzzOracle(codec: JSONCodec())
/// @_cdecl("LLVMFuzzerTestOneInput")
/// public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
///     oracle.assertHolds(Data(bytes: data, count: size))
///     return 0
/// }
///
/// // In a test, over saved inputs:
/// let violations = try FuzzOracle(codec: JSONCodec()).check(folder: URL(fileURLWithPath: "Fixtures/fuzz/FuzzJSON"))
/// #expect(violations.isEmpty, "\(violations)")
/// ```
public struct FuzzOracle: Sendable {
    /// The codec under test.
    public var codec: any Codec
    /// The hints every decode and encode gets (a protobuf message type, an XML shape, ...).
    public var hints: CodingHints
    /// Error codes re-encoding a decoded value may fail with without breaking the property: for formats
    /// whose decoded values are not all encodable. Default: none.
    public var acceptedEncodingFailures: Set<CourierError.Code> = []
    /// Whether encoding the re-decoded value must reproduce the first encoding byte for byte (true for
    /// canonical writers such as Courier's compact JSON). Default `true`.
    public var requiresStableEncoding = true

    /// An oracle for `codec` with `hints`.
    public init(codec: any Codec, hints: CodingHints = CodingHints()) {
        self.codec = codec
        self.hints = hints
    }

    /// How the property broke for one input.
    ///
    /// ```swift
    /// if let violation = oracle.check(input) { print(violation) }   // "the re-decoded value differs …"
    /// ```
    public struct Violation: Error, Sendable, CustomStringConvertible {
        /// What went wrong.
        public enum Kind: Sendable, Hashable {
            /// Decoding or encoding threw an error that is not a `CourierError`.
            case foreignError
            /// A decoded value failed to encode (with a code not in ``FuzzOracle/acceptedEncodingFailures``).
            case encodingFailed
            /// The encoding of a decoded value failed to decode.
            case reencodingUnreadable
            /// The encoding decoded to a different value.
            case valueChanged
            /// Encoding the re-decoded value gave different bytes.
            case unstableEncoding
        }

        /// What went wrong.
        public var kind: Kind
        /// The input that broke the property.
        public var input: Data
        /// Details: the error or the two values.
        public var detail: String
        /// The file the input came from, when checked with ``FuzzOracle/check(folder:)``.
        public var file: String?

        public var description: String {
            let preview = String(decoding: input.prefix(200), as: UTF8.self).debugDescription
            let origin = file.map { " (\($0))" } ?? ""
            return "\(kind)\(origin): \(detail)\n  input: \(input.count) bytes: \(preview)"
        }
    }

    /// Checks one input; `nil` when the property holds.
    public func check(_ input: Data) -> Violation? {
        func violation(_ kind: Violation.Kind, _ detail: String) -> Violation {
            Violation(kind: kind, input: input, detail: detail)
        }
        let value: Value
        do {
            value = try codec.decode(input, hints: hints)
        } catch is CourierError {
            return nil
        } catch {
            return violation(.foreignError, "decode threw \(type(of: error)): \(error)")
        }
        let encoded: Data
        do {
            encoded = try codec.encode(value, hints: hints)
        } catch let error as CourierError {
            if acceptedEncodingFailures.contains(error.code) { return nil }
            return violation(.encodingFailed, "the decoded value \(value) does not encode: \(error)")
        } catch {
            return violation(.foreignError, "encode threw \(type(of: error)): \(error)")
        }
        let again: Value
        do {
            again = try codec.decode(encoded, hints: hints)
        } catch {
            let text = String(decoding: encoded.prefix(400), as: UTF8.self).debugDescription
            return violation(.reencodingUnreadable, "the encoding \(text) does not decode: \(error)")
        }
        guard Self.same(again, value) else {
            return violation(.valueChanged, "the re-decoded value differs:\n  first:  \(value)\n  second: \(again)")
        }
        guard requiresStableEncoding else { return nil }
        do {
            let reencoded = try codec.encode(again, hints: hints)
            if reencoded != encoded {
                return violation(.unstableEncoding, "\(encoded.count) bytes, then \(reencoded.count) different bytes")
            }
        } catch {
            return violation(.encodingFailed, "the re-decoded value \(again) does not encode: \(error)")
        }
        return nil
    }

    /// Checks one input and stops the process with the violation when the property breaks: for fuzz
    /// targets, where a crash is how a finding is reported (libFuzzer then saves the input).
    public func assertHolds(_ input: Data) {
        if let violation = check(input) { fatalError("\(violation)") }
    }

    /// Checks every regular file in `folder` (a fuzzer's corpus, seeds or saved crashes), in name order,
    /// and returns the violations, each naming its file.
    ///
    /// - Throws: when the folder cannot be read.
    public func check(folder: URL) throws -> [Violation] {
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
        var violations: [Violation] = []
        for name in names where !name.hasPrefix(".") {
            let url = folder.appendingPathComponent(name)
            let kind = try FileManager.default.attributesOfItem(atPath: url.path)[.type] as? FileAttributeType
            guard kind == .typeRegular else { continue }
            if var violation = check(try Data(contentsOf: url)) {
                violation.file = name
                violations.append(violation)
            }
        }
        return violations
    }

    /// Value equality in which NaN equals NaN (a NaN decodes and encodes faithfully but is never `==`).
    static func same(_ a: Value, _ b: Value) -> Bool {
        switch (a, b) {
        case (.double(let x), .double(let y)) where x.isNaN && y.isNaN: return true
        case (.array(let x), .array(let y)):
            return x.count == y.count && zip(x, y).allSatisfy { same($0, $1) }
        case (.object(let x), .object(let y)):
            guard x.count == y.count else { return false }
            for (key, value) in x {
                guard let other = y[key], same(value, other) else { return false }
            }
            return true
        default: return a == b
        }
    }
}
