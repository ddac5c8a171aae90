#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// Round-trip checks for codecs — encode, decode, compare — that report failures as values instead of
/// calling a test framework, so they work from Swift Testing, XCTest or a command-line tool alike.
///
/// ```swift
/// @Test func jsonRoundTrips() {
///     let failures = RoundTrip.check(codec: JSONCodec(), count: 1000, seed: 7)
///     #expect(failures.isEmpty, "\(failures.first!)")
/// }
///
/// if let failure = RoundTrip.assertRoundTrip(JSONCodec(), value: ["id": 7]) { print(failure) }
/// if let failure = RoundTrip.typed(User(id: 7, name: "Ada"), codec: JSONCodec()) { print(failure) }
/// ```
public enum RoundTrip {
    /// One value that did not survive the trip: what went in, the bytes in between (when encoding worked),
    /// what came back (when decoding worked) and the error (when one was thrown).
    public struct Failure: Sendable, CustomStringConvertible {
        /// The value that was encoded.
        public var value: Value
        /// The encoded bytes, if encoding succeeded.
        public var bytes: Data?
        /// The value decoded from ``bytes``, if decoding succeeded (it differs from ``value``).
        public var decoded: Value?
        /// The error thrown by encoding or decoding, if any.
        public var error: CourierError?
        /// The seed and index of a generated value (from ``RoundTrip/check(codec:count:seed:options:hints:maxDepth:maxWidth:)``),
        /// to reproduce it.
        public var origin: (seed: UInt64, index: Int)?

        public var description: String {
            var text = "round trip failed"
            if let origin { text += " (seed \(origin.seed), value #\(origin.index))" }
            text += "\n  value:   \(value)"
            if let bytes {
                let preview = String(decoding: bytes.prefix(400), as: UTF8.self)
                text += "\n  bytes:   \(bytes.count) bytes: \(preview.debugDescription)"
            }
            if let decoded { text += "\n  decoded: \(decoded)" }
            if let error { text += "\n  error:   \(error)" }
            return text
        }
    }

    /// Encodes `value` with `codec`, decodes the bytes and compares (``Value`` equality: numbers by
    /// value, objects ignoring member order). Returns `nil` when the value came back equal.
    public static func assertRoundTrip(_ codec: any Codec, value: Value, hints: CodingHints = CodingHints()) -> Failure? {
        let bytes: Data
        do {
            bytes = try codec.encode(value, hints: hints)
        } catch {
            return Failure(value: value, bytes: nil, decoded: nil, error: CourierError.wrap(error, as: .encodingFailed))
        }
        do {
            let decoded = try codec.decode(bytes, hints: hints)
            return decoded == value ? nil : Failure(value: value, bytes: bytes, decoded: decoded, error: nil)
        } catch {
            return Failure(value: value, bytes: bytes, decoded: nil, error: CourierError.wrap(error, as: .malformedInput))
        }
    }

    /// Round-trips `count` values from a ``ValueGenerator`` seeded with `seed`; returns the failures
    /// (empty when all came back equal).
    public static func check(
        codec: any Codec, count: Int, seed: UInt64, options: ValueGenerator.Options = .json,
        hints: CodingHints = CodingHints(), maxDepth: Int = 4, maxWidth: Int = 6
    ) -> [Failure] {
        var generator = ValueGenerator(seed: seed, options: options)
        var failures: [Failure] = []
        for index in 0..<count {
            let value = generator.next(maxDepth: maxDepth, maxWidth: maxWidth)
            if var failure = assertRoundTrip(codec, value: value, hints: hints) {
                failure.origin = (seed, index)
                failures.append(failure)
            }
        }
        return failures
    }

    /// Encodes a Codable `model` (``ValueEncoder``, then `codec`), decodes it back (`codec`, then
    /// ``ValueDecoder``) and compares; returns `nil` when the model came back equal.
    public static func typed<T: Codable & Equatable>(
        _ model: T, codec: any Codec, hints: CodingHints = CodingHints(),
        encoder: ValueEncoder = ValueEncoder(), decoder: ValueDecoder = ValueDecoder()
    ) -> Failure? {
        let value: Value
        do {
            value = try encoder.encode(model)
        } catch {
            return Failure(value: .null, bytes: nil, decoded: nil, error: CourierError.wrap(error, as: .encodingFailed))
        }
        let bytes: Data
        do {
            bytes = try codec.encode(value, hints: hints)
        } catch {
            return Failure(value: value, bytes: nil, decoded: nil, error: CourierError.wrap(error, as: .encodingFailed))
        }
        let decoded: Value
        do {
            decoded = try codec.decode(bytes, hints: hints)
        } catch {
            return Failure(value: value, bytes: bytes, decoded: nil, error: CourierError.wrap(error, as: .malformedInput))
        }
        do {
            let back = try decoder.decode(T.self, from: decoded)
            if back == model { return nil }
            return Failure(value: value, bytes: bytes, decoded: try? encoder.encode(back), error: nil)
        } catch {
            return Failure(value: value, bytes: bytes, decoded: decoded, error: CourierError.wrap(error, as: .typeMismatch))
        }
    }
}
