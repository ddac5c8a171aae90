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
///
/// // Random models, through each format and across all of them (JSON → XML → protobuf → back):
/// let failures = RoundTrip.check(User.self, codecs: [JSONCodec(), XMLCodec()], count: 1_000, seed: 7)
/// ```
public enum RoundTrip {
    /// One value that did not survive the trip: what went in, the bytes in between (when encoding worked),
    /// what came back (when decoding worked) and the error (when one was thrown).
    public struct Failure: Error, CustomStringConvertible {
        /// The value that was encoded.
        public var value: Value
        /// The encoded bytes, if encoding succeeded.
        public var bytes: Data?
        /// The value decoded from ``bytes``, if decoding succeeded (it differs from ``value``).
        public var decoded: Value?
        /// The error thrown by encoding or decoding, if any.
        public var error: CourierError?
        /// The codec or chain of codecs the trip went through (`json`, `json → xml`).
        public var route: String?
        /// The seed and index of a generated value (from ``RoundTrip/check(codec:count:seed:options:hints:maxDepth:maxWidth:)``),
        /// to reproduce it.
        public var origin: (seed: UInt64, index: Int)?

        /// The first place, in document order, where two values differ.
        static func firstDifference(_ a: Value, _ b: Value, path: String) -> (path: String, sent: String, received: String)? {
            switch (a, b) {
            case (.array(let x), .array(let y)):
                for (i, (l, r)) in zip(x, y).enumerated() {
                    if let found = firstDifference(l, r, path: "\(path)[\(i)]") { return found }
                }
                return x.count == y.count ? nil : (path, "\(x.count) elements", "\(y.count) elements")
            case (.object(let x), .object(let y)):
                for (key, l) in x {
                    let member = path.isEmpty ? key : "\(path).\(key)"
                    guard let r = y[key] else { return (member, "\(l)", "nothing") }
                    if let found = firstDifference(l, r, path: member) { return found }
                }
                for (key, r) in y where x[key] == nil {
                    return (path.isEmpty ? key : "\(path).\(key)", "nothing", "\(r)")
                }
                return nil
            default:
                return a == b ? nil : (path, "\(a)", "\(b)")
            }
        }

        public var description: String {
            var text = "round trip failed"
            if let route { text += " through \(route)" }
            if let origin { text += " (seed \(origin.seed), value #\(origin.index))" }
            text += "\n  value:   \(value)"
            if let bytes {
                let preview = String(decoding: bytes.prefix(400), as: UTF8.self)
                text += "\n  bytes:   \(bytes.count) bytes: \(preview.debugDescription)"
            }
            if let decoded {
                if let difference = Self.firstDifference(value, decoded, path: "") {
                    text += "\n  first difference at \(difference.path.isEmpty ? "the root" : difference.path): "
                        + "\(difference.sent) became \(difference.received)"
                }
                text += "\n  decoded: \(decoded)"
            }
            if let error { text += "\n  error:   \(error)" }
            return text
        }
    }

    /// Encodes `value` with `codec`, decodes the bytes and compares (`Value` equality: numbers by
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

    /// Encodes a Codable `model` (`ValueEncoder`, then `codec`), decodes it back (`codec`, then
    /// `ValueDecoder`) and compares; returns `nil` when the model came back equal. The model's shape
    /// guides decoding unless `hints` names one. Models need not be `Equatable`: the one that came back is
    /// encoded again and compared with the first as `Value`s (and, when `T` is `Equatable`, with `==` too).
    public static func typed<T: Codable>(
        _ model: T, codec: any Codec, hints: CodingHints = CodingHints(),
        encoder: ValueEncoder = ValueEncoder(), decoder: ValueDecoder = ValueDecoder()
    ) -> Failure? {
        typed(model, across: [codec], hints: hints, encoder: encoder, decoder: decoder)
    }

    /// Encodes `value` with each codec in turn, decoding after each (`codecs[0]` encode → decode →
    /// `codecs[1]` encode → decode …), and compares the final value with the first. Returns `nil` when it
    /// came back equal: the formats agree on everything `value` holds.
    public static func across(_ codecs: [any Codec], value: Value, hints: CodingHints = CodingHints()) -> Failure? {
        let route = codecs.map(\.format.name).joined(separator: " → ")
        let current: Value
        switch trip(value, through: codecs, hints: hints) {
        case .success(let value): current = value
        case .failure(let failure): return failure
        }
        return current == value ? nil : Failure(value: value, bytes: nil, decoded: current, error: nil, route: route)
    }

    /// `value` encoded and decoded by each codec in turn, or the failure of the first step that threw.
    private static func trip(_ value: Value, through codecs: [any Codec], hints: CodingHints) -> Result<Value, Failure> {
        var current = value
        var route: [String] = []
        for codec in codecs {
            route.append(codec.format.name)
            let bytes: Data
            do {
                bytes = try codec.encode(current, hints: hints)
            } catch {
                return .failure(Failure(value: value, bytes: nil, decoded: current, error: CourierError.wrap(error, as: .encodingFailed),
                                        route: route.joined(separator: " → ")))
            }
            do {
                current = try codec.decode(bytes, hints: hints)
            } catch {
                return .failure(Failure(value: value, bytes: bytes, decoded: nil, error: CourierError.wrap(error, as: .malformedInput),
                                        route: route.joined(separator: " → ")))
            }
        }
        return .success(current)
    }

    /// Round-trips `count` generated values through every codec of `codecs` in turn (see
    /// ``across(_:value:hints:)``); returns the failures. Restrict `options` to what every format holds.
    public static func check(
        across codecs: [any Codec], count: Int, seed: UInt64, options: ValueGenerator.Options = .json,
        hints: CodingHints = CodingHints(), maxDepth: Int = 4, maxWidth: Int = 6
    ) -> [Failure] {
        var generator = ValueGenerator(seed: seed, options: options)
        var failures: [Failure] = []
        for index in 0..<count {
            if var failure = across(codecs, value: generator.next(maxDepth: maxDepth, maxWidth: maxWidth), hints: hints) {
                failure.origin = (seed, index)
                failures.append(failure)
            }
        }
        return failures
    }

    /// Encodes a Codable `model` (`ValueEncoder`), passes it through each codec in turn (encode, decode),
    /// decodes the result back into `T` (`ValueDecoder`) and compares. The model's shape guides decoding
    /// (so XML text becomes numbers and single elements arrays) unless `hints` names one.
    ///
    /// `T` need not be `Equatable`: the model that came back is encoded again and compared with the first
    /// through their `Value`s (numbers by value, members in any order); when `T` is `Equatable`, its `==`
    /// must agree as well.
    public static func typed<T: Codable>(
        _ model: T, across codecs: [any Codec], hints: CodingHints = CodingHints(),
        encoder: ValueEncoder = ValueEncoder(), decoder: ValueDecoder = ValueDecoder()
    ) -> Failure? {
        let value: Value
        do {
            value = try encoder.encode(model)
        } catch {
            return Failure(value: .null, bytes: nil, decoded: nil, error: CourierError.wrap(error, as: .encodingFailed))
        }
        let hints = hints.shaped(by: T.self)
        let route = codecs.map(\.format.name).joined(separator: " → ")
        let current: Value
        switch trip(value, through: codecs, hints: hints) {
        case .success(let value): current = value
        case .failure(let failure): return failure
        }
        do {
            let back = try decoder.decode(T.self, from: current)
            let again: Value
            do {
                again = try encoder.encode(back)
            } catch {
                return Failure(value: value, bytes: nil, decoded: current, error: CourierError.wrap(error, as: .encodingFailed),
                               route: route)
            }
            if again == value, sameIfEquatable(model, back) { return nil }
            return Failure(value: value, bytes: nil, decoded: again, error: nil, route: route)
        } catch {
            return Failure(value: value, bytes: nil, decoded: current, error: CourierError.wrap(error, as: .typeMismatch),
                           route: route)
        }
    }

    /// Generates `count` random instances of `T` (``ModelGenerator``) and round-trips each through every
    /// codec of `codecs` alone and, with two or more, through all of them in turn; returns the failures,
    /// each with the seed and index that reproduce it.
    ///
    /// The generator only makes what every format in `codecs` can carry
    /// (``ModelGenerator/Options/carried(by:)`` narrows `options`: no control characters for XML, for
    /// instance), so with the default options a failure is a codec's or a model's bug. `T` need not be
    /// `Equatable` (see ``typed(_:across:hints:encoder:decoder:)``).
    ///
    /// ```swift
    /// let failures = RoundTrip.check(User.self, codecs: [JSONCodec(), XMLCodec()], count: 1_000, seed: 7)
    /// #expect(failures.isEmpty, "\(failures.first!)")
    /// ```
    public static func check<T: Codable>(
        _ type: T.Type, codecs: [any Codec], count: Int, seed: UInt64,
        options: ModelGenerator.Options = ModelGenerator.Options(), hints: CodingHints = CodingHints()
    ) -> [Failure] {
        var generator = ModelGenerator(seed: seed, options: options.carried(by: codecs.map(\.format)))
        var failures: [Failure] = []
        for index in 0..<count {
            let model: T
            do {
                model = try generator.next(T.self)
            } catch {
                failures.append(Failure(value: .null, bytes: nil, decoded: nil, error: CourierError.wrap(error, as: .typeMismatch),
                                        route: "generation", origin: (seed, index)))
                continue
            }
            var routes = codecs.map { [$0] }
            if codecs.count > 1 { routes.append(codecs) }
            for route in routes {
                if var failure = typed(model, across: route, hints: hints) {
                    failure.origin = (seed, index)
                    failures.append(failure)
                }
            }
        }
        return failures
    }
}

/// Whether `a == b` when `A` is `Equatable`; `true` otherwise (nothing more to compare).
private func sameIfEquatable<A>(_ a: A, _ b: A) -> Bool {
    guard let equatable = a as? any Equatable else { return true }
    return equatable.isEqual(to: b)
}

extension Equatable {
    /// `self == other` when `other` is a `Self`.
    fileprivate func isEqual(to other: Any) -> Bool { (other as? Self).map { $0 == self } ?? false }
}

extension CodingHints {
    /// These hints, with `T`'s shape when they name none.
    fileprivate func shaped<T: Decodable>(by type: T.Type) -> CodingHints {
        guard shape == nil else { return self }
        var hints = self
        hints.shape = ValueShape(of: T.self)
        return hints
    }
}
